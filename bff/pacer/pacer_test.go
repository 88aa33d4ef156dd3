package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/pacer"
	"github.com/clinical-intake/intake-web/bff/pacer/pacertest"
)

// The pacer is the client's Gate.
var _ intakeapi.Gate = (*pacer.Pacer)(nil)

var t0 = time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)

// bound is how long a test waits for something that needs no clock
// movement: far more than any loaded machine needs, it only turns a lost
// wake-up or a test waiting for the wrong thing into a failure (with every
// goroutine's stack) instead of a hang until the test binary's timeout.
// Every wait in these tests is bounded by it: waitFor, recv, waitGroup.
const bound = 20 * time.Second

// waitFor yields until cond holds. Goroutines of the test run in between.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s\n%s", bound, what, goroutines())
		}
		runtime.Gosched()
	}
}

// recv receives from ch, or fails the test after bound.
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("gave up after %s waiting for %s\n%s", bound, what, goroutines())
		panic("unreachable")
	}
}

// waitGroup waits for wg, or fails the test after bound.
func waitGroup(t *testing.T, what string, wg *sync.WaitGroup) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	recv(t, what, done)
}

// goroutines is every goroutine's stack, for a failure message: the waiters
// still in Pacer.Wait, and where the test's own goroutines stopped.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// at is t0 plus d, for moving the clock to the instant a grant is due.
func at(d time.Duration) time.Time { return t0.Add(d) }

func read(prio pacer.Priority) intakeapi.Call {
	return intakeapi.Call{Op: intakeapi.OpHandoff, Priority: prio, Attempt: 1}
}

func turn() intakeapi.Call {
	return intakeapi.Call{Op: intakeapi.OpTurn, Priority: pacer.PatientTurn, Attempt: 1}
}

func mustWait(t *testing.T, p *pacer.Pacer, c intakeapi.Call) func(intakeapi.Outcome) {
	t.Helper()
	rel, err := p.Wait(context.Background(), c)
	if err != nil {
		t.Fatalf("Wait(%v): %v", c.Op, err)
	}
	return rel
}

// fill spends the whole window at the current time.
func fill(t *testing.T, p *pacer.Pacer, n int) {
	t.Helper()
	for range n {
		mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 200})
	}
}

func TestWindowNeverExceededUnderConcurrency(t *testing.T) {
	for _, perMinute := range []int{6, 10} {
		t.Run(fmt.Sprintf("per_minute_%d", perMinute), func(t *testing.T) {
			clk := pacertest.NewClock(t0)
			p := pacer.New(pacer.Config{Margin: -1, PerMinute: perMinute, Clock: clk, TurnsPerDay: -1, IntakesPerDay: -1})
			const callers = 50
			prios := []pacer.Priority{pacer.PatientTurn, pacer.CreateIntake, pacer.Reconciliation, pacer.ClinicianRead, pacer.Background}
			var (
				mu     sync.Mutex
				grants []time.Time
				done   atomic.Int32
				wg     sync.WaitGroup
			)
			for i := range callers {
				wg.Go(func() {
					rel, err := p.Wait(context.Background(), read(prios[i%len(prios)]))
					if err != nil {
						t.Errorf("caller %d: %v", i, err)
						return
					}
					mu.Lock()
					grants = append(grants, clk.Now())
					mu.Unlock()
					rel(intakeapi.Outcome{Status: 200})
					done.Add(1)
				})
			}
			// Batch k goes exactly k minutes in. The clock moves straight to
			// each minute once every caller is either done or queued: timers
			// carry absolute deadlines, so the head wakes at that minute
			// whether its timer was armed before the move or is re-armed
			// after it. (Waiting for "a timer is pending" and then calling
			// AdvanceToNext raced with that re-arming: the timer could be
			// gone by the call, and time did not move.)
			for k := 1; ; k++ {
				want := min(callers, k*perMinute)
				waitFor(t, fmt.Sprintf("%d callers granted by minute %d, the rest queued", want, k-1), func() bool {
					n := int(done.Load())
					return n >= want && n+p.Stats().Waiting == callers
				})
				if want == callers {
					break
				}
				clk.AdvanceTo(at(time.Duration(k) * time.Minute))
			}
			waitGroup(t, "the callers to return", &wg)
			slices.SortFunc(grants, time.Time.Compare)
			for i, g := range grants {
				in := 0
				for _, h := range grants {
					if h.After(g.Add(-time.Minute)) && !h.After(g) {
						in++
					}
				}
				if in > perMinute {
					t.Fatalf("%d requests in the minute ending %s, limit %d", in, g.Sub(t0), perMinute)
				}
				// The gate also wastes nothing: batch k goes exactly k minutes in.
				if want := t0.Add(time.Duration(i/perMinute) * time.Minute); !g.Equal(want) {
					t.Errorf("grant %d at %s, want %s", i, g.Sub(t0), want.Sub(t0))
				}
			}
			if clk.Pending() != 0 {
				t.Errorf("%d timers left running", clk.Pending())
			}
		})
	}
}

