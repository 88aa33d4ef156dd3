package intakeapi

import (
	"encoding/json"
	"fmt"
)

// Event names of a streaming turn.
const (
	EventMessageDelta     = "message.delta"
	EventMessageCompleted = "message.completed"
	EventHandoffCompiling = "handoff.compiling"
	EventHandoffProgress  = "handoff.progress"
	EventTurnCompleted    = "turn.completed"
	EventError            = "error"
)

// Event is one typed event of a streaming turn: MessageDelta,
// MessageCompleted, HandoffCompiling, HandoffProgress, TurnCompleted,
// StreamError, or UnknownEvent for a name this client does not know.
type Event interface {
	EventName() string
}

// MessageDelta is the next fragment of the reply; append fragments in order.
type MessageDelta struct {
	Text string `json:"text"`
}

// MessageCompleted says the reply text is complete: the patient may answer
// and the next turn may be sent, even while the handoff compiles.
type MessageCompleted struct {
	ElapsedMS int64 `json:"elapsed_ms"`
}

// HandoffCompiling says the clinical snapshot is being compiled; Terminal
// says the intake is closing.
type HandoffCompiling struct {
	Terminal bool `json:"terminal"`
}

// HandoffProgress reports compile progress.
type HandoffProgress struct {
	Chars int `json:"chars"`
}

// TurnCompleted carries the same Turn a blocking call returns.
type TurnCompleted struct {
	Turn Turn
}

// StreamError is the error event: the turn failed after the stream started.
// Read the handoff before retrying.
type StreamError struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

// UnknownEvent is an event whose name this client does not know; it is kept,
// not rejected, so a newer service does not break the stream.
type UnknownEvent struct {
	Name string
	Data json.RawMessage // a copy; may not be JSON
}

func (MessageDelta) EventName() string     { return EventMessageDelta }
func (MessageCompleted) EventName() string { return EventMessageCompleted }
func (HandoffCompiling) EventName() string { return EventHandoffCompiling }
func (HandoffProgress) EventName() string  { return EventHandoffProgress }
func (TurnCompleted) EventName() string    { return EventTurnCompleted }
func (StreamError) EventName() string      { return EventError }
func (e UnknownEvent) EventName() string   { return e.Name }

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
