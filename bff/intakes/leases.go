package intakes

import (
	"context"
	"time"
)

// claimBatch bounds the turns one sweep takes over.
const claimBatch = 32

// Serve keeps this replica's leases alive and takes over the turns of
// replicas that died (their leases ran out), until ctx ends. A lease is
// renewed every third of its length, in one statement for all the
// replica's turns; the sweep runs as often.
func (r *Runner) Serve(ctx context.Context) {
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
	for _, t := range ts {
		r.log.Warn("taking over a turn left pending", "intake_id", t.IntakeID, "turn", t.Index,
			"blocking", t.Blocking, "status", t.Status, "replica", r.replica)
		r.taken.Add(1)
		r.launch(t, nil)
	}
	return len(ts), nil
}

// TakenOver counts turns this replica took over from a dead one or a
// previous run.
func (r *Runner) TakenOver() int64 { return r.taken.Load() }
