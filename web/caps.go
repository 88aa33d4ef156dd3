package web

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/clinical-intake/intake-web/bff"
)

// sessionCaps are the limits per browser session (and, for starting
// intakes, per client address): open event streams, intakes started, turns
// sent. They live in this process's memory: they bound what one browser can
// make one replica do, and a restart forgetting them costs nothing (the key's
// own budget is the pacer's, which is persisted).
//
// The rates are token buckets from golang.org/x/time/rate: up to N at once,
// then one every window/N. They are checked inside the handlers, not as
// middleware, so a refused form is shown again with what was typed (Fiber's
// limiter middleware answers before the handler sees the form).
type sessionCaps struct {
	maxStreams int
	mu         sync.Mutex
	streams    map[string]int

	intakes     *keyedRate // per session
	addrIntakes *keyedRate // per client address
	turns       *keyedRate // per session
}

func newSessionCaps(l Limits) *sessionCaps {
	return &sessionCaps{
		maxStreams:  l.StreamsPerSession,
		streams:     map[string]int{},
		intakes:     newKeyedRate(l.IntakesPerHour, time.Hour),
		addrIntakes: newKeyedRate(l.IntakesPerHourPerAddress, time.Hour),
		turns:       newKeyedRate(l.TurnsPerMinute, time.Minute),
	}
}

// openStream takes one of the session's stream slots; release gives it back.
func (c *sessionCaps) openStream(key string) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams[key] >= c.maxStreams {
		return nil, &bff.Error{Code: bff.ERATELIMIT, RetryAfter: 5 * time.Second, Message: fmt.Sprintf(
			"This browser already has %d live views of this app open. Close some tabs or windows, then reload.", c.maxStreams)}
	}
	c.streams[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.streams[key]--; c.streams[key] <= 0 {
				delete(c.streams, key)
			}
		})
	}, nil
}

// keyedRate is one token bucket per key. Buckets that are full again hold
// no information and are dropped on a sweep, so the map stays as small as
// the set of recently active keys.
type keyedRate struct {
	n      int
	window time.Duration
	mu     sync.Mutex
	m      map[string]*rate.Limiter
	calls  int
}

func newKeyedRate(n int, window time.Duration) *keyedRate {
	return &keyedRate{n: n, window: window, m: map[string]*rate.Limiter{}}
}

// take spends one token of key at now. It returns a refund (for an action
// that then failed) or, when the bucket is empty, how long until a token.
func (k *keyedRate) take(key string, now time.Time) (refund func(), wait time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.calls++; k.calls%1024 == 0 {
		k.sweep(now)
	}
	lim := k.m[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(k.window/time.Duration(k.n)), k.n)
		k.m[key] = lim
	}
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d
	}
	return func() { r.CancelAt(now) }, 0
}

func (k *keyedRate) sweep(now time.Time) {
	for key, lim := range k.m {
		if lim.TokensAt(now) >= float64(k.n) {
			delete(k.m, key)
		}
	}
}

// waitWords says a wait in words for a message.
func waitWords(d time.Duration) string {
	switch s := int(d.Round(time.Second) / time.Second); {
	case s <= 1:
		return "a second"
	case s < 60:
		return fmt.Sprintf("%d seconds", s)
	case s < 120:
		return "a minute"
	default:
		return fmt.Sprintf("%d minutes", (s+59)/60)
	}
}