func TestPrioritiesGoFirstThenArrivalOrder(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, Clock: clk})
	fill(t, p, 1)

	type entry struct {
		name string
		prio pacer.Priority
	}
	arrivals := []entry{
		{"bg1", pacer.Background}, {"read1", pacer.ClinicianRead}, {"turn1", pacer.PatientTurn},
		{"recon1", pacer.Reconciliation}, {"create1", pacer.CreateIntake}, {"turn2", pacer.PatientTurn},
		{"read2", pacer.ClinicianRead}, {"bg2", pacer.Background},
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	for i, e := range arrivals {
		wg.Go(func() {
			rel := mustWait(t, p, read(e.prio))
			mu.Lock()
			order = append(order, e.name)
			mu.Unlock()
			rel(intakeapi.Outcome{Status: 200})
		})
		// Arrive one at a time so arrival order is defined.
		waitFor(t, "arrival", func() bool { return p.Stats().Waiting == i+1 })
	}
	for i := range arrivals {
		clk.AdvanceTo(at(time.Duration(i+1) * time.Minute)) // one slot a minute
		waitFor(t, fmt.Sprintf("grant %d recorded", i+1), func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == i+1 })
	}
	waitGroup(t, "the callers to return", &wg)
	want := []string{"turn1", "turn2", "create1", "recon1", "read1", "read2", "bg1", "bg2"}
	if !slices.Equal(order, want) {
		t.Fatalf("grant order %v, want %v", order, want)
	}
}

// progressRecorder keeps the latest Progress a waiter was told.
type progressRecorder struct {
	mu   sync.Mutex
	last pacer.Progress
	n    int
}

func (r *progressRecorder) record(p pacer.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.n = p, r.n+1
}

