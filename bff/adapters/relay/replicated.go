package relay

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// Replicated is a Hub shared by several replicas through the database's
// turn event log (bff.TurnEventLog). Events a turn publishes here go to
// local followers at once and to the log in batches; a browser on another
// replica follows the turn from the log (a mirror of it in that replica's
// hub), woken by the database's notifications (Wake) and catching up from
// the table after a missed one (CatchUp). The log is the source of truth:
// ids are the log's, so a follower that moves replica resumes with its
// Last-Event-ID, with no gap and no duplicate. When a replica takes a turn
// over (Resume), its events continue after the last one logged.
//
// Written by hand: no library relays SSE event streams across processes
// through PostgreSQL with resumable ids; the parts that are hard (ordering,
// notification at commit, catching up) are the database's.
type Replicated struct {
	*Hub
	log    bff.TurnEventLog
	logger *slog.Logger
	every  time.Duration // how long events wait to be logged

	mu      sync.Mutex
	pending map[string][]Event  // published here, not logged yet
	mirrors map[string]*mirror  // turns run elsewhere, followed here
	closing map[string]struct{} // closed here: log what is pending, then forget
	kick    chan struct{}       // wakes the flusher early (a settling event)
}

// mirror is one turn run by another replica, copied into the local hub.
type mirror struct {
	mu   sync.Mutex // one catch-up at a time, in order
	done bool
}

// NewReplicated wraps hub. Run must be running for events to reach the log.
func NewReplicated(hub *Hub, log bff.TurnEventLog, logger *slog.Logger, flushEvery time.Duration) *Replicated {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if flushEvery <= 0 {
		flushEvery = 100 * time.Millisecond
	}
	return &Replicated{Hub: hub, log: log, logger: logger, every: flushEvery,
		pending: map[string][]Event{}, mirrors: map[string]*mirror{}, closing: map[string]struct{}{}, kick: make(chan struct{}, 1)}
}

// Publish publishes to local followers and queues the event for the log.
func (r *Replicated) Publish(key, name string, data any) {
	ev, ok := r.Hub.publish(key, name, data)
	if !ok {
		return
	}
	r.mu.Lock()
	r.pending[key] = append(r.pending[key], ev)
	r.mu.Unlock()
	if settles(name) {
		r.nudge()
	}
}

// Close ends key's local stream; its pending events are logged at the next
// flush.
func (r *Replicated) Close(key string) {
	r.Hub.Close(key)
	r.mu.Lock()
	r.closing[key] = struct{}{}
	r.mu.Unlock()
	r.nudge()
}

func (r *Replicated) nudge() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run logs published events every flushEvery (at once for a settling
// event) until ctx ends, then logs what is left.
func (r *Replicated) Run(ctx context.Context) {
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			r.flush(context.WithoutCancel(ctx))
			return
		case <-tick.C:
		case <-r.kick:
		}
		r.flush(ctx)
	}
}

// flush appends every pending event to the log, a statement per turn.
// Events that fail to log stay pending and are tried again.
func (r *Replicated) flush(ctx context.Context) {
	r.mu.Lock()
	batch, closing := r.pending, r.closing
	r.pending, r.closing = map[string][]Event{}, map[string]struct{}{}
	r.mu.Unlock()
	for key, evs := range batch {
		if err := r.log.AppendTurnEvents(ctx, key, evs); err != nil {
			r.logger.Error("log turn events; trying again", "key", key, "events", len(evs), "err", err)
			r.mu.Lock()
			r.pending[key] = append(evs, r.pending[key]...)
			if _, ok := closing[key]; ok {
				r.closing[key] = struct{}{}
			}
			r.mu.Unlock()
		}
	}
}

// Resume prepares key's local stream for this replica to continue a turn
// another replica started: it holds every event logged so far, so the
// events published next continue their ids.
func (r *Replicated) Resume(ctx context.Context, key string) error {
	r.mu.Lock()
	m := r.mirrors[key]
	delete(r.mirrors, key) // this replica writes it from now on
	r.mu.Unlock()
	if m != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.done = true // a notification that took it before: this replica writes the stream now
	}
	r.Hub.Open(key)
	err := r.copyFromLog(ctx, key)
	// The dead replica may have shown its browsers events it never logged:
	// ids jump past any it can have given.
	r.Hub.jump(key)
	return err
}

// Follow delivers key's events after after. A turn this replica runs (or
// mirrors) is followed from memory; otherwise, when the log has events of
// key, the turn is mirrored from the log. found is false when neither has
// any: the turn has no events yet anywhere, or its events are gone.
func (r *Replicated) Follow(ctx context.Context, key string, after int64) (<-chan Event, bool) {
	if events, found := r.Hub.Follow(ctx, key, after); found {
		return events, true
	}
	if !r.mirror(ctx, key) {
		return nil, false
	}
	return r.Hub.Follow(ctx, key, after)
}

