package web

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// turnEvents is the EventSource of one turn: every event after Last-Event-ID,
// then live events, heartbeats while idle, and a last event (final or failed)
// carrying the rendered exchange, state and composer, after which the page
// closes the stream.
func (s *Server) turnEvents(c *fiber.Ctx) error {
	id := param(c, "id")
	n, err := strconv.Atoi(param(c, "n"))
	if err != nil || n < 1 {
		return fiber.ErrNotFound
	}
	owner := s.owner(c, false)
	if _, _, err := s.patients.Turn(c.UserContext(), owner, id, n); err != nil {
		return err
	}
	after, _ := strconv.ParseInt(c.Get("Last-Event-ID", c.Query("last_event_id")), 10, 64)
	release, err := s.caps.openStream(owner)
	if err != nil {
		return err
	}
	st := &turnStream{s: s, owner: owner, intakeID: id, index: n, after: after, csrf: s.csrfToken(c)}
	s.streamHandedOn(c, "turn", release, st.start)
	return nil
}

// turnStream is one browser's stream of a turn. Idle (a patient waiting in
// the queue, or for the reply's next fragment), it holds no goroutine: the
// relay wakes it when an event comes (bff.WithWake), a timer when a
// heartbeat is due, the server's stop when it shuts down, and each starts a
// goroutine that writes what there is (drain) and ends.
type turnStream struct {
	s        *Server
	owner    string
	intakeID string
	index    int
	after    int64
	csrf     string

	w      *eventStream
	events <-chan bff.Event
	last   int64       // id of the last event written
	cancel func()      // stops the follower
	beat   *time.Timer // the next heartbeat
	quit   func() bool // releases the watch on the server's stop

	mu       sync.Mutex
	busy     bool // a goroutine is writing (start, then drain)
	pending  bool // woken while busy: look again before handing on
	beatDue  bool
	stopping bool // the server is shutting down
	ended    bool
}

// start writes the stream's first lines and what the turn has already
// published, then hands the stream on (drain).
func (t *turnStream) start(w *eventStream) {
	t.w, t.busy, t.last = w, true, t.after // this goroutine writes until drain hands on
	// Headers leave with the first flushed bytes; say how soon to reconnect.
	if !w.write("retry: 2000\n: ok\n\n") {
		w.end()
		return
	}
	ctx, cancel := context.WithCancel(bff.WithWake(context.Background(), t.wake))
	t.cancel = cancel // stops the follower when the browser goes or we end
	events, found := t.s.patients.FollowTurn(ctx, t.intakeID, t.index, t.after)
	if !found {
		// The turn's stream is gone (it ended long ago, or the app
		// restarted): answer from the store. Or the turn runs on another
		// replica that has not logged its first events yet (it does within
		// 100 ms): wait for them here rather than end the stream, which
		// the browser would open again only after the retry hint, to get
		// the reply's start in one burst.
		if !t.awaitFollow(ctx, &events, &found) {
			cancel()
			w.end()
			return
		}
	}
	t.events = events
	t.beat = time.AfterFunc(t.s.cfg.Limits.Heartbeat, func() { t.poke(&t.beatDue) })
	t.quit = context.AfterFunc(t.s.stopping, func() { t.poke(&t.stopping) })
	t.drain()
}

// awaitFollow polls for the turn's stream; false when the stream ended
// first (answered from the store, or the server stopping).
func (t *turnStream) awaitFollow(ctx context.Context, events *<-chan bff.Event, found *bool) bool {
	wait := time.NewTicker(followPoll)
	defer wait.Stop()
	for tries := 0; !*found; tries++ {
		if t.settledFromStore(t.w, t.after+1) || tries == followTries {
			return false
		}
		select {
		case <-wait.C:
		case <-t.s.done:
			t.w.write("retry: 1000\n\n")
			return false
		}
		*events, *found = t.s.patients.FollowTurn(ctx, t.intakeID, t.index, t.after)
	}
	return true
}

// wake is the relay's: an event is in t.events, or it closed. It runs
// under the relay's lock: it only starts a writer if none runs.
func (t *turnStream) wake() { t.poke(nil) }

// poke sets flag (when not nil) and has a goroutine write what there is:
// the one writing already, or a new one.
func (t *turnStream) poke(flag *bool) {
	t.mu.Lock()
	if flag != nil {
		*flag = true
	}
	if t.busy || t.ended {
		t.pending = true
		t.mu.Unlock()
		return
	}
	t.busy = true
	t.mu.Unlock()
	go t.drain()
}