func (r *progressRecorder) get() pacer.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func TestQueuePositionAndExpectedWait(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 2, Clock: clk})
	fill(t, p, 1)
	clk.Advance(20 * time.Second)
	fill(t, p, 1) // grants at 0 s and 20 s; now 20 s

	recs := make([]*progressRecorder, 4)
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = &progressRecorder{}
		c := read(pacer.ClinicianRead)
		c.Progress = recs[i].record
		wg.Go(func() { mustWait(t, p, c)(intakeapi.Outcome{Status: 200}) })
		waitFor(t, "arrival", func() bool { return p.Stats().Waiting == i+1 })
	}
	// Slots free at 60 s and 80 s, then 120 s and 140 s (a minute after each).
	want := []pacer.Progress{
		{Position: 1, Wait: 40 * time.Second},
		{Position: 2, Wait: 60 * time.Second},
		{Position: 3, Wait: 100 * time.Second},
		{Position: 4, Wait: 120 * time.Second},
	}
	for i, r := range recs {
		waitFor(t, fmt.Sprintf("progress of waiter %d", i), func() bool { return r.get() == want[i] })
	}
	// An urgent caller overtakes everyone, and the others are told they moved.
	urgent := &progressRecorder{}
	c := turn()
	c.Progress = urgent.record
	wg.Go(func() { mustWait(t, p, c)(intakeapi.Outcome{Status: 200}) })
	waitFor(t, "urgent first", func() bool { return urgent.get() == pacer.Progress{Position: 1, Wait: 40 * time.Second} })
	waitFor(t, "first reader now second", func() bool { return recs[0].get() == pacer.Progress{Position: 2, Wait: 60 * time.Second} })

	clk.Advance(40 * time.Second) // 60 s: the urgent call goes
	waitFor(t, "urgent granted", func() bool { return p.Stats().Waiting == 4 })
	waitFor(t, "first reader is next", func() bool { return recs[0].get() == pacer.Progress{Position: 1, Wait: 20 * time.Second} })
	waitFor(t, "last reader moved up", func() bool { return recs[3].get() == pacer.Progress{Position: 4, Wait: 120 * time.Second} })

	// Grants at 20 s and 60 s in the window: the readers go at 80 s, 120 s,
	// 140 s and 180 s, as their estimates said.
	for i, slot := range []time.Duration{80, 120, 140, 180} {
		clk.AdvanceTo(at(slot * time.Second))
		waitFor(t, fmt.Sprintf("reader %d granted at %d s", i, slot), func() bool { return p.Stats().Waiting == 3-i })
	}
	waitGroup(t, "the callers to return", &wg)
}

func TestCancellationFreesThePlace(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, Clock: clk})
	fill(t, p, 1)

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := p.Wait(ctx, read(pacer.PatientTurn))
		first <- err
	}()
	waitFor(t, "first queued", func() bool { return p.Stats().Waiting == 1 })

	second := &progressRecorder{}
	c := read(pacer.ClinicianRead)
	c.Progress = second.record
	granted := make(chan struct{})
	go func() {
		mustWait(t, p, c)(intakeapi.Outcome{Status: 200})
		close(granted)
	}()
	waitFor(t, "second is 2nd", func() bool { return second.get().Position == 2 })

	cancel()
	if err := recv(t, "the cancelled Wait to return", first); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Wait returned %v, want context.Canceled", err)
	}
	waitFor(t, "second moved to the front", func() bool { return second.get() == pacer.Progress{Position: 1, Wait: time.Minute} })
	if got := p.Stats().Waiting; got != 1 {
		t.Fatalf("%d waiting after cancellation, want 1", got)
	}
	clk.AdvanceTo(at(time.Minute))
	recv(t, "the second caller's grant", granted)
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers left behind", n)
	}
}

func TestCancelledContextIsNotGranted(t *testing.T) {
	p := pacer.New(pacer.Config{Clock: pacertest.NewClock(t0)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Wait(ctx, turn()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
	if s := p.Stats(); s.InWindow != 0 || s.TurnsUsed != 0 {
		t.Fatalf("a cancelled caller spent budget: %+v", s)
	}
}

func TestCancellationLeavesNoGoroutines(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, Clock: clk})
	fill(t, p, 1)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := p.Wait(ctx, read(pacer.Background)); !errors.Is(err, context.Canceled) {
				t.Errorf("Wait: %v, want context.Canceled", err)
			}
		})
	}
	waitFor(t, "all queued", func() bool { return p.Stats().Waiting == 20 })
	cancel()
	waitGroup(t, "the cancelled callers to return", &wg)
	if s := p.Stats(); s.Waiting != 0 {
		t.Fatalf("%d still queued", s.Waiting)
	}
	if clk.Pending() != 0 {
		t.Fatalf("%d timers left", clk.Pending())
	}
	waitFor(t, "goroutines gone", func() bool { return runtime.NumGoroutine() <= before })
}

