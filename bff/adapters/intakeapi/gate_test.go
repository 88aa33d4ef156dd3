package intakeapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// A scenario run's headroom reaches the Gate on every attempt, retries
// included, with the priority set beside it; calls without it ask for none.
func TestHeadroomTravelsInTheContext(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(200, nil, `{}`),
		reply(503, nil, envelope("unavailable", "try again")), reply(200, nil, `{}`),
		reply(200, nil, `{}`),
	}}
	c, gate, _ := newTestClient(t, serve(t, s), nil)
	ctx := context.Background()
	c.Handoff(ctx, "e")
	run := intakeapi.WithHeadroom(intakeapi.WithPriority(ctx, intakeapi.PriorityBackground), 2)
	c.Handoff(run, "e")
	c.Handoff(intakeapi.WithHeadroom(ctx, -1), "e")
	calls, _ := gate.snapshot()
	if len(calls) != 4 {
		t.Fatalf("%d calls, want 4 (the second handoff retried once): %+v", len(calls), calls)
	}
	want := []struct {
		attempt, headroom int
		prio              intakeapi.Priority
	}{
		{1, 0, intakeapi.PriorityClinicianRead},
		{1, 2, intakeapi.PriorityBackground},
		{2, 2, intakeapi.PriorityBackground},
		{1, 0, intakeapi.PriorityClinicianRead},
	}
	for i, c := range calls {
		if c.Attempt != want[i].attempt || c.Headroom != want[i].headroom || c.Priority != want[i].prio {
			t.Errorf("call %d: attempt %d headroom %d priority %s, want attempt %d headroom %d priority %s",
				i, c.Attempt, c.Headroom, c.Priority, want[i].attempt, want[i].headroom, want[i].prio)
		}
	}
}
