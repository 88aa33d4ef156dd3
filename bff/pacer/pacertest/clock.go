// Package pacertest holds a manual clock for tests of code that waits in a
// pacer: time moves only when the test says so, so nothing sleeps.
package pacertest

import (
	"slices"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff/pacer"
)

// Clock is a manual pacer.Clock. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimerAt returns a timer that fires when the clock reaches at.
func (c *Clock) NewTimerAt(at time.Time) pacer.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, when: at, ch: make(chan time.Time, 1)}
	if !at.After(c.now) {
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock forward by d and fires every timer now due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.fire()
}

// AdvanceTo moves the clock forward to at (never back) and fires every timer
// now due. Prefer it to AdvanceToNext when the test knows when the next grant
// is due: timers carry absolute deadlines, so a waiter that is re-arming its
// timer while the clock moves still wakes at the right time, and nothing
// depends on which timers happen to be pending at that instant.
func (c *Clock) AdvanceTo(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.now) {
		c.now = at
	}
	c.fire()
}

// AdvanceToNext moves the clock to the earliest pending timer and fires it
// (and any due at the same time). It reports false when no timer is pending.
//
// Pending timers are a moving target: a pacer waiter woken by a state change
// stops its timer and arms a new one, so a timer seen by Pending may be gone
// by the time AdvanceToNext runs (it then returns false and time does not
// move), and the new one may not be armed yet. Check the result, and do not
// wait for "a timer is pending" and then assume this call moved time.
func (c *Clock) AdvanceToNext() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return false
	}
	next := c.timers[0].when
	for _, t := range c.timers[1:] {
		if t.when.Before(next) {
			next = t.when
		}
	}
	if next.After(c.now) {
		c.now = next
	}
	c.fire()
	return true
}

// Pending is the number of timers not yet fired or stopped. It is a snapshot:
// see AdvanceToNext.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

func (c *Clock) fire() {
	c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool {
		if t.when.After(c.now) {
			return false
		}
		t.ch <- c.now
		return true
	})
}

type timer struct {
	c    *Clock
	when time.Time
	ch   chan time.Time
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	n := len(t.c.timers)
	t.c.timers = slices.DeleteFunc(t.c.timers, func(x *timer) bool { return x == t })
	return len(t.c.timers) < n
}
