package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// The pacer is the client's Gate.
var _ intakeapi.Gate = (*pacer.Pacer)(nil)

// Every test runs in a testing/synctest bubble on the pacer's real clock:
// inside a bubble time.Now and timers read a fake clock that moves only when
// every goroutine of the test is blocked, straight to the next timer. So a
// test sleeps to the instant a grant is due and takes no time, and
// synctest.Wait replaces polling for a waiter to reach a state. A lost
// wake-up is a deadlock, which synctest reports with every goroutine's stack.
// Calls wait with t.Context(): a test that fails ends its waiters with it,
// so the bubble ends with a failure, not a deadlock panic.

// t0 is when each test starts: a bubble's clock starts at midnight UTC
// 2000-01-01, and inBubble moves it to 10:00, so the day's quotas have 14
// hours left.
var t0 = time.Date(2000, 1, 1, 10, 0, 0, 0, time.UTC)

// nextDay is the first UTC midnight after t0, when the daily quotas reset.
var nextDay = time.Date(2000, 1, 2, 0, 0, 0, 0, time.UTC)

// inBubble runs f in a synctest bubble whose clock reads t0.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		sleepUntil(t0)
		f(t)
	})
}

// sleepUntil moves the bubble's clock to when (every other goroutine of the
// test runs until it blocks first).
func sleepUntil(when time.Time) { time.Sleep(time.Until(when)) }

// settled waits until every other goroutine of the test is blocked, then
// checks cond.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("once every goroutine was blocked: not %s\n%s", what, goroutines())
	}
}

// goroutines is every goroutine's stack, for a failure message: the waiters
// still in Pacer.Wait, and where the test's own goroutines stopped.
func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// pacerGoroutines counts the goroutines running code of package pacer.
func pacerGoroutines() int {
	n := 0
	for g := range strings.SplitSeq(goroutines(), "\n\n") {
		if strings.Contains(g, "/bff/adapters/pacer.") {
			n++
		}
	}
	return n
}

// clock is the system clock (the bubble's, in these tests) counting the
// timers the pacer arms and has not stopped, so a test can see that a
// waiter is waiting on its timer and that none is left behind. hook, when
// set, runs once inside a Timer.Stop: the moment a woken waiter has dropped
// its timer and not yet armed the next one.
type clock struct {
	pacer.SystemClock
	live atomic.Int64
	hook atomic.Pointer[func()]
}

func (c *clock) NewTimerAt(at time.Time) pacer.Timer {
	c.live.Add(1)
	return &countedTimer{Timer: c.SystemClock.NewTimerAt(at), c: c}
}

// pending is the number of timers armed and not stopped.
func (c *clock) pending() int { return int(c.live.Load()) }

type countedTimer struct {
	pacer.Timer
	c       *clock
	stopped atomic.Bool
}

func (t *countedTimer) Stop() bool {
	ok := t.Timer.Stop()
	if !t.stopped.Swap(true) {
		t.c.live.Add(-1)
	}
	if f := t.c.hook.Swap(nil); f != nil {
		(*f)()
	}
	return ok
}

// at is t0 plus d, for moving the clock to the instant a grant is due.
func at(d time.Duration) time.Time { return t0.Add(d) }

func read(prio pacer.Priority) intakeapi.Call {
	return intakeapi.Call{Op: intakeapi.OpHandoff, Priority: prio, Attempt: 1}
}

func turn() intakeapi.Call {
	return intakeapi.Call{Op: intakeapi.OpTurn, Priority: pacer.PatientTurn, Attempt: 1}
}

