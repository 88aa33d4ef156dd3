package scenarioruns

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/sandbox"
	sbengine "github.com/clinical-intake/intake-web/sandbox/engine"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"go.yaml.in/yaml/v3"
)

// engine is a limitless sandbox behind a proxy that counts what reaches
// the engine: each blocking turn answered without the replay header was
// driven (the engine ran), keyed by its Idempotency-Key. hold, when set,
// is called before a turn's response goes back (after the engine ran it).
type engine struct {
	URL, key string

	mu      sync.Mutex
	driven  map[string]int // idempotency key -> engine runs
	replays int
	intakes int
	hold    func(driven int)
}

func newEngine(t *testing.T) *engine {
	t.Helper()
	eng, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	return newEngineOn(t, eng)
}

// newEngineOn is newEngine with eng behind the sandbox.
func newEngineOn(t *testing.T, eng sbengine.Engine) *engine {
	t.Helper()
	sc := sandbox.DefaultConfig()
	sc.Keys, sc.Engine, sc.Logger = []string{sandbox.GenerateKey(sc.KeyPrefix)}, eng, slog.New(slog.DiscardHandler)
	sc.RPM, sc.TurnsPerDay, sc.IntakesPerDay, sc.FragmentDelay = 0, 0, 0, 0
	sb, err := sandbox.Start(t.Context(), sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	target, _ := url.Parse(sb.URL)
	e := &engine{key: sc.Keys[0], driven: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		req := resp.Request
		switch {
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/turns") && resp.StatusCode == http.StatusOK:
			e.mu.Lock()
			if resp.Header.Get("x-service-idempotent-replay") == "true" {
				e.replays++
				e.mu.Unlock()
				return nil
			}
			e.driven[req.Header.Get("Idempotency-Key")]++
			n, hold := e.total(), e.hold
			e.mu.Unlock()
			if hold != nil {
				hold(n)
			}
		case req.Method == http.MethodPost && req.URL.Path == "/v1/intakes" && resp.StatusCode < 300:
			e.mu.Lock()
			e.intakes++
			e.mu.Unlock()
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	return e
}

// counts copies what the engine saw.
func (e *engine) counts() (driven map[string]int, replays, intakes, total int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	driven = map[string]int{}
	for k, v := range e.driven {
		driven[k] = v
	}
	return driven, e.replays, e.intakes, e.total()
}

// total is the turns driven; e.mu held.
func (e *engine) total() int {
	n := 0
	for _, c := range e.driven {
		n += c
	}
	return n
}

func (e *engine) client(t *testing.T) *intakeapi.Client {
	t.Helper()
	c, err := intakeapi.New(intakeapi.Config{BaseURL: e.URL, APIKey: e.key, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustOpenDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "app.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func newService(t *testing.T, d Deps) *Service {
	t.Helper()
	if d.Replica == "" {
		d.Replica = "test"
	}
	if d.Idle == 0 {
		d.Idle = 20 * time.Millisecond // a replica waiting for a lease to run out looks again soon
	}
	s, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// smallSuite is the first n vignettes of the built-in suite, as a suite
// file a clinician would upload.
func smallSuite(t *testing.T, n int) []byte {
	t.Helper()
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(&scenarios.Suite{Name: "small", Vignettes: all.Vignettes[:n]})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// serveUntil runs s.Serve until cond holds (polled) or the deadline.
func serveUntil(t *testing.T, s *Service, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the run did not get there within 60 s")
		}
		time.Sleep(20 * time.Millisecond) // polling a real process's progress, not timing it
	}
}

func runState(t *testing.T, db bff.ScenarioRunStore, id string) *bff.ScenarioRun {
	t.Helper()
	r, err := db.ScenarioRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runStore is a store the service runs on, as the restart test needs it.
type runStore interface {
	bff.ScenarioRunStore
	bff.AuditStore
}

// TestRestartResumesWithoutDrivingTwice kills a run in the middle of a
// turn the engine has already run (its reply never recorded) and starts a
// second process on the same database: the run finishes, every turn was
// driven once (the interrupted one comes back as a replay), and the
// report is the one an uninterrupted run gives. On SQLite the second
// process is the app restarted; on PostgreSQL another replica, which takes
// the run over once the dead one's lease runs out, or the same replica
// restarted under its name, which the app leases under a name of that run
// of the process (cmd/intake-web/app's processName: it must not keep the
// dead process's lease alive, or the run is never played again).
func TestRestartResumesWithoutDrivingTwice(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testRestart(t, mustOpenDB(t), false, "second") })
	for _, second := range []string{"second", "first.2"} {
		t.Run("postgres, then "+second, func(t *testing.T) {
			db, err := postgres.Open(t.Context(), pgtest.URL(t), slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			testRestart(t, db, true, second)
		})
	}
}

func testRestart(t *testing.T, db runStore, shared bool, secondName string) {
	eng := newEngine(t)
	suite := smallSuite(t, 4)
	lease := 30 * time.Second
	if shared {
		lease = 300 * time.Millisecond // the survivor waits this long for the dead replica's lease
	}
	first := newService(t, Deps{Store: db, Audit: db, Client: eng.client(t), Target: TargetSandbox, Replica: "first", Shared: shared, Lease: lease})
	r, _, err := first.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: suite, UploadName: "small.yaml", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}

	// The first process dies while the engine's 6th turn is on its way back.
	ctx, kill := context.WithCancel(t.Context())
	killed := make(chan struct{})
	eng.hold = func(n int) {
		if n == 6 {
			kill()
			close(killed)
			time.Sleep(50 * time.Millisecond) // the reply arrives after the process is gone
		}
	}
	done := make(chan struct{})
	go func() { first.Serve(ctx); close(done) }()
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("the run never reached its 6th turn")
	}
	<-done
	eng.mu.Lock()
	eng.hold = nil
	eng.mu.Unlock()
	if got := runState(t, db, r.ID); got.State.Ended() || got.Played == r.Items {
		t.Fatalf("the run ended before the kill (%s, %d played): the test kills nothing", got.State, got.Played)
	}

	second := newService(t, Deps{Store: db, Audit: db, Client: eng.client(t), Target: TargetSandbox, Replica: secondName, Shared: shared, Lease: lease})
	serveUntil(t, second, func() bool { return runState(t, db, r.ID).State == bff.RunDone })

	driven, replays, intakes, total := eng.counts()
	for key, n := range driven {
		if n != 1 {
			t.Errorf("turn %s driven %d times", key, n)
		}
	}
	if replays == 0 {
		t.Error("no turn was replayed: the interrupted turn was not sent again with its key")
	}
	items, err := db.ScenarioItems(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, it := range items {
		if it.State != bff.ItemDone {
			why := ""
			if it.Result != nil {
				why = it.Result.Error
			}
			t.Errorf("%s: %s (%s) after %d turns", it.VignetteID, it.State, why, len(it.Turns))
		}
		recorded += len(it.Turns)
	}
	if recorded != total {
		t.Errorf("%d turns recorded, %d driven", recorded, total)
	}
	if intakes != r.Items {
		t.Errorf("%d intakes created for %d items", intakes, r.Items)
	}
	got := runState(t, db, r.ID)
	if got.Played != r.Items || got.TurnsUsed != recorded {
		t.Errorf("run counts played %d of %d, turns %d (recorded %d)", got.Played, r.Items, got.TurnsUsed, recorded)
	}

	// The same suite uninterrupted gives the same report.
	db2 := mustOpenDB(t)
	clean := newService(t, Deps{Store: db2, Client: eng.client(t), Target: TargetSandbox})
	r2, _, err := clean.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: suite, UploadName: "small.yaml", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	serveUntil(t, clean, func() bool { return runState(t, db2, r2.ID).State == bff.RunDone })
	a, err := second.Report(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := clean.Report(t.Context(), r2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Summary.Vignettes != 4 || a.Summary.Accuracy != b.Summary.Accuracy || a.Summary.Confusion != b.Summary.Confusion || a.Summary.MeanTurns != b.Summary.MeanTurns {
		t.Errorf("resumed run scored %+v, uninterrupted %+v", a.Summary, b.Summary)
	}
}

// TestRunWaitsForTomorrowsQuota: with today's turns down to the reserve
// kept for patients, a run sends nothing, waits until 00:00 UTC and says
// so; after the reset it plays.
func TestRunWaitsForTomorrowsQuota(t *testing.T) {
	eng := newEngine(t)
	db := mustOpenDB(t)
	var mu sync.Mutex
	now, used := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC), 75
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := newService(t, Deps{
		Store: db, Audit: db, Client: eng.client(t), Target: TargetService, Reserve: 30, PerMinute: 6, Now: clock,
		TurnsToday: func(context.Context) (int, int, error) { mu.Lock(); defer mu.Unlock(); return used, 100, nil },
	})
	r, est, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: smallSuite(t, 2), Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	if est.LeftToday != 0 || est.PerDay != 70 || est.Days != 2 || !est.Finish.After(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("estimate %+v: want nothing left today, 70 a day, finishing tomorrow", est)
	}
	claim := func() *bff.ScenarioRun {
		got, err := db.ScenarioRun(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		c, err := db.ClaimScenarioRun(t.Context(), "test", clock(), clock(), clock().Add(time.Minute))
		if err != nil {
			t.Fatalf("claim at %s (run %s, not before %s): %v", clock(), got.State, got.NotBefore, err)
		}
		return c
	}
	s.playRun(t.Context(), claim())
	got := runState(t, db, r.ID)
	if got.State != bff.RunWaiting || !got.NotBefore.Equal(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)) ||
		!strings.Contains(got.Note, "kept for patients") {
		t.Fatalf("run %s until %s (%q): want waiting until midnight UTC", got.State, got.NotBefore, got.Note)
	}
	if _, _, intakes, total := eng.counts(); total != 0 || intakes != 0 {
		t.Fatalf("a waiting run sent %d turns and %d intakes", total, intakes)
	}
	if _, err := db.ClaimScenarioRun(t.Context(), "test", clock(), clock(), clock().Add(time.Minute)); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("a waiting run was claimed before its time: %v", err)
	}
	mu.Lock()
	now, used = time.Date(2026, 11, 24, 0, 0, 1, 0, time.UTC), 0
	mu.Unlock()
	s.playRun(t.Context(), claim())
	if got := runState(t, db, r.ID); got.State != bff.RunDone || got.Played != 2 {
		t.Fatalf("after the reset: %s, %d played", got.State, got.Played)
	}
}

// TestCancelStopsTheRun: a cancelled run sends nothing more.
func TestCancelStopsTheRun(t *testing.T) {
	eng := newEngine(t)
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Audit: db, Client: eng.client(t), Target: TargetSandbox})
	r, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: smallSuite(t, 3), Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	var playing []*bff.ScenarioItem
	eng.hold = func(n int) {
		if n == 2 {
			p, err := s.Progress(context.Background(), r.ID)
			if err != nil {
				t.Error(err)
			} else {
				playing = p.Playing
			}
			if err := s.CancelRun(context.Background(), "alice", r.ID); err != nil {
				t.Error(err)
			}
		}
	}
	// Cancelled, and the player no longer at work: it stopped at its next
	// save rather than play on.
	serveUntil(t, s, func() bool { return runState(t, db, r.ID).State == bff.RunCancelled && !s.busy.Load() })
	// While its 2nd turn was out, the progress named the item playing and
	// the exchange it had recorded.
	if len(playing) != 1 || playing[0].Seq != 0 || playing[0].State != bff.ItemPlaying || len(playing[0].Turns) != 1 {
		t.Errorf("progress during the 2nd turn: %+v, want item 0 playing with 1 exchange", playing)
	}
	if _, _, _, n := eng.counts(); n != 2 {
		t.Errorf("%d turns driven; the run was cancelled during the 2nd", n)
	}
	if err := s.CancelRun(t.Context(), "alice", r.ID); bff.ErrorCode(err) != bff.ECONFLICT {
		t.Errorf("cancelling an ended run: %v, want conflict", err)
	}
	entries, err := db.Audit(t.Context(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		actions = append(actions, e.Actor+" "+e.Action)
	}
	if want := "alice " + bff.AuditScenarioCancel; !strings.Contains(strings.Join(actions, ","), want) {
		t.Errorf("audit %v lacks %q", actions, want)
	}
}

// TestAdjudicationCarriesIntoComparisons: a gold_wrong verdict is audited
// and sets the vignette's regression aside in the next comparison.
func TestAdjudicationCarriesIntoComparisons(t *testing.T) {
	eng := newEngine(t)
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Audit: db, Client: eng.client(t), Target: TargetSandbox})
	suite := smallSuite(t, 2)
	base, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: suite, Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	head, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: suite, Repeats: 1, Label: "head"})
	if err != nil {
		t.Fatal(err)
	}
	serveUntil(t, s, func() bool { return runState(t, db, head.ID).State == bff.RunDone })
	if _, err := s.Compare(t.Context(), base.ID, base.ID); bff.ErrorCode(err) != bff.EINVALID {
		t.Errorf("a run against itself: %v", err)
	}
	vid := base.Suite.Vignettes[0].ID
	for _, bad := range []struct {
		v                scenarios.Verdict
		note, vid, field string
	}{{"maybe", "why", vid, "verdict"}, {scenarios.GoldWrong, " ", vid, "note"}, {scenarios.GoldWrong, "why", "nope", "vignette"}} {
		_, err := s.Adjudicate(t.Context(), "bob", base.ID, head.ID, bad.vid, bad.v, bad.note)
		var e *bff.Error
		if !errors.As(err, &e) || e.Code != bff.EINVALID || e.Field != bad.field {
			t.Errorf("adjudicate %+v: %v, want invalid %s", bad, err, bad.field)
		}
	}
	if _, err := s.Adjudicate(t.Context(), "bob", base.ID, head.ID, vid, scenarios.GoldWrong, "the gold class is out of date"); err != nil {
		t.Fatal(err)
	}
	c, err := s.Compare(t.Context(), base.ID, head.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ch := range c.Changes {
		if ch.VignetteID == vid && ch.Adjudication != nil && ch.Adjudication.By == "bob" {
			found = true
		}
	}
	if !found {
		t.Errorf("the verdict on %s is not in the comparison: %+v", vid, c.Changes)
	}
	entries, _ := db.Audit(t.Context(), 10, 0)
	if len(entries) == 0 || entries[0].Action != bff.AuditAdjudicate || entries[0].Actor != "bob" {
		t.Errorf("the newest audit entry is %+v, want bob's adjudication", entries[0])
	}
}

