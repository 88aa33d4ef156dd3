package intakeservice

// Event names of a streaming turn (the document's x-sse-events).
const (
	EventMessageDelta     = "message.delta"
	EventMessageCompleted = "message.completed"
	EventHandoffCompiling = "handoff.compiling"
	EventHandoffProgress  = "handoff.progress"
	EventTurnCompleted    = "turn.completed" // its data is a Turn
	EventError            = "error"
)

// MessageDelta is the next fragment of the reply; append fragments in order
// (schema MessageDeltaEvent).
type MessageDelta struct {
	Text string `json:"text"`
}

// MessageCompleted says the reply text is complete: the patient may answer
// and the next turn may be sent, even while the handoff compiles (schema
// MessageCompletedEvent).
type MessageCompleted struct {
	// ElapsedMS is a JSON number, as the document says: the sandbox sends
	// whole milliseconds, another service may send fractions.
	ElapsedMS float64 `json:"elapsed_ms"`
}

// HandoffCompiling says the clinical snapshot is being compiled; Terminal
// says the intake is closing (schema HandoffCompilingEvent).
type HandoffCompiling struct {
	Terminal bool `json:"terminal"`
}

// HandoffProgress reports compile progress (schema HandoffProgressEvent).
type HandoffProgress struct {
	Chars int `json:"chars"`
}

// StreamError is the error event: the turn failed after the stream started.
// Read the handoff before retrying (schema StreamErrorEvent).
type StreamError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// EventName returns the event's name on the stream.
func (MessageDelta) EventName() string { return EventMessageDelta }

// EventName returns the event's name on the stream.
func (MessageCompleted) EventName() string { return EventMessageCompleted }

// EventName returns the event's name on the stream.
func (HandoffCompiling) EventName() string { return EventHandoffCompiling }

// EventName returns the event's name on the stream.
func (HandoffProgress) EventName() string { return EventHandoffProgress }

// EventName returns the event's name on the stream.
func (StreamError) EventName() string { return EventError }
