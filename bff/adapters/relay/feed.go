package relay

import (
	"encoding/json"
	"sync"
)

// Feed is an endless broadcast (the clinicians' worklist updates): the last
// few events are kept so a reconnecting subscriber resumes from its last id;
// one that was away longer is told to reload everything instead.
type Feed struct {
	keep int

	mu     sync.Mutex
	next   int64
	recent []Event // the last keep events, oldest first
	subs   map[chan Event]struct{}
}

// NewFeed returns a feed that keeps the last keep events for resuming.
func NewFeed(keep int) *Feed {
	return &Feed{keep: keep, next: 1, subs: map[chan Event]struct{}{}}
}

// Publish sends an event to every subscriber. A subscriber too far behind is
// cut loose (its channel closes) and resumes from its last id.
func (f *Feed) Publish(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte("{}")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := Event{ID: f.next, Name: name, Data: b}
	f.next++
	f.recent = append(f.recent, ev)
	if len(f.recent) > f.keep {
		f.recent = f.recent[len(f.recent)-f.keep:]
	}
	for c := range f.subs {
		select {
		case c <- ev:
		default:
			delete(f.subs, c)
			close(c)
		}
	}
}

// Subscribe returns the kept events after after, a channel of live events,
// a cancel function, and gap: true when events after after were already
// dropped, or after is an id this feed never gave (the browser comes from
// another replica, whose feed counts on its own), so the subscriber must
// reload its whole view.
func (f *Feed) Subscribe(after int64) (replay []Event, live <-chan Event, cancel func(), gap bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if after > f.next-1 {
		gap = true
	}
	if after > 0 && after < f.next-1 {
		oldest := f.next // no kept events: anything missed is lost
		if len(f.recent) > 0 {
			oldest = f.recent[0].ID
		}
		gap = after+1 < oldest
	}
	for _, ev := range f.recent {
		if ev.ID > after {
			replay = append(replay, ev)
		}
	}
	c := make(chan Event, 64)
	f.subs[c] = struct{}{}
	var once sync.Once
	cancel = func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if _, ok := f.subs[c]; ok {
				delete(f.subs, c)
				close(c)
			}
		})
	}
	return replay, c, cancel, gap
}

// LastID is the id of the newest event (0 before any).
func (f *Feed) LastID() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next - 1
}

// Subscribers counts live subscribers.
func (f *Feed) Subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}