// TestEstimate: the turns a run needs against what today and each day
// leave to runs once patients' reserve is kept.
func TestEstimate(t *testing.T) {
	db := mustOpenDB(t)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := newService(t, Deps{Store: db, Target: TargetService, Reserve: 30, PerMinute: 6, Now: func() time.Time { return now },
		TurnsToday: func(context.Context) (int, int, error) { return 20, 100, nil }})
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	want, most := 0, 0
	for _, v := range all.Vignettes {
		want += min(v.MaxTurns, len(v.Facts)+1)
		most += v.MaxTurns
	}
	e, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.Unlimited || e.Intakes != 2*len(all.Vignettes) || e.Turns != 2*want || e.MaxTurns != 2*most {
		t.Fatalf("estimate %+v: want %d intakes, %d turns, at most %d", e, 2*len(all.Vignettes), 2*want, 2*most)
	}
	if e.PerDay != 70 || e.LeftToday != 50 {
		t.Errorf("per day %d, left today %d: want 70 and 50 (100 less 30 kept, less 20 used)", e.PerDay, e.LeftToday)
	}
	if days := 1 + (e.Turns-50+69)/70; e.Days != days {
		t.Errorf("%d days, want %d", e.Days, days)
	}
	lastDay := time.Date(2026, 11, 23+e.Days-1, 0, 0, 0, 0, time.UTC)
	if e.Finish.Before(lastDay) || !e.Finish.Before(lastDay.Add(24*time.Hour)) {
		t.Errorf("finish %s is not on day %d (%s)", e.Finish, e.Days, lastDay.Format(time.DateOnly))
	}
	small, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Upload: smallSuite(t, 1), Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	if small.Days != 1 || !small.Finish.After(now) || !small.Finish.Before(now.Add(time.Hour)) {
		t.Errorf("one vignette: %+v, want today within the hour", small)
	}
	for _, f := range []struct {
		form  bff.ScenarioRunForm
		field string
	}{
		{bff.ScenarioRunForm{Suite: "nope", Repeats: 1}, "suite"},
		{bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 0}, "repeats"},
		{bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 11}, "repeats"},
		{bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1, Label: strings.Repeat("x", 101)}, "label"},
		{bff.ScenarioRunForm{Upload: []byte("suite: x\nvignettes:\n  - id: a\n"), UploadName: "mine.yaml", Repeats: 1}, "upload"},
	} {
		_, err := s.Estimate(t.Context(), f.form)
		var e *bff.Error
		if !errors.As(err, &e) || e.Code != bff.EINVALID || e.Field != f.field {
			t.Errorf("%+v: %v, want invalid %s", f.form, err, f.field)
		}
	}
	// A suite file that does not load: one message, and behind it every
	// problem whole (a page lists them one a line).
	_, err = s.Estimate(t.Context(), bff.ScenarioRunForm{Upload: []byte("vignettes:\n  - id: a\n    colour: red\n"), UploadName: "mine.yaml", Repeats: 1})
	if msg := bff.ErrorMessage(err); msg != "mine.yaml does not load: 3 problems. Correct the file and upload it again." {
		t.Errorf("a suite that does not load: %q", msg)
	}
	if ps := scenarios.Problems(err); len(ps) != 3 || ps[2].Field != "colour" || ps[2].Line != 3 {
		t.Errorf("its problems: %v", ps)
	}
	// A run that could never finish is refused before it starts.
	for _, c := range []struct {
		reserve int
		code    string
	}{{100, bff.ECONFLICT}, {90, bff.EINVALID}} { // nothing for runs; 10 a day, below a turn limit of 15
		tight := newService(t, Deps{Store: db, Target: TargetService, Reserve: c.reserve, Now: func() time.Time { return now },
			TurnsToday: func(context.Context) (int, int, error) { return 0, 100, nil }})
		if _, _, err := tight.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1}); bff.ErrorCode(err) != c.code {
			t.Errorf("reserve %d of 100: %v, want %s", c.reserve, err, c.code)
		}
	}
	unlimited := newService(t, Deps{Store: db, Target: TargetSandbox})
	if e, err := unlimited.Estimate(t.Context(), bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 1}); err != nil || !e.Unlimited {
		t.Errorf("sandbox estimate %+v, %v: want unlimited", e, err)
	}
}

