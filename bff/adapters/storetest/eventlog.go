package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// RunEventLog runs the tests of bff.TurnEventLog on the logs open returns,
// each test on a fresh, empty one.
func RunEventLog(t *testing.T, open func(t *testing.T) bff.TurnEventLog) {
	t.Run("Prune", func(t *testing.T) {
		log := open(t)
		ctx := context.Background()
		if err := log.AppendTurnEvents(ctx, "in/p", []bff.Event{{ID: 1, Name: "queued", Data: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		if n, err := log.PruneTurnEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
			t.Fatalf("pruning before an hour ago deleted %d (%v), want 0", n, err)
		}
		if id, _ := log.LastTurnEventID(ctx, "in/p"); id != 1 {
			t.Fatalf("after pruning nothing the last id is %d", id)
		}
		if n, err := log.PruneTurnEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
			t.Fatalf("pruning everything deleted %d (%v), want 1", n, err)
		}
		if id, _ := log.LastTurnEventID(ctx, "in/p"); id != 0 {
			t.Fatalf("after pruning the last id is %d, want 0", id)
		}
	})
	t.Run("AppendAndRead", func(t *testing.T) {
		log := open(t)
		ctx := context.Background()
		ev := func(id int64, name string) bff.Event {
			return bff.Event{ID: id, Name: name, Data: fmt.Appendf(nil, `{"n":%d}`, id)}
		}
		if id, err := log.LastTurnEventID(ctx, "in/1"); err != nil || id != 0 {
			t.Fatalf("LastTurnEventID of nothing = %d, %v", id, err)
		}
		if evs, err := log.TurnEvents(ctx, "in/1", 0); err != nil || len(evs) != 0 {
			t.Fatalf("TurnEvents of nothing = %v, %v", evs, err)
		}
		if err := log.AppendTurnEvents(ctx, "in/1", []bff.Event{ev(1, "queued"), ev(2, "delta"), ev(3, "delta")}); err != nil {
			t.Fatal(err)
		}
		// A retried append (2, 3 again, with other data) writes only 4.
		retry := []bff.Event{{ID: 2, Name: "x", Data: []byte(`{}`)}, {ID: 3, Name: "x", Data: []byte(`{}`)}, ev(4, "final")}
		if err := log.AppendTurnEvents(ctx, "in/1", retry); err != nil {
			t.Fatal(err)
		}
		if err := log.AppendTurnEvents(ctx, "in/1", retry); err != nil {
			t.Fatal(err)
		}
		if err := log.AppendTurnEvents(ctx, "in/2", []bff.Event{ev(1, "queued")}); err != nil {
			t.Fatal(err)
		}
		if err := log.AppendTurnEvents(ctx, "in/2", nil); err != nil {
			t.Fatal(err)
		}
		all, err := log.TurnEvents(ctx, "in/1", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []bff.Event{ev(1, "queued"), ev(2, "delta"), ev(3, "delta"), ev(4, "final")}
		if !slices.EqualFunc(all, want, equalEvent) {
			t.Fatalf("TurnEvents(0) = %s, want %s", dumpEvents(all), dumpEvents(want))
		}
		if after, err := log.TurnEvents(ctx, "in/1", 2); err != nil || !slices.EqualFunc(after, want[2:], equalEvent) {
			t.Fatalf("TurnEvents(2) = %s, %v", dumpEvents(after), err)
		}
		if after, err := log.TurnEvents(ctx, "in/1", 4); err != nil || len(after) != 0 {
			t.Fatalf("TurnEvents(4) = %s, %v", dumpEvents(after), err)
		}
		if id, err := log.LastTurnEventID(ctx, "in/1"); err != nil || id != 4 {
			t.Fatalf("LastTurnEventID(in/1) = %d, %v; want 4", id, err)
		}
		if id, err := log.LastTurnEventID(ctx, "in/2"); err != nil || id != 1 {
			t.Fatalf("LastTurnEventID(in/2) = %d, %v; want 1", id, err)
		}
	})
}

func equalEvent(a, b bff.Event) bool {
	return a.ID == b.ID && a.Name == b.Name && string(a.Data) == string(b.Data)
}

func dumpEvents(evs []bff.Event) string {
	s := "["
	for _, e := range evs {
		s += fmt.Sprintf(" %d:%s:%s", e.ID, e.Name, e.Data)
	}
	return s + " ]"
}
