package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/relay"
	"github.com/clinical-intake/intake-web/templates"
)

// turnEvents is the EventSource of one turn: every event after Last-Event-ID,
// then live events, heartbeats while idle, and a last event (final or failed)
// carrying the rendered exchange, state and composer, after which the page
// closes the stream.
func (s *Server) turnEvents(c *fiber.Ctx) error {
	id := utils.CopyString(c.Params("id"))
	n, err := strconv.Atoi(c.Params("n"))
	if err != nil || n < 1 {
		return fiber.ErrNotFound
	}
	owner := s.owner(c, false)
	if _, _, err := s.svc.Turn(c.UserContext(), owner, id, n); err != nil {
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
	key := bff.TurnKey(t.intakeID, t.index)
	// Headers leave with the first flushed bytes; say how soon to reconnect.
	if !w.write("retry: 2000\n: ok\n\n") {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the follower when the browser goes or we end
	events, found := t.s.svc.Hub().Follow(ctx, key, t.after)
	if !found {
		// The turn's stream is gone (it ended long ago, or the app
		// restarted): answer from the store.
		t.settledFromStore(w, t.after+1)
		return
	}
	heartbeat := time.NewTicker(t.s.cfg.Limits.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok || !t.send(w, ev) || settles(ev) {
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

func settles(ev relay.Event) bool { return ev.Name == bff.EventFinal || ev.Name == bff.EventFailed }

// send writes one event; a settling event gets the rendered fragments.
func (t *turnStream) send(w *eventStream, ev relay.Event) bool {
	data := ev.Data
	if settles(ev) {
		var err error
		if data, err = t.settledData(ev.Data); err != nil {
			t.s.log.Error("render settled turn", "encounter_id", t.intakeID, "turn", t.index, "err", err)
			data = ev.Data
		}
	}
	return w.write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Name, data))
}

// settledFromStore answers a reconnect for a turn whose stream is gone.
func (t *turnStream) settledFromStore(w *eventStream, id int64) {
	ctx := context.Background()
	_, turn, err := t.s.svc.Turn(ctx, t.owner, t.intakeID, t.index)
	if err != nil || turn.Status.Pending() {
		return // the browser retries in a moment
	}
	name := bff.EventFinal
	if turn.Status == bff.TurnFailed {
		name = bff.EventFailed
	}
	raw, _ := json.Marshal(bff.SettledData{Index: turn.Index, Status: string(turn.Status), Message: turn.ErrorMessage})
	t.send(w, relay.Event{ID: id, Name: name, Data: raw})
}

// settledData adds the rendered exchange, state panel and composer to a
// final or failed event, from what the store now holds.
func (t *turnStream) settledData(raw []byte) ([]byte, error) {
	var d struct {
		bff.SettledData
		Terminal     bool   `json:"terminal"`
		HeadHTML     string `json:"head_html"`
		TurnHTML     string `json:"turn_html"`
		StateHTML    string `json:"state_html"`
		ComposerHTML string `json:"composer_html"`
	}
	if err := json.Unmarshal(raw, &d.SettledData); err != nil {
		return nil, err
	}
	ctx := context.Background()
	in, turns, err := t.s.svc.Intake(ctx, t.owner, t.intakeID)
	if err != nil {
		return nil, err
	}
	now := t.s.now()
	for i, turn := range turns {
		if turn.Index == t.index {
			view := withRetry(turnView(turn, t.csrf), turn, i == len(turns)-1, in, t.csrf, now)
			if d.TurnHTML, err = fragment(ctx, templates.TurnItem(view)); err != nil {
				return nil, err
			}
		}
	}
	head := templates.IntakePage{Status: in.Status, StatusNote: statusNote(in, now), TimeLeft: timeLeft(in, now), ExpiresAt: in.ExpiresAt.UTC().Format(time.RFC3339)}
	if d.HeadHTML, err = fragment(ctx, templates.IntakeHead(head)); err != nil {
		return nil, err
	}
	if d.StateHTML, err = fragment(ctx, templates.StatePanel(stateView(in))); err != nil {
		return nil, err
	}
	if d.ComposerHTML, err = fragment(ctx, templates.ComposerPanel(composerView(in, turns, t.csrf, now))); err != nil {
		return nil, err
	}
	d.Terminal = in.Terminal
	return json.Marshal(d)
}
