package accounts

import (
	"sync"
	"time"
)

// Failed sign-ins allowed per window, per username and per client address.
const (
	attemptWindow      = 15 * time.Minute
	maxFailsPerAccount = 5
	maxFailsPerAddress = 20
)

// attempts limits failed sign-ins in memory (one process; several replicas
// will need the shared store, with the sessions).
type attempts struct {
	now   func() time.Time
	mu    sync.Mutex
	fails map[string][]time.Time // "u:"+username or "a:"+address -> failure times
}

func newAttempts(now func() time.Time) *attempts {
	return &attempts{now: now, fails: map[string][]time.Time{}}
}

// blocked returns how long until key may try again, or 0.
func (a *attempts) blocked(key string, limit int) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.prune(key)
	if len(f) < limit {
		return 0
	}
	return f[len(f)-limit].Add(attemptWindow).Sub(a.now())
}

func (a *attempts) fail(keys ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range keys {
		a.fails[k] = append(a.prune(k), a.now())
	}
}

func (a *attempts) clear(key string) {
	a.mu.Lock()
	delete(a.fails, key)
	a.mu.Unlock()
}

// prune drops failures older than the window. Caller holds a.mu.
func (a *attempts) prune(key string) []time.Time {
	f := a.fails[key]
	cut := a.now().Add(-attemptWindow)
	i := 0
	for i < len(f) && f[i].Before(cut) {
		i++
	}
	if i == len(f) {
		delete(a.fails, key)
		return nil
	}
	a.fails[key] = f[i:]
	return f[i:]
}
