package relay_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
)

// memLog is a shared event log in memory that, like PostgreSQL's NOTIFY,
// wakes every replica after an append.
type memLog struct {
	mu       sync.Mutex
	events   map[string][]bff.Event
	replicas []*relay.Replicated
}

func (l *memLog) AppendTurnEvents(_ context.Context, key string, evs []bff.Event) error {
	l.mu.Lock()
	last := int64(0)
	if n := len(l.events[key]); n > 0 {
		last = l.events[key][n-1].ID
	}
	for _, ev := range evs {
		if ev.ID > last {
			l.events[key] = append(l.events[key], ev)
			last = ev.ID
		}
	}
	rs := append([]*relay.Replicated(nil), l.replicas...)
	l.mu.Unlock()
	for _, r := range rs {
		go r.Wake(key, last)
	}
	return nil
}

func (l *memLog) TurnEvents(_ context.Context, key string, after int64) ([]bff.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []bff.Event
	for _, ev := range l.events[key] {
		if ev.ID > after {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (l *memLog) LastTurnEventID(_ context.Context, key string) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.events[key]); n > 0 {
		return l.events[key][n-1].ID, nil
	}
	return 0, nil
}

func (l *memLog) PruneTurnEvents(context.Context, time.Time) (int64, error) { return 0, nil }

func (l *memLog) replica(ctx context.Context) *relay.Replicated {
	r := relay.NewReplicated(relay.NewHub(time.Minute, nil), l, nil, 100*time.Millisecond)
	l.mu.Lock()
	l.replicas = append(l.replicas, r)
	l.mu.Unlock()
	go r.Run(ctx)
	return r
}

// collect reads a follower to its end: "id:name" for each event.
func collect(events <-chan relay.Event) string {
	var out []string
	for ev := range events {
		out = append(out, fmt.Sprintf("%d:%s", ev.ID, ev.Name))
	}
	return strings.Join(out, " ")
}

// within waits a minute of fake time for the follower's events.
func within(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case s := <-got:
		return s
	case <-time.After(time.Minute):
		t.Fatal("the follower did not end within a minute")
		return ""
	}
}

// A browser on replica B follows a turn replica A runs, from before its
// first event to its end, every event once and in order.
func TestAFollowerOnAnotherReplicaGetsEveryEventOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := &memLog{events: map[string][]bff.Event{}}
		a, b := log.replica(ctx), log.replica(ctx)
		key := bff.TurnKey("iw_1", 1)
		a.Open(key)
		a.Publish(key, bff.EventStarted, struct{}{})
		a.Publish(key, bff.EventDelta, bff.DeltaData{Text: "one"})
		time.Sleep(time.Second) // logged
		events, found := b.Follow(ctx, key, 0)
		if !found {
			t.Fatal("B does not find a turn A runs and has logged")
		}
		got := make(chan string)
		go func() { got <- collect(events) }()
		for _, w := range []string{"two", "three"} {
			a.Publish(key, bff.EventDelta, bff.DeltaData{Text: w})
			time.Sleep(30 * time.Millisecond)
		}
		a.Publish(key, bff.EventFinal, bff.SettledData{Index: 1, Status: "completed"})
		a.Close(key)
		want := "1:started 2:delta 3:delta 4:delta 5:final"
		if s := within(t, got); s != want {
			t.Fatalf("B's follower got %q, want %q", s, want)
		}
		// A late follower on B, resuming from an id it saw on A.
		late, found := b.Follow(ctx, key, 3)
		if !found {
			t.Fatal("B lost the ended turn")
		}
		if s := collect(late); s != "4:delta 5:final" {
			t.Fatalf("resuming after 3 on B: %q", s)
		}
	})
}

