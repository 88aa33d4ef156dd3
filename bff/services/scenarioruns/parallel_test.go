package scenarioruns

// Items in parallel, on the bubble's clock (testing/synctest): the sandbox
// is reached in memory (sandboxtest) and takes its realistic time over each
// reply, the pacer keeps the key's window, and the run, the pacer and the
// sandbox all read the bubble's clock, so minutes of play take no time.

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/clinical-intake/intake-web/sandbox/sandboxtest"
)

// grant is one call the gate let go.
type grant struct {
	op        intakeapi.Op
	prio      intakeapi.Priority
	asked, at time.Time
}

// grants wraps the pacer and keeps every grant.
type grants struct {
	intakeapi.Gate
	mu  sync.Mutex
	all []grant
}

func (g *grants) Wait(ctx context.Context, c intakeapi.Call) (func(intakeapi.Outcome), error) {
	asked := time.Now()
	rel, err := g.Gate.Wait(ctx, c)
	if err == nil {
		g.mu.Lock()
		g.all = append(g.all, grant{c.Op, c.Priority, asked, time.Now()})
		g.mu.Unlock()
	}
	return rel, err
}

// since returns the grants at or after from, before to.
func (g *grants) between(from, to time.Time) []grant {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []grant
	for _, x := range g.all {
		if !x.at.Before(from) && x.at.Before(to) {
			out = append(out, x)
		}
	}
	return out
}

// keyRig is a key of perMinute requests a minute (quotas off) on a
// sandbox that enforces the same limit and takes reply to 2×reply, plus 3
// s to the first token, over each turn.
type keyRig struct {
	srv    *sandboxtest.Server
	pacer  *pacer.Pacer
	gate   *grants
	client *intakeapi.Client
}

