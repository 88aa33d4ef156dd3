package bff

import (
	"context"
	"time"
)

// The store's interfaces. The SQLite adapter (bff/sqlite, one process) and
// the PostgreSQL adapter (bff/postgres, several replicas) implement them, and
// both pass the one suite in bff/storetest.
//
// Error contract for every method: a missing row is an *Error with ENOTFOUND;
// a uniqueness clash is an *Error with ECONFLICT; anything else is an
// internal error (wrapped, never shown). Methods honour ctx.

// Stores is every store interface of the core: what a store adapter
// implements, what the app runs on, and what bff/storetest tests.
type Stores interface {
	IntakeStore
	TurnStore
	HandoffStore
	ClinicianStore
	ReviewStore
	AuditStore
	SignInFailureStore
	WorklistStore
	TurnQueue
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