// mirror starts copying key from the log; false when the log has nothing
// of it.
//
// The mirror is registered only once the log has events of key: one
// registered before the read, and forgotten when the read found nothing,
// could be taken by a notification meanwhile, whose catch-up then opened
// the stream unmirrored; the browser found it, and no notification after
// reached it (CI saw a follower stuck at "started" for 90 s). Nothing is
// lost by registering after the read: the catch-up below, after the
// registration, reads every event logged before it, and notifications wake
// it for the rest.
func (r *Replicated) mirror(ctx context.Context, key string) bool {
	last, err := r.log.LastTurnEventID(ctx, key)
	if err != nil || last == 0 {
		if err != nil {
			r.logger.Error("read a turn's event log", "key", key, "err", err)
		}
		return false
	}
	r.mu.Lock()
	m := r.mirrors[key]
	if m == nil {
		m = &mirror{}
		r.mirrors[key] = m
	}
	r.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	r.Hub.Open(key)
	r.catchUp(ctx, key, m)
	return true
}

// Wake is the database's notification that key has events up to lastID:
// a mirrored turn catches up.
func (r *Replicated) Wake(key string, lastID int64) {
	r.mu.Lock()
	m := r.mirrors[key]
	r.mu.Unlock()
	if m == nil || r.Hub.lastID(key) >= lastID {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r.catchUp(context.Background(), key, m)
}

// CatchUp brings every mirrored turn up to the log: after the database
// connection came back, when notifications may have been lost.
func (r *Replicated) CatchUp(ctx context.Context) {
	r.mu.Lock()
	keys := make(map[string]*mirror, len(r.mirrors))
	for k, m := range r.mirrors {
		keys[k] = m
	}
	r.mu.Unlock()
	for key, m := range keys {
		m.mu.Lock()
		r.catchUp(ctx, key, m)
		m.mu.Unlock()
	}
}

// catchUp copies key's new logged events into the local stream, and ends
// the mirror at the turn's settling event. Caller holds m.mu.
func (r *Replicated) catchUp(ctx context.Context, key string, m *mirror) {
	if m.done {
		return
	}
	if err := r.copyFromLog(ctx, key); err != nil {
		r.logger.Error("catch up a mirrored turn", "key", key, "err", err)
		return
	}
	if r.Hub.settled(key) {
		m.done = true
		r.Hub.Close(key)
		r.forget(key, m)
	}
}

// copyFromLog appends the logged events of key after the local stream's
// last id.
func (r *Replicated) copyFromLog(ctx context.Context, key string) error {
	evs, err := r.log.TurnEvents(ctx, key, r.Hub.lastID(key))
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if !r.Hub.append(key, ev) {
			break // out of order: the next catch-up reads from the new last id
		}
	}
	return nil
}

func (r *Replicated) forget(key string, m *mirror) {
	r.mu.Lock()
	if r.mirrors[key] == m {
		delete(r.mirrors, key)
	}
	r.mu.Unlock()
}

// settles reports whether an event of this name ends a turn.
func settles(name string) bool { return name == bff.EventFinal || name == bff.EventFailed }

// The Hub's side of replication: publishing with the id returned, appending
// an event with its own id, and reading where a stream stands.

// append adds ev, with its own id, to key's stream when that id comes
// after the stream's last; true when it did or already had it.
func (h *Hub) append(key string, ev Event) bool {
	if ev.ID <= h.lastID(key) {
		return true
	}
	got, ok := h.add(key, ev)
	return ok && got.ID == ev.ID
}

// lastID is the id of key's last event, 0 if none.
func (h *Hub) lastID(key string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.streams[key]; s != nil && len(s.events) > 0 {
		return s.events[len(s.events)-1].ID
	}
	return 0
}

// jump makes key's next id larger than any a previous runner of the turn
// can have given its browsers: the clock in microseconds, which no count of
// one turn's events reaches, and which grows with every takeover.
func (h *Hub) jump(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.streams[key]; s != nil {
		s.floor = max(s.next(), h.now().UnixMicro())
	}
}

// settled reports whether key's stream holds a settling event.
func (h *Hub) settled(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.streams[key]
	if s == nil {
		return false
	}
	for i := len(s.events) - 1; i >= 0; i-- {
		if settles(s.events[i].Name) {
			return true
		}
	}
	return false
}

// Resume on a Hub alone (one replica, after a restart) opens the stream
// with ids past any the previous run gave its browsers: a browser that
// reconnects with the last id it saw gets the outcome.
func (h *Hub) Resume(_ context.Context, key string) error {
	h.Open(key)
	h.jump(key)
	return nil
}
