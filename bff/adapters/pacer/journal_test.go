package pacer_test

import (
	"errors"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer/pacertest"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// restart builds a new pacer on the same journal (and clock), as a new
// process on the same database, and restores it.
func restart(t *testing.T, cfg pacer.Config) *pacer.Pacer {
	t.Helper()
	p := pacer.New(cfg)
	if err := p.Restore(t.Context()); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return p
}

func createIntake() intakeapi.Call {
	return intakeapi.Call{Op: intakeapi.OpCreateIntake, Priority: pacer.CreateIntake, Attempt: 1}
}

// The rolling window survives a restart: six grants, a restart ten seconds
// later, and the seventh call waits for the first grant to leave the window
// (with the old in-memory window it went at once, and drew the 429).
func TestRestartKeepsTheWindow(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		clk := &clock{}
		j := &pacertest.Journal{}
		cfg := pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 6}, Clock: clk, Journal: j}
		first := restart(t, cfg)
		for range 6 {
			mustWait(t, first, createIntake())(intakeapi.Outcome{Status: 201})
			time.Sleep(time.Second)
		}
		sleepUntil(at(10 * time.Second))

		second := restart(t, cfg)
		if s := second.Stats(); s.InWindow != 6 {
			t.Fatalf("after the restart %d grants in the window, want 6", s.InWindow)
		}
		granted := make(chan time.Time, 1)
		go func() {
			mustWait(t, second, createIntake())(intakeapi.Outcome{Status: 201})
			granted <- time.Now()
		}()
		settled(t, "the 7th call queued behind the restored window", func() bool {
			return second.Stats().Waiting == 1 && clk.pending() == 1
		})
		sleepUntil(at(59 * time.Second))
		settled(t, "the 7th call still queued at 59 s, before the first grant leaves the window", func() bool { return second.Stats().Waiting == 1 })
		if got := <-granted; !got.Equal(at(time.Minute)) {
			t.Fatalf("7th granted at %s, want 60 s (the first grant + the window)", got.Sub(t0))
		}
	})
}

// Today's counts survive a restart: charged calls count, refunded ones do
// not, a call in flight at the stop stays counted; yesterday's do not.
func TestRestartKeepsTodaysQuota(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		j := &pacertest.Journal{}
		cfg := pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: -1, TurnsPerDay: 4, IntakesPerDay: 2}, Journal: j}
		first := restart(t, cfg)
		mustWait(t, first, turn())(intakeapi.Outcome{Status: 200})                 // charged
		mustWait(t, first, turn())(intakeapi.Outcome{Status: 502})                 // refunded
		mustWait(t, first, turn())(intakeapi.Outcome{Status: 200, Replayed: true}) // refunded
		_ = mustWait(t, first, turn())                                             // in flight at the stop
		mustWait(t, first, createIntake())(intakeapi.Outcome{Status: 201})
		mustWait(t, first, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 200}) // on no quota

		time.Sleep(time.Hour)
		second := restart(t, cfg)
		if s := second.Stats(); s.TurnsUsed != 2 || s.IntakesUsed != 1 {
			t.Fatalf("after the restart turns %d, intakes %d; want 2 and 1", s.TurnsUsed, s.IntakesUsed)
		}
		mustWait(t, second, turn())(intakeapi.Outcome{Status: 200})
		mustWait(t, second, turn())(intakeapi.Outcome{Status: 200})
		if _, err := second.Wait(t.Context(), turn()); !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("a 5th turn of 4 across the restart: %v, want ErrQuotaSpent", err)
		}
		mustWait(t, second, createIntake())(intakeapi.Outcome{Status: 201})
		if _, err := second.Wait(t.Context(), createIntake()); !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("a 3rd intake of 2 across the restart: %v, want ErrQuotaSpent", err)
		}

		// The next UTC day starts from nothing.
		sleepUntil(nextDay.Add(time.Second))
		third := restart(t, cfg)
		if s := third.Stats(); s.TurnsUsed != 0 || s.IntakesUsed != 0 || s.InWindow != 0 {
			t.Fatalf("the next day: %+v", s)
		}
	})
}