// newKeyRig builds the rig; call it inside the bubble.
func newKeyRig(t *testing.T, perMinute int, reply time.Duration) *keyRig {
	t.Helper()
	eng, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	sc := sandbox.DefaultConfig()
	sc.Keys, sc.Engine, sc.Logger = []string{sandbox.GenerateKey(sc.KeyPrefix)}, eng, slog.New(slog.DiscardHandler)
	sc.RPM, sc.TurnsPerDay, sc.IntakesPerDay = perMinute, 0, 0
	sc.FirstTokenDelay, sc.ReplyDuration = 3*time.Second, reply
	srv := sandboxtest.Start(t, sc)
	p := pacer.New(pacer.Config{Rules: pacing.Rules{PerMinute: perMinute, TurnsPerDay: -1, IntakesPerDay: -1}})
	g := &grants{Gate: p}
	c, err := intakeapi.New(intakeapi.Config{BaseURL: srv.URL, APIKey: sc.Keys[0], Gate: g, HTTPClient: srv.Client, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &keyRig{srv: srv, pacer: p, gate: g, client: c}
}

// deps plays through the rig's key: the daily quota off.
func (k *keyRig) deps(db runStore, replica string, perMinute, ceiling int) Deps {
	return Deps{Store: db, Audit: db, Client: k.client, Target: TargetService, PerMinute: perMinute, Parallel: ceiling,
		Replica: replica, Idle: time.Second, Logger: slog.New(slog.DiscardHandler),
		TurnsToday: func(context.Context) (int, int, error) { return k.pacer.Stats().TurnsUsed, 0, nil }}
}

func openDB(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// serve runs s.Serve until the returned stop is called; stop waits for it.
func serve(s *Service) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// TestParallelBound: a run plays enough items that together they ask at
// least the key's requests a minute left to runs, and one more, so a
// request is waiting whenever the gate could grant one (at the spec's 6 a
// minute that is three, where one item alone used 3.6 of the 5); within
// the ceiling.
func TestParallelBound(t *testing.T) {
	for _, c := range []struct{ perMinute, turns, ceiling, want int }{
		{6, 6, 64, 3},       // the spec's key, the built-in suite's 6 turns an item: ⌈1.875⌉ + 1
		{6, 1, 64, 2},       // short items: ⌈0.83⌉ + 1
		{60, 6, 64, 24},     // 59 a minute for runs, 8 requests an item over 3 minutes: ⌈22.1⌉ + 1
		{60, 6, 8, 8},       // the ceiling
		{600, 6, 64, 64},    // the ceiling again
		{-1, 6, 16, 16},     // no limit: the ceiling
		{60, 6, 0, 1},       // no ceiling set: one
		{600, 15, 500, 266}, // long items: ⌈599 × 7.5 min / 17⌉ + 1
	} {
		if got := Parallel(c.perMinute, c.turns, c.ceiling); got != c.want {
			t.Errorf("Parallel(%d a minute, %d turns an item, at most %d) = %d, want %d", c.perMinute, c.turns, c.ceiling, got, c.want)
		}
	}
	db := mustOpenDB(t)
	for _, c := range []struct{ perMinute, want int }{{6, 3}, {60, 24}} {
		s := newService(t, Deps{Store: db, Target: TargetService, PerMinute: c.perMinute, Parallel: 64,
			TurnsToday: func(context.Context) (int, int, error) { return 0, 0, nil }})
		e, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		if e.Parallel != c.want {
			t.Errorf("the built-in suite at %d a minute: %d at once, want %d", c.perMinute, e.Parallel, c.want)
		}
		// The Scenarios page says the same of each suite.
		if su := s.Suites()[0]; su.Name != scenarios.BuiltinName || su.AtOnce != c.want {
			t.Errorf("Suites at %d a minute: %s %d at once, want %d", c.perMinute, su.Name, su.AtOnce, c.want)
		}
	}
	// An embedded sandbox with its limits off: every vignette within the
	// ceiling at once (the built-in suite's 61 under the default 64).
	s := newService(t, Deps{Store: db, Target: TargetService, PerMinute: 6, Parallel: 64})
	for _, su := range s.Suites() {
		if su.AtOnce != min(su.Vignettes, 64) || su.AtOnce < 2 {
			t.Errorf("limits off: %s (%d vignettes) %d at once", su.Name, su.Vignettes, su.AtOnce)
		}
	}
}

// TestEstimateCountsTheParallelism: the finish time said before a start
// is the key's pace, not one item after another.
func TestEstimateCountsTheParallelism(t *testing.T) {
	db := mustOpenDB(t)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	finish := map[int]time.Duration{}
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, v := range all.Vignettes {
		longest = max(longest, min(maxTurns(&v), len(v.Facts)+1))
	}
	for _, perMinute := range []int{6, 60, 600} {
		s := newService(t, Deps{Store: db, Target: TargetService, PerMinute: perMinute, Parallel: 64, Now: func() time.Time { return now },
			TurnsToday: func(context.Context) (int, int, error) { return 0, 100000, nil }})
		e, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		finish[perMinute] = e.Finish.Sub(now)
		// The slower of the key's requests and the turns of the items at
		// once, and never sooner than the longest item's own turns.
		byRequests := time.Duration(e.Turns+2*e.Intakes) * time.Minute / time.Duration(perMinute-1)
		byTurns := time.Duration(e.Turns) * turnTime / time.Duration(e.Parallel)
		if want := max(byRequests, byTurns, time.Duration(longest)*turnTime); finish[perMinute] != want {
			t.Errorf("%d a minute, %d at once: finish in %s, want %s", perMinute, e.Parallel, finish[perMinute], want)
		}
	}
	if !(finish[600] < finish[60] && finish[60] < finish[6]/5) {
		t.Errorf("finish times by key rate %v: a raised key should finish far sooner", finish)
	}
	// Without a daily quota (PACER_TURNS_PER_DAY=-1) the key's requests a
	// minute still pace the run: the same finish, not the sandbox's
	// "limits off".
	for _, perMinute := range []int{6, 60} {
		s := newService(t, Deps{Store: db, Target: TargetService, Reserve: 30, PerMinute: perMinute, Parallel: 64, Now: func() time.Time { return now },
			TurnsToday: func(context.Context) (int, int, error) { return 0, -1, nil }})
		e, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		if e.Unlimited || !e.NoQuota || e.Days != 1 || e.Finish.Sub(now) != finish[perMinute] {
			t.Errorf("no daily quota, %d a minute: %+v, want no quota, 1 day, finish in %s", perMinute, e, finish[perMinute])
		}
		if _, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1}); err != nil {
			t.Errorf("no daily quota, %d a minute: start refused: %v", perMinute, err)
		}
	}
}

// TestRaisedKeyFillsItsWindow: with a key of 60 a minute and an engine
// quick enough that the items could ask for more, a run holds every slot
// of the rolling minute but the one it leaves free, and a patient's call
// that arrives meanwhile is let go at once, ahead of the run's calls
// waiting in the queue. The sandbox enforces the same limit: no 429.
func TestRaisedKeyFillsItsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const perMinute = 60
		k := newKeyRig(t, perMinute, 5*time.Second)
		db := openDB(t, filepath.Join(t.TempDir(), "app.db"))
		defer db.Close()
		s := newService(t, k.deps(db, "one", perMinute, 64))
		r, est, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		if est.Parallel != 24 {
			t.Fatalf("%d items at once, want 24", est.Parallel)
		}
		stop := serve(s)
		defer stop()
		start := time.Now()
		time.Sleep(3 * time.Minute) // past the first minute's ramp
		synctest.Wait()
		if st := k.pacer.Stats(); st.InWindow != perMinute-runHeadroom || st.Waiting == 0 {
			t.Fatalf("window %d of %d with %d waiting: want the run holding all but %d, more of its calls queued",
				st.InWindow, perMinute, st.Waiting, runHeadroom)
		}
		// The patient arrives now: granted at once, while run calls wait.
		asked := time.Now()
		if _, _, err := k.client.CreateIntake(t.Context(), intakeapi.NewIntake{}); err != nil {
			t.Fatal(err)
		}
		var patient *grant
		for _, g := range k.gate.between(asked, asked.Add(time.Minute)) {
			if g.prio != intakeapi.PriorityBackground {
				patient = &g
			}
		}
		if patient == nil || !patient.at.Equal(asked) {
			t.Fatalf("the patient's call: %+v, want it granted at once at %s", patient, asked)
		}
		if st := k.pacer.Stats(); st.Waiting == 0 {
			t.Error("no run call was waiting when the patient went first: the test shows no priority")
		}
		// Every full minute from the ramp on: the run's calls fill the
		// window to its limit less the one left free (the pacer keeps each
		// grant 1 s past the minute: 59 in any 61 s).
		for m := 1; m < 3; m++ {
			from := start.Add(time.Duration(m) * (time.Minute + pacing.DefaultMargin))
			n := 0
			for _, g := range k.gate.between(from, from.Add(time.Minute+pacing.DefaultMargin)) {
				if g.prio == intakeapi.PriorityBackground {
					n++
				}
			}
			if n < perMinute-runHeadroom-1 || n > perMinute-runHeadroom {
				t.Errorf("minute %d: the run sent %d requests, want %d", m, n, perMinute-runHeadroom)
			}
		}
		if n := k.srv.Service.Stats().Requests["turn"]; n == 0 {
			t.Fatal("no turn reached the sandbox")
		}
		if got := runState(t, db, r.ID); got.State != bff.RunActive {
			t.Errorf("the run is %s, want still playing", got.State)
		}
	})
}

