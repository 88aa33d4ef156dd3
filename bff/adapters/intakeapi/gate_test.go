package intakeapi_test

import (
	"context"
	"fmt"
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

// A call queued ahead (Client.Queue) waits in the Gate once: its first
// attempt goes on the grant, a retry waits again, and so does the next
// call made with the same context; a grant for another operation is left
// alone, and one no call used gives its quota back when dropped.
func TestQueuedCallSpendsItsGrant(t *testing.T) {
	s := &scripted{resps: []func(http.ResponseWriter, *http.Request){
		reply(503, nil, envelope("unavailable", "try again")), reply(200, nil, `{}`),
		reply(200, nil, `{}`),
		reply(200, nil, `{}`),
	}}
	c, gate, _ := newTestClient(t, serve(t, s), nil)
	queue := func(ctx context.Context, op intakeapi.Op) *intakeapi.Grant {
		got := make(chan *intakeapi.Grant)
		c.Queue(ctx, op, func(g *intakeapi.Grant) { got <- g })
		return <-got
	}
	ctx := intakeapi.WithPriority(context.Background(), intakeapi.PriorityReconciliation)
	g := queue(ctx, intakeapi.OpHandoff)
	if g == nil {
		t.Fatal("Queue gave no grant")
	}
	granted := intakeapi.WithGrant(ctx, g)
	if _, _, err := c.Handoff(granted, "e"); err != nil {
		t.Fatalf("the queued handoff: %v", err)
	}
	g.Drop() // used: nothing to give back
	if _, _, err := c.Handoff(granted, "e"); err != nil {
		t.Fatalf("the next handoff: %v", err)
	}
	other := queue(ctx, intakeapi.OpCreateIntake)
	if _, _, err := c.Handoff(intakeapi.WithGrant(ctx, other), "e"); err != nil {
		t.Fatalf("a handoff with a creation's grant: %v", err)
	}
	other.Drop()
	calls, outcomes := gate.snapshot()
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%s/%d/%s", c.Op, c.Attempt, c.Priority))
	}
	want := []string{
		"handoff/1/reconciliation", // Queue
		"handoff/2/reconciliation", // the retry after the 503
		"handoff/1/reconciliation", // the next call
		"create_intake/1/reconciliation",
		"handoff/1/reconciliation", // not on the creation's grant
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the gate saw %q, want %q", got, want)
	}
	var statuses []string
	for _, o := range outcomes {
		statuses = append(statuses, fmt.Sprintf("%d/%v", o.Status, o.NotSent))
	}
	if want := []string{"503/false", "200/false", "200/false", "200/false", "0/true"}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("outcomes %q, want %q (the unused creation's grant given back, not sent)", statuses, want)
	}
}
