// Package bff is the core of the backend-for-frontend: the domain types
// (intake, turn, handoff, review, clinician, audit entry, scenario run), the
// errors and their codes, the interfaces of the stores (store.go) and of the
// services the web layer calls (services.go), each stating its error
// contract. It imports no service and no adapter: of this module, only the
// scenario domain (bff/scenarios), for the suites and scores a run holds.
//
// Folders beside it say what a package is (docs/architecture.md, decision
// 15): bff/services/ implements the services (intakes, review, accounts,
// scenarioruns, and what they share); bff/adapters/ implements the core's
// interfaces on a technology (sqlite, postgres, the intakeapi client, the
// pacer, the relay). Package web knows only the core; cmd/intake-web/app
// wires the rest.
package bff

import "time"

// Intake is an intake created through this app: the upstream encounter and
// what this app knows of it. State fields are as the service last reported
// them, never computed here.
type Intake struct {
	ID    string // the app's own id (in URLs); for intakes from before 0008, the encounter_id
	Owner string // the patient session that created it; only it may see it

	// EncounterID is the service's id of the intake: "" until the intake is
	// created upstream, which happens in the queue with its first turn, so
	// starting an intake never waits for the service.
	EncounterID string

	CreatedAt time.Time
	ExpiresAt time.Time // the service's two-hour session limit
	UpdatedAt time.Time

	Status           string // open, closed or expired, as the service reports it
	TurnCount        int    // completed turns
	Terminal         bool
	Urgent           bool
	SafetyStatus     string // "" when not reported yet
	Disposition      string
	DispositionLabel string
	ActiveProtocol   string

	// Demographics as the patient gave them at the start (all optional).
	AgeYears *int
	Sex      string
	History  string

	Release string // x-service-release of the last upstream answer

	// Opening is the first message, filled where intakes are listed for
	// people to tell apart (not kept with the intake).
	Opening string
}

// Open reports whether the intake may take another turn, as far as this app
// knows (the service has the last word).
func (in *Intake) Open(now time.Time) bool {
	return !in.Terminal && in.Status == StatusOpen && now.Before(in.ExpiresAt)
}

// IntakeLifetime is the service's limit on an intake's life, counted from
// its creation upstream.
const IntakeLifetime = 2 * time.Hour

// Intake statuses, as the service names them.
const (
	StatusOpen    = "open"
	StatusClosed  = "closed"
	StatusExpired = "expired"
)

// TurnStatus is where a turn is in its lifecycle.
type TurnStatus string

const (
	TurnQueued    TurnStatus = "queued"    // recorded, waiting for the pacer
	TurnStreaming TurnStatus = "streaming" // the upstream call is running
	TurnCompleted TurnStatus = "completed" // the reply is in
	TurnFailed    TurnStatus = "failed"    // it did not land upstream
)

// Pending reports whether the turn has not settled yet.
func (s TurnStatus) Pending() bool { return s == TurnQueued || s == TurnStreaming }

// Turn is one patient message and, once completed, the engine's reply.
type Turn struct {
	IntakeID     string
	Index        int    // 1-based position in this app's conversation
	SubmissionID string // the browser form's id: a resubmission finds this turn
	Message      string // exactly as the patient typed it
	// Blocking turns (sent without JavaScript) are one blocking call with an
	// Idempotency-Key derived from the submission: a retry replays them.
	Blocking bool

	Status TurnStatus

	Reply            string // assistant_message, unedited
	Choices          []string
	Terminal         bool
	Urgent           bool
	SafetyStatus     *string // nil when the service sent null
	Disposition      *string
	DispositionLabel *string

	ErrorCode    string // why a failed turn failed (the service's code or ours)
	ErrorMessage string // safe to show the patient

	Release     string
	CreatedAt   time.Time
	CompletedAt *time.Time

	// RequestID is the id of the browser request that sent it, carried into
	// its upstream calls and log lines; not stored.
	RequestID string

	// Lease: the replica running a pending turn, and until when. A turn is
	// a durable job; its runner renews the lease while it works, and when a
	// lease runs out (its replica died) another replica takes the turn
	// over. Zero on settled turns.
	LeaseOwner string
	LeaseUntil time.Time
}

// Codes of failed turns set by the app itself (others are the service's).
const (
	CodeNotLanded   = "not_landed"  // reconciliation proved it did not land
	CodeUnconfirmed = "unconfirmed" // the handoff could not be read to tell
	CodeNotStarted  = "not_started" // the intake could not be created upstream: nothing was sent
)

// Retryable reports whether a failed turn is known not to have landed, so
// sending its text again cannot make the engine see it twice: reconciliation
// proved it, or the service refused it before applying it (its codes
// rate_limited and turn_in_progress).
func (t *Turn) Retryable() bool {
	if t.Status != TurnFailed {
		return false
	}
	switch t.ErrorCode {
	case CodeNotLanded, CodeNotStarted, "rate_limited", "turn_in_progress":
		return true
	}
	return false
}
