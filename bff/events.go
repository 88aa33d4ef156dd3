package bff

import "fmt"

// Event is one event of a turn's stream or of the worklist's feed.
type Event struct {
	ID   int64  // 1-based, in publishing order
	Name string // the event name the browser sees
	Data []byte // a JSON object
}

// TurnKey names a turn's event stream.
func TurnKey(intakeID string, index int) string { return fmt.Sprintf("%s/%d", intakeID, index) }

// The events a turn publishes to the relay: the browser's stream carries
// them under these names (package web adds rendered HTML to the last one).
const (
	EventQueued    = "queued"    // QueuedData: waiting for the pacer
	EventStarted   = "started"   // {}: the upstream reply has begun
	EventDelta     = "delta"     // DeltaData: the next fragment of the reply
	EventCompleted = "completed" // CompletedData: reply text complete
	EventCompiling = "compiling" // CompilingData: the handoff is compiling
	EventProgress  = "progress"  // ProgressData
	// EventInterrupted: the upstream stream broke off; the turn's outcome
	// comes from reconciliation (a final or failed event follows).
	EventInterrupted = "interrupted" // InterruptedData
	EventFinal       = "final"       // SettledData: the turn completed
	EventFailed      = "failed"      // SettledData: the turn did not land
)

// QueuedReason says why a shown wait grew.
type QueuedReason string

// QueuedServiceAsked: the service asked the app to wait longer (a 429's
// Retry-After, a 503, a previous reply still in progress upstream).
const QueuedServiceAsked QueuedReason = "service_asked"

// Event payloads.
type (
	// QueuedData is a waiting turn's place in line and the wait until it
	// is sent (its intake's creation upstream included, for a first
	// message). The wait shown never grows, except when the service itself
	// asked for more time: then Reason says so and AddedSeconds by how
	// much, and the page says it in words.
	QueuedData struct {
		Position     int          `json:"position"`
		WaitSeconds  int          `json:"wait_seconds"`
		Reason       QueuedReason `json:"reason,omitempty"`
		AddedSeconds int          `json:"added_seconds,omitempty"`
	}
	DeltaData struct {
		Text string `json:"text"`
	}
	CompletedData struct {
		ElapsedMS int64 `json:"elapsed_ms"`
	}
	CompilingData struct {
		Terminal bool `json:"terminal"`
	}
	ProgressData struct {
		Chars int `json:"chars"`
	}
	InterruptedData struct {
		// CutOff is true when part of the reply had already streamed.
		CutOff bool `json:"cut_off"`
	}
	// SettledData is the last event of a turn. It carries the settled turn
	// and the intake after it, so whoever follows the stream renders the
	// outcome from the event and never goes back to the store. Turn and
	// Intake are for the server: they hold the owner id and the history,
	// and must not be passed on to a browser as they are.
	SettledData struct {
		Index   int     `json:"index"`
		Status  string  `json:"status"`
		Message string  `json:"message,omitempty"` // for failed turns
		Turn    *Turn   `json:"turn,omitempty"`
		Intake  *Intake `json:"intake,omitempty"`
		// Choices are the quick replies for the next message: the turn's
		// own, or after a failed turn the last completed turn's.
		Choices []string `json:"choices,omitempty"`
		// Last is true when no turn came after this one (Send again is
		// offered only on the last turn).
		Last bool `json:"last"`
	}
)

// Events of the clinicians' worklist feed.
const (
	EventIntakeChanged = "intake"
	// EventWorklistMissed: changes may have been missed (the replica's
	// database listener reconnected); the page offers to show the latest.
	EventWorklistMissed = "reload"
)

// IntakeChanged is the data of a worklist feed event.
type IntakeChanged struct {
	IntakeID string `json:"intake_id"`
	Status   string `json:"status"`
	Urgent   bool   `json:"urgent"`
}

// Announcer publishes to the clinicians' live worklist (relay.Feed).
type Announcer interface {
	Publish(name string, data any)
}

// AnnounceChange tells open worklists that an intake changed.
func AnnounceChange(a Announcer, in *Intake) {
	if a == nil {
		return
	}
	a.Publish(EventIntakeChanged, IntakeChanged{IntakeID: in.ID, Status: in.Status, Urgent: in.Urgent})
}