func TestRetryAfterPausesEveryone(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 6, Clock: clk})
	mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: 7 * time.Second})
	if got := p.Stats().PausedUntil; !got.Equal(t0.Add(7 * time.Second)) {
		t.Fatalf("paused until %v, want +7s", got)
	}
	granted := make(chan time.Time, 1)
	go func() {
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		granted <- clk.Now()
	}()
	waitFor(t, "turn queued behind the pause", func() bool { return p.Stats().Waiting == 1 && clk.Pending() == 1 })
	clk.Advance(6 * time.Second)
	if p.Stats().Waiting != 1 {
		t.Fatal("granted during the pause")
	}
	clk.Advance(time.Second)
	if got := recv(t, "the grant at the end of the pause", granted); !got.Equal(at(7 * time.Second)) {
		t.Fatalf("granted at %v, want at the end of the pause", got.Sub(t0))
	}
}

func TestDailyTurnQuota(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: -1, TurnsPerDay: 3, IntakesPerDay: 1, Clock: clk})

	mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})                         // counted
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 200, Replayed: true})         // replay: free
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 502, Code: "upstream_error"}) // refused before processing: free
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: time.Second})
	clk.Advance(time.Second)
	mustWait(t, p, turn())(intakeapi.Outcome{NotSent: true}) // never sent: free
	mustWait(t, p, turn())(intakeapi.Outcome{})              // no answer: may have run, counted
	if got := p.Stats().TurnsUsed; got != 2 {
		t.Fatalf("turns used %d, want 2", got)
	}
	rel := mustWait(t, p, turn()) // the third is reserved while in flight...
	if _, err := p.Wait(context.Background(), turn()); !errors.Is(err, pacer.ErrQuotaSpent) {
		t.Fatalf("a fourth concurrent turn: %v, want ErrQuotaSpent", err)
	}
	rel(intakeapi.Outcome{Status: 200})

	_, err := p.Wait(context.Background(), turn())
	var qe *pacer.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, pacer.ErrQuotaSpent) || !intakeapi.IsQuotaExceeded(err) {
		t.Fatalf("Wait after the quota: %v, want a *QuotaError matching ErrQuotaSpent and CodeQuotaExceeded", err)
	}
	if want := time.Date(2026, 8, 4, 0, 0, 0, 0, time.UTC); qe.Quota != "turns" || qe.Limit != 3 || !qe.ResetAt.Equal(want) {
		t.Fatalf("QuotaError %+v, want turns/3/reset %v", qe, want)
	}
	if p.Stats().Waiting != 0 {
		t.Fatal("a refused call stayed queued")
	}
	// Reads and intakes are not turns.
	mustWait(t, p, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 200})
	mustWait(t, p, intakeapi.Call{Op: intakeapi.OpCreateIntake, Priority: pacer.CreateIntake})(intakeapi.Outcome{Status: 201})
	if _, err := p.Wait(context.Background(), intakeapi.Call{Op: intakeapi.OpCreateIntake}); !errors.As(err, &qe) || qe.Quota != "intakes" {
		t.Fatalf("second intake: %v, want the intakes quota spent", err)
	}
	// 00:00 UTC resets both.
	clk.Advance(14 * time.Hour)
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
	mustWait(t, p, intakeapi.Call{Op: intakeapi.OpCreateIntake})(intakeapi.Outcome{Status: 201})
}

func TestServiceQuotaExceededIsBelieved(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, Clock: clk})
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
	if _, err := p.Wait(context.Background(), turn()); !errors.Is(err, pacer.ErrQuotaSpent) {
		t.Fatalf("after the service's quota_exceeded: %v, want ErrQuotaSpent", err)
	}
	if p.Stats().PausedUntil != (time.Time{}) {
		t.Fatal("quota_exceeded paused the reads too")
	}
	mustWait(t, p, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 200})
	clk.Advance(14 * time.Hour)
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
}

