package intakes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
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

const key = "cis_sb_0123456789abcdef0123456789abcdef"

// core is the patients' service with its runner (their methods do not clash).
type core struct {
	*intakes.Patients
	*intakes.Runner
}

func newCore(d intakes.Deps) core {
	p, r := intakes.New(d)
	return core{p, r}
}

type fixture struct {
	t   *testing.T
	svc core
	hub *relay.Hub
	sb  *sandboxtest.Server
	db  interface {
		bff.IntakeStore
		bff.TurnStore
		bff.HandoffStore
	}
}

// newFixture builds the core in front of a sandbox reached in memory. Call
// it inside a synctest.Test bubble: every wait of the client, the runner and
// the sandbox (backoffs, Retry-After, the runner's handoff retries and
// turn_in_progress waits, slow starts) then passes on the bubble's fake
// clock, at the production durations, without the test waiting for it. (A
// real socket would not do: a goroutine waiting on one is not "durably
// blocked", so the bubble's clock would never move.)
func newFixture(t *testing.T, mutate ...func(*sandbox.Config)) *fixture {
	t.Helper()
	cfg := sandbox.DefaultConfig()
	cfg.Keys, cfg.Engine = []string{key}, enginetest.Scripted{}
	cfg.RPM, cfg.FragmentDelay, cfg.Faults, cfg.FaultRetryAfter = 0, time.Millisecond, true, time.Second
	cfg.SlowStart = 2 * time.Second
	for _, m := range mutate {
		m(&cfg)
	}
	sb := sandboxtest.Start(t, cfg)
	client, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, HTTPClient: sb.Client})
	if err != nil {
		t.Fatal(err)
	}
	db := sqlitetest.MustOpenDB(t)
	hub := relay.NewHub(time.Minute, nil)
	svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: hub})
	t.Cleanup(func() { _ = svc.Shutdown(context.Background()) })
	return &fixture{t: t, svc: svc, hub: hub, sb: sb, db: db}
}

func (f *fixture) start() string {
	f.t.Helper()
	in, err := f.svc.StartIntake(context.Background(), "owner-1", bff.StartForm{Synthetic: true, SubmissionID: f.t.Name()})
	if err != nil {
		f.t.Fatal(err)
	}
	return in.ID
}

// send sends a streaming turn and waits until it settles; it returns the
// stored turn and the events the relay published.
func (f *fixture) send(id, message string) (*bff.Turn, []relay.Event) {
	return f.sendMode(id, message, false)
}