// TestSpecKeyUsesItsHeadroom: at the spec's 6 requests a minute, with
// replies as slow as the real service's (3 s to the first token, 20-40 s
// each), a run uses at least 90% of the 5 requests a minute patients leave
// it, as its estimate assumes (one item at a time used 3.6 of them: a
// lone item is inside a turn when the window frees a slot); and a
// patient's call that arrives while run calls wait in the queue is let go
// at once, ahead of them.
func TestSpecKeyUsesItsHeadroom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const perMinute = 6
		k := newKeyRig(t, perMinute, 20*time.Second)
		db := openDB(t, filepath.Join(t.TempDir(), "app.db"))
		defer db.Close()
		s := newService(t, k.deps(db, "one", perMinute, 64))
		start := time.Now()
		r, est, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		// The estimate's pace is the runs' share of the key: it is true
		// only if the run keeps that pace.
		share := perMinute - runHeadroom
		if want := time.Duration(est.Turns+2*est.Intakes) * time.Minute / time.Duration(share); est.Finish.Sub(start) != want {
			t.Errorf("the estimate finishes in %s, want the key's pace %s (%d items at once)", est.Finish.Sub(start), want, est.Parallel)
		}
		stop := serve(s)
		defer stop()
		// Ten windows after the first two (the pacer keeps each grant 1 s
		// past the minute: 5 in any 61 s).
		window := time.Minute + pacing.DefaultMargin
		time.Sleep(12 * window)
		synctest.Wait()
		from := start.Add(2 * window)
		n := 0
		for _, g := range k.gate.between(from, from.Add(10*window)) {
			if g.prio == intakeapi.PriorityBackground {
				n++
			}
		}
		if most := 10 * share; n*10 < most*9 {
			t.Errorf("in 10 windows the run sent %d requests of the %d patients left it (%.0f%%), want at least 90%% (%d at once)",
				n, most, 100*float64(n)/float64(most), est.Parallel)
		}
		// A patient arrives while run calls wait in the queue (the next
		// moment one does: with every item inside a long turn, none may be
		// waiting this very second): granted at once, ahead of them.
		for i := 0; k.pacer.Stats().Waiting == 0; i++ {
			if i == 60 {
				t.Fatal("no run call waited in the queue for a minute: the run leaves slots unused")
			}
			time.Sleep(time.Second)
			synctest.Wait()
		}
		asked := time.Now()
		if _, _, err := k.client.CreateIntake(t.Context(), intakeapi.NewIntake{}); err != nil {
			t.Fatal(err)
		}
		var patient *grant
		for _, g := range k.gate.between(asked, asked.Add(time.Minute)) {
			if g.prio != intakeapi.PriorityBackground {
				patient = &g
			}
		}
		if patient == nil || !patient.at.Equal(asked) {
			t.Fatalf("the patient's call: %+v, want it granted at once at %s", patient, asked)
		}
		if got := runState(t, db, r.ID); got.State != bff.RunActive {
			t.Errorf("the run is %s, want still playing", got.State)
		}
	})
}

