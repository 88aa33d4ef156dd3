package intakes_test

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/sandboxtest"
)

// timedHub records, for each turn, when each queued event and the started
// event were published (on the bubble's clock).
type timedHub struct {
	*relay.Hub
	mu      sync.Mutex
	queued  map[string][]shown
	started map[string]time.Time
}

type shown struct {
	at time.Time
	q  bff.QueuedData
}

func (s shown) deadline() time.Time { return s.at.Add(time.Duration(s.q.WaitSeconds) * time.Second) }

func (h *timedHub) Publish(key, name string, data any) {
	h.mu.Lock()
	switch name {
	case bff.EventQueued:
		h.queued[key] = append(h.queued[key], shown{time.Now(), data.(bff.QueuedData)})
	case bff.EventStarted:
		h.started[key] = time.Now()
	}
	h.mu.Unlock()
	h.Hub.Publish(key, name, data)
}

// countdownRig is the core in front of an in-memory sandbox with no rate
// limit of its own, paced by a pacer of perMinute and no margin.
func countdownRig(t *testing.T, perMinute int, retryAfter time.Duration) (core, *timedHub, *sandboxtest.Server, *pacer.Pacer) {
	cfg := sandbox.DefaultConfig()
	cfg.Keys, cfg.Engine, cfg.RPM, cfg.FragmentDelay = []string{key}, enginetest.Scripted{}, 0, time.Millisecond
	cfg.Faults, cfg.FaultRetryAfter = retryAfter > 0, retryAfter
	sb := sandboxtest.Start(t, cfg)
	gate := pacer.New(pacer.Config{Rules: pacing.Rules{PerMinute: perMinute, Margin: -1}})
	client, _ := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, Gate: gate, HTTPClient: sb.Client})
	db := sqlitetest.MustOpenDB(t)
	hub := &timedHub{Hub: relay.NewHub(time.Minute, nil), queued: map[string][]shown{}, started: map[string]time.Time{}}
	svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: hub})
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return svc, hub, sb, gate
}

// spend takes n of the gate's requests now, as other callers would.
func spend(t *testing.T, gate *pacer.Pacer, n int) {
	t.Helper()
	for range n {
		release, err := gate.Wait(t.Context(), intakeapi.Call{Op: intakeapi.OpHealth, Priority: intakeapi.PriorityBackground, Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		release(intakeapi.Outcome{Status: 200})
	}
}

func startAndSend(t *testing.T, svc core, sub, message string) (string, *bff.Turn) {
	t.Helper()
	ctx := context.Background()
	in, err := svc.StartIntake(ctx, "o", bff.StartForm{Synthetic: true, SubmissionID: sub})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := svc.SendTurn(ctx, "o", in.ID, message, sub+"-1")
	if err != nil {
		t.Fatal(err)
	}
	return in.ID, turn
}

// shrinking fails the test if a deadline in ws is later than the one before
// it, except where the event says the service asked for more time. A wait
// of 0 ("any moment now") is no deadline.
func shrinking(t *testing.T, ws []shown) {
	t.Helper()
	for i := 1; i < len(ws); i++ {
		if ws[i].q.Reason != "" || ws[i].q.WaitSeconds == 0 {
			continue
		}
		if ws[i].deadline().After(ws[i-1].deadline()) {
			t.Errorf("event %d: the shown wait grew by %v with no reason given: %+v after %+v",
				i, ws[i].deadline().Sub(ws[i-1].deadline()), ws[i].q, ws[i-1].q)
		}
	}
}

// TestAFirstMessageShowsOneWaitThatOnlyShrinks: a first message creates
// the intake upstream, then sends the turn. With the window freeing one
// slot at 60 s and the next at 90 s, the patient is shown from the start a
// wait that covers both (90 s, not the creation's 60 s and then 30 s more),
// the wait only shrinks, and the turn starts when it said.
func TestAFirstMessageShowsOneWaitThatOnlyShrinks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, hub, _, gate := countdownRig(t, 3, 0)
		ctx := context.Background()
		t0 := time.Now()
		spend(t, gate, 1)
		time.Sleep(30 * time.Second)
		spend(t, gate, 2)                                  // the window frees one slot at 60 s, the next at 90 s
		b, turn := startAndSend(t, svc, "b", "chest pain") // at 30 s: creation at 60 s, turn at 90 s
		svc.WaitSettled(ctx, b, turn.Index)
		key := bff.TurnKey(b, turn.Index)
		hub.mu.Lock()
		ws, started := hub.queued[key], hub.started[key]
		hub.mu.Unlock()
		if len(ws) == 0 {
			t.Fatal("the patient was never shown a wait")
		}
		if got := ws[0].deadline().Sub(t0); got < 90*time.Second || got > 91*time.Second {
			t.Errorf("first shown: the turn goes %v after start; want 1m30s (the creation and the turn as one wait)", got)
		}
		shrinking(t, ws)
		for _, w := range ws {
			if w.q.Reason != "" {
				t.Errorf("a reason given though the service asked for nothing: %+v", w.q)
			}
		}
		if got := started.Sub(t0); got < 90*time.Second || got > 91*time.Second {
			t.Errorf("the reply started at %v, want 1m30s", got)
		}
	})
}

// TestARetryAfterIsShownAndSaid: the turn's send draws a 429 with a
// Retry-After of 40 s. The shown wait grows by that much, once, with the
// reason given (the page says it in words); it never grows otherwise; the
// reply starts no earlier than the pause ends and no later than shown.
func TestARetryAfterIsShownAndSaid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, hub, sb, gate := countdownRig(t, 3, 40*time.Second)
		ctx := context.Background()
		t0 := time.Now()
		spend(t, gate, 3) // the window frees at 60 s
		// The next turn of any intake draws a rate_limited.
		req, _ := http.NewRequest("POST", sb.URL+"/v1/sandbox/faults", bytes.NewReader([]byte(`{"kind":"rate_limited"}`)))
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := sb.Client.Do(req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("arm: %v %v", err, res)
		}
		res.Body.Close()

		b, turn := startAndSend(t, svc, "b", "chest pain") // creation and turn at 60 s; the turn refused, sent again at 100 s
		svc.WaitSettled(ctx, b, turn.Index)
		key := bff.TurnKey(b, turn.Index)
		hub.mu.Lock()
		ws, started := hub.queued[key], hub.started[key]
		hub.mu.Unlock()
		shrinking(t, ws)
		said := 0
		for _, w := range ws {
			if w.q.Reason == bff.QueuedServiceAsked {
				said++
				if d := w.deadline().Sub(t0); w.q.AddedSeconds < 40 || w.q.AddedSeconds > 41 || d < 100*time.Second || d > 101*time.Second {
					t.Errorf("the growth said: %+v at %v, want 40 s more, to 1m40s", w.q, w.at.Sub(t0))
				}
			}
		}
		if said != 1 {
			t.Errorf("the growth was said %d times, want once", said)
		}
		if got := started.Sub(t0); got < 100*time.Second || got > 101*time.Second {
			t.Errorf("the reply started at %v, want 1m40s", got)
		}
	})
}