func TestWaiterRefusedWhenQuotaSpentWhileQueued(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, TurnsPerDay: 5, Clock: clk})
	inFlight := mustWait(t, p, turn()) // takes the minute's only slot
	errc := make(chan error, 1)
	go func() {
		_, err := p.Wait(context.Background(), turn())
		errc <- err
	}()
	waitFor(t, "second turn queued", func() bool { return p.Stats().Waiting == 1 })
	// The in-flight turn learns the service's quota is spent (another process
	// used it): the queued turn is refused at once instead of waiting a minute.
	inFlight(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
	if err := recv(t, "the queued turn's refusal", errc); !errors.Is(err, pacer.ErrQuotaSpent) {
		t.Fatalf("queued turn: %v, want ErrQuotaSpent", err)
	}
	if s := p.Stats(); s.Waiting != 0 {
		t.Fatalf("%d still queued", s.Waiting)
	}
}

func TestMarginHoldsEachGrantLonger(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{PerMinute: 1, Clock: clk}) // default margin
	fill(t, p, 1)
	granted := make(chan time.Time, 1)
	go func() {
		mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 200})
		granted <- clk.Now()
	}()
	waitFor(t, "queued", func() bool { return p.Stats().Waiting == 1 && clk.Pending() == 1 })
	clk.Advance(time.Minute)
	if p.Stats().Waiting != 1 {
		t.Fatal("granted at 60 s; the margin should hold the slot to 61 s")
	}
	clk.AdvanceTo(at(time.Minute + pacer.DefaultMargin))
	if got := recv(t, "the grant at 61 s", granted); !got.Equal(at(time.Minute + pacer.DefaultMargin)) {
		t.Fatalf("granted at %s", got.Sub(t0))
	}
}

func TestUnlimitedKey(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: -1, TurnsPerDay: -1, Clock: clk})
	for range 500 {
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
	}
	if s := p.Stats(); s.TurnsUsed != 500 || s.Waiting != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestReleaseIsIdempotent(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, TurnsPerDay: 5, Clock: clk})
	rel := mustWait(t, p, turn())
	rel(intakeapi.Outcome{Status: 502})
	rel(intakeapi.Outcome{Status: 502})
	mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
	if got := p.Stats().TurnsUsed; got != 1 {
		t.Fatalf("turns used %d, want 1 (a double release must not refund twice)", got)
	}
}

// A waiter woken by its timer and by the end of its context at once (select
// picks either) must not be granted: the client would not send the request,
// yet the slot and a turn of the daily quota would be spent. The Progress
// callback runs just before the waiter selects, so it can make both ready;
// with a coin toss per run, 64 runs all pass only if the pacer checks ctx
// before every grant.
func TestContextEndingAsTheSlotFreesIsNotGranted(t *testing.T) {
	for i := range 64 {
		clk := pacertest.NewClock(t0)
		p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, Clock: clk})
		fill(t, p, 1)
		ctx, cancel := context.WithCancel(context.Background())
		c := turn()
		c.Progress = func(pacer.Progress) {
			cancel()
			clk.AdvanceTo(at(time.Minute)) // fires the head's timer
		}
		rel, err := p.Wait(ctx, c)
		if err == nil {
			rel(intakeapi.Outcome{NotSent: true})
			t.Fatalf("run %d: a caller whose context had ended was granted", i)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: Wait: %v, want context.Canceled", i, err)
		}
		if s := p.Stats(); s.InWindow != 0 || s.TurnsUsed != 0 || s.Waiting != 0 {
			t.Fatalf("run %d: a cancelled caller spent budget or stayed queued: %+v", i, s)
		}
		if n := clk.Pending(); n != 0 {
			t.Fatalf("run %d: %d timers left", i, n)
		}
	}
}

// stopHookClock runs a hook inside Timer.Stop: the moment a woken waiter has
// dropped its timer and not yet armed the next one.
type stopHookClock struct {
	*pacertest.Clock
	hook atomic.Pointer[func()]
}

func (c *stopHookClock) NewTimerAt(at time.Time) pacer.Timer {
	return stopHookTimer{c.Clock.NewTimerAt(at), c}
}

type stopHookTimer struct {
	pacer.Timer
	c *stopHookClock
}

func (t stopHookTimer) Stop() bool {
	ok := t.Timer.Stop()
	if f := t.c.hook.Swap(nil); f != nil {
		(*f)()
	}
	return ok
}

