package bff

import (
	"context"
	"time"
)

// The store's interfaces. The SQLite adapter (bff/adapters/sqlite, one process) and
// the PostgreSQL adapter (bff/adapters/postgres, several replicas) implement them, and
// both pass the one suite in bff/adapters/storetest.
//
// Error contract for every method: a missing row is an *Error with ENOTFOUND;
// a uniqueness clash is an *Error with ECONFLICT; anything else is an
// internal error (wrapped, never shown). Methods honour ctx.

// Stores is every store interface of the core: what a store adapter
// implements, what the app runs on, and what bff/adapters/storetest tests.
type Stores interface {
	IntakeStore
	TurnStore
	HandoffStore
	ClinicianStore
	ClinicianSessionStore
	ReviewStore
	AuditStore
	SignInFailureStore
	WorklistStore
	TurnQueue
	ScenarioRunStore
	SSOLinkStore
	SafetyStore
}

// IntakeStore keeps intakes.
type IntakeStore interface {
	// CreateIntake inserts in; ECONFLICT if the id exists.
	CreateIntake(ctx context.Context, in *Intake) error
	// Intake returns the intake with id, whoever owns it.
	Intake(ctx context.Context, id string) (*Intake, error)
	// IntakesByOwner returns the owner's intakes, newest first.
	IntakesByOwner(ctx context.Context, owner string) ([]*Intake, error)
	// Intakes returns every intake, newest first, at most limit (0 = all).
	Intakes(ctx context.Context, limit int) ([]*Intake, error)
	// UpdateIntake writes every field of in except ID, Owner and CreatedAt.
	UpdateIntake(ctx context.Context, in *Intake) error
}

// TurnStore keeps turns.
type TurnStore interface {
	// CreateTurn inserts t, assigning t.Index (the next index of its intake)
	// and t.CreatedAt. ECONFLICT when the intake already has a turn with
	// t.SubmissionID, or already has a pending (queued or streaming) turn:
	// the Message says which.
	CreateTurn(ctx context.Context, t *Turn) error
	// Turn returns the turn of an intake at index.
	Turn(ctx context.Context, intakeID string, index int) (*Turn, error)
	// TurnBySubmission finds a turn by its form submission id.
	TurnBySubmission(ctx context.Context, intakeID, submissionID string) (*Turn, error)
	// Turns returns an intake's turns in order.
	Turns(ctx context.Context, intakeID string) ([]*Turn, error)
	// UpdateTurn writes the mutable fields of t (status, reply, state,
	// error, release, completion time).
	UpdateTurn(ctx context.Context, t *Turn) error
	// PendingTurns returns every queued or streaming turn, oldest first: the
	// turns a restart must settle.
	PendingTurns(ctx context.Context) ([]*Turn, error)
}

// HandoffStore keeps handoffs as the service sent them.
type HandoffStore interface {
	// PutHandoff inserts or replaces the handoff of h.IntakeID.
	PutHandoff(ctx context.Context, h *StoredHandoff) error
	// Handoff returns the stored handoff of an intake.
	Handoff(ctx context.Context, intakeID string) (*StoredHandoff, error)
}

// Clock is the time source of the services, so tests can move time.
type Clock func() time.Time

// The messages of CreateTurn's conflicts, the same from every store;
// callers may show them and tell the two apart by them.
const (
	MsgDuplicateSubmission = "This message was already sent."
	MsgTurnPending         = "A reply is still on its way; please wait for it before sending another message."
)

