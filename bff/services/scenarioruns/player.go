package scenarioruns

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/bff/services/play"
)

// Serve plays runs until ctx ends: it claims one run at a time (its items
// in flight already take what the key's budget can feed; a second run
// would only queue behind them), plays it to its end or until it must
// wait, and keeps its lease alive meanwhile. An idle replica looks for
// runs every Idle, and at once when this replica starts one.
func (s *Service) Serve(ctx context.Context) {
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		tick := time.NewTicker(s.d.Lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := s.d.Store.RenewScenarioLeases(ctx, s.d.Replica, s.now().Add(s.d.Lease)); err != nil && ctx.Err() == nil {
				s.log.Error("renew scenario run leases", "err", err)
			}
		}
	}()
	defer func() { <-renewed }()
	first := true
	for ctx.Err() == nil {
		now := s.now()
		stale := now
		if first && !s.d.Shared {
			// Alone on the store: a run leased to this app's previous
			// process is ours to resume now, not when its lease runs out.
			stale = now.Add(100 * 365 * 24 * time.Hour)
		}
		r, err := s.d.Store.ClaimScenarioRun(ctx, s.d.Replica, now, stale, now.Add(s.d.Lease))
		switch {
		case err == nil:
			s.playRun(ctx, r)
			continue // another may be waiting
		case bff.ErrorCode(err) == bff.ENOTFOUND:
			first = false
		case ctx.Err() == nil:
			s.log.Error("claim a scenario run", "err", err)
		}
		t := time.NewTimer(s.d.Idle)
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// played is what one item's play ended with: the item as it stands, and
// why it stopped short of its end (nil when it finished).
type played struct {
	idx int
	it  *bff.ScenarioItem
	err error
}

// errTakenOver stops a run's items when the run ended or changed hands
// while they waited.
var errTakenOver = bff.Errorf(bff.ECONFLICT, "the run was cancelled or another replica took it over")

// playRun plays a claimed run's unfinished items, up to parallel at once:
// those in flight when the run was last played first (a restart resumes
// each at its next turn), then the pending ones in Seq order. Every item
// records each step under this replica's lease; the first item that
// cannot go on (the run cancelled or taken over, the store failing, the
// quota spent, the app stopping) stops every other at its next step.
func (s *Service) playRun(ctx context.Context, r *bff.ScenarioRun) {
	s.busy.Store(true)
	defer s.busy.Store(false)
	log := s.log.With("run", r.ID)
	if r.State != bff.RunActive {
		r.State, r.NotBefore, r.Note = bff.RunActive, time.Time{}, ""
		if err := s.update(ctx, r); err != nil {
			s.stopped(log, err)
			return
		}
	}
	items, err := s.d.Store.ScenarioItems(ctx, r.ID)
	if err != nil {
		log.Error("read a scenario run's items", "err", err)
		return // the lease runs out; a replica tries again
	}
	vignettes := map[string]*scenarios.Vignette{}
	for i := range r.Suite.Vignettes {
		vignettes[r.Suite.Vignettes[i].ID] = &r.Suite.Vignettes[i]
	}
	var queue []int // indexes of items to play, in the order they start
	for _, st := range []bff.ScenarioItemState{bff.ItemPlaying, bff.ItemPending} {
		for i, it := range items {
			if it.State == st {
				queue = append(queue, i)
			}
		}
	}
	width := s.parallel(r.Estimate, r.Items)

	runCtx, stop := context.WithCancelCause(ctx)
	var watching sync.WaitGroup
	watching.Go(func() { s.watch(runCtx, r.ID, stop) })
	defer watching.Wait()
	defer stop(nil)
	// Calls wait behind every live patient's, and leave the key's last
	// free request of the minute to a patient who may arrive.
	pctx := intakeapi.WithHeadroom(intakeapi.WithPriority(runCtx, intakeapi.PriorityBackground), runHeadroom)

	reviews := s.runReviews(ctx)
	done := make(chan played, width)
	var reserved atomic.Int64 // today's turns the items in flight may still spend
	inFlight, next := 0, 0
	var halt error // why the run stops before its end (the first reason wins)
	var waitUntil time.Time
	waitWhy := ""
	for {
		for halt == nil && waitWhy == "" && inFlight < width && next < len(queue) {
			idx := queue[next]
			it := items[idx]
			v := vignettes[it.VignetteID]
			if v == nil { // cannot happen: items are made from the suite
				next++
				it.State, it.Result = bff.ItemFailed, &scenarios.Result{VignetteID: it.VignetteID, Repeat: it.Repeat, Variation: it.Variation, Error: "the vignette is not in the run's suite"}
				if err := s.d.Store.SaveScenarioItem(ctx, it, 0, s.d.Replica); err != nil {
					halt = err
				}
				continue
			}
			if w, ok := variations.Apply(v, it.Variation, VariationSeed); ok {
				v = w
			} else { // cannot happen: items are made from what applies
				next++
				it.State, it.Result = bff.ItemFailed, &scenarios.Result{VignetteID: it.VignetteID, Repeat: it.Repeat, Variation: it.Variation, Error: "the variation does not apply to the vignette"}
				if err := s.d.Store.SaveScenarioItem(ctx, it, 0, s.d.Replica); err != nil {
					halt = err
				}
				continue
			}
			need := max(maxTurns(v)-len(it.Turns), 1)
			if wait, until, why := s.mustWait(ctx, need, int(reserved.Load())); wait {
				if inFlight == 0 {
					waitUntil, waitWhy = until, why
				}
				break // looked at again when an item in flight ends
			}
			next++
			reserved.Add(int64(need))
			inFlight++
			w := *it // the item's own copy: only its goroutine writes it
			go func() { done <- s.playItem(ctx, pctx, r.ID, idx, &w, v, need, &reserved, reviews) }()
		}
		if inFlight == 0 {
			break
		}
		d := <-done
		inFlight--
		if d.err != nil {
			if halt == nil {
				halt = d.err
				if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) {
					halt = cause // the watcher stopped it: say why
				}
				stop(halt)
			}
			continue
		}
		items[d.idx] = d.it
		if d.it.State == bff.ItemFailed {
			log.Warn("a scenario vignette failed", "vignette", d.it.VignetteID, "repeat", d.it.Repeat, "err", d.it.Result.Error)
		}
		if r.Release == "" && d.it.Result != nil {
			r.Release = d.it.Result.Provenance.Release
		}
		r.Summary = summaryOf(items)
		if err := s.recordReadings(ctx, r.ID, items); err != nil {
			log.Error("record a scenario run's readings", "err", err) // derived: the next item records them again
		}
		if err := s.update(ctx, r); err != nil && halt == nil {
			halt = err
			stop(err)
		}
	}
	switch {
	case errors.Is(halt, play.ErrQuota):
		s.wait(ctx, r, nextReset(s.now()), "The key's daily quota is spent; the run goes on after the reset.")
		return
	case halt != nil:
		s.stopped(log, halt)
		return
	case waitWhy != "":
		s.wait(ctx, r, waitUntil, waitWhy)
		return
	}
	now := s.now().UTC()
	r.State, r.FinishedAt, r.UpdatedAt, r.LeaseOwner, r.LeaseUntil = bff.RunDone, now, now, "", time.Time{}
	if err := s.d.Store.UpdateScenarioRun(ctx, r, s.d.Replica); err != nil {
		s.stopped(log, err)
		return
	}
	log.Info("scenario run done", "items", r.Items)
}

