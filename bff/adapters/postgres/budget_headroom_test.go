package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
)

// runCall is a scenario run's call: background, leaving headroom free slots.
func runCall(headroom int) intakeapi.Call {
	c := read(intakeapi.PriorityBackground)
	c.Headroom = headroom
	return c
}

// heldRun fills a six-a-minute window of ten minutes (nothing leaves it
// during a test) with five grants, then queues a run's call with headroom 1
// on replica a. It returns the budgets, the run's call's progress and a
// cancel that ends its wait, checking it was never granted.
func heldRun(t *testing.T) (a, b *postgres.Budget, countGrants func() int, told *progressLog, end func()) {
	t.Helper()
	bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: 6, Window: 10 * time.Minute}, StaleAfter: time.Minute}, "a", "b")
	a, b = bs[0], bs[1]
	ctx := within(t, 30*time.Second)
	for range 5 {
		mustWait(ctx, t, a, read(intakeapi.PriorityBackground))(ok200)
	}
	told = &progressLog{}
	c := runCall(1)
	c.Progress = told.record
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		release, err := a.Wait(runCtx, c)
		if err == nil {
			release(ok200)
		}
		done <- err
	}()
	eventually(t, "the run's call queued", func() bool { return waiting(t, a) == 1 })
	end = func() {
		t.Helper()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the run's call, held for the whole test: %v, want it never granted", err)
		}
	}
	return a, b, func() int { return len(grants(t, db)) }, told, end
}

// TestBudgetHeadroomLeavesThePatientsSlot: with five grants in a six-a-minute
// window a run's call with headroom 1 waits (told it is not next), and a
// patient's turn on another replica takes the sixth slot.
func TestBudgetHeadroomLeavesThePatientsSlot(t *testing.T) {
	_, b, countGrants, told, end := heldRun(t)
	eventually(t, "the run's call told it is second", func() bool {
		told.mu.Lock()
		defer told.mu.Unlock()
		return len(told.all) > 0 && told.all[len(told.all)-1].Position == 2
	})
	if n := countGrants(); n != 5 {
		t.Fatalf("%d grants, want the five of the fill: the run's call took the last slot", n)
	}
	mustWait(within(t, 10*time.Second), t, b, call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn))(ok200)
	if n := countGrants(); n != 6 {
		t.Fatalf("%d grants, want 6", n)
	}
	end()
	told.mu.Lock()
	defer told.mu.Unlock()
	for _, p := range told.all {
		if p.Position < 2 {
			t.Fatalf("progress %v: told it was next while its headroom held it", told.all)
		}
	}
}
