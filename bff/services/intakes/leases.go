package intakes

import (
	"context"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// claimBatch bounds the turns one sweep takes over.
const claimBatch = 32

// Serve keeps this replica's leases alive and takes over the turns of
// replicas that died (their leases ran out), until ctx ends. A lease is
// renewed every third of its length, in one statement for all the
// replica's turns; the sweep runs as often.
//
// With a presence (Deps.Presence), it also holds this replica's and takes
// over, within seconds, the turns of a replica whose presence is gone.
func (r *Runner) Serve(ctx context.Context) {
	if r.presence != nil {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() {
			_ = r.presence.HoldPresence(ctx, r.replica, func(held bool) {
				if !held {
					r.presentSince.Store(nil)
					return
				}
				now := r.now()
				r.presentSince.Store(&now)
			})
		})
		wg.Go(func() { r.watchPresence(ctx) })
	}
	tick := time.NewTicker(r.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := r.queue.RenewLeases(ctx, r.replica, r.now().Add(r.lease)); err != nil && ctx.Err() == nil {
			r.log.Error("renew this replica's turn leases", "replica", r.replica, "err", err)
		}
		if _, err := r.takeOver(ctx, r.now()); err != nil && ctx.Err() == nil {
			r.log.Error("take over turns whose lease ran out", "replica", r.replica, "err", err)
		}
	}
}

// Recover settles the turns a previous run of the app left pending, before
// it serves. Alone on its database, every pending turn is this process's
// to settle, whatever its lease says; with other replicas, only those
// whose lease ran out (the rest are running elsewhere).
func (r *Runner) Recover(ctx context.Context) (int, error) {
	stale := r.now()
	if !r.shared {
		stale = stale.Add(100 * 365 * 24 * time.Hour)
	}
	total := 0
	for {
		n, err := r.takeOver(ctx, stale)
		total += n
		if err != nil || n < claimBatch {
			return total, err
		}
	}
}

// takeOver claims pending turns whose lease ran out by stale and works
// them; browsers following them get the outcome on their stream.
func (r *Runner) takeOver(ctx context.Context, stale time.Time) (int, error) {
	if r.closing.Load() {
		return 0, nil
	}
	ts, err := r.queue.ClaimStaleTurns(ctx, r.replica, stale, r.now().Add(r.lease), claimBatch)
	if err != nil {
		return 0, err
	}
	r.adopt(ts, "its lease ran out")
	return len(ts), nil
}

// adopt works turns just claimed from another replica (or a previous run).
func (r *Runner) adopt(ts []*bff.Turn, why string) {
	for _, t := range ts {
		r.log.Warn("taking over a turn left pending", "intake_id", t.IntakeID, "turn", t.Index,
			"blocking", t.Blocking, "status", t.Status, "replica", r.replica, "why", why)
		r.taken.Add(1)
		r.launch(t, nil)
	}
}

// watchPresence takes over the turns of replicas whose presence has been
// gone for the grace period, while this replica's own has been held that
// long, until ctx ends. A replica merely slow (a pause, a long collection)
// keeps its connection, so its presence, and its turns.
func (r *Runner) watchPresence(ctx context.Context) {
	tick := time.NewTicker(r.presencePoll)
	defer tick.Stop()
	goneSince := map[string]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := r.now()
		since := r.presentSince.Load()
		if since == nil || now.Sub(*since) < r.presenceGrace || r.closing.Load() {
			clear(goneSince) // cut off ourselves: the others may be fine
			continue
		}
		names, err := r.presence.GoneReplicas(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("read which replicas are gone", "replica", r.replica, "err", err)
			}
			continue
		}
		var due []string
		still := map[string]time.Time{}
		for _, name := range names {
			if name == r.replica {
				continue
			}
			first, seen := goneSince[name]
			if !seen {
				first = now
			}
			still[name] = first
			if now.Sub(first) >= r.presenceGrace {
				due = append(due, name)
			}
		}
		goneSince = still
		if len(due) == 0 {
			continue
		}
		ts, err := r.presence.ClaimTurnsOf(ctx, r.replica, due, now.Add(r.lease), claimBatch)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("take over the turns of gone replicas", "replica", r.replica, "gone", due, "err", err)
			}
			continue
		}
		r.adopt(ts, "its replica is gone")
	}
}

// TakenOver counts turns this replica took over from a dead one or a
// previous run.
func (r *Runner) TakenOver() int64 { return r.taken.Load() }
