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
	"sort"
	"sync"
	"sync/atomic"
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
	buffer int // a Subscription's channel
	// followBuffer is a follower's channel (Follow): small, since a browser
	// stream holds one for as long as it is open; a follower that falls
	// behind is fed by a catch-up goroutine from the stream's events.
	followBuffer int

	catchingUp atomic.Int64 // catch-up goroutines running, for tests
	catchUps   atomic.Int64 // catch-up goroutines started, for tests

	mu      sync.Mutex
	streams map[string]*stream
	swept   time.Time // last sweep: at most one a second (it walks every stream under mu)
}

type stream struct {
	events []Event // ids increasing, not always by one (see jump)
	// floor is the least id the next event may take: a stream taken over
	// from another replica or a previous run jumps past every id the
	// browsers may have seen from it.
	floor    int64
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

	// A follower (Follow) is fed by Publish straight into c while it keeps
	// up; when c is full a catch-up goroutine (behind) owns c and feeds it
	// from the stream's events until it has caught up. So an open browser
	// stream costs a small channel, not a goroutine.
	follow    bool
	s         *stream
	last      int64 // id of the last event put into c
	behind    bool
	cancelled bool
	ctx       context.Context
	stop      func() bool // releases the context.AfterFunc
	// wake, when the follower's context carries one (bff.WithWake), is
	// told each time an event is put in c and when c closes.
	wake func()
}

// NewHub returns a hub that keeps ended streams for retain so late
// subscribers can still replay them. now may be nil (time.Now).
func NewHub(retain time.Duration, now func() time.Time) *Hub {
	if now == nil {
		now = time.Now
	}
	return &Hub{retain: retain, now: now, buffer: 256, followBuffer: 4, streams: map[string]*stream{}}
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
	h.publish(key, name, data)
}

// publish is Publish returning the event published; ok is false when the
// stream had ended.
func (h *Hub) publish(key, name string, data any) (Event, bool) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}") // only our own event types are published
	}
	return h.add(key, Event{Name: name, Data: b})
}

// add appends ev to key's stream, under the stream's next id or, when ev.ID
// is past it, under ev.ID (an event copied from the log), and delivers it.
func (h *Hub) add(key string, ev Event) (Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[key]
	if s == nil {
		s = &stream{subs: map[*Subscription]struct{}{}}
		h.streams[key] = s
	}
	if s.closed {
		return Event{}, false
	}
	ev.ID = max(ev.ID, s.next())
	if n := len(s.events); n > 0 && ev.Name == bff.EventQueued && s.events[n-1].Name == bff.EventQueued {
		// A place in the queue supersedes the one before: a subscriber
		// joining or resuming needs only the latest, and a turn waiting
		// behind thousands would otherwise keep an event per grant ahead.
		// Ids stay increasing; live followers still get each one.
		s.events[n-1] = ev
	} else {
		s.events = append(s.events, ev)
	}
	for sub := range s.subs {
		if sub.follow {
			if sub.behind || ev.ID <= sub.last {
				continue
			}
			select {
			case sub.c <- ev:
				sub.last = ev.ID
				sub.notify()
			default:
				h.startCatchUp(sub)
			}
			continue
		}
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
	return ev, true
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
	replay = append(replay, s.events[s.from(after):]...)
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
	sub.cancelled = true
	if sub.follow {
		h.drop(sub.s, sub)
		return
	}
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

// drop removes sub and closes its channel, unless a catch-up goroutine
// owns it (that one closes it). Caller holds h.mu.
func (h *Hub) drop(s *stream, sub *Subscription) {
	delete(s.subs, sub)
	if sub.closed || sub.behind {
		return
	}
	sub.closed = true
	close(sub.c)
	if sub.stop != nil {
		sub.stop()
	}
	sub.notify()
}

// notify tells a follower's reader that c has something (or closed).
func (sub *Subscription) notify() {
	if sub.wake != nil {
		sub.wake()
	}
}

// sweep forgets ended streams older than retain, at most once a second:
// it walks every stream (thousands under load) while Publish waits for the
// lock. Caller holds h.mu.
func (h *Hub) sweep() {
	now := h.now()
	if now.Sub(h.swept) < time.Second {
		return
	}
	h.swept = now
	cut := now.Add(-h.retain)
	for k, s := range h.streams {
		if s.closed && s.closedAt.Before(cut) {
			delete(h.streams, k)
		}
	}
}

// Follow delivers every event of key's stream after after, in order and
// once each, then closes the channel: when the stream ends, or when ctx
// ends. It catches up by itself when the reader falls behind, so the caller
// never handles resumption. found is false when the hub has no stream for
// key. A follower that keeps up costs no goroutine: Publish delivers into
// its channel, and ctx is watched with context.AfterFunc; with a wake in
// ctx (bff.WithWake) its reader needs none either.
func (h *Hub) Follow(ctx context.Context, key string, after int64) (events <-chan Event, found bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[key]
	if s == nil {
		return nil, false
	}
	after = max(after, 0)
	c := make(chan Event, h.followBuffer)
	f := &Subscription{C: c, c: c, hub: h, key: key, after: after, follow: true, s: s, last: after, ctx: ctx, wake: bff.WakeOf(ctx)}
	for i := s.from(f.last); i < len(s.events); i++ {
		select {
		case c <- s.events[i]:
			f.last = s.events[i].ID
			continue
		default:
		}
		h.startCatchUp(f)
		break
	}
	if s.closed && !f.behind {
		f.closed = true
		close(c)
		f.notify()
		return c, true
	}
	if f.last > after {
		f.notify()
	}
	if !s.closed {
		s.subs[f] = struct{}{}
	}
	f.stop = context.AfterFunc(ctx, f.Cancel)
	return c, true
}

// startCatchUp hands f's channel to a goroutine that feeds it from the
// stream's events. Caller holds h.mu.
func (h *Hub) startCatchUp(f *Subscription) {
	f.behind = true
	h.catchingUp.Add(1)
	h.catchUps.Add(1)
	go h.catchUp(f)
}

// catchUp feeds f from its stream's events until it has caught up (then
// Publish delivers again), the stream has ended (then it closes the
// channel), or f is cancelled.
func (h *Hub) catchUp(f *Subscription) {
	defer h.catchingUp.Add(-1)
	for {
		h.mu.Lock()
		i := f.s.from(f.last)
		if f.cancelled || (i >= len(f.s.events) && f.s.closed) {
			f.behind = false
			h.drop(f.s, f)
			h.mu.Unlock()
			return
		}
		if i >= len(f.s.events) {
			f.behind = false // caught up: Publish delivers the next one
			h.mu.Unlock()
			return
		}
		ev := f.s.events[i]
		h.mu.Unlock()
		select {
		case f.c <- ev:
			h.mu.Lock()
			f.last = ev.ID
			f.notify()
			h.mu.Unlock()
		case <-f.ctx.Done():
			h.mu.Lock()
			f.cancelled = true
			h.mu.Unlock()
		}
	}
}

// next is the id of the stream's next event.
func (s *stream) next() int64 {
	id := s.floor
	if n := len(s.events); n > 0 {
		id = max(id, s.events[n-1].ID+1)
	}
	return max(id, 1)
}

// from is the index of the first event with an id above after.
func (s *stream) from(after int64) int {
	return sort.Search(len(s.events), func(i int) bool { return s.events[i].ID > after })
}