// TestRestartWithItemsInFlightDrivesNoTurnTwice stops the app while four
// items are each in the middle of a turn, starts it again on the same
// database, and lets the run finish: the engine ran exactly the turns the
// items recorded (a turn it ran before the stop comes back as a replay),
// every item made one intake, and the run counts match.
func TestRestartWithItemsInFlightDrivesNoTurnTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyRig(t, 60, 20*time.Second)
		path := filepath.Join(t.TempDir(), "app.db")
		db1 := openDB(t, path)
		first := newService(t, k.deps(db1, "first", 60, 4))
		r, est, err := first.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: smallSuite(t, 8), Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		if est.Parallel != 4 {
			t.Fatalf("%d at once, want the ceiling of 4", est.Parallel)
		}
		stop := serve(first)
		time.Sleep(70 * time.Second) // each item is past its first turn and inside another
		synctest.Wait()
		p, err := first.Progress(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		withTurns := 0
		for _, it := range p.Playing {
			if len(it.Turns) > 0 {
				withTurns++
			}
		}
		if len(p.Playing) != 4 || withTurns < 2 {
			t.Fatalf("%d items in flight, %d with turns recorded: want 4, several under way", len(p.Playing), withTurns)
		}
		sent := k.srv.Service.Stats().Requests["turn"]
		stop() // the app stops with four turns on their way
		_ = db1.Close()

		db2 := openDB(t, path)
		defer db2.Close()
		second := newService(t, k.deps(db2, "second", 60, 4))
		stop = serve(second)
		for i := 0; runState(t, db2, r.ID).State != bff.RunDone; i++ {
			if i == 60 {
				t.Fatalf("the resumed run did not finish within an hour: %+v", runState(t, db2, r.ID))
			}
			time.Sleep(time.Minute)
		}
		stop()
		items, err := db2.ScenarioItems(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		recorded := 0
		for _, it := range items {
			if it.State != bff.ItemDone {
				t.Errorf("%s: %s (%+v)", it.VignetteID, it.State, it.Result)
			}
			recorded += len(it.Turns)
		}
		st := k.srv.Service.Stats()
		if st.EngineRuns != recorded {
			t.Errorf("the engine ran %d turns, the items recorded %d: a turn was driven twice or lost", st.EngineRuns, recorded)
		}
		if st.Requests["turn"] <= sent {
			t.Errorf("no turn after the restart (%d before, %d in all): the test restarts nothing", sent, st.Requests["turn"])
		}
		if st.Requests["create"] != r.Items {
			t.Errorf("%d intakes created for %d items", st.Requests["create"], r.Items)
		}
		if got := runState(t, db2, r.ID); got.Played != r.Items || got.TurnsUsed != recorded {
			t.Errorf("run counts: played %d of %d, turns %d (recorded %d)", got.Played, r.Items, got.TurnsUsed, recorded)
		}
	})
}

