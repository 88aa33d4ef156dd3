package pacing_test

import (
	"errors"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// six a minute, no margin: the arithmetic reads plainly.
var six = pacing.Rules{PerMinute: 6, Margin: -1}.WithDefaults()

func TestWithDefaultsAreTheSpecsLimits(t *testing.T) {
	r := pacing.Rules{}.WithDefaults()
	want := pacing.Rules{PerMinute: 6, Window: time.Minute, Margin: time.Second, TurnsPerDay: 100, IntakesPerDay: 100}
	if r != want {
		t.Fatalf("defaults %+v, want %+v", r, want)
	}
	if r.Hold() != time.Minute+time.Second {
		t.Fatalf("hold %v", r.Hold())
	}
	if n := (pacing.Rules{PerMinute: -1, Margin: -1}).WithDefaults(); n.Limited() || n.Margin != 0 {
		t.Fatalf("negative means none: %+v", n)
	}
}

func TestNextSlot(t *testing.T) {
	five := pacing.State{Window: []time.Time{at(0), at(10 * time.Second), at(20 * time.Second), at(30 * time.Second), at(40 * time.Second)}}
	full := pacing.State{Window: append(five.Window, at(50*time.Second))}
	now := at(55 * time.Second)
	for _, tc := range []struct {
		name     string
		s        pacing.State
		headroom int
		want     time.Time
	}{
		{"room", five, 0, now},
		{"full: when the oldest leaves", full, 0, at(time.Minute)},
		{"headroom 1 with five: when the oldest leaves", five, 1, at(time.Minute)},
		{"headroom 2 with five: when the second leaves", five, 2, at(70 * time.Second)},
		{"paused past the slot", pacing.State{Window: five.Window, PausedUntil: at(80 * time.Second)}, 0, at(80 * time.Second)},
		{"a pause that has ended", pacing.State{Window: five.Window, PausedUntil: at(time.Second)}, 0, now},
	} {
		if got := six.NextSlot(tc.s, now, tc.headroom); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got.Sub(t0), tc.want.Sub(t0))
		}
	}
	if got := (pacing.Rules{PerMinute: -1}).NextSlot(full, now, 0); !got.Equal(now) {
		t.Errorf("no limit: %v", got.Sub(t0))
	}
}

func TestEstimateReplaysTheWindow(t *testing.T) {
	s := pacing.State{Window: []time.Time{at(0), at(10 * time.Second), at(20 * time.Second), at(30 * time.Second), at(40 * time.Second), at(50 * time.Second)}}
	now := at(55 * time.Second)
	for place, want := range map[int]time.Duration{1: 5 * time.Second, 2: 15 * time.Second, 6: 55 * time.Second, 7: 65 * time.Second} {
		if got := six.Estimate(s, place, now); got != want {
			t.Errorf("place %d: %v, want %v", place, got, want)
		}
	}
	s.PausedUntil = at(80 * time.Second)
	if got := six.Estimate(s, 1, now); got != 25*time.Second {
		t.Errorf("paused: %v, want 25s", got)
	}
}

// TestEstimateIsTheReplay: the constant-time estimate gives what replaying
// the window grant by grant gives, for windows empty, partial, full and
// over-full, paused or not, and places far down a long queue.
func TestEstimateIsTheReplay(t *testing.T) {
	replay := func(r pacing.Rules, s pacing.State, place int, now time.Time) time.Duration {
		start := now
		if s.PausedUntil.After(start) {
			start = s.PausedUntil
		}
		grants := append([]time.Time(nil), s.Window...)
		var t time.Time
		for range place {
			t = start
			if len(grants) >= r.PerMinute {
				if free := grants[len(grants)-r.PerMinute].Add(r.Hold()); free.After(t) {
					t = free
				}
			}
			grants = append(grants, t)
		}
		return t.Sub(now)
	}
	for _, r := range []pacing.Rules{six, pacing.Rules{PerMinute: 1}.WithDefaults(), pacing.Rules{PerMinute: 60}.WithDefaults()} {
		for m := range 2*r.PerMinute + 2 {
			for _, paused := range []time.Duration{0, 7 * time.Second, 3 * time.Minute} {
				s := pacing.State{}
				for i := range m { // m grants, ascending, over the last minute
					s.Window = append(s.Window, at(time.Duration(i)*time.Minute/time.Duration(max(m, 1))))
				}
				now := at(61 * time.Second)
				if paused > 0 {
					s.PausedUntil = now.Add(paused)
				}
				for _, place := range []int{1, 2, r.PerMinute - 1, r.PerMinute, r.PerMinute + 1, 3*r.PerMinute + 2, 1000} {
					if place < 1 {
						continue
					}
					if got, want := r.Estimate(s, place, now), replay(r, s, place, now); got != want {
						t.Errorf("%d a minute, %d in the window, paused %s, place %d: %s, want %s", r.PerMinute, m, paused, place, got, want)
					}
				}
			}
		}
	}
}