// mustWait waits for c and returns its release. It is called from the
// test's goroutine and from goroutines the test starts, so it never calls
// t.Fatal (the testing package forbids that off the test's goroutine): a
// failed Wait is reported with t.Error and ends the calling goroutine (on
// the test's own, that ends the test as t.FailNow would; elsewhere the test
// then fails, or synctest reports the wait for it as a deadlock).
func mustWait(t *testing.T, p *pacer.Pacer, c intakeapi.Call) func(intakeapi.Outcome) {
	t.Helper()
	rel, err := p.Wait(t.Context(), c)
	if err != nil {
		errorUnlessEnded(t, fmt.Errorf("Wait(%v): %w", c.Op, err))
		runtime.Goexit()
	}
	return rel
}

// errorUnlessEnded reports err from a goroutine of the test, unless the test
// has already ended (it failed, and its end cancelled t.Context(), which
// caused err): a report then would only panic.
func errorUnlessEnded(t *testing.T, err error) {
	t.Helper()
	if t.Context().Err() == nil {
		t.Error(err)
	}
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
			inBubble(t, func(t *testing.T) {
				clk := &clock{}
				p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: perMinute, TurnsPerDay: -1, IntakesPerDay: -1}, Clock: clk})
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
						rel, err := p.Wait(t.Context(), read(prios[i%len(prios)]))
						if err != nil {
							errorUnlessEnded(t, fmt.Errorf("caller %d: %w", i, err))
							return
						}
						mu.Lock()
						grants = append(grants, time.Now())
						mu.Unlock()
						rel(intakeapi.Outcome{Status: 200})
						done.Add(1)
					})
				}
				// Minute by minute: batch k is granted exactly k minutes in,
				// and everyone else is still queued.
				for k := 0; ; k++ {
					sleepUntil(at(time.Duration(k) * time.Minute))
					want := min(callers, (k+1)*perMinute)
					settled(t, fmt.Sprintf("%d callers granted by minute %d, the rest queued", want, k), func() bool {
						n := int(done.Load())
						return n == want && n+p.Stats().Waiting == callers
					})
					if want == callers {
						break
					}
				}
				wg.Wait()
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
				if clk.pending() != 0 {
					t.Errorf("%d timers left running", clk.pending())
				}
			})
		})
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
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 2}})
		fill(t, p, 1)
		time.Sleep(20 * time.Second)
		fill(t, p, 1) // grants at 0 s and 20 s; now 20 s

		recs := make([]*progressRecorder, 4)
		var wg sync.WaitGroup
		for i := range recs {
			recs[i] = &progressRecorder{}
			c := read(pacer.ClinicianRead)
			c.Progress = recs[i].record
			wg.Go(func() { mustWait(t, p, c)(intakeapi.Outcome{Status: 200}) })
			settled(t, "arrival", func() bool { return p.Stats().Waiting == i+1 })
		}
		// Slots free at 60 s and 80 s, then 120 s and 140 s (a minute after each).
		want := []pacer.Progress{
			{Position: 1, Wait: 40 * time.Second},
			{Position: 2, Wait: 60 * time.Second},
			{Position: 3, Wait: 100 * time.Second},
			{Position: 4, Wait: 120 * time.Second},
		}
		for i, r := range recs {
			settled(t, fmt.Sprintf("progress of waiter %d", i), func() bool { return r.get() == want[i] })
		}
		// An urgent caller overtakes everyone, and the others are told they moved.
		urgent := &progressRecorder{}
		c := turn()
		c.Progress = urgent.record
		wg.Go(func() { mustWait(t, p, c)(intakeapi.Outcome{Status: 200}) })
		settled(t, "urgent first", func() bool { return urgent.get() == pacer.Progress{Position: 1, Wait: 40 * time.Second} })
		settled(t, "first reader now second", func() bool { return recs[0].get() == pacer.Progress{Position: 2, Wait: 60 * time.Second} })

		time.Sleep(40 * time.Second) // 60 s: the urgent call goes
		settled(t, "urgent granted", func() bool { return p.Stats().Waiting == 4 })
		settled(t, "first reader is next", func() bool { return recs[0].get() == pacer.Progress{Position: 1, Wait: 20 * time.Second} })
		settled(t, "last reader moved up", func() bool { return recs[3].get() == pacer.Progress{Position: 4, Wait: 120 * time.Second} })

		// Grants at 20 s and 60 s in the window: the readers go at 80 s, 120 s,
		// 140 s and 180 s, as their estimates said, and not a moment before.
		for i, slot := range []time.Duration{80, 120, 140, 180} {
			sleepUntil(at(slot*time.Second - time.Millisecond))
			settled(t, fmt.Sprintf("reader %d still waiting just before %d s", i, slot), func() bool { return p.Stats().Waiting == 4-i })
			sleepUntil(at(slot * time.Second))
			settled(t, fmt.Sprintf("reader %d granted at %d s", i, slot), func() bool { return p.Stats().Waiting == 3-i })
		}
		wg.Wait()
	})
}

