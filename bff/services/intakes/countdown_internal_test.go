package intakes

import (
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// TestCountdownShownWait: the rules of the shown wait, one report at a time.
func TestCountdownShownWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	type report struct {
		at     time.Duration // since t0
		wait   time.Duration
		paused bool
		want   bff.QueuedData
	}
	for _, tc := range []struct {
		name    string
		reports []report
	}{
		{"shrinks as reported", []report{
			{0, 60 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 60}},
			{10 * time.Second, 40 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 40}},
		}},
		{"an estimate that proves short is not shown growing", []report{
			{0, 30 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 30}},
			{10 * time.Second, 45 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 20}},
			{40 * time.Second, 5 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 0}},
		}},
		{"the service's pause grows it, said", []report{
			{0, 10 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 10}},
			{10 * time.Second, 40 * time.Second, true, bff.QueuedData{Position: 1, WaitSeconds: 40, Reason: bff.QueuedServiceAsked, AddedSeconds: 40}},
			{20 * time.Second, 30 * time.Second, true, bff.QueuedData{Position: 1, WaitSeconds: 30}},
		}},
		{"a pause in the first figure is said", []report{
			{0, 53 * time.Second, true, bff.QueuedData{Position: 1, WaitSeconds: 53, Reason: bff.QueuedServiceAsked, AddedSeconds: 53}},
		}},
		{"less than a second more is no growth", []report{
			{0, 10 * time.Second, false, bff.QueuedData{Position: 1, WaitSeconds: 10}},
			{0, 10*time.Second + 500*time.Millisecond, true, bff.QueuedData{Position: 1, WaitSeconds: 10}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c countdown
			for i, r := range tc.reports {
				got := c.show(intakeapi.Progress{Position: 1, Wait: r.wait, Paused: r.paused}, t0.Add(r.at), r.paused)
				if got != r.want {
					t.Errorf("report %d: %+v, want %+v", i, got, r.want)
				}
			}
		})
	}
}
