// Package relay buffers the events of running turns under sequence ids and
// fans them out to any number of subscribers (browser streams), each of which
// may join late or come back after a drop: a subscriber gets every buffered
// event after the last id it saw, then follows live, with no gap and no
// duplicate (the replay and the registration happen under one lock, as
// Mercure does it).
package relay

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// Event is one event of a stream: the core's event type, so the services
// hand relay events to the web layer as they are.
type Event = bff.Event

// Hub holds one stream per key. It is safe for concurrent use.
type Hub struct {
	retain time.Duration
	now    func() time.Time
	buffer int

	mu      sync.Mutex
	streams map[string]*stream
}

type stream struct {
	events   []Event
	closed   bool
	closedAt time.Time
	subs     map[*Subscription]struct{}
}

// Subscription is one subscriber's live feed.
type Subscription struct {
	// C delivers live events; it is closed when the stream ends (after its
	// last event), when the subscriber falls too far behind (resume from the
	// last id seen), or on Cancel.
	C      <-chan Event
	c      chan Event
	hub    *Hub
	key    string
	after  int64 // resume point: live events up to it were seen already
	closed bool
}

// NewHub returns a hub that keeps ended streams for retain so late
// subscribers can still replay them. now may be nil (time.Now).
func NewHub(retain time.Duration, now func() time.Time) *Hub {
	if now == nil {
		now = time.Now
	}
	return &Hub{retain: retain, now: now, buffer: 256, streams: map[string]*stream{}}
}

// Open creates the stream of key if it does not exist. Publishing to a key
// opens it too; Open exists so a subscriber arriving before the first event
// waits rather than finding nothing.
func (h *Hub) Open(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	if h.streams[key] == nil {
		h.streams[key] = &stream{subs: map[*Subscription]struct{}{}}
	}
}

// Publish appends an event to key's stream and delivers it to subscribers.
// data is marshalled to JSON; publishing to an ended stream does nothing.
func (h *Hub) Publish(key, name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}") // only our own event types are published
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[key]
	if s == nil {
		s = &stream{subs: map[*Subscription]struct{}{}}
		h.streams[key] = s
	}
	if s.closed {
		return
	}
	ev := Event{ID: int64(len(s.events)) + 1, Name: name, Data: b}
	s.events = append(s.events, ev)
	for sub := range s.subs {
		if ev.ID <= sub.after {
			continue
		}
		select {
		case sub.c <- ev:
		default:
			// Too far behind: cut it loose; it resumes from its last id.
			h.drop(s, sub)
		}
	}
}

// Close ends key's stream: subscribers' channels close after the events
// they already have.
func (h *Hub) Close(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[key]
	if s == nil || s.closed {
		return
	}
	s.closed, s.closedAt = true, h.now()
	for sub := range s.subs {
		h.drop(s, sub)
	}
}

// Subscribe returns the buffered events after after and, when the stream is
// still running, a Subscription for what follows. found is false when the
// hub has no stream for key (never opened, or ended and swept).
func (h *Hub) Subscribe(key string, after int64) (replay []Event, sub *Subscription, found bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[key]
	if s == nil {
		return nil, nil, false
	}
	if after < 0 {
		after = 0
	}
	if after < int64(len(s.events)) {
		replay = append(replay, s.events[after:]...)
	}
	if s.closed {
		return replay, nil, true
	}
	c := make(chan Event, h.buffer)
	sub = &Subscription{C: c, c: c, hub: h, key: key, after: after}
	s.subs[sub] = struct{}{}
	return replay, sub, true
}

// Cancel stops the subscription; safe to call more than once.
func (sub *Subscription) Cancel() {
	if sub == nil {
		return
	}
	h := sub.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.streams[sub.key]; s != nil {
		h.drop(s, sub)
	} else if !sub.closed {
		sub.closed = true
		close(sub.c)
	}
}

// Subscribers counts live subscriptions, for metrics and tests.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.streams {
		n += len(s.subs)
	}
	return n
}

// drop removes sub and closes its channel. Caller holds h.mu.
func (h *Hub) drop(s *stream, sub *Subscription) {
	delete(s.subs, sub)
	if !sub.closed {
		sub.closed = true
		close(sub.c)
	}
}

// sweep forgets ended streams older than retain. Caller holds h.mu.
func (h *Hub) sweep() {
	cut := h.now().Add(-h.retain)
	for k, s := range h.streams {
		if s.closed && s.closedAt.Before(cut) {
			delete(h.streams, k)
		}
	}
}

// Follow delivers every event of key's stream after after, in order and
// once each, then closes the channel: when the stream ends, or when ctx
// ends. It resubscribes by itself when it falls behind, so the caller never
// handles resumption. found is false when the hub has no stream for key.
func (h *Hub) Follow(ctx context.Context, key string, after int64) (events <-chan Event, found bool) {
	replay, sub, found := h.Subscribe(key, after)
	if !found {
		return nil, false
	}
	out := make(chan Event)
	go func() {
		defer close(out)
		last := after
		// send hands ev over, or reports that the follower went away.
		send := func(ev Event) bool {
			select {
			case out <- ev:
				last = ev.ID
				return true
			case <-ctx.Done():
				sub.Cancel()
				return false
			}
		}
		for {
			for _, ev := range replay {
				if !send(ev) {
					return
				}
			}
			if sub == nil {
				return // the stream ended: everything was in the replay
			}
			for open := true; open; {
				select {
				case ev, ok := <-sub.C:
					if !ok {
						open = false
						break
					}
					if !send(ev) {
						return
					}
				case <-ctx.Done():
					sub.Cancel()
					return
				}
			}
			// Ended, or cut loose for falling behind: resume from last.
			if replay, sub, found = h.Subscribe(key, last); !found {
				return
			}
		}
	}()
	return out, true
}
