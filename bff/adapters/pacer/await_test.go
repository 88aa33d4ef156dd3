package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/gatetest"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// The pacer is an AsyncGate.
var _ intakeapi.AsyncGate = (*pacer.Pacer)(nil)

// awaited is the pacer with every Wait made through Await: the suite every
// gate passes then checks that a caller of Await is served by the same
// rules (order, window, follow-ups, pauses, quotas, headroom, leaving).
type awaited struct{ *pacer.Pacer }

type grantResult struct {
	release func(intakeapi.Outcome)
	err     error
}

func (a awaited) Wait(ctx context.Context, call intakeapi.Call) (func(intakeapi.Outcome), error) {
	got := make(chan grantResult, 1)
	a.Await(ctx, call, func(release func(intakeapi.Outcome), err error) { got <- grantResult{release, err} })
	r := <-got
	return r.release, r.err
}

func TestGateSuiteThroughAwait(t *testing.T) {
	gatetest.Run(t, gatetest.Harness{
		New: func(t *testing.T, r pacing.Rules) gatetest.Gate {
			return awaited{pacer.New(pacer.Config{Rules: r})}
		},
		Run:    inBubble,
		Window: time.Minute,
	})
}

// TestAwaitHoldsNoGoroutinePerCaller: fifty callers of Await waiting behind
// a full window cost one goroutine of the pacer's between them, none once
// they have gone; each is granted in its turn, with Wait's callers in the
// same queue, by priority then arrival.
func TestAwaitHoldsNoGoroutinePerCaller(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1}, Clock: clk})
		fill(t, p, 1) // the window is full until 60 s
		var (
			mu    sync.Mutex
			order []string
		)
		got := func(name string) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, name)
		}
		var wg sync.WaitGroup
		wg.Add(50)
		for i := range 50 {
			p.Await(t.Context(), read(pacer.Background), func(release func(intakeapi.Outcome), err error) {
				defer wg.Done()
				if err != nil {
					errorUnlessEnded(t, fmt.Errorf("awaiter %d: %w", i, err))
					return
				}
				got(fmt.Sprint("await ", i))
				release(intakeapi.Outcome{Status: 200})
			})
		}
		// A patient waiting in Wait goes before them all, one of the same
		// priority after them.
		wg.Go(func() {
			mustWait(t, p, read(pacer.PatientTurn))(intakeapi.Outcome{Status: 200})
			got("wait patient")
		})
		settled(t, "51 queued", func() bool { return p.Stats().Waiting == 51 })
		wg.Go(func() {
			mustWait(t, p, read(pacer.Background))(intakeapi.Outcome{Status: 200})
			got("wait background")
		})
		settled(t, "52 queued", func() bool { return p.Stats().Waiting == 52 })
		// Two goroutines wait in Wait; the fifty of Await, none of their
		// own: the pacer's one serves them.
		if n := pacerGoroutines(); n != 3 {
			t.Fatalf("%d goroutines in the pacer's code while 50 await and 2 wait, want 3\n%s", n, goroutines())
		}
		sleepUntil(at(52 * time.Minute))
		wg.Wait()
		want := []string{"wait patient"}
		for i := range 50 {
			want = append(want, fmt.Sprint("await ", i))
		}
		want = append(want, "wait background")
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Fatalf("granted in the order %q, want %q", order, want)
		}
		settled(t, "the pacer's goroutines gone", func() bool { return pacerGoroutines() == 0 })
		if clk.pending() != 0 {
			t.Fatalf("%d timers left", clk.pending())
		}
	})
}

// TestAwaitProgressAndLeaving: a caller of Await is told its place at once,
// again every ProgressEvery as its wait counts down, at once when one ahead
// leaves; its context ending takes it out of the queue with the context's
// error, and a spent quota with the quota's.
func TestAwaitProgressAndLeaving(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 1, TurnsPerDay: 2}, ProgressEvery: 5 * time.Second})
		fill(t, p, 1) // the window is full until 60 s
		ahead, cancelAhead := context.WithCancel(t.Context())
		left := make(chan error, 1)
		p.Await(ahead, read(pacer.PatientTurn), func(_ func(intakeapi.Outcome), err error) { left <- err })

		log := &progressLog{}
		c := read(pacer.PatientTurn)
		c.Progress = log.record
		granted := make(chan grantResult, 1)
		p.Await(t.Context(), c, func(release func(intakeapi.Outcome), err error) { granted <- grantResult{release, err} })
		settled(t, "second in line, two minutes", func() bool { return log.last() == pacer.Progress{Position: 2, Wait: 2 * time.Minute} })
		for i, want := range []time.Duration{115 * time.Second, 110 * time.Second} {
			sleepUntil(at(time.Duration(i+1) * 5 * time.Second))
			settled(t, fmt.Sprintf("tick %d re-reported", i+1), func() bool { return log.last() == pacer.Progress{Position: 2, Wait: want} })
		}
		cancelAhead()
		cancelled := time.Now()
		if err := <-left; !errors.Is(err, context.Canceled) {
			t.Fatalf("the caller ahead, its context ended: %v, want context.Canceled", err)
		}
		if d := time.Since(cancelled); d != 0 {
			t.Fatalf("the caller ahead left %v after its context ended, want at once", d)
		}
		settled(t, "moved to the front", func() bool { return log.last() == pacer.Progress{Position: 1, Wait: 50 * time.Second} })
		sleepUntil(at(time.Minute))
		if r := <-granted; r.err != nil {
			t.Fatalf("granted: %v", r.err)
		} else {
			r.release(intakeapi.Outcome{Status: 200})
		}

		// Two turns queue; the service answers the first with its daily
		// quota spent: the second, still waiting, is refused with it.
		first := make(chan grantResult, 1)
		p.Await(t.Context(), turn(), func(release func(intakeapi.Outcome), err error) { first <- grantResult{release, err} })
		queued := make(chan error, 1)
		p.Await(t.Context(), turn(), func(_ func(intakeapi.Outcome), err error) { queued <- err })
		settled(t, "both queued", func() bool { return p.Stats().Waiting == 2 })
		sleepUntil(at(2 * time.Minute))
		r := <-first
		if r.err != nil {
			t.Fatalf("first turn: %v", r.err)
		}
		r.release(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
		if err := <-queued; !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("the turn queued when the quota was spent: %v, want ErrQuotaSpent", err)
		}
		settled(t, "the pacer's goroutines gone", func() bool { return pacerGoroutines() == 0 })
	})
}
