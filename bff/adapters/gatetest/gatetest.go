// Package gatetest is the one test suite every intakeapi.Gate that keeps
// the key's pacing rules passes: bff/adapters/pacer (one process) and bff/adapters/postgres's
// Budget (replicas). The rules themselves are package pacing's and are unit
// tested there; this suite checks that a gate applies them to callers that
// wait, leave, settle and announce follow-ups.
//
// The tests never order events by sleeping: a caller is known to be queued
// when the gate first reports its place (Call.Progress), and grants are
// received from channels. They read time with time.Now, so they run the
// same on a testing/synctest bubble's clock (the pacer: every wait takes no
// real time) and on the real clock with short windows (the budget, whose
// database connections cannot live in a bubble); Slack is how late the
// real clock may read an instant the gate computed.
package gatetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// Gate is the gate under test.
type Gate = intakeapi.Gate

// Harness makes gates for the suite.
type Harness struct {
	// New returns a fresh gate with rules (Window and Margin set by the
	// suite from Window below), with nothing granted yet.
	New func(t *testing.T, r pacing.Rules) Gate
	// Run runs one test: in a testing/synctest bubble, or directly.
	Run func(t *testing.T, f func(t *testing.T))
	// Window is the rolling window the suite's rules use: a minute in a
	// bubble, a second or two on the real clock.
	Window time.Duration
	// Slack is how late, at most, time.Now may read in a Progress callback
	// or after a grant compared with the instant the gate decided at (0 in
	// a bubble).
	Slack time.Duration
}

// Run runs the suite against h.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		f    func(*testing.T, Harness)
	}{
		{"WindowNeverExceeded", testWindowNeverExceeded},
		{"PrioritiesThenArrival", testPrioritiesThenArrival},
		{"CreationAndFirstTurnShownAsOneWait", testCreationAndFirstTurnShownAsOneWait},
		{"RetryAfterIncludedAndSaid", testRetryAfterIncludedAndSaid},
		{"DailyQuotaAndRefund", testDailyQuotaAndRefund},
		{"HeadroomIsPassedOver", testHeadroomIsPassedOver},
		{"HeadroomWaitsForTheWindow", headroomWaits(6, 5, 1)},
		{"HeadroomBeyondTheWindowWaitsForAnEmptyOne", headroomWaits(2, 1, 5)},
		{"CancelledWaiterLeaves", testCancelledWaiterLeaves},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Run(t, func(t *testing.T) { tc.f(t, h) })
		})
	}
}

func (h Harness) rules(perMinute int) pacing.Rules {
	return pacing.Rules{PerMinute: perMinute, Window: h.Window, Margin: -1, TurnsPerDay: -1, IntakesPerDay: -1}
}

func call(op intakeapi.Op, prio intakeapi.Priority) intakeapi.Call {
	return intakeapi.Call{Op: op, Priority: prio, Attempt: 1}
}

// grant waits in g and settles at once with outcome o; it fails the test
// (from the test's goroutine only) when Wait does.
func grant(t *testing.T, g Gate, c intakeapi.Call, o intakeapi.Outcome) {
	t.Helper()
	release, err := g.Wait(t.Context(), c)
	if err != nil {
		t.Fatalf("Wait(%s, %s): %v", c.Op, c.Priority, err)
	}
	release(o)
}

var ok = intakeapi.Outcome{Status: 200}

// result is what a waiter started with queue got.
type result struct {
	name string
	at   time.Time
	err  error
}

