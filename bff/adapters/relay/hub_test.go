package relay

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

func ids(evs []Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// collect reads a subscription to its end.
func collect(sub *Subscription) []Event {
	var out []Event
	for ev := range sub.C {
		out = append(out, ev)
	}
	return out
}

func TestSubscribersJoiningAnyTimeSeeEveryEventOnce(t *testing.T) {
	h := NewHub(time.Minute, nil)
	h.Open("t")
	const total = 2000
	var wg sync.WaitGroup
	results := make([][]Event, 20)
	for i := range results {
		wg.Go(func() {
			// Join at different points, some from a resume id.
			after := int64(i * 7)
			replay, sub, found := h.Subscribe("t", after)
			if !found {
				t.Error("stream not found")
				return
			}
			got := append([]Event{}, replay...)
			if sub != nil {
				got = append(got, collect(sub)...)
			}
			// A subscriber that fell behind resumes from its last id.
			for len(got) > 0 && got[len(got)-1].Name != "final" {
				replay, sub, _ = h.Subscribe("t", got[len(got)-1].ID)
				got = append(got, replay...)
				if sub != nil {
					got = append(got, collect(sub)...)
				}
			}
			results[i] = got
		})
	}
	for i := 1; i < total; i++ {
		h.Publish("t", "delta", map[string]int{"n": i})
	}
	h.Publish("t", "final", struct{}{})
	h.Close("t")
	wg.Wait()
	for i, got := range results {
		after := int64(i * 7)
		if int64(len(got)) != total-after {
			t.Fatalf("subscriber %d (after %d) got %d events, want %d", i, after, len(got), total-after)
		}
		for j, ev := range got {
			if ev.ID != after+int64(j)+1 {
				t.Fatalf("subscriber %d: event %d has id %d, want %d (gap or duplicate)", i, j, ev.ID, after+int64(j)+1)
			}
		}
	}
}

func TestLateSubscriberReplaysAnEndedStream(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	h := NewHub(10*time.Minute, func() time.Time { return now })
	h.Publish("t", "delta", map[string]string{"text": "Hel"})
	h.Publish("t", "delta", map[string]string{"text": "lo"})
	h.Publish("t", "final", map[string]bool{"terminal": false})
	h.Close("t")
	h.Publish("t", "delta", map[string]string{"text": "ignored"})

	replay, sub, found := h.Subscribe("t", 1)
	if !found || sub != nil || len(replay) != 2 || replay[0].Name != "delta" || replay[1].Name != "final" {
		t.Fatalf("replay %v sub %v found %v", replay, sub, found)
	}
	var d map[string]string
	if err := json.Unmarshal(replay[0].Data, &d); err != nil || d["text"] != "lo" {
		t.Fatalf("data = %s", replay[0].Data)
	}
	// Ended streams are forgotten after the retention, when the hub is next used.
	now = now.Add(11 * time.Minute)
	h.Open("other")
	if _, _, found := h.Subscribe("t", 0); found {
		t.Fatal("an ended stream outlived its retention")
	}
	if _, _, found := h.Subscribe("never", 0); found {
		t.Fatal("a stream that never existed was found")
	}
}

func TestSlowSubscriberIsCutLooseNotBlocking(t *testing.T) {
	h := NewHub(time.Minute, nil)
	h.Open("t")
	_, slow, _ := h.Subscribe("t", 0)
	for i := 0; i < h.buffer+10; i++ {
		h.Publish("t", "delta", i) // never blocks, though nobody reads
	}
	got := collect(slow)
	if len(got) != h.buffer {
		t.Fatalf("slow subscriber got %d events before being cut, want %d", len(got), h.buffer)
	}
	if h.Subscribers() != 0 {
		t.Fatalf("%d subscribers left", h.Subscribers())
	}
	replay, _, _ := h.Subscribe("t", got[len(got)-1].ID)
	if len(replay) != 10 || replay[0].ID != int64(h.buffer)+1 {
		t.Fatalf("resume gave %v", ids(replay))
	}
}

func TestCancelIsIdempotent(t *testing.T) {
	h := NewHub(time.Minute, nil)
	h.Open("t")
	_, sub, _ := h.Subscribe("t", 0)
	sub.Cancel()
	sub.Cancel()
	if _, ok := <-sub.C; ok {
		t.Fatal("cancelled subscription still open")
	}
	h.Publish("t", "delta", 1)
	h.Close("t")
	if h.Subscribers() != 0 {
		t.Fatal("cancelled subscriber still counted")
	}
}

func TestFollowDeliversEverythingOnceAndResumesBySelf(t *testing.T) {
	h := NewHub(time.Minute, nil)
	h.followBuffer = 4 // a follower that falls behind catches up often
	h.Open("t")
	events, found := h.Follow(context.Background(), "t", 2)
	if !found {
		t.Fatal("not found")
	}
	go func() {
		for i := 1; i <= 500; i++ {
			h.Publish("t", "delta", i)
		}
		h.Close("t")
	}()
	want := int64(3)
	for ev := range events {
		if ev.ID != want {
			t.Fatalf("got id %d, want %d", ev.ID, want)
		}
		want++
	}
	if want != 501 {
		t.Fatalf("stopped after id %d", want-1)
	}
	// Cancelling the context ends a follower of a live stream.
	h.Open("u")
	ctx, cancel := context.WithCancel(context.Background())
	events, _ = h.Follow(ctx, "u", 0)
	cancel()
	for range events {
	}
	if _, found := h.Follow(context.Background(), "nope", 0); found {
		t.Fatal("found a stream that never existed")
	}
}

// A browser stream that keeps up with its turn costs a small channel and no
// goroutine: Publish delivers into it directly.
func TestFollowerThatKeepsUpCostsNoGoroutine(t *testing.T) {
	h := NewHub(time.Minute, nil)
	h.Publish("t", "started", struct{}{})
	events, _ := h.Follow(context.Background(), "t", 0)
	for i := int64(1); i <= 100; i++ {
		if i > 1 {
			h.Publish("t", "delta", i)
		}
		if ev := <-events; ev.ID != i {
			t.Fatalf("got id %d, want %d", ev.ID, i)
		}
		if n := h.catchUps.Load(); n != 0 {
			t.Fatalf("event %d: %d catch-up goroutines for a follower that keeps up", i, n)
		}
	}
	if h.Subscribers() != 1 {
		t.Fatalf("%d subscribers", h.Subscribers())
	}
	h.Close("t")
	if _, ok := <-events; ok {
		t.Fatal("channel still open after the stream ended")
	}
	if h.Subscribers() != 0 {
		t.Fatalf("%d subscribers after the end", h.Subscribers())
	}
}

// A follower whose reader drains its channel only when woken (a browser
// stream with no goroutine of its own, bff.WithWake) gets every event once,
// in order, then the end, through catch-ups too: each event put in the
// channel, by Publish or by a catch-up, and its close (once the reader has
// read everything and waits) wake it. A lost wake
// leaves the reader blocked, which the bubble reports as a deadlock.
func TestFollowerWokenForEachEventAndTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHub(time.Minute, nil)
		h.followBuffer = 2
		h.Open("t")
		for i := 1; i <= 5; i++ { // a replay longer than the channel
			h.Publish("t", "delta", i)
		}
		woken := make(chan struct{}, 1)
		ctx := bff.WithWake(context.Background(), func() {
			select {
			case woken <- struct{}{}:
			default:
			}
		})
		events, _ := h.Follow(ctx, "t", 0)
		go func() {
			for i := 6; i <= 300; i++ {
				h.Publish("t", "delta", i)
				if i%7 == 0 {
					time.Sleep(time.Millisecond) // the reader catches up now and then
				}
			}
			synctest.Wait() // the reader has read everything and waits
			h.Close("t")
		}()
		want := int64(1)
		for {
			<-woken
			for drained := false; !drained; {
				select {
				case ev, ok := <-events:
					if !ok {
						if want != 301 {
							t.Fatalf("the channel closed after id %d, want 300", want-1)
						}
						if h.catchUps.Load() == 0 {
							t.Fatal("no catch-up: the test did not reach that path")
						}
						return
					}
					if ev.ID != want {
						t.Fatalf("got id %d, want %d", ev.ID, want)
					}
					want++
				default:
					drained = true
				}
			}
		}
	})
}