func TestCancellationFreesThePlace(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}, Clock: clk})
		fill(t, p, 1)

		ctx, cancel := context.WithCancel(t.Context())
		first := make(chan error, 1)
		go func() {
			_, err := p.Wait(ctx, read(pacer.PatientTurn))
			first <- err
		}()
		settled(t, "first queued", func() bool { return p.Stats().Waiting == 1 })

		second := &progressRecorder{}
		c := read(pacer.ClinicianRead)
		c.Progress = second.record
		granted := make(chan time.Time)
		go func() {
			mustWait(t, p, c)(intakeapi.Outcome{Status: 200})
			granted <- time.Now()
		}()
		settled(t, "second is 2nd", func() bool { return second.get().Position == 2 })

		cancel()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Wait returned %v, want context.Canceled", err)
		}
		settled(t, "second moved to the front", func() bool { return second.get() == pacer.Progress{Position: 1, Wait: time.Minute} })
		if got := p.Stats().Waiting; got != 1 {
			t.Fatalf("%d waiting after cancellation, want 1", got)
		}
		if got := <-granted; !got.Equal(at(time.Minute)) {
			t.Fatalf("the second caller was granted at %s, want 60 s", got.Sub(t0))
		}
		if n := clk.pending(); n != 0 {
			t.Fatalf("%d timers left behind", n)
		}
	})
}

func TestCancelledContextIsNotGranted(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := p.Wait(ctx, turn()); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait with a cancelled context: %v", err)
		}
		if s := p.Stats(); s.InWindow != 0 || s.TurnsUsed != 0 {
			t.Fatalf("a cancelled caller spent budget: %+v", s)
		}
	})
}

func TestCancellationLeavesNoGoroutines(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}, Clock: clk})
		fill(t, p, 1)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if _, err := p.Wait(ctx, read(pacer.Background)); !errors.Is(err, context.Canceled) {
					t.Errorf("Wait: %v, want context.Canceled", err)
				}
			})
		}
		settled(t, "all queued", func() bool { return p.Stats().Waiting == 20 })
		// While they wait, their goroutines are in the pacer's code: the
		// count below can see them (it matches the package's path).
		if n := pacerGoroutines(); n < 20 {
			t.Fatalf("%d goroutines in the pacer's code while 20 wait", n)
		}
		cancel()
		wg.Wait()
		if s := p.Stats(); s.Waiting != 0 {
			t.Fatalf("%d still queued", s.Waiting)
		}
		if clk.pending() != 0 {
			t.Fatalf("%d timers left", clk.pending())
		}
		// Nothing of the pacer's is left running. (Counting goroutines,
		// runtime.NumGoroutine, also counts the test binary's own outside
		// the bubble, which synctest.Wait does not wait for.)
		settled(t, "the pacer's goroutines gone", func() bool { return pacerGoroutines() == 0 })
	})
}

