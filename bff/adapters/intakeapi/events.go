package intakeapi

import (
	"encoding/json"
	"fmt"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// Event names of a streaming turn.
const (
	EventMessageDelta     = intakeservice.EventMessageDelta
	EventMessageCompleted = intakeservice.EventMessageCompleted
	EventHandoffCompiling = intakeservice.EventHandoffCompiling
	EventHandoffProgress  = intakeservice.EventHandoffProgress
	EventTurnCompleted    = intakeservice.EventTurnCompleted
	EventError            = intakeservice.EventError
)

// Event is one typed event of a streaming turn: MessageDelta,
// MessageCompleted, HandoffCompiling, HandoffProgress, TurnCompleted,
// StreamError, or UnknownEvent for a name this client does not know.
type Event interface {
	EventName() string
}

// The events' data are package intakeservice's.
type (
	// MessageDelta is the next fragment of the reply; append fragments in order.
	MessageDelta = intakeservice.MessageDelta
	// MessageCompleted says the reply text is complete: the patient may answer
	// and the next turn may be sent, even while the handoff compiles.
	MessageCompleted = intakeservice.MessageCompleted
	// HandoffCompiling says the clinical snapshot is being compiled; Terminal
	// says the intake is closing.
	HandoffCompiling = intakeservice.HandoffCompiling
	// HandoffProgress reports compile progress.
	HandoffProgress = intakeservice.HandoffProgress
	// StreamError is the error event: the turn failed after the stream
	// started. Read the handoff before retrying.
	StreamError = intakeservice.StreamError
)

// TurnCompleted carries the same Turn a blocking call returns.
type TurnCompleted struct {
	Turn Turn
}

// UnknownEvent is an event whose name this client does not know; it is kept,
// not rejected, so a newer service does not break the stream.
type UnknownEvent struct {
	Name string
	Data json.RawMessage // a copy; may not be JSON
}

// EventName implements Event.
func (TurnCompleted) EventName() string { return EventTurnCompleted }

// EventName implements Event.
func (e UnknownEvent) EventName() string { return e.Name }

// DecodeEvent decodes the data of one SSE event into its typed Event. Data of
// a known event that is not valid JSON of its shape is an error: the stream
// can no longer be trusted.
func DecodeEvent(name string, data []byte) (Event, error) {
	var (
		ev  Event
		err error
	)
	switch name {
	case EventMessageDelta:
		var e MessageDelta
		if err = json.Unmarshal(data, &e); err == nil {
			ev = e
		}
	case EventMessageCompleted:
		var e MessageCompleted
		if err = json.Unmarshal(data, &e); err == nil {
			ev = e
		}
	case EventHandoffCompiling:
		var e HandoffCompiling
		if err = json.Unmarshal(data, &e); err == nil {
			ev = e
		}
	case EventHandoffProgress:
		var e HandoffProgress
		if err = json.Unmarshal(data, &e); err == nil {
			ev = e
		}
	case EventTurnCompleted:
		var e TurnCompleted
		if err = json.Unmarshal(data, &e.Turn); err == nil {
			ev = e
		}
	case EventError:
		var e StreamError
		if err = json.Unmarshal(data, &e); err == nil {
			ev = e
		}
	default:
		return UnknownEvent{Name: name, Data: append(json.RawMessage(nil), data...)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s event: %w", name, err)
	}
	return ev, nil
}