// playItem plays one item from where it stands: calls go out with pctx
// (stopped with the run), steps are recorded with ctx (a reply that came
// back is kept even as the run stops). reserved holds the need turns the
// item may still spend today; each answered turn and the item's end give
// them back.
func (s *Service) playItem(ctx, pctx context.Context, runID string, idx int, it *bff.ScenarioItem, v *scenarios.Vignette, need int, reserved *atomic.Int64, reviews scenarios.Reviews) played {
	spent := 0
	defer func() { reserved.Add(-int64(max(need-spent, 0))) }()
	owner := s.d.Replica
	res, raw, err := play.Play(pctx, s.d.Client, v, runID, it.Repeat, play.State{EncounterID: it.EncounterID, Turns: it.Turns},
		func(st play.State, n int) error {
			if n > 0 && spent < need {
				reserved.Add(-1)
			}
			spent += n
			it.State, it.EncounterID, it.Turns, it.UpdatedAt = bff.ItemPlaying, st.EncounterID, st.Turns, s.now().UTC()
			return s.d.Store.SaveScenarioItem(ctx, it, n, owner)
		}, reviews)
	if err != nil {
		return played{idx: idx, it: it, err: err}
	}
	res.Variation = it.Variation
	it.Result, it.Handoff, it.UpdatedAt = &res, raw, s.now().UTC()
	it.State = bff.ItemDone
	if res.Error != "" {
		it.State = bff.ItemFailed
	}
	return played{idx: idx, it: it, err: s.d.Store.SaveScenarioItem(ctx, it, 0, owner)}
}