// A Retry-After pause and the service's quota_exceeded hold across a restart.
func TestRestartKeepsPauseAndSpentQuota(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		j := &pacertest.Journal{}
		cfg := pacer.Config{Rules: pacing.Rules{Margin: -1}, Journal: j}
		first := restart(t, cfg)
		mustWait(t, first, read(pacer.Background))(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: 90 * time.Second})
		sleepUntil(at(90 * time.Second)) // the pause ends just as ...
		mustWait(t, first, turn())(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
		first.Pause(time.Hour) // ... another begins
		time.Sleep(time.Minute)

		second := restart(t, cfg)
		if got, want := second.Stats().PausedUntil, at(90*time.Second+time.Hour); !got.Equal(want) {
			t.Fatalf("paused until %v after the restart, want %v", got, want)
		}
		sleepUntil(at(2 * time.Hour))
		if _, err := second.Wait(t.Context(), turn()); !errors.Is(err, pacer.ErrQuotaSpent) {
			t.Fatalf("turns after the service said spent, across a restart: %v", err)
		}
	})
}

// A journal that fails neither blocks nor fails the call; Restore reports
// its error to the caller.
func TestJournalFailureDoesNotStopCalls(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		j := &pacertest.Journal{}
		j.Fail(errors.New("disk full"))
		p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1}, Journal: j})
		if err := p.Restore(t.Context()); err == nil {
			t.Fatal("Restore with a failing journal: no error")
		}
		for range 3 {
			mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		}
		if s := p.Stats(); s.TurnsUsed != 3 || s.InWindow != 3 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// What the journal is told: each grant with its quota, refunds, pauses and
// spent quotas, at the times they happened.
func TestJournalEntries(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		j := &pacertest.Journal{}
		p := restart(t, pacer.Config{Rules: pacing.Rules{Margin: -1}, Journal: j})
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
		mustWait(t, p, createIntake())(intakeapi.Outcome{Status: 400})
		mustWait(t, p, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: 5 * time.Second})
		time.Sleep(5 * time.Second)
		mustWait(t, p, turn())(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
		reset := nextDay
		want := []pacer.Entry{
			{At: t0, Event: pacer.EventGrant, Quota: "turns"},
			{At: t0, Event: pacer.EventGrant, Quota: "intakes"},
			{At: t0, Event: pacer.EventRefund, Quota: "intakes"},
			{At: t0, Event: pacer.EventGrant},
			{At: t0, Event: pacer.EventPause, Until: at(5 * time.Second)},
			{At: at(5 * time.Second), Event: pacer.EventGrant, Quota: "turns"},
			{At: at(5 * time.Second), Event: pacer.EventRefund, Quota: "turns"},
			{At: at(5 * time.Second), Event: pacer.EventSpent, Quota: "turns", Until: reset},
		}
		got := j.Entries()
		if len(got) != len(want) {
			t.Fatalf("%d entries %+v, want %d", len(got), got, len(want))
		}
		for i := range want {
			if g, w := got[i], want[i]; !g.At.Equal(w.At) || g.Event != w.Event || g.Quota != w.Quota || !g.Until.Equal(w.Until) {
				t.Errorf("entry %d: %+v, want %+v", i, g, w)
			}
		}
	})
}

// A raised key with no quotas writes no grant: nothing would read it back.
func TestUnlimitedKeyJournalsNoGrants(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		j := &pacertest.Journal{}
		p := restart(t, pacer.Config{Rules: pacing.Rules{PerMinute: -1, TurnsPerDay: -1, IntakesPerDay: 5}, Journal: j})
		for range 10 {
			mustWait(t, p, turn())(intakeapi.Outcome{Status: 200})
			mustWait(t, p, read(pacer.ClinicianRead))(intakeapi.Outcome{Status: 200})
		}
		mustWait(t, p, createIntake())(intakeapi.Outcome{Status: 201}) // the intake quota still counts
		if got := j.Entries(); len(got) != 1 || got[0].Quota != "intakes" {
			t.Fatalf("journal %+v, want the one intake grant", got)
		}
	})
}
