package app

import (
	"context"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// readiness checks the database and the upstream for /readyz. The upstream
// is probed at most once per probeEvery, and only when no real call was
// answered since: every probe spends one of the key's six requests a minute.
type readiness struct {
	db         interface{ Ping(context.Context) error }
	save       *saveWatch
	client     *intakeapi.Client
	answered   *upstreamMetrics
	probeEvery time.Duration

	mu       sync.Mutex
	probedAt time.Time
	probeErr error
}

// check is web.Deps.Ready: the checks by name, and whether all pass.
func (r *readiness) check(ctx context.Context) (map[string]string, bool) {
	checks := map[string]string{}
	ready := true
	if err := r.db.Ping(ctx); err != nil {
		ready = false
		checks["database"] = "unreachable"
	} else if reason := r.save.state(ctx); reason != "" {
		ready = false
		checks["database"] = "cannot save: " + reason
	} else {
		checks["database"] = "ok"
	}
	if !ready {
		// The key's budget lives in the database: a probe now would fail
		// on it, and be taken for the upstream's failure.
		checks["upstream"] = "not probed: the database is not usable"
		return checks, false
	}
	switch err := r.upstream(ctx); {
	case err == nil:
		checks["upstream"] = "ok"
	case ctx.Err() != nil:
		checks["upstream"] = "not probed: the key's request budget is busy"
	default:
		ready = false
		checks["upstream"] = "unavailable"
	}
	return checks, ready
}

func (r *readiness) upstream(ctx context.Context) error {
	if r.answered.answeredWithin(r.probeEvery) {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.probedAt.IsZero() && time.Since(r.probedAt) < r.probeEvery {
		return r.probeErr
	}
	_, _, err := r.client.Health(intakeapi.WithPriority(ctx, intakeapi.PriorityBackground))
	if ctx.Err() != nil {
		return ctx.Err() // waiting for a slot: try again next time
	}
	if err != nil && r.db.Ping(ctx) != nil {
		return err // the database went meanwhile (the budget's gate failed): not the upstream's word
	}
	r.probedAt, r.probeErr = time.Now(), err
	return err
}
