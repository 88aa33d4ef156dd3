package intakeapi

import (
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"net/http"
)

// TurnStream is an open streaming turn. Read it with Next/Event/Err or with
// All; Close it when done (All and the end of the stream close it too).
//
// The stream ends after turn.completed (Err is nil), after an error event
// (the StreamError is delivered, then Err is an *Error with InStream set), or
// early (Err wraps ErrStreamInterrupted, and also the context's error when the
// context or the turn timeout ended it). In the last two cases the caller
// reads the handoff before resending anything. A TurnStream is not safe for
// concurrent use.
type TurnStream struct {
	c      *Client
	body   io.ReadCloser
	cancel context.CancelFunc
	dec    *SSEDecoder
	meta   Meta

	ev       Event
	err      error
	finished bool // a final event was delivered: the next Next ends
	done     bool
	turn     *Turn
}

func newTurnStream(c *Client, resp *http.Response, cancel context.CancelFunc, meta Meta) *TurnStream {
	return &TurnStream{c: c, body: resp.Body, cancel: cancel, dec: NewSSEDecoder(resp.Body), meta: meta}
}

// Meta describes the HTTP exchange that opened the stream.
func (s *TurnStream) Meta() Meta { return s.meta }

// Next reads the next event, blocking until it arrives. It returns false at
// the end of the stream; then Err says why.
func (s *TurnStream) Next() bool {
	s.ev = nil
	if s.done {
		return false
	}
	if s.finished {
		s.end(nil)
		return false
	}
	raw, err := s.dec.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		s.end(s.c.transport(ErrStreamInterrupted, OpStreamTurn, err))
		return false
	}
	ev, err := DecodeEvent(raw.Type, raw.Data)
	if err != nil {
		s.end(s.c.transport(ErrStreamInterrupted, OpStreamTurn, err))
		return false
	}
	switch e := ev.(type) {
	case TurnCompleted:
		s.turn = &e.Turn
		s.finished = true
	case StreamError:
		s.err = &Error{Status: s.meta.Status, Code: e.Code, Message: s.c.redact(e.Message), Release: s.meta.Release, InStream: true}
		s.finished = true
	}
	s.ev = ev
	return true
}

// Event is the event Next just read.
func (s *TurnStream) Event() Event { return s.ev }

// Err is nil while the stream runs and after turn.completed; otherwise the
// reason it ended (see TurnStream).
func (s *TurnStream) Err() error { return s.err }

// Turn is the completed turn, nil until turn.completed arrived.
func (s *TurnStream) Turn() *Turn { return s.turn }

// LastEventID is the last SSE id the service sent, "" if none.
func (s *TurnStream) LastEventID() string { return s.dec.LastEventID() }

// All yields each event with a nil error, then, if the stream failed, one
// (nil, Err()) pair. Breaking out of the loop closes the stream.
func (s *TurnStream) All() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		defer s.Close()
		for s.Next() {
			if !yield(s.ev, nil) {
				return
			}
		}
		if s.err != nil {
			yield(nil, s.err)
		}
	}
}

// Close releases the connection. Closing before the end abandons the turn's
// stream (the turn itself may still complete upstream).
func (s *TurnStream) Close() error {
	if !s.done {
		s.done = true
		s.body.Close()
		s.cancel()
	}
	return nil
}

func (s *TurnStream) end(err error) {
	if err != nil && s.err == nil {
		s.err = err
		s.c.log.LogAttrs(context.Background(), slog.LevelWarn, "intakeapi: stream ended early",
			slog.String("op", string(OpStreamTurn)), slog.String("err", err.Error()))
	}
	s.Close()
}
