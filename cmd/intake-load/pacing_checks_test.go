package main

import (
	"testing"
	"time"
)

func TestQueueMotion(t *testing.T) {
	q := func(pw ...int) []queuedEvent {
		var s []queuedEvent
		for i := 0; i+1 < len(pw); i += 2 {
			s = append(s, queuedEvent{Position: pw[i], WaitSeconds: pw[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		seqs      map[string][]queuedEvent
		increased int
		moved     int
	}{
		{"position goes down", map[string][]queuedEvent{"a": q(3, 30, 2, 20, 1, 10)}, 0, 1},
		{"only the position goes down", map[string][]queuedEvent{"a": q(3, 20, 2, 25)}, 0, 1},
		{"only the wait goes down", map[string][]queuedEvent{"a": q(2, 30, 2, 28)}, 0, 1},
		{"standing still", map[string][]queuedEvent{"a": q(2, 30, 2, 30), "b": q(1, 5)}, 0, 0},
		{"wait going up alone is allowed", map[string][]queuedEvent{"a": q(2, 20, 2, 25)}, 0, 0},
		{"position goes up", map[string][]queuedEvent{"a": q(1, 10, 5, 50), "b": q(4, 40, 3, 30)}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inc, moved := queueMotion(tc.seqs)
			if len(inc) != tc.increased || moved != tc.moved {
				t.Errorf("queueMotion = %q, %d; want %d increased, %d moved", inc, moved, tc.increased, tc.moved)
			}
		})
	}
}

func TestMaxInWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(secs ...int) []post {
		var ps []post
		for _, s := range secs {
			ps = append(ps, post{at: t0.Add(time.Duration(s) * time.Second)})
		}
		return ps
	}
	for _, tc := range []struct {
		name  string
		posts []post
		most  int
		rate  float64
	}{
		{"none", nil, 0, 0},
		{"paced at 6 a minute", at(0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120), 6, 6},
		{"a burst", at(0, 1, 2, 3, 4, 5, 6, 59), 8, 7 / time.Duration(59*time.Second).Minutes()},
		{"exactly a window apart", at(0, 60), 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			most, rate := maxInWindow(tc.posts, time.Minute)
			if most != tc.most || rate != tc.rate {
				t.Errorf("maxInWindow = %d, %v; want %d, %v", most, rate, tc.most, tc.rate)
			}
		})
	}
}

func TestFormatQueued(t *testing.T) {
	seq := []queuedEvent{{2, 61}, {2, 59}, {1, 30}, {1, 1}, {6, 61}}
	if got, want := formatQueued(seq), "2@61..59s 1@30..1s 6@61s"; got != want {
		t.Errorf("formatQueued = %q, want %q", got, want)
	}
}