// A follower that falls behind (a long replay, or a slow browser) is fed by
// a goroutine until it has caught up, then directly again; nothing is lost.
func TestFollowerBehindCatchesUpThenFollowsDirectly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHub(time.Minute, nil)
		h.followBuffer = 2
		for i := 1; i <= 5; i++ {
			h.Publish("t", "delta", i) // a replay longer than the channel
		}
		events, _ := h.Follow(context.Background(), "t", 1)
		for i := 6; i <= 10; i++ {
			h.Publish("t", "delta", i)
		}
		synctest.Wait()
		if n := h.catchingUp.Load(); n != 1 {
			t.Fatalf("%d catch-up goroutines while behind, want 1", n)
		}
		for want := int64(2); want <= 10; want++ {
			if ev := <-events; ev.ID != want {
				t.Fatalf("got id %d, want %d", ev.ID, want)
			}
		}
		synctest.Wait()
		if n := h.catchingUp.Load(); n != 0 {
			t.Fatalf("%d catch-up goroutines after catching up", n)
		}
		h.Publish("t", "delta", 11)
		if ev := <-events; ev.ID != 11 {
			t.Fatalf("live event after catching up: id %d", ev.ID)
		}
		if n := h.catchUps.Load(); n != 1 {
			t.Fatalf("%d catch-up goroutines for a live event read at once", n)
		}
		// Behind again when the stream ends: the catch-up delivers the
		// rest, then closes the channel.
		for i := 12; i <= 15; i++ {
			h.Publish("t", "delta", i)
		}
		h.Close("t")
		var got []int64
		for ev := range events {
			got = append(got, ev.ID)
		}
		if len(got) != 4 || got[0] != 12 || got[3] != 15 {
			t.Fatalf("after the end got %v", got)
		}
	})
}