// Every state change wakes every waiter, and the head re-arms its timer. The
// tests once waited for "a timer is pending" and then called AdvanceToNext:
// when the pending timer was the head's old one, about to be stopped, time
// did not move and the test waited forever for a grant (the hang seen under
// load). This pins the interleaving: the clock moves exactly while the head
// holds no timer. AdvanceToNext cannot help there; AdvanceTo must, because
// the head re-reads the clock and re-arms at an absolute deadline.
func TestClockMovingWhileTheHeadRearmsItsTimer(t *testing.T) {
	clk := &stopHookClock{Clock: pacertest.NewClock(t0)}
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, Clock: clk})
	fill(t, p, 1)
	granted := make(chan time.Time, 1)
	go func() {
		mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 200})
		granted <- clk.Now()
	}()
	waitFor(t, "the head's timer", func() bool { return p.Stats().Waiting == 1 && clk.Pending() == 1 })

	var pendingInGap int
	var movedInGap bool
	hook := func() {
		pendingInGap = clk.Pending()
		movedInGap = clk.AdvanceToNext()
		clk.AdvanceTo(at(time.Minute))
	}
	clk.hook.Store(&hook)
	p.Pause(time.Nanosecond) // a state change that leaves the head's deadline as it was

	if got := recv(t, "the head's grant at 60 s", granted); !got.Equal(at(time.Minute)) {
		t.Fatalf("granted at %s, want 60 s", got.Sub(t0))
	}
	if pendingInGap != 0 || movedInGap {
		t.Fatalf("in the gap: %d timers pending, AdvanceToNext moved time: %v; want none and false", pendingInGap, movedInGap)
	}
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
}

// progressLog keeps every Progress a waiter was told.
type progressLog struct {
	mu  sync.Mutex
	all []pacer.Progress
}

func (l *progressLog) record(p pacer.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, p)
}

func (l *progressLog) last() pacer.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.all) == 0 {
		return pacer.Progress{}
	}
	return l.all[len(l.all)-1]
}

// TestProgressMovesWhileWaiting: a waiter is told its expected wait again
// every ProgressEvery as it counts down, with nothing else in the queue
// changing, and at once when a waiter ahead leaves.
func TestProgressMovesWhileWaiting(t *testing.T) {
	clk := pacertest.NewClock(t0)
	p := pacer.New(pacer.Config{Margin: -1, PerMinute: 1, Clock: clk, ProgressEvery: 5 * time.Second})
	fill(t, p, 1) // the window is full until 60 s

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ahead := make(chan error, 1)
	go func() {
		_, err := p.Wait(ctx, read(pacer.PatientTurn))
		ahead <- err
	}()
	waitFor(t, "the first waiter queued", func() bool { return p.Stats().Waiting == 1 })

	log := &progressLog{}
	c := read(pacer.PatientTurn)
	c.Progress = log.record
	granted := make(chan struct{})
	go func() {
		mustWait(t, p, c)(intakeapi.Outcome{Status: 200})
		close(granted)
	}()
	waitFor(t, "second in line, two minutes", func() bool { return log.last() == pacer.Progress{Position: 2, Wait: 2 * time.Minute} })

	// Time passes, nothing else changes: the estimate counts down.
	for i, want := range []time.Duration{115 * time.Second, 110 * time.Second, 105 * time.Second} {
		clk.Advance(5 * time.Second)
		waitFor(t, fmt.Sprintf("tick %d re-reported", i+1), func() bool { return log.last() == pacer.Progress{Position: 2, Wait: want} })
	}
	// The waiter ahead leaves: moved up at once, with a shorter wait.
	cancel()
	recv(t, "the first waiter to leave", ahead)
	waitFor(t, "moved to the front", func() bool { return log.last() == pacer.Progress{Position: 1, Wait: 45 * time.Second} })
	clk.AdvanceTo(at(time.Minute))
	recv(t, "the grant", granted)
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers left running", n)
	}
}