// watch stops a run's items (stop) as soon as the run has ended (a
// clinician cancelled it) or its lease is another replica's, so items
// waiting in the key's queue stop too, not only at their next record.
func (s *Service) watch(ctx context.Context, id string, stop context.CancelCauseFunc) {
	tick := time.NewTicker(max(s.d.Lease/3, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r, err := s.d.Store.ScenarioRun(ctx, id)
		if err == nil && (r.State.Ended() || r.LeaseOwner != s.d.Replica) {
			stop(errTakenOver)
			return
		}
	}
}

// mustWait says whether an item needing need turns must wait for
// tomorrow's quota: runs may spend today's turns only down to the Reserve
// kept for patients, less the reserved turns the items in flight may still
// spend, and an item starts only when what is left covers its turn limit
// (so it never stops half way and lets its intake expire).
func (s *Service) mustWait(ctx context.Context, need, reserved int) (bool, time.Time, string) {
	if s.d.TurnsToday == nil {
		return false, time.Time{}, ""
	}
	used, limit, err := s.d.TurnsToday(ctx)
	if err != nil {
		s.log.Error("read today's turns for a scenario run", "err", err)
		return true, s.now().Add(time.Minute), "Could not read today's turns; trying again in a minute."
	}
	if limit <= 0 {
		return false, time.Time{}, ""
	}
	if left := limit - s.d.Reserve - used - reserved; left < need {
		until := nextReset(s.now())
		return true, until, fmt.Sprintf("Today's turns for runs are spent (%d of %d used, %d kept for patients); the run goes on at %s.",
			used, limit, s.d.Reserve, until.Format("2006-01-02 15:04 UTC"))
	}
	return false, time.Time{}, ""
}

// wait parks the run until until and gives its lease up.
func (s *Service) wait(ctx context.Context, r *bff.ScenarioRun, until time.Time, why string) {
	owner := s.d.Replica
	r.State, r.NotBefore, r.Note, r.UpdatedAt = bff.RunWaiting, until.UTC(), why, s.now().UTC()
	r.LeaseOwner, r.LeaseUntil = "", time.Time{}
	if err := s.d.Store.UpdateScenarioRun(ctx, r, owner); err != nil {
		s.stopped(s.log.With("run", r.ID), err)
	}
}

// update writes the run's state, keeping this replica's lease.
func (s *Service) update(ctx context.Context, r *bff.ScenarioRun) error {
	r.UpdatedAt, r.LeaseOwner, r.LeaseUntil = s.now().UTC(), s.d.Replica, s.now().Add(s.d.Lease)
	return s.d.Store.UpdateScenarioRun(ctx, r, s.d.Replica)
}

// stopped logs why a play stopped before the run's end: the app is
// shutting down, the run was cancelled or taken over, or the store failed
// (the lease then runs out and a replica resumes it).
func (s *Service) stopped(log interface {
	Info(string, ...any)
	Error(string, ...any)
}, err error) {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		log.Info("scenario run paused: the app is stopping")
	case bff.ErrorCode(err) == bff.ECONFLICT:
		log.Info("scenario run stopped here: cancelled, or another replica took it over")
	default:
		log.Error("scenario run stopped: its progress could not be recorded", "err", err)
	}
}

// summaryOf scores the items that finished: the scores so far, kept with
// the run for the list of runs.
func summaryOf(items []*bff.ScenarioItem) *scenarios.Summary {
	sum := scenarios.Score(bff.ScenarioResults(items))
	return &sum
}
