package sandbox

import (
	"time"
)

// limits holds one key's per-minute window and daily counters. It is guarded
// by the service mutex.
type limits struct {
	window  []time.Time // times of counted requests in the last minute, oldest first
	day     string      // UTC date the counters belong to
	turns   int
	intakes int
}

// allow counts a request at now, or returns how long until one is allowed.
func (l *limits) allow(now time.Time, rpm int) (time.Duration, bool) {
	if rpm <= 0 {
		return 0, true
	}
	cut := now.Add(-rateWindow)
	i := 0
	for i < len(l.window) && !l.window[i].After(cut) {
		i++
	}
	l.window = l.window[i:]
	if len(l.window) >= rpm {
		wait := l.window[0].Add(rateWindow).Sub(now)
		if wait < time.Second {
			wait = time.Second
		}
		return wait, false
	}
	l.window = append(l.window, now)
	return 0, true
}

// roll resets the daily counters at 00:00 UTC.
func (l *limits) roll(now time.Time) {
	d := now.UTC().Format(time.DateOnly)
	if l.day != d {
		l.day, l.turns, l.intakes = d, 0, 0
	}
}

// nextReset is the next 00:00 UTC after now.
func nextReset(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}