// queue starts c waiting in g on a goroutine of its own and returns once
// the gate has reported it queued (its first Progress); the grant (settled
// with ok) or error is sent to out. Progress reports after the first go to
// progress, when set.
func queue(ctx context.Context, t *testing.T, g Gate, name string, c intakeapi.Call, out chan<- result, progress func(intakeapi.Progress)) {
	t.Helper()
	queued := make(chan struct{})
	var once sync.Once
	c.Progress = func(p intakeapi.Progress) {
		once.Do(func() { close(queued) })
		if progress != nil {
			progress(p)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		release, err := g.Wait(ctx, c)
		if err == nil {
			release(ok)
		}
		out <- result{name: name, at: time.Now(), err: err}
	}()
	select {
	case <-queued:
	case <-done:
		t.Fatalf("%s was not queued", name)
	}
}

func receive(t *testing.T, out <-chan result, n int) []result {
	t.Helper()
	var got []result
	for range n {
		r := <-out
		if r.err != nil {
			t.Fatalf("%s: %v", r.name, r.err)
		}
		got = append(got, r)
	}
	return got
}

// testWindowNeverExceeded: callers at once, never more than PerMinute
// grants in any window.
func testWindowNeverExceeded(t *testing.T, h Harness) {
	const perMinute, callers = 3, 8
	g := h.New(t, h.rules(perMinute))
	out := make(chan result, callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			release, err := g.Wait(t.Context(), call(intakeapi.OpHandoff, intakeapi.PriorityClinicianRead))
			at := time.Now()
			if err == nil {
				release(ok)
			}
			out <- result{at: at, err: err}
		})
	}
	wg.Wait()
	close(out)
	var at []time.Time
	for r := range out {
		if r.err != nil {
			t.Fatal(r.err)
		}
		at = append(at, r.at)
	}
	slices.SortFunc(at, time.Time.Compare)
	for i := perMinute; i < len(at); i++ {
		// The grant perMinute places earlier has left the window. Read on
		// the real clock after Wait returned, a grant may look later than
		// it was, never earlier.
		if d := at[i].Sub(at[i-perMinute]); d < h.Window-h.Slack {
			t.Errorf("grant %d came %v after grant %d: more than %d in a window of %v", i, d, i-perMinute, perMinute, h.Window)
		}
	}
}

// testPrioritiesThenArrival: a patient's turn first, then creations,
// reconciliation, clinician reads, background; equal priorities in order of
// arrival.
func testPrioritiesThenArrival(t *testing.T, h Harness) {
	whileFull(t, h, func(g Gate, held func() bool) bool {
		out := make(chan result, 6)
		queue(t.Context(), t, g, "background", call(intakeapi.OpHealth, intakeapi.PriorityBackground), out, nil)
		queue(t.Context(), t, g, "clinician", call(intakeapi.OpSummary, intakeapi.PriorityClinicianRead), out, nil)
		queue(t.Context(), t, g, "turn 1", call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), out, nil)
		queue(t.Context(), t, g, "reconciliation", call(intakeapi.OpHandoff, intakeapi.PriorityReconciliation), out, nil)
		queue(t.Context(), t, g, "turn 2", call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), out, nil)
		queue(t.Context(), t, g, "create", call(intakeapi.OpCreateIntake, intakeapi.PriorityCreateIntake), out, nil)
		if !held() {
			return false
		}
		want := []string{"turn 1", "turn 2", "create", "reconciliation", "clinician", "background"}
		for i, r := range receive(t, out, len(want)) {
			if r.name != want[i] {
				t.Fatalf("grant %d went to %s, want %s (order %v)", i+1, r.name, want[i], want)
			}
		}
		return true
	})
}

// whileFull calls try with a gate of one request a window, whose window a
// grant has just filled. try calls held after the steps that need the
// window still full (queueing callers, a cancel) and returns false at once
// when it says no: those steps outlasted the window, and an order seen
// after a slot freed proves nothing. The attempt is then made again with a
// window twice as long, up to 16 times the harness's: on a loaded machine
// queueing six callers on PostgreSQL can outlast a short real-time window.
// On a synctest clock the window never frees while the test works, and one
// attempt is made.
func whileFull(t *testing.T, h Harness, try func(g Gate, held func() bool) bool) {
	t.Helper()
	for window := h.Window; ; window *= 2 {
		r := h.rules(1)
		r.Window = window
		g := h.New(t, r)
		grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok) // the window is full
		filled := time.Now()
		if try(g, func() bool { return time.Since(filled) < window-h.Slack }) {
			return
		}
		if window >= 16*h.Window {
			t.Fatalf("the steps outlasted a window of %v: the machine is too slow for this test", window)
		}
		t.Logf("the window of %v freed before the steps ended; again with %v", window, 2*window)
	}
}