// drain writes every event waiting, a heartbeat when one is due, the retry
// hint when the server stops, and returns once there is nothing more,
// ending the stream after its last event or when the browser is gone.
func (t *turnStream) drain() {
	defer func() {
		if v := recover(); v != nil {
			t.s.log.Error("event stream panic", "stream", "turn", "panic", v, "stack", string(debug.Stack()))
			t.finish()
		}
	}()
	for {
		t.mu.Lock()
		stopping, beat := t.stopping, t.beatDue
		t.beatDue, t.pending = false, false
		t.mu.Unlock()
		if stopping {
			// Shutting down: the browser reconnects (with Last-Event-ID)
			// to whichever instance serves next.
			t.w.write("retry: 1000\n\n")
			t.finish()
			return
		}
		if beat {
			if !t.w.write(": heartbeat\n\n") {
				t.finish() // the browser is gone
				return
			}
			t.beat.Reset(t.s.cfg.Limits.Heartbeat)
		}
	events:
		for {
			select {
			case ev, ok := <-t.events:
				if !ok {
					// The stream ended with nothing more for this browser (it
					// saw ids of a runner that died, say): the store has the
					// outcome once the turn settled.
					t.settledFromStore(t.w, t.last+1)
					t.finish()
					return
				}
				t.last = ev.ID
				if !t.send(t.w, ev) || settles(ev) {
					t.finish()
					return
				}
			default:
				break events
			}
		}
		t.mu.Lock()
		if !t.pending {
			t.busy = false // the next wake starts a writer
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}

// finish ends the stream, from the goroutine writing it.
func (t *turnStream) finish() {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
	t.cancel()
	t.beat.Stop()
	t.quit()
	t.w.end()
}

func settles(ev bff.Event) bool { return ev.Name == bff.EventFinal || ev.Name == bff.EventFailed }

// send writes one event; a settling event gets the rendered fragments.
func (t *turnStream) send(w *eventStream, ev bff.Event) bool {
	data := ev.Data
	if settles(ev) {
		var err error
		if data, err = t.s.settled.render(bff.TurnKey(t.intakeID, t.index), ev.ID, t.csrf, ev.Data, t.s.renderSettled); err != nil {
			t.s.log.Error("render settled turn", "intake_id", t.intakeID, "turn", t.index, "err", err)
			data, _ = json.Marshal(settledEvent{Index: t.index, Status: string(bff.TurnFailed),
				Message: "The reply could not be shown. Reload the page to see it."})
		}
	}
	return w.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Name, data))
}

// followPoll and followTries bound how long a stream waits for the first
// events of a turn another replica runs: 5 s, then the browser retries.
const (
	followPoll  = 100 * time.Millisecond
	followTries = 50
)

// settledFromStore answers a reconnect for a turn whose stream is gone. It
// returns false, having sent nothing, while the turn is still pending.
func (t *turnStream) settledFromStore(w *eventStream, id int64) bool {
	ctx := context.Background()
	in, turns, err := t.s.patients.Intake(ctx, t.owner, t.intakeID)
	if err != nil || len(turns) < t.index {
		return true // nothing to wait for: the browser retries in a moment
	}
	if turns[t.index-1].Status.Pending() {
		return false
	}
	turn := turns[t.index-1]
	name := bff.EventFinal
	if turn.Status == bff.TurnFailed {
		name = bff.EventFailed
	}
	_, choices := nextReplies(turns)
	raw, _ := json.Marshal(bff.SettledData{Index: turn.Index, Status: string(turn.Status), Message: turn.ErrorMessage,
		Turn: turn, Intake: in, Choices: choices, Last: t.index == len(turns)})
	t.send(w, bff.Event{ID: id, Name: name, Data: raw})
	return true
}

// settledEvent is what the browser gets as a final or failed event: the
// outcome and the rendered exchange, head, state panel and composer. It is
// built field by field: the core's event also holds the owner id and the
// history, which never go to a browser.
type settledEvent struct {
	Index     int    `json:"index"`
	Status    string `json:"status"`
	Message   string `json:"message,omitempty"`
	Terminal  bool   `json:"terminal"`
	HeadHTML  string `json:"head_html"`
	TurnHTML  string `json:"turn_html"`
	StateHTML string `json:"state_html"`
	// EmergencyHTML is the emergency card, sent when this turn completed
	// and made (or kept) the intake urgent; "" leaves the page's as it is.
	EmergencyHTML string `json:"emergency_html,omitempty"`
	Urgent        bool   `json:"urgent"`
	ComposerHTML  string `json:"composer_html"`
}

// renderSettled renders a settling event from what it carries: no store
// read, whoever follows the turn.
func (s *Server) renderSettled(raw []byte, csrf string) ([]byte, error) {
	var d bff.SettledData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	out := settledEvent{Index: d.Index, Status: d.Status, Message: d.Message}
	if d.Turn == nil || d.Intake == nil {
		return json.Marshal(out) // the page reloads to show it
	}
	ctx, in, now := context.Background(), d.Intake, s.now()
	var err error
	view := withRetry(turnView(d.Turn, csrf), d.Turn, d.Last, in, csrf, now)
	if out.TurnHTML, err = fragment(ctx, templates.TurnItem(view)); err != nil {
		return nil, err
	}
	head := templates.IntakePage{Status: in.Status, StatusNote: statusNote(in, now), TimeLeft: timeLeft(in, now), ExpiresAt: in.ExpiresAt.UTC().Format(time.RFC3339)}
	if out.HeadHTML, err = fragment(ctx, templates.IntakeHead(head)); err != nil {
		return nil, err
	}
	if out.StateHTML, err = fragment(ctx, templates.StatePanel(stateView(in))); err != nil {
		return nil, err
	}
	if out.ComposerHTML, err = fragment(ctx, templates.ComposerPanel(composerFor(in, false, d.Choices, csrf, now))); err != nil {
		return nil, err
	}
	if d.Turn.Status == bff.TurnCompleted && emergency(in) {
		ev := emergencyView(in, []*bff.Turn{d.Turn})
		if out.EmergencyHTML, err = fragment(ctx, templates.EmergencyCard(ev)); err != nil {
			return nil, err
		}
		out.Urgent = true
	}
	out.Terminal = in.Terminal
	return json.Marshal(out)
}
