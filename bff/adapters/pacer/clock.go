package pacer

import "time"

// Clock is the pacer's source of time. Tests run the pacer on SystemClock
// inside testing/synctest bubbles (the pacer's own wrap it only to count
// timers); there is no manual clock.
type Clock interface {
	Now() time.Time
	// NewTimerAt returns a timer firing at the instant at (at once if it has
	// passed). An absolute deadline, not a duration, so a manual clock that
	// moves between Now and NewTimerAt cannot push the deadline later.
	NewTimerAt(at time.Time) Timer
}

// Timer is the part of *time.Timer the pacer uses.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimerAt returns a real timer.
func (SystemClock) NewTimerAt(at time.Time) Timer { return sysTimer{time.NewTimer(time.Until(at))} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop() bool          { return t.t.Stop() }