func TestRetryAfterPausesEveryone(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 6}, Clock: clk})
		mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: 7 * time.Second})
		if got := p.Stats().PausedUntil; !got.Equal(t0.Add(7 * time.Second)) {
			t.Fatalf("paused until %v, want +7s", got)
		}
		granted := make(chan time.Time, 1)
		go func() {
			mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
			granted <- time.Now()
		}()
		settled(t, "turn queued behind the pause", func() bool { return p.Stats().Waiting == 1 && clk.pending() == 1 })
		time.Sleep(6 * time.Second)
		settled(t, "still queued 6 s in", func() bool { return p.Stats().Waiting == 1 })
		time.Sleep(time.Second)
		if got := <-granted; !got.Equal(at(7 * time.Second)) {
			t.Fatalf("granted at %v, want at the end of the pause", got.Sub(t0))
		}
	})
}

func TestDailyTurnQuota(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: -1, TurnsPerDay: 3, IntakesPerDay: 1}})

		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})                         // counted
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200, Replayed: true})         // replay: free
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 502, Code: "upstream_error"}) // refused before processing: free
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: time.Second})
		time.Sleep(time.Second)
		mustWait(t, p, turn())(intakeapi.Outcome{NotSent: true}) // never sent: free
		mustWait(t, p, turn())(intakeapi.Outcome{})              // no answer: may have run, counted
		if got := p.Stats().TurnsUsed; got != 2 {
			t.Fatalf("turns used %d, want 2", got)
		}
		rel := mustWait(t, p, turn()) // the third is reserved while in flight...
		if _, err := p.Wait(t.Context(), turn()); !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("a fourth concurrent turn: %v, want ErrQuotaSpent", err)
		}
		rel(intakeapi.Outcome{Status: 200})

		_, err := p.Wait(t.Context(), turn())
		var qe *pacer.QuotaError
		if !errors.As(err, &qe) || !errors.Is(err, pacer.ErrQuotaSpent) || !intakeapi.IsCode(err, intakeapi.CodeQuotaExceeded) {
			t.Fatalf("Wait after the quota: %v, want a *QuotaError matching ErrQuotaSpent and CodeQuotaExceeded", err)
		}
		if qe.Quota != "turns" || qe.Limit != 3 || !qe.ResetAt.Equal(nextDay) {
			t.Fatalf("QuotaError %+v, want turns/3/reset %v", qe, nextDay)
		}
		if p.Stats().Waiting != 0 {
			t.Fatal("a refused call stayed queued")
		}
		// Reads and intakes are not turns.
		mustWait(t, p, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 200})
		mustWait(t, p, intakeapi.Call{Op: intakeapi.OpCreateIntake, Priority: pacer.CreateIntake})(intakeapi.Outcome{Status: 201})
		if _, err := p.Wait(t.Context(), intakeapi.Call{Op: intakeapi.OpCreateIntake}); !errors.As(err, &qe) || qe.Quota != "intakes" {
			t.Fatalf("second intake: %v, want the intakes quota spent", err)
		}
		// 00:00 UTC resets both.
		sleepUntil(nextDay)
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		mustWait(t, p, intakeapi.Call{Op: intakeapi.OpCreateIntake})(intakeapi.Outcome{Status: 201})
	})
}

func TestServiceQuotaExceededIsBelieved(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1}})
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
		if _, err := p.Wait(t.Context(), turn()); !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("after the service's quota_exceeded: %v, want ErrQuotaSpent", err)
		}
		if p.Stats().PausedUntil != (time.Time{}) {
			t.Fatal("quota_exceeded paused the reads too")
		}
		mustWait(t, p, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 200})
		sleepUntil(nextDay)
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
	})
}