// shown records what a patient is shown: each report's deadline (when
// it was told plus the wait), and whether the wait was said to include the
// service's pause.
type shown struct {
	mu      sync.Mutex
	reports []report
}

type report struct {
	p        intakeapi.Progress
	deadline time.Time
}

func (s *shown) record(p intakeapi.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reports = append(s.reports, report{p: p, deadline: time.Now().Add(p.Wait)})
}

func (s *shown) all() []report {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]report(nil), s.reports...)
}

// testCreationAndFirstTurnShownAsOneWait: a patient's first message
// creates the intake, then sends the turn. The wait shown while the
// creation waits covers the turn too, and nothing shown later (for the
// creation or its turn) is later than it: the shown wait only shrinks.
func testCreationAndFirstTurnShownAsOneWait(t *testing.T, h Harness) {
	g := h.New(t, h.rules(2))
	grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok)
	time.Sleep(h.Window / 2) // the two grants apart: the window frees in two steps
	grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok)
	start := time.Now()
	var s shown
	fu := new(intakeapi.FollowUp)
	create := call(intakeapi.OpCreateIntake, intakeapi.PriorityPatientTurn)
	create.FollowUps, create.Announces = 1, fu
	out := make(chan result, 1)
	queue(t.Context(), t, g, "create", create, out, s.record)
	receive(t, out, 1)
	first := call(intakeapi.OpStreamTurn, intakeapi.PriorityFirstTurn)
	first.Follows, first.Progress = fu, s.record
	grant(t, g, first, ok)
	sent := time.Now()

	r := s.all()
	if len(r) == 0 {
		t.Fatal("the creation was never told its wait")
	}
	// The creation's first report already covers both requests: the
	// creation goes when the first grant leaves the window (Window/2 from
	// start), its turn when the second does (Window from start).
	if got, want := r[0].deadline, start.Add(h.Window); got.Before(want.Add(-h.Slack)) {
		t.Errorf("the creation was shown a wait to %v after start; the turn went only after %v",
			got.Sub(start), h.Window)
	}
	for i := 1; i < len(r); i++ {
		if r[i].deadline.After(r[i-1].deadline.Add(h.Slack)) {
			t.Errorf("report %d grew the shown wait by %v (%+v after %+v)", i, r[i].deadline.Sub(r[i-1].deadline), r[i].p, r[i-1].p)
		}
	}
	if sent.After(r[0].deadline.Add(2 * h.Slack)) {
		t.Errorf("the turn went %v after the first shown deadline", sent.Sub(r[0].deadline))
	}
}

// testRetryAfterIncludedAndSaid: after a 429 with Retry-After, a waiter's
// wait includes the pause, and is marked Paused (the page then says the
// service asked to wait longer); nothing goes before the pause ends.
func testRetryAfterIncludedAndSaid(t *testing.T, h Harness) {
	g := h.New(t, h.rules(10))
	pause := h.Window / 2
	limited := intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: pause}
	paused := time.Now()
	grant(t, g, call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), limited)
	var s shown
	out := make(chan result, 1)
	queue(t.Context(), t, g, "retry", call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), out, s.record)
	got := receive(t, out, 1)[0]
	if got.at.Before(paused.Add(pause)) {
		t.Errorf("granted %v after the 429, before its Retry-After of %v", got.at.Sub(paused), pause)
	}
	r := s.all()
	if !r[0].p.Paused {
		t.Errorf("the wait was not said to include the service's pause: %+v", r[0].p)
	}
	if end := paused.Add(pause); r[0].deadline.Before(end.Add(-h.Slack)) {
		t.Errorf("the wait shown ends %v before the pause does", end.Sub(r[0].deadline))
	}
}

