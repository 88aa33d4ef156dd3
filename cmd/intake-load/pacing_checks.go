package main

import (
	"fmt"
	"strings"
	"time"
)

// queueMotion judges the queued events of the turns that waited: each
// turn's positions must never increase, and at least one turn must have
// seen its position or its wait go down (the queue shown moving). increased
// names the turns whose position went up; moved counts those that saw a
// decrease.
func queueMotion(seqs map[string][]queuedEvent) (increased []string, moved int) {
	for name, seq := range seqs {
		down := false
		for i := 1; i < len(seq); i++ {
			prev, cur := seq[i-1], seq[i]
			if cur.Position > prev.Position {
				increased = append(increased, fmt.Sprintf("%s: %s", name, formatQueued(seq)))
				break
			}
			if cur.Position < prev.Position || cur.WaitSeconds < prev.WaitSeconds {
				down = true
			}
		}
		if down {
			moved++
		}
	}
	return increased, moved
}

// formatQueued writes a turn's queued events compactly: each run of events
// at one position as "position@first wait..last wait" ("3@61..2s"), so a
// rise shows where it happened.
func formatQueued(seq []queuedEvent) string {
	var parts []string
	for i := 0; i < len(seq); {
		j := i
		for j+1 < len(seq) && seq[j+1].Position == seq[i].Position {
			j++
		}
		if i == j {
			parts = append(parts, fmt.Sprintf("%d@%ds", seq[i].Position, seq[i].WaitSeconds))
		} else {
			parts = append(parts, fmt.Sprintf("%d@%d..%ds", seq[i].Position, seq[i].WaitSeconds, seq[j].WaitSeconds))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// maxInWindow is the largest number of posts that arrived within any
// window (the sandbox's rolling limit), and the achieved rate per minute
// from the first post to the last.
func maxInWindow(posts []post, window time.Duration) (most int, perMinute float64) {
	j := 0
	for i := range posts {
		for posts[i].at.Sub(posts[j].at) >= window {
			j++
		}
		most = max(most, i-j+1)
	}
	if n := len(posts); n > 1 {
		if span := posts[n-1].at.Sub(posts[0].at); span > 0 {
			perMinute = float64(n-1) / span.Minutes()
		}
	}
	return most, perMinute
}