func TestWaiterRefusedWhenQuotaSpentWhileQueued(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1, TurnsPerDay: 5}})
		inFlight := mustWait(t, p, turn()) // takes the minute's only slot
		errc := make(chan error, 1)
		go func() {
			_, err := p.Wait(t.Context(), turn())
			errc <- err
		}()
		settled(t, "second turn queued", func() bool { return p.Stats().Waiting == 1 })
		// The in-flight turn learns the service's quota is spent (another process
		// used it): the queued turn is refused at once instead of waiting a minute.
		inFlight(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
		if err := <-errc; !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("queued turn: %v, want ErrQuotaSpent", err)
		}
		if !time.Now().Equal(t0) {
			t.Fatalf("the queued turn was refused at %s, want at once", time.Since(t0))
		}
		if s := p.Stats(); s.Waiting != 0 {
			t.Fatalf("%d still queued", s.Waiting)
		}
	})
}

func TestMarginHoldsEachGrantLonger(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{PerMinute: 1}, Clock: clk}) // default margin
		fill(t, p, 1)
		granted := make(chan time.Time, 1)
		go func() {
			mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 200})
			granted <- time.Now()
		}()
		settled(t, "queued", func() bool { return p.Stats().Waiting == 1 && clk.pending() == 1 })
		time.Sleep(time.Minute)
		settled(t, "still queued at 60 s; the margin holds the slot to 61 s", func() bool { return p.Stats().Waiting == 1 })
		if got := <-granted; !got.Equal(at(time.Minute + pacing.DefaultMargin)) {
			t.Fatalf("granted at %s, want 61 s", got.Sub(t0))
		}
	})
}

func TestUnlimitedKey(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: -1, TurnsPerDay: -1}})
		for range 500 {
			mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		}
		if s := p.Stats(); s.TurnsUsed != 500 || s.Waiting != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestReleaseIsIdempotent(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, TurnsPerDay: 5}})
		rel := mustWait(t, p, turn())
		rel(intakeapi.Outcome{Status: 502})
		rel(intakeapi.Outcome{Status: 502})
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		if got := p.Stats().TurnsUsed; got != 1 {
			t.Fatalf("turns used %d, want 1 (a double release must not refund twice)", got)
		}
	})
}

// A waiter woken by its timer and by the end of its context at once (select
// picks either) must not be granted: the client would not send the request,
// yet the slot and a turn of the daily quota would be spent. The Progress
// callback runs just before the waiter selects, so it can make both ready
// (it cancels, then sleeps past the head's deadline); with a coin toss per
// run, 64 runs all pass only if the pacer checks ctx before every grant.
func TestContextEndingAsTheSlotFreesIsNotGranted(t *testing.T) {
	for i := range 64 {
		inBubble(t, func(t *testing.T) {
			clk := &clock{}
			p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}, Clock: clk})
			fill(t, p, 1)
			ctx, cancel := context.WithCancel(t.Context())
			c := turn()
			c.Progress = func(pacer.Progress) {
				cancel()
				sleepUntil(at(time.Minute)) // the head's timer is due
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
			if n := clk.pending(); n != 0 {
				t.Fatalf("run %d: %d timers left", i, n)
			}
		})
	}
}