// recordingGate lets every call go and keeps the calls.
type recordingGate struct {
	mu    sync.Mutex
	calls []intakeapi.Call
}

func (g *recordingGate) Wait(_ context.Context, c intakeapi.Call) (func(intakeapi.Outcome), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, c)
	return func(intakeapi.Outcome) {}, nil
}

// TestRunsWaitBehindPatients: every call of a run waits at the background
// priority and leaves a request of the minute free for a patient.
func TestRunsWaitBehindPatients(t *testing.T) {
	eng := newEngine(t)
	db := mustOpenDB(t)
	gate := &recordingGate{}
	client, err := intakeapi.New(intakeapi.Config{BaseURL: eng.URL, APIKey: eng.key, Gate: gate, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := newService(t, Deps{Store: db, Client: client, Target: TargetService})
	r, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: smallSuite(t, 1), Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	serveUntil(t, s, func() bool { return runState(t, db, r.ID).State == bff.RunDone })
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if len(gate.calls) < 3 {
		t.Fatalf("%d calls: want the intake, its turns and the handoff", len(gate.calls))
	}
	for _, c := range gate.calls {
		if c.Priority != intakeapi.PriorityBackground || c.Headroom != 1 {
			t.Errorf("%s at %s with headroom %d: want background with headroom 1", c.Op, c.Priority, c.Headroom)
		}
	}
}

// TestEstimateLearnsFromPastRuns: once a vignette has been played, its
// estimate is the turns it took, not the guess from its facts.
func TestEstimateLearnsFromPastRuns(t *testing.T) {
	eng := newEngine(t)
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Client: eng.client(t), Target: TargetSandbox})
	suite := smallSuite(t, 3)
	r, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: suite, Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	serveUntil(t, s, func() bool { return runState(t, db, r.ID).State == bff.RunDone })
	items, err := db.ScenarioItems(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	played, guessed := 0, 0
	for i, it := range items {
		played += it.Result.Turns
		v := r.Suite.Vignettes[i]
		guessed += min(v.MaxTurns, len(v.Facts)+1)
	}
	if played == guessed {
		t.Fatalf("the vignettes took exactly the guessed %d turns: the test cannot tell the two apart", played)
	}
	e, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Upload: suite, Repeats: 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.Turns != 2*played {
		t.Errorf("estimate %d turns, want %d (2 × the %d played; the guess was %d)", e.Turns, 2*played, played, guessed)
	}
}
