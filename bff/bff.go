// Package bff is the core of the backend-for-frontend: the domain types the
// web app works with, the interfaces of its adapters (the SQLite store in
// bff/store), and the services that run intakes and turns through the typed
// client (bff/intakeapi), the pacer (bff/pacer) and the relay (bff/relay).
//
// Nothing here knows HTTP frameworks or templates: package web maps these
// types to pages, and errors to statuses through ErrorCode.
package bff

import "time"

// Intake is an intake created through this app: the upstream encounter and
// what this app knows of it. State fields are as the service last reported
// them, never computed here.
type Intake struct {
	ID    string // the service's encounter_id
	Owner string // the patient session that created it; only it may see it

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
}

// Open reports whether the intake may take another turn, as far as this app
// knows (the service has the last word).
func (in *Intake) Open(now time.Time) bool {
	return !in.Terminal && in.Status == StatusOpen && now.Before(in.ExpiresAt)
}

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

	requestID string // the id of the request that sent it, for upstream calls and logs
}

// StoredHandoff is a handoff exactly as the service sent it.
type StoredHandoff struct {
	IntakeID  string
	JSON      []byte // the raw object, kept byte for byte for download
	Terminal  bool
	FetchedAt time.Time
	Release   string
}