// Every state change wakes every waiter, and the head drops its timer and
// re-arms it. This pins the interleaving where time moves exactly while the
// head holds no timer, up to its deadline: the head must re-read the clock
// and be granted then (a head that trusted the deadline of a timer it had
// already dropped would wait forever, a deadlock synctest reports).
func TestClockMovingWhileTheHeadRearmsItsTimer(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}, Clock: clk})
		fill(t, p, 1)
		granted := make(chan time.Time, 1)
		go func() {
			mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 200})
			granted <- time.Now()
		}()
		settled(t, "the head's timer", func() bool { return p.Stats().Waiting == 1 && clk.pending() == 1 })

		pendingInGap := -1
		hook := func() {
			pendingInGap = clk.pending()
			sleepUntil(at(time.Minute)) // the head's deadline passes in the gap
		}
		clk.hook.Store(&hook)
		p.Pause(time.Nanosecond) // a state change that leaves the head's deadline as it was

		if got := <-granted; !got.Equal(at(time.Minute)) {
			t.Fatalf("granted at %s, want 60 s", got.Sub(t0))
		}
		if pendingInGap != 0 {
			t.Fatalf("in the gap: %d timers pending, want none (the hook ran elsewhere than between two timers)", pendingInGap)
		}
		if n := clk.pending(); n != 0 {
			t.Fatalf("%d timers left", n)
		}
	})
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
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}, Clock: clk, ProgressEvery: 5 * time.Second})
		fill(t, p, 1) // the window is full until 60 s

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ahead := make(chan error, 1)
		go func() {
			_, err := p.Wait(ctx, read(pacer.PatientTurn))
			ahead <- err
		}()
		settled(t, "the first waiter queued", func() bool { return p.Stats().Waiting == 1 })

		log := &progressLog{}
		c := read(pacer.PatientTurn)
		c.Progress = log.record
		granted := make(chan struct{})
		go func() {
			mustWait(t, p, c)(intakeapi.Outcome{Status: 200})
			close(granted)
		}()
		settled(t, "second in line, two minutes", func() bool { return log.last() == pacer.Progress{Position: 2, Wait: 2 * time.Minute} })

		// Time passes, nothing else changes: the estimate counts down.
		for i, want := range []time.Duration{115 * time.Second, 110 * time.Second, 105 * time.Second} {
			sleepUntil(at(time.Duration(i+1) * 5 * time.Second))
			settled(t, fmt.Sprintf("tick %d re-reported", i+1), func() bool { return log.last() == pacer.Progress{Position: 2, Wait: want} })
		}
		// The waiter ahead leaves: moved up at once, with a shorter wait.
		cancel()
		if err := <-ahead; !errors.Is(err, context.Canceled) {
			t.Fatalf("the first waiter: %v", err)
		}
		settled(t, "moved to the front", func() bool { return log.last() == pacer.Progress{Position: 1, Wait: 45 * time.Second} })
		sleepUntil(at(time.Minute))
		<-granted
		settled(t, "no timers left", func() bool { return clk.pending() == 0 })
	})
}

// TestProgressDefaultIsEveryTwoSeconds: with no ProgressEvery configured (as
// the app builds it), a patient fourth in line for a minute is told its wait
// again every DefaultProgressEvery, and its place drops as those ahead go:
// the line "you are 4th, about 1 min" does not stand still.
func TestProgressDefaultIsEveryTwoSeconds(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}})
		fill(t, p, 1) // the window is full until 60 s
		for range 3 {
			go func() { mustWait(t, p, read(pacer.PatientTurn))(intakeapi.Outcome{Status: 200}) }()
		}
		settled(t, "three queued", func() bool { return p.Stats().Waiting == 3 })
		log := &progressLog{}
		c := read(pacer.PatientTurn)
		c.Progress = log.record
		go func() { mustWait(t, p, c)(intakeapi.Outcome{Status: 200}) }()
		settled(t, "fourth, four minutes", func() bool { return log.last() == pacer.Progress{Position: 4, Wait: 4 * time.Minute} })
		sleepUntil(at(pacing.DefaultProgressEvery))
		settled(t, "the wait re-told after DefaultProgressEvery", func() bool {
			return log.last() == pacer.Progress{Position: 4, Wait: 4*time.Minute - pacing.DefaultProgressEvery}
		})
		sleepUntil(at(time.Minute))
		settled(t, "third once the first is let go", func() bool { return log.last() == pacer.Progress{Position: 3, Wait: 3 * time.Minute} })
		sleepUntil(at(3 * time.Minute))
		settled(t, "next in line", func() bool { return log.last() == pacer.Progress{Position: 1, Wait: time.Minute} })
		if pacing.DefaultProgressEvery > 2*time.Second {
			t.Fatalf("DefaultProgressEvery is %v, want at most 2 s", pacing.DefaultProgressEvery)
		}
		sleepUntil(at(4 * time.Minute))
		settled(t, "all granted", func() bool { return p.Stats().Waiting == 0 })
	})
}
