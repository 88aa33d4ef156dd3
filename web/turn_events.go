package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
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
	s.stream(c, "turn", release, st.run)
	return nil
}

type turnStream struct {
	s        *Server
	owner    string
	intakeID string
	index    int
	after    int64
	csrf     string
}

func (t *turnStream) run(w *eventStream) {
	// Headers leave with the first flushed bytes; say how soon to reconnect.
	if !w.write("retry: 2000\n: ok\n\n") {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the follower when the browser goes or we end
	events, found := t.s.patients.FollowTurn(ctx, t.intakeID, t.index, t.after)
	if !found {
		// The turn's stream is gone (it ended long ago, or the app
		// restarted): answer from the store. Or the turn runs on another
		// replica that has not logged its first events yet (it does within
		// 100 ms): wait for them here rather than end the stream, which
		// the browser would open again only after the retry hint, to get
		// the reply's start in one burst.
		wait := time.NewTicker(followPoll)
		defer wait.Stop()
		for tries := 0; !found; tries++ {
			if t.settledFromStore(w, t.after+1) || tries == followTries {
				return
			}
			select {
			case <-wait.C:
			case <-t.s.done:
				w.write("retry: 1000\n\n")
				return
			}
			events, found = t.s.patients.FollowTurn(ctx, t.intakeID, t.index, t.after)
		}
	}
	heartbeat := time.NewTicker(t.s.cfg.Limits.Heartbeat)
	defer heartbeat.Stop()
	last := t.after
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				// The stream ended with nothing more for this browser (it
				// saw ids of a runner that died, say): the store has the
				// outcome once the turn settled.
				t.settledFromStore(w, last+1)
				return
			}
			last = ev.ID
			if !t.send(w, ev) || settles(ev) {
				return
			}
		case <-heartbeat.C:
			if !w.write(": heartbeat\n\n") {
				return // the browser is gone
			}
		case <-t.s.done:
			// Shutting down: the browser reconnects (with Last-Event-ID)
			// to whichever instance serves next.
			w.write("retry: 1000\n\n")
			return
		}
	}
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