// The follower's context ends it, whether it is fed directly or caught up
// by a goroutine, and nothing is left behind (synctest fails on a
// goroutine that never ends).
func TestFollowEndsWithItsContextDirectOrBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := NewHub(time.Minute, nil)
		h.followBuffer = 1
		h.Open("t")
		ctx1, cancel1 := context.WithCancel(context.Background())
		direct, _ := h.Follow(ctx1, "t", 0)
		ctx2, cancel2 := context.WithCancel(context.Background())
		behind, _ := h.Follow(ctx2, "t", 0)
		for i := 1; i <= 3; i++ { // behind's channel holds 1 and it reads none
			h.Publish("t", "delta", i)
			<-direct
		}
		synctest.Wait()
		if n := h.catchingUp.Load(); n != 1 {
			t.Fatalf("%d catch-up goroutines", n)
		}
		cancel2() // and nobody reads behind any more (the browser is gone)
		cancel1()
		synctest.Wait()
		if h.Subscribers() != 0 || h.catchingUp.Load() != 0 {
			t.Fatalf("%d subscribers, %d catch-up goroutines left", h.Subscribers(), h.catchingUp.Load())
		}
		for range direct {
		}
		for range behind {
		}
	})
}

// Opening a stream walks the others at most once a second, so thousands of
// Opens under load do not each walk thousands of streams under the lock;
// ended streams are still forgotten after the retention.
func TestSweepRunsAtMostOnceASecond(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	h := NewHub(time.Minute, func() time.Time { return now })
	h.Open("b")
	h.Close("b") // ended at 10:00:00
	now = now.Add(time.Minute - 300*time.Millisecond)
	h.Open("y") // sweeps; "b" is within its retention
	now = now.Add(500 * time.Millisecond)
	h.Open("z") // "b" is past its retention, but the last sweep was 0.5 s ago
	if _, _, found := h.Subscribe("b", 0); !found {
		t.Fatal("swept twice within a second")
	}
	now = now.Add(600 * time.Millisecond)
	h.Open("w") // 1.1 s after the last sweep: sweeps
	if _, _, found := h.Subscribe("b", 0); found {
		t.Fatal("an ended stream outlived its retention")
	}
}

// TestQueuedPlacesKeepOnlyTheLatestForReplay: a turn waiting in the key's
// queue is told its place each time a call ahead goes; the stream keeps only
// the latest place for a browser that joins or comes back (a turn behind
// thousands would otherwise hold an event per grant ahead), ids still
// increasing, while a browser following live gets every place.
func TestQueuedPlacesKeepOnlyTheLatestForReplay(t *testing.T) {
	h := NewHub(time.Minute, nil)
	h.Open("t")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	live, found := h.Follow(ctx, "t", 0)
	if !found {
		t.Fatal("no stream")
	}
	const places = 1000
	var got []Event
	for i := range places {
		h.Publish("t", "queued", map[string]int{"position": places - i})
		got = append(got, <-live) // a live browser reads as they come
	}
	if len(got) != places {
		t.Fatalf("the live follower got %d places, want %d", len(got), places)
	}
	h.Publish("t", "started", struct{}{})
	h.Publish("t", "delta", map[string]string{"text": "Hello"})
	replay, sub, _ := h.Subscribe("t", 0)
	sub.Cancel()
	if len(replay) != 3 || replay[0].Name != "queued" || string(replay[0].Data) != `{"position":1}` || replay[0].ID != got[places-1].ID {
		t.Fatalf("replay from the start: %d events, first %s id %d %s; want 3: the last place (id %d), started, delta",
			len(replay), replay[0].Name, replay[0].ID, replay[0].Data, got[places-1].ID)
	}
	// A browser that saw an earlier place resumes with the latest one.
	replay, sub, _ = h.Subscribe("t", got[10].ID)
	sub.Cancel()
	if len(replay) != 3 || replay[0].ID != got[places-1].ID {
		t.Fatalf("resume after place 11: %v, want the latest place, started, delta", ids(replay))
	}
	h.mu.Lock()
	n := len(h.streams["t"].events)
	h.mu.Unlock()
	if n != 3 {
		t.Errorf("the stream keeps %d events, want 3", n)
	}
}