func (f *fixture) sendMode(id, message string, blocking bool) (*bff.Turn, []relay.Event) {
	f.t.Helper()
	ctx := context.Background()
	sendTurn := f.svc.SendTurn
	if blocking {
		sendTurn = f.svc.SendTurnBlocking
	}
	t, err := sendTurn(ctx, "owner-1", id, message, "sub-"+message+time.Now().String())
	if err != nil {
		f.t.Fatalf("send %q: %v", message, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	f.svc.WaitSettled(wctx, id, t.Index)
	replay, sub, _ := f.hub.Subscribe(bff.TurnKey(id, t.Index), 0)
	sub.Cancel()
	_, got, err := f.svc.Turn(ctx, "owner-1", id, t.Index)
	if err != nil {
		f.t.Fatal(err)
	}
	return got, replay
}

// arm arms a sandbox fault for the intake's next turn: on its encounter,
// or before its first turn (no encounter yet) on the key, whose faults the
// next turn of any intake takes.
func (f *fixture) arm(id, kind string) {
	f.t.Helper()
	fault := map[string]any{"kind": kind}
	if enc := f.encounter(id); enc != "" {
		fault["encounter_id"] = enc
	}
	body, _ := json.Marshal(fault)
	req, _ := http.NewRequest("POST", f.sb.URL+"/v1/sandbox/faults", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := f.sb.Client.Do(req)
	if err != nil || res.StatusCode != 200 {
		f.t.Fatalf("arm %s: %v %v", kind, err, res)
	}
	res.Body.Close()
}

// encounter is the service's id of the intake, "" before its first turn.
func (f *fixture) encounter(id string) string {
	f.t.Helper()
	in, err := f.db.Intake(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return in.EncounterID
}

// upstream is the sandbox's own record of the intake.
func (f *fixture) upstream(id string) (conv []intakeapi.Message, raw []byte) {
	f.t.Helper()
	req, _ := http.NewRequest("GET", f.sb.URL+"/v1/intakes/"+f.encounter(id)+"/handoff", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := f.sb.Client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ = io.ReadAll(res.Body)
	var h intakeapi.Handoff
	if err := json.Unmarshal(raw, &h); err != nil {
		f.t.Fatal(err)
	}
	return h.Conversation, raw
}

func names(evs []relay.Event) string {
	var out []string
	for _, e := range evs {
		if n := len(out); n == 0 || out[n-1] != e.Name {
			out = append(out, e.Name)
		}
	}
	return strings.Join(out, " ")
}

func TestATurnIsRelayedAndRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		turn, evs := f.send(id, "hello")
		if got := names(evs); got != "started delta completed compiling progress final" {
			t.Fatalf("events: %s", got)
		}
		if turn.Status != bff.TurnCompleted || turn.Reply != "Reply 1: You said \"hello\".\n  Anything else?" || strings.Join(turn.Choices, ",") != "Yes,No" {
			t.Fatalf("turn = %+v", turn)
		}
		in, _, _ := f.svc.Intake(context.Background(), "owner-1", id)
		if in.TurnCount != 1 || in.SafetyStatus != "no_red_flags_yet" || in.Disposition != "continue_intake" || in.Release == "" {
			t.Fatalf("intake = %+v", in)
		}
	})
}

func TestFaultsSettleWithoutLossOrDuplication(t *testing.T) {
	type outcome struct {
		status   bff.TurnStatus
		code     string
		upstream int // patient messages in the sandbox's record afterwards
	}
	// Blocking turns follow the spec's retry rules: a 502 and a 500 are
	// retried once with the same Idempotency-Key, a 503 with backoff, a
	// lost answer is sent again with the key (a replay): all of them land.
	blocking := map[string]outcome{
		"stream_drop":    {bff.TurnCompleted, "", 1},
		"stream_error":   {bff.TurnCompleted, "", 1},
		"upstream_error": {bff.TurnCompleted, "", 1},
		"unavailable":    {bff.TurnCompleted, "", 1},
		"internal_error": {bff.TurnCompleted, "", 1},
		"rate_limited":   {bff.TurnCompleted, "", 1},
		"quota_exceeded": {bff.TurnFailed, "quota_exceeded", 0},
		"null_state":     {bff.TurnCompleted, "", 1},
		"slow_start":     {bff.TurnCompleted, "", 1},
	}
	cases := []struct {
		fault    string
		status   bff.TurnStatus
		code     string
		upstream int // patient messages in the sandbox's record afterwards
	}{
		{"stream_drop", bff.TurnCompleted, "", 1},
		{"stream_error", bff.TurnFailed, "not_landed", 0},
		{"upstream_error", bff.TurnFailed, "not_landed", 0},
		{"unavailable", bff.TurnFailed, "not_landed", 0},
		{"internal_error", bff.TurnFailed, "not_landed", 0},
		{"rate_limited", bff.TurnCompleted, "", 1}, // the client waits Retry-After and retries
		{"quota_exceeded", bff.TurnFailed, "quota_exceeded", 0},
		{"null_state", bff.TurnCompleted, "", 1},
		{"slow_start", bff.TurnCompleted, "", 1},
	}
	for _, mode := range []string{"streaming", "blocking"} {
		for _, c := range cases {
			if mode == "blocking" {
				b := blocking[c.fault]
				c.status, c.code, c.upstream = b.status, b.code, b.upstream
			}
			t.Run(mode+"/"+c.fault, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					f := newFixture(t)
					id := f.start()
					f.arm(id, c.fault)
					turn, _ := f.sendMode(id, "my message", mode == "blocking")
					if turn.Status != c.status || turn.ErrorCode != c.code {
						t.Fatalf("turn settled %s/%q (%s), want %s/%q", turn.Status, turn.ErrorCode, turn.ErrorMessage, c.status, c.code)
					}
					conv, _ := f.upstream(id)
					patient := 0
					for _, m := range conv {
						if m.Role == intakeapi.RolePatient {
							patient++
						}
					}
					if patient != c.upstream {
						t.Fatalf("the sandbox holds %d patient messages, want %d", patient, c.upstream)
					}
					if turn.Status == bff.TurnCompleted && turn.Reply != conv[1].Text {
						t.Fatalf("reply %q, the sandbox says %q", turn.Reply, conv[1].Text)
					}
					if turn.Status == bff.TurnFailed && turn.ErrorMessage == "" {
						t.Fatal("a failed turn without a message for the patient")
					}
					// The conversation goes on coherently: the next turn is turn 2
					// upstream exactly when the first landed.
					next, _ := f.sendMode(id, "next message", mode == "blocking")
					if next.Status != bff.TurnCompleted || !strings.HasPrefix(next.Reply, "Reply "+strconv.Itoa(c.upstream+1)+":") {
						t.Fatalf("next turn: %s %q", next.Status, next.Reply)
					}
					// A blocking stream_error ran the engine before failing (sandbox
					// README, choice 9), so it alone may count one more run.
					if runs := f.sb.Service.Stats().EngineRuns; mode == "blocking" && c.fault != "stream_error" && runs != c.upstream+1 {
						t.Fatalf("the engine ran %d times for %d landed turns", runs, c.upstream+1)
					}
				})
			})
		}
	}
}

func TestNullStateTakesTheStateFromTheHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		f.arm(id, "null_state")
		turn, _ := f.send(id, "hello")
		if turn.SafetyStatus != nil || turn.Disposition != nil || turn.DispositionLabel != nil {
			t.Fatalf("the turn's null state was filled in: %+v", turn)
		}
		in, _, _ := f.svc.Intake(context.Background(), "owner-1", id)
		if in.SafetyStatus != "no_red_flags_yet" || in.DispositionLabel != "Intake in progress" {
			t.Fatalf("intake state not read from the handoff: %+v", in)
		}
	})
}

func TestTerminalHandoffIsStoredExactlyAsReceived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		turn, _ := f.send(id, "I am done")
		if !turn.Terminal {
			t.Fatal("not terminal")
		}
		stored, err := f.db.Handoff(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		_, raw := f.upstream(id)
		if !bytes.Equal(stored.JSON, raw) || !stored.Terminal || stored.Release == "" {
			t.Fatalf("stored handoff differs from the service's:\n%s\n%s", stored.JSON, raw)
		}
		before := f.sb.Service.Stats().Requests["turn"]
		_, err = f.svc.SendTurn(context.Background(), "owner-1", id, "more", "after-end")
		if bff.ErrorCode(err) != bff.ECONFLICT || f.sb.Service.Stats().Requests["turn"] != before {
			t.Fatalf("turn after terminal: %v; upstream turns %d -> %d", err, before, f.sb.Service.Stats().Requests["turn"])
		}
	})
}

func TestOneTurnAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		ctx := context.Background()
		f.arm(id, "slow_start") // the first turn is still running when the second is sent
		first, err := f.svc.SendTurn(ctx, "owner-1", id, "first", "a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SendTurn(ctx, "owner-1", id, "second", "b"); bff.ErrorCode(err) != bff.ECONFLICT {
			t.Fatalf("a second turn while the first runs: %v", err)
		}
		again, err := f.svc.SendTurn(ctx, "owner-1", id, "first", "a")
		if err != nil || again.Index != first.Index {
			t.Fatalf("resubmission: %v %+v", err, again)
		}
		if _, err := f.svc.SendTurn(ctx, "someone-else", id, "x", "c"); bff.ErrorCode(err) != bff.ENOTFOUND {
			t.Fatalf("another owner: %v", err)
		}
	})
}

func TestStartFormRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		_, err := f.svc.StartIntake(context.Background(), "o", bff.StartForm{Age: "131", Sex: "x", History: strings.Repeat("h", 4001)})
		fe, ok := err.(*bff.Error)
		if !ok || len(fe.Fields) != 4 {
			t.Fatalf("err = %v", err)
		}
		for _, field := range []string{"age", "sex", "history", "synthetic"} {
			if fe.Fields[field] == "" {
				t.Errorf("no message for %s", field)
			}
		}
		if n := f.sb.Service.Stats().Requests["create"]; n != 0 {
			t.Fatalf("%d invalid forms reached the service", n)
		}
		// The same submission twice is one intake; starting sends nothing
		// upstream (the intake is created there with its first turn).
		a, _ := f.svc.StartIntake(context.Background(), "o", bff.StartForm{Synthetic: true, SubmissionID: "same"})
		b, _ := f.svc.StartIntake(context.Background(), "o", bff.StartForm{Synthetic: true, SubmissionID: "same"})
		if a.ID != b.ID || f.sb.Service.Stats().Requests["create"] != 0 {
			t.Fatalf("double submit made %s and %s, %d creates upstream", a.ID, b.ID, f.sb.Service.Stats().Requests["create"])
		}
		// Another browser's submission with the same id is its own intake.
		if c, err := f.svc.StartIntake(context.Background(), "other", bff.StartForm{Synthetic: true, SubmissionID: "same"}); err != nil || c.ID == a.ID {
			t.Fatalf("another owner's start: %v, %v", c, err)
		}
	})
}

// TestStartingAtTheLimitQueuesNeverRefuses: with the key's minute spent,
// starting an intake still succeeds at once; its creation upstream and its
// first turn wait in the queue together, the turn's stream saying where it
// stands, and both go through when the window opens.
func TestStartingAtTheLimitQueuesNeverRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := sandbox.DefaultConfig()
		cfg.Keys, cfg.Engine, cfg.RPM, cfg.FragmentDelay = []string{key}, enginetest.Scripted{}, 0, time.Millisecond
		sb := sandboxtest.Start(t, cfg)
		gate := pacer.New(pacer.Config{Rules: pacing.Rules{PerMinute: 2}})
		client, _ := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, Gate: gate, HTTPClient: sb.Client})
		db := sqlitetest.MustOpenDB(t)
		hub := relay.NewHub(time.Minute, nil)
		svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: hub})
		defer func() { _ = svc.Shutdown(context.Background()) }()
		ctx := context.Background()
		var ids []string
		for _, sub := range []string{"a", "b"} {
			in, err := svc.StartIntake(ctx, "o", bff.StartForm{Synthetic: true, SubmissionID: sub})
			if err != nil {
				t.Fatalf("start %s: %v", sub, err)
			}
			ids = append(ids, in.ID)
		}
		// The first intake's creation and turn spend the minute's two requests.
		first, err := svc.SendTurn(ctx, "o", ids[0], "first", "s1")
		if err != nil {
			t.Fatal(err)
		}
		svc.WaitSettled(ctx, ids[0], first.Index)
		start := time.Now()
		second, err := svc.SendTurn(ctx, "o", ids[1], "second", "s2")
		if err != nil {
			t.Fatal(err)
		}
		svc.WaitSettled(ctx, ids[1], second.Index)
		_, got, _ := svc.Turn(ctx, "o", ids[1], second.Index)
		if got.Status != bff.TurnCompleted {
			t.Fatalf("the queued first turn settled %s (%s)", got.Status, got.ErrorMessage)
		}
		if waited := time.Since(start); waited < 50*time.Second {
			t.Fatalf("the second intake went through after %s: the minute's window was not honoured", waited)
		}
		replay, sub, _ := hub.Subscribe(bff.TurnKey(ids[1], second.Index), 0)
		sub.Cancel()
		queued := 0
		for _, ev := range replay {
			if ev.Name == bff.EventQueued {
				queued++
			}
		}
		if queued == 0 {
			t.Fatalf("no queue position shown while waiting: %s", names(replay))
		}
		if n := sb.Service.Stats().Requests["create"]; n != 2 {
			t.Fatalf("%d creates reached the service, want 2", n)
		}
	})
}

func TestShutdownWithNothingRunningAbandonsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		expired, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		<-expired.Done()
		for range 50 { // the outcome must not depend on which channel select picks
			if err := f.svc.Shutdown(expired); err != nil {
				t.Fatalf("shutdown with no running turn: %v", err)
			}
		}
	})
}

// A submission id far longer than the app's forms make is refused before
// anything is stored.
func TestOverlongSubmissionIDRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		ctx := context.Background()
		long := strings.Repeat("s", bff.MaxSubmissionIDBytes+1)
		if _, err := f.svc.SendTurn(ctx, "owner-1", id, "hello", long); bff.ErrorCode(err) != bff.EINVALID {
			t.Fatalf("a turn with a %d-byte submission id: %v", len(long), err)
		}
		if _, err := f.svc.StartIntake(ctx, "owner-1", bff.StartForm{Synthetic: true, SubmissionID: long}); bff.ErrorCode(err) != bff.EINVALID {
			t.Fatalf("a start with a %d-byte submission id: %v", len(long), err)
		}
	})
}

// direct sends a blocking turn straight to the service, past the app: the
// service's record then holds a message the app never sent.
func (f *fixture) direct(id, message string) {
	f.t.Helper()
	client, err := intakeapi.New(intakeapi.Config{BaseURL: f.sb.URL, APIKey: key, HTTPClient: f.sb.Client})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, _, err := client.Turn(context.Background(), f.encounter(id), message, "direct-"+strconv.Itoa(len(message))); err != nil {
		f.t.Fatalf("direct turn %q: %v", message, err)
	}
}

// TestReconcileMatchesTheMessageNotOnlyItsPlace: after a failed stream the
// handoff's conversation has a patient message where the app's turn would
// be, with the same count, but it is another text (another turn landed
// there; the app's own did not). The turn must settle as not landed, and
// the other message's reply must not become its reply.
func TestReconcileMatchesTheMessageNotOnlyItsPlace(t *testing.T) {
	f := newFixture(t)
	id := f.start()
	if first, _ := f.send(id, "first words"); first.Status != bff.TurnCompleted { // the intake is created with it
		t.Fatalf("first turn: %s", first.Status)
	}
	f.direct(id, "somebody else's words")
	f.arm(id, "stream_error") // the app's turn does not land
	turn, _ := f.send(id, "my message")
	if turn.Status != bff.TurnFailed || turn.ErrorCode != bff.CodeNotLanded || turn.Reply != "" {
		t.Fatalf("turn settled %s/%q with reply %q; want failed/%q: its message is not in the service's record", turn.Status, turn.ErrorCode, turn.Reply, bff.CodeNotLanded)
	}
	conv, _ := f.upstream(id)
	if len(conv) != 4 || conv[2].Text != "somebody else's words" {
		t.Fatalf("the service's record: %+v", conv)
	}
}

