package intakes

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// countdown is what one turn's patient has been shown of their wait: the
// instant the wait shown ends. One countdown serves every upstream call of
// the turn (a first message's creation, then the turn; their retries), so
// the patient sees one wait that only shrinks. It grows only when the
// service asked for more time (a pause the gate reports, a reply still in
// progress upstream); then the event says so. Any other growth (an
// estimate that proved a little short) is not shown: the count reaches
// zero and the page says "any moment now". The gates make that rare: a
// creation's wait covers its first turn, and a live patient's calls come
// before every other kind, so only the service can push them back.
type countdown struct {
	mu       sync.Mutex
	deadline time.Time // zero before the first report
}

// countdownKey carries a turn's countdown across its calls.
type countdownKey struct{}

// withCountdown returns ctx with a fresh countdown, for one turn's calls.
func withCountdown(ctx context.Context) context.Context {
	return context.WithValue(ctx, countdownKey{}, new(countdown))
}

func countdownOf(ctx context.Context) *countdown {
	if c, ok := ctx.Value(countdownKey{}).(*countdown); ok {
		return c
	}
	return new(countdown)
}

// shownGrowth is how much later a new deadline must be to count as growth:
// waits are shown in whole seconds.
const shownGrowth = time.Second

// show is the event for p, reported at now: the wait p gives, kept from
// growing unless serviceAsked.
func (c *countdown) show(p intakeapi.Progress, now time.Time, serviceAsked bool) bff.QueuedData {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := now.Add(p.Wait)
	q := bff.QueuedData{Position: p.Position}
	switch {
	case c.deadline.IsZero() && serviceAsked && p.Wait >= shownGrowth:
		// the first figure, and the service's pause is in it (the app's
		// own pacing let the call go, the service refused it): said too
		q.Reason = bff.QueuedServiceAsked
		q.AddedSeconds = int(math.Ceil(p.Wait.Seconds()))
	case c.deadline.IsZero() || !d.After(c.deadline):
		// the first figure, or one that shrinks
	case serviceAsked && d.Sub(c.deadline) >= shownGrowth:
		q.Reason = bff.QueuedServiceAsked
		q.AddedSeconds = int(math.Ceil(d.Sub(c.deadline).Seconds()))
	default:
		d = c.deadline
	}
	c.deadline = d
	q.WaitSeconds = int(math.Ceil(max(d.Sub(now), 0).Seconds()))
	return q
}