func TestProgressCoversFollowUpsAndSaysPaused(t *testing.T) {
	s := pacing.State{Window: []time.Time{at(0), at(10 * time.Second), at(20 * time.Second), at(30 * time.Second), at(40 * time.Second), at(50 * time.Second)}}
	now := at(55 * time.Second)
	// A creation at place 1 whose first turn follows: the patient waits
	// for the second slot, not the first.
	if p := six.Progress(s, 1, 1, now); p.Position != 1 || p.Wait != 15*time.Second || p.Paused {
		t.Errorf("creation with its first turn: %+v, want place 1, 15s", p)
	}
	s.PausedUntil = at(2 * time.Minute)
	if p := six.Progress(s, 1, 0, now); !p.Paused || p.Wait != 65*time.Second {
		t.Errorf("paused: %+v", p)
	}
}

func TestHeadroom(t *testing.T) {
	c := intakeapi.Call{Headroom: 9}
	if got := six.Headroom(c); got != 5 {
		t.Errorf("capped at PerMinute-1: %d", got)
	}
	if got := (pacing.Rules{PerMinute: -1}).Headroom(c); got != 0 {
		t.Errorf("moot without a limit: %d", got)
	}
	if six.HeldBack(4, 1) || !six.HeldBack(5, 1) || six.HeldBack(5, 0) {
		t.Error("HeldBack: a call with headroom 1 goes while the window holds at most 4 of 6")
	}
}

func TestOrder(t *testing.T) {
	if !pacing.Ahead(intakeapi.PriorityPatientTurn, 9, intakeapi.PriorityCreateIntake, 1) {
		t.Error("a higher priority goes first")
	}
	if !pacing.Ahead(intakeapi.PriorityPatientTurn, 1, intakeapi.PriorityPatientTurn, 2) || pacing.Ahead(intakeapi.PriorityPatientTurn, 2, intakeapi.PriorityPatientTurn, 1) {
		t.Error("equal priorities in order of arrival")
	}
	if !pacing.FollowUpFirst(9, intakeapi.PriorityPatientTurn, 1) {
		t.Error("a follow-up goes before a patient's turn")
	}
	if pacing.FollowUpFirst(9, intakeapi.PriorityFirstTurn, 5) || !pacing.FollowUpFirst(3, intakeapi.PriorityFirstTurn, 5) {
		t.Error("follow-ups in the order they were announced")
	}
	if got := pacing.Place(2, 1, 1, 1); got != 6 {
		t.Errorf("place %d, want 1+2+1+1+1", got)
	}
}

func TestQuotas(t *testing.T) {
	r := pacing.Rules{TurnsPerDay: 2, IntakesPerDay: -1}.WithDefaults()
	if pacing.QuotaOf(intakeapi.OpStreamTurn) != pacing.QuotaTurns || pacing.QuotaOf(intakeapi.OpCreateIntake) != pacing.QuotaIntakes || pacing.QuotaOf(intakeapi.OpHandoff) != pacing.QuotaNone {
		t.Fatal("QuotaOf")
	}
	now := at(0)
	if err := r.QuotaErr(pacing.QuotaTurns, now, time.Time{}, 1); err != nil {
		t.Errorf("1 of 2: %v", err)
	}
	err := r.QuotaErr(pacing.QuotaTurns, now, time.Time{}, 2)
	if err == nil || !errors.Is(err, intakeapi.ErrQuotaSpent) || err.Limit != 2 || !err.ResetAt.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("2 of 2: %+v, want spent until the next UTC midnight", err)
	}
	if err := r.QuotaErr(pacing.QuotaIntakes, now, time.Time{}, 1000); err != nil {
		t.Errorf("no quota: %v", err)
	}
	if err := r.QuotaErr(pacing.QuotaTurns, now, pacing.SpentUntil(now), 0); err == nil {
		t.Error("the service said spent: refused")
	}
	if err := r.QuotaErr(pacing.QuotaNone, now, pacing.SpentUntil(now), 1000); err != nil {
		t.Errorf("reads: %v", err)
	}
}
