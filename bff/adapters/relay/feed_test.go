package relay

import "testing"

func TestFeedResumesOrReportsAGap(t *testing.T) {
	f := NewFeed(3)
	_, live, cancel, gap := f.Subscribe(0)
	if gap {
		t.Fatal("a new subscriber reported a gap")
	}
	for i := 1; i <= 5; i++ {
		f.Publish("intake", map[string]int{"n": i})
	}
	for i := int64(1); i <= 5; i++ {
		if ev := <-live; ev.ID != i {
			t.Fatalf("live event %d has id %d", i, ev.ID)
		}
	}
	cancel()
	cancel()
	if _, ok := <-live; ok {
		t.Fatal("cancelled channel open")
	}
	// Kept: 3, 4, 5. Resuming after 3 replays 4 and 5.
	replay, _, c2, gap := f.Subscribe(3)
	defer c2()
	if gap || len(replay) != 2 || replay[0].ID != 4 {
		t.Fatalf("resume after 3: %v gap=%v", replay, gap)
	}
	// Resuming after 1: event 2 is gone.
	_, _, c3, gap := f.Subscribe(1)
	defer c3()
	if !gap {
		t.Fatal("a lost event was not reported as a gap")
	}
	// Resuming after 2: events 3.. are all kept, no gap.
	_, _, c4, gap := f.Subscribe(2)
	defer c4()
	if gap {
		t.Fatal("a gap reported though every missed event is kept")
	}
}

func TestFeedCutsSlowSubscribers(t *testing.T) {
	f := NewFeed(10)
	_, live, cancel, _ := f.Subscribe(0)
	defer cancel()
	for i := 0; i < 100; i++ {
		f.Publish("intake", i) // never blocks
	}
	n := 0
	for range live {
		n++
	}
	if n != 64 || f.Subscribers() != 0 {
		t.Fatalf("slow subscriber got %d before the cut; %d subscribers left", n, f.Subscribers())
	}
}