// Replica A dies mid-turn after showing its browser an event it never
// logged; B takes the turn over. B's ids jump past any A can have given:
// B's followers see A's logged events then B's, in increasing order, and
// A's browser, reconnecting to B with the last id it saw (the unlogged
// one), gets the rest of the turn.
func TestATakenOverTurnJumpsPastEveryIdGiven(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := &memLog{events: map[string][]bff.Event{}}
		actx, killA := context.WithCancel(ctx)
		a, b := log.replica(actx), log.replica(ctx)
		key := bff.TurnKey("iw_2", 1)
		a.Open(key)
		onA, _ := a.Follow(ctx, key, 0)
		a.Publish(key, bff.EventStarted, struct{}{})
		a.Publish(key, bff.EventDelta, bff.DeltaData{Text: "one"})
		time.Sleep(time.Second) // logged
		onB, _ := b.Follow(ctx, key, 0)
		gotB := make(chan string)
		go func() { gotB <- collect(onB) }()
		synctest.Wait()
		killA() // A's flusher stops; what A publishes now is never logged
		synctest.Wait()
		a.Publish(key, bff.EventDelta, bff.DeltaData{Text: "never logged"})
		var seenOnA int64
		for range 3 {
			seenOnA = (<-onA).ID
		}
		if err := b.Resume(ctx, key); err != nil {
			t.Fatal(err)
		}
		b.Publish(key, bff.EventInterrupted, bff.InterruptedData{})
		b.Publish(key, bff.EventFinal, bff.SettledData{Index: 1, Status: "completed"})
		b.Close(key)
		jump := time.Now().UnixMicro()
		want := fmt.Sprintf("1:started 2:delta %d:interrupted %d:final", jump, jump+1)
		if s := within(t, gotB); s != want {
			t.Fatalf("B's follower got %q, want %q", s, want)
		}
		resumed, found := b.Follow(ctx, key, seenOnA)
		if !found {
			t.Fatal("B lost the turn")
		}
		if s := collect(resumed); s != fmt.Sprintf("%d:interrupted %d:final", jump, jump+1) {
			t.Fatalf("A's browser resuming on B after id %d got %q", seenOnA, s)
		}
		time.Sleep(time.Second)
		stored, _ := log.TurnEvents(ctx, key, 0)
		if len(stored) != 4 || stored[2].Name != bff.EventInterrupted {
			t.Fatalf("the log holds %d events: %+v", len(stored), stored)
		}
	})
}

// A turn with nothing logged is not found on another replica (the page
// then answers from the store and the browser retries).
func TestNothingLoggedIsNotFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := &memLog{events: map[string][]bff.Event{}}
		b := log.replica(ctx)
		if _, found := b.Follow(ctx, bff.TurnKey("iw_3", 1), 0); found {
			t.Fatal("found a turn with no events anywhere")
		}
	})
}

// lookingLog is a memLog whose LastTurnEventID calls during, as if a
// notification came while a follower looked for the turn.
type lookingLog struct {
	*memLog
	during func()
}

func (l *lookingLog) LastTurnEventID(ctx context.Context, key string) (int64, error) {
	last, err := l.memLog.LastTurnEventID(ctx, key)
	if l.during != nil {
		l.during()
	}
	return last, err
}

// A browser on B looks for a turn A has not logged yet; A's first event is
// logged, and its notification reaches B, while B reads the log. The
// browser, trying again, follows the turn to its end: the notification did
// not leave the turn's stream on B unmirrored, deaf to every later one.
// (Real time: only the failure waits, a second for the notification's
// handling, two for the follower's events.)
func TestANotificationWhileAFollowerLooksDoesNotDeafenIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem := &memLog{events: map[string][]bff.Event{}}
	log := &lookingLog{memLog: mem}
	b := relay.NewReplicated(relay.NewHub(time.Minute, nil), log, nil, 100*time.Millisecond)
	go b.Run(ctx)
	key := bff.TurnKey("iw_4", 1)
	started := bff.Event{ID: 1, Name: bff.EventStarted, Data: []byte("{}")}
	woke := make(chan struct{})
	log.during = func() {
		log.during = nil
		mem.mu.Lock()
		mem.events[key] = append(mem.events[key], started)
		mem.mu.Unlock()
		go func() { b.Wake(key, 1); close(woke) }()
		select {
		case <-woke:
		case <-time.After(time.Second): // the notification waits on the follower's look
		}
	}
	if _, found := b.Follow(ctx, key, 0); found {
		t.Fatal("found a turn whose log was empty when read")
	}
	<-woke                                 // the notification handled
	events, found := b.Follow(ctx, key, 0) // the browser's next try
	if !found {
		t.Fatal("B does not find the turn once it is logged")
	}
	got := make(chan string, 1)
	go func() { got <- collect(events) }()
	for _, ev := range []bff.Event{{ID: 2, Name: bff.EventDelta, Data: []byte(`{"text":"one"}`)}, {ID: 3, Name: bff.EventFinal, Data: []byte("{}")}} {
		mem.mu.Lock()
		mem.events[key] = append(mem.events[key], ev)
		mem.mu.Unlock()
		b.Wake(key, ev.ID)
	}
	select {
	case s := <-got:
		if s != "1:started 2:delta 3:final" {
			t.Fatalf("B's follower got %q", s)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("B's follower is stuck: the notifications after the first never reached it")
	}
}