// testDailyQuotaAndRefund: a call on a spent quota is refused with a
// *QuotaError and nothing is sent; a call that was not charged gives its
// unit back.
func testDailyQuotaAndRefund(t *testing.T, h Harness) {
	r := h.rules(-1)
	r.TurnsPerDay = 2
	g := h.New(t, r)
	turn := call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn)
	grant(t, g, turn, ok)
	grant(t, g, turn, intakeapi.Outcome{Status: 200, Replayed: true}) // a replay costs nothing
	grant(t, g, turn, ok)
	_, err := g.Wait(t.Context(), turn)
	var qe *intakeapi.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, intakeapi.ErrQuotaSpent) || qe.Quota != "turns" || qe.Limit != 2 {
		t.Fatalf("third charged turn: %v, want the turns quota of 2 spent", err)
	}
	// Reads are on no quota.
	grant(t, g, call(intakeapi.OpHandoff, intakeapi.PriorityClinicianRead), ok)
}

// testHeadroomIsPassedOver: a call with headroom waits while the window
// would not keep that many slots free after it, and a later call of lower
// priority is not kept waiting behind it.
func testHeadroomIsPassedOver(t *testing.T, h Harness) {
	g := h.New(t, h.rules(3))
	grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok)
	grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok) // 2 of 3: one free
	run := call(intakeapi.OpStreamTurn, intakeapi.PriorityCreateIntake)
	run.Headroom = 1
	out := make(chan result, 2)
	queue(t.Context(), t, g, "run", run, out, nil)
	// The lower-priority call takes the free slot at once (not after the
	// window frees, as it would behind the held run: a whole window).
	start := time.Now()
	grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok)
	if d := time.Since(start); d > h.Window/2 {
		t.Fatalf("a call waited %v behind a run's call its headroom held back", d)
	}
	select {
	case r := <-out:
		t.Fatalf("%s granted with no slot left free after it", r.name)
	default:
	}
	got := receive(t, out, 1)[0]
	if got.name != "run" {
		t.Fatalf("got %s", got.name)
	}
}

// testCancelledWaiterLeaves: a caller whose context ends leaves the queue
// with ctx's error, and the one behind it moves up and is granted.
func testCancelledWaiterLeaves(t *testing.T, h Harness) {
	whileFull(t, h, func(g Gate, held func() bool) bool {
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan result, 2)
		queue(ctx, t, g, "leaves", call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), out, nil)
		var s shown
		queue(t.Context(), t, g, "stays", call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), out, s.record)
		cancel()
		r := <-out
		if r.name != "leaves" || !errors.Is(r.err, context.Canceled) {
			t.Fatalf("got %s %v, want the cancelled caller to leave with context.Canceled", r.name, r.err)
		}
		if !held() {
			return false
		}
		if got := receive(t, out, 1)[0]; got.name != "stays" {
			t.Fatalf("got %s", got.name)
		}
		if r := s.all(); r[len(r)-1].p.Position != 1 {
			t.Errorf("the caller behind was last shown place %d, want 1", r[len(r)-1].p.Position)
		}
		return true
	})
}

// headroomWaits: a call with headroom room behind fill grants of perMinute
// goes only once the first has left the window (as headroom 1 behind five
// of six), and is never told it is next while held; a headroom beyond the
// window is held to PerMinute-1, so the call still goes, into an empty one.
func headroomWaits(perMinute, fill, room int) func(*testing.T, Harness) {
	return func(t *testing.T, h Harness) {
		g := h.New(t, h.rules(perMinute))
		first := time.Now()
		for range fill {
			grant(t, g, call(intakeapi.OpHealth, intakeapi.PriorityBackground), ok)
		}
		run := call(intakeapi.OpHandoff, intakeapi.PriorityBackground)
		run.Headroom = room
		var s shown
		out := make(chan result, 1)
		queue(t.Context(), t, g, "run", run, out, s.record)
		got := receive(t, out, 1)[0]
		if d := got.at.Sub(first); d < h.Window {
			t.Errorf("the run's call went %v after the first grant, before it left the %v window", d, h.Window)
		}
		for _, r := range s.all() {
			if r.p.Position < 2 {
				t.Errorf("told %+v while its headroom held it back", r.p)
			}
		}
	}
}