// TestReconcileFindsALandedTurnAfterEarlierOnes is the positive case: the
// second turn's stream drops after it landed; the reconciler finds its
// message after the first and takes the reply that follows it.
func TestReconcileFindsALandedTurnAfterEarlierOnes(t *testing.T) {
	f := newFixture(t)
	id := f.start()
	if first, _ := f.send(id, "first words"); first.Status != bff.TurnCompleted {
		t.Fatalf("first turn: %s", first.Status)
	}
	f.arm(id, "stream_drop") // lands, but the answer is cut off
	turn, _ := f.send(id, "second words")
	conv, _ := f.upstream(id)
	if len(conv) != 4 || conv[2].Text != "second words" {
		t.Fatalf("the service's record: %+v", conv)
	}
	if turn.Status != bff.TurnCompleted || turn.Reply != conv[3].Text || !strings.HasPrefix(turn.Reply, "Reply 2:") {
		t.Fatalf("turn settled %s %q (%s); the service says %q", turn.Status, turn.Reply, turn.ErrorMessage, conv[3].Text)
	}
	in, _, _ := f.svc.Intake(context.Background(), "owner-1", id)
	if in.TurnCount != 2 {
		t.Fatalf("intake turn count %d, want 2", in.TurnCount)
	}
}

// TestTheSameWordsTwiceAreNotTakenForLanded: "yes" answered, then "yes"
// again refused by the engine. The service's last patient message is the
// first "yes"; the second did not land and must be offered again.
func TestTheSameWordsTwiceAreNotTakenForLanded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		if first, _ := f.send(id, "yes"); first.Status != bff.TurnCompleted {
			t.Fatalf("first turn: %s", first.Status)
		}
		f.arm(id, "stream_error") // not applied
		second, _ := f.send(id, "yes")
		if second.Status != bff.TurnFailed || second.ErrorCode != bff.CodeNotLanded {
			t.Fatalf("second turn settled %s/%q %q; it did not land", second.Status, second.ErrorCode, second.Reply)
		}
	})
}

// A first turn waits in the queue for its intake's creation and then for
// itself: as one, keeping its place. With three patients sending their
// first messages at once at one request a minute, nobody's place shown
// ever goes up, and each patient's turn follows their creation.
func TestAFirstTurnKeepsThePlaceItsCreationWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := sandbox.DefaultConfig()
		cfg.Keys, cfg.Engine, cfg.RPM, cfg.FragmentDelay = []string{key}, enginetest.Scripted{}, 0, time.Millisecond
		sb := sandboxtest.Start(t, cfg)
		gate := pacer.New(pacer.Config{Rules: pacing.Rules{PerMinute: 1}})
		client, _ := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, Gate: gate, HTTPClient: sb.Client})
		db := sqlitetest.MustOpenDB(t)
		hub := relay.NewHub(time.Hour, nil)
		svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: hub})
		defer func() { _ = svc.Shutdown(context.Background()) }()
		ctx := context.Background()
		type sent struct {
			id   string
			turn *bff.Turn
		}
		var all []sent
		for i := range 3 {
			in, err := svc.StartIntake(ctx, "o", bff.StartForm{Synthetic: true, SubmissionID: fmt.Sprint("s", i)})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := svc.SendTurn(ctx, "o", in.ID, "hello", fmt.Sprint("t", i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, sent{in.ID, turn})
			synctest.Wait() // each joins the queue in this order
		}
		for _, s := range all {
			svc.WaitSettled(ctx, s.id, s.turn.Index)
			replay, sub, _ := hub.Subscribe(bff.TurnKey(s.id, s.turn.Index), 0)
			sub.Cancel()
			last := 1 << 30
			var shown []int
			for _, ev := range replay {
				if ev.Name != bff.EventQueued {
					continue
				}
				var q bff.QueuedData
				_ = json.Unmarshal(ev.Data, &q)
				shown = append(shown, q.Position)
				if q.Position > last {
					t.Fatalf("intake %s: the place shown went up: %v", s.id, shown)
				}
				last = q.Position
			}
		}
	})
}