// TestCancelStopsEveryItemInFlight: with four items in flight, a cancel
// stops them all at their next step: no turn or intake is sent after it,
// and the player lets the run go.
func TestCancelStopsEveryItemInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyRig(t, 60, 20*time.Second)
		db := openDB(t, filepath.Join(t.TempDir(), "app.db"))
		defer db.Close()
		s := newService(t, k.deps(db, "one", 60, 4))
		r, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: smallSuite(t, 8), Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		stop := serve(s)
		defer stop()
		time.Sleep(50 * time.Second)
		synctest.Wait()
		p, err := s.Progress(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Playing) != 4 {
			t.Fatalf("%d items in flight, want 4", len(p.Playing))
		}
		if err := s.CancelRun(t.Context(), "alice", r.ID); err != nil {
			t.Fatal(err)
		}
		at := k.srv.Service.Stats().Requests
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		after := k.srv.Service.Stats().Requests
		for _, op := range []string{"turn", "create"} {
			if after[op] != at[op] {
				t.Errorf("%d %s requests after the cancel (%d before)", after[op]-at[op], op, at[op])
			}
		}
		if s.busy.Load() {
			t.Error("the player is still at work on a cancelled run")
		}
		if got := runState(t, db, r.ID); got.State != bff.RunCancelled || got.Played == r.Items {
			t.Errorf("run %s with %d of %d played, want cancelled half way", got.State, got.Played, r.Items)
		}
	})
}

// TestDayTurnsBoundTheItemsInFlight: each item in flight keeps today's
// turns it may still take (its turn limit), so the items started at once
// fit in what the day leaves to runs; the rate and the ceiling would allow
// all eight.
func TestDayTurnsBoundTheItemsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyRig(t, 60, 20*time.Second)
		db := openDB(t, filepath.Join(t.TempDir(), "app.db"))
		defer db.Close()
		d := k.deps(db, "one", 60, 8)
		const limit, reserve = 100, 30
		d.Reserve = reserve
		d.TurnsToday = func(context.Context) (int, int, error) { return k.pacer.Stats().TurnsUsed, limit, nil }
		s := newService(t, d)
		r, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: smallSuite(t, 8), Repeats: 1})
		if err != nil {
			t.Fatal(err)
		}
		fit, left := 0, limit-reserve
		for _, v := range r.Suite.Vignettes {
			if left -= maxTurns(&v); left < 0 {
				break
			}
			fit++
		}
		if fit < 2 || fit >= 8 {
			t.Fatalf("%d of the 8 items fit in the day's %d turns for runs: the test shows no bound", fit, limit-reserve)
		}
		stop := serve(s)
		defer stop()
		time.Sleep(30 * time.Second) // first turns under way, no item finished
		synctest.Wait()
		p, err := s.Progress(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Playing) != fit {
			t.Errorf("%d items in flight, want the %d whose turn limits fit in the day's %d turns for runs", len(p.Playing), fit, limit-reserve)
		}
	})
}