// ScenarioRunStore keeps scenario runs, their items and adjudications.
//
// Error contract as above; ECONFLICT as documented per method.
type ScenarioRunStore interface {
	// CreateScenarioRun inserts r (State queued, no lease) and its items
	// (all pending) in one transaction; ECONFLICT if r.ID exists.
	CreateScenarioRun(ctx context.Context, r *ScenarioRun, items []*ScenarioItem) error
	// ScenarioRun returns a run.
	ScenarioRun(ctx context.Context, id string) (*ScenarioRun, error)
	// ScenarioRuns returns runs newest first, at most limit (0 = all),
	// without their Suite (SuiteName is set).
	ScenarioRuns(ctx context.Context, limit int) ([]*ScenarioRun, error)
	// ClaimScenarioRun leases to owner, until until, the oldest run (by
	// CreatedAt) that has not ended, whose NotBefore is at or before now,
	// and whose lease is empty or ran out at or before stale (now, with
	// other replicas; later, for a lone replica taking back the runs of
	// its own previous process at once); ENOTFOUND when there is none.
	// Two replicas claiming at once never get the same run.
	ClaimScenarioRun(ctx context.Context, owner string, now, stale, until time.Time) (*ScenarioRun, error)
	// RenewScenarioLeases extends every lease owner holds on a run that is
	// not ended to until, returning how many.
	RenewScenarioLeases(ctx context.Context, owner string, until time.Time) (int, error)
	// UpdateScenarioRun writes r's State, NotBefore, Note, UpdatedAt,
	// FinishedAt, Release and Summary, and its lease (LeaseOwner "" releases it),
	// if owner holds the run's lease and the run has not ended; ECONFLICT
	// otherwise (another replica took it over, or a clinician cancelled
	// it: the caller must stop playing it). Played and TurnsUsed are
	// SaveScenarioItem's.
	UpdateScenarioRun(ctx context.Context, r *ScenarioRun, owner string) error
	// CancelScenarioRun ends a run that has not ended: State cancelled,
	// Note, FinishedAt and UpdatedAt at, lease cleared. ENOTFOUND for no
	// such run, ECONFLICT when it had ended.
	CancelScenarioRun(ctx context.Context, id, note string, at time.Time) error
	// ScenarioItems returns a run's items in Seq order.
	ScenarioItems(ctx context.Context, runID string) ([]*ScenarioItem, error)
	// ScenarioItem returns one item.
	ScenarioItem(ctx context.Context, runID string, seq int) (*ScenarioItem, error)
	// PlayingScenarioItems returns a run's items in state playing, in
	// Seq order, at most limit (none: an empty slice, not an error).
	PlayingScenarioItems(ctx context.Context, runID string, limit int) ([]*ScenarioItem, error)
	// SaveScenarioItem writes its State, EncounterID, Turns, Result,
	// Handoff and UpdatedAt, adds turnsSpent to its run's TurnsUsed and,
	// when the item goes from pending or playing to done or failed, one
	// to its run's Played; in one transaction, if owner holds the run's
	// lease and the run has not ended; ECONFLICT otherwise.
	SaveScenarioItem(ctx context.Context, it *ScenarioItem, turnsSpent int, owner string) error
	// AddScenarioAdjudication appends a (setting a.ID).
	AddScenarioAdjudication(ctx context.Context, a *ScenarioAdjudication) error
	// ScenarioAdjudications returns every adjudication, oldest first (a
	// later verdict on a vignette replaces an earlier one).
	ScenarioAdjudications(ctx context.Context) ([]*ScenarioAdjudication, error)

	// PutScenarioReadings replaces the readings recorded for runID by rs
	// (setting each one's RunID), in one transaction.
	PutScenarioReadings(ctx context.Context, runID string, rs []*ScenarioReading) error
	// ScenarioReadings returns every run's readings of release, oldest
	// SeenAt first (then by run and question).
	ScenarioReadings(ctx context.Context, release string) ([]*ScenarioReading, error)
	// ReadingReleases returns the releases that have readings, the one
	// first seen latest first.
	ReadingReleases(ctx context.Context) ([]ReadingRelease, error)
	// AddReadingReview appends rv, setting rv.ID.
	AddReadingReview(ctx context.Context, rv *ReadingReview) error
	// ReadingReviews returns release's reviews, oldest first (a later
	// decision on a question replaces an earlier one).
	ReadingReviews(ctx context.Context, release string) ([]*ReadingReview, error)
}
