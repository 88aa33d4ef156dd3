package scenarioruns

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/play"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
)

// Serve plays runs until ctx ends: it claims one run at a time (the key
// allows six requests a minute; two runs at once would only queue behind
// each other), plays it to its end or until it must wait, and keeps its
// lease alive meanwhile. An idle replica looks for runs every Idle, and at
// once when this replica starts one.
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

// playRun plays a claimed run's unfinished items in order.
func (s *Service) playRun(ctx context.Context, r *scenarios.Run) {
	s.busy.Store(true)
	defer s.busy.Store(false)
	log := s.log.With("run", r.ID)
	owner := s.d.Replica
	if r.State != scenarios.RunActive {
		r.State, r.NotBefore, r.Note = scenarios.RunActive, time.Time{}, ""
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
	// Calls wait behind every live patient's, and leave the key's last
	// free request of the minute to a patient who may arrive.
	pctx := intakeapi.WithHeadroom(intakeapi.WithPriority(ctx, intakeapi.PriorityBackground), 1)
	for _, it := range items {
		if it.State == scenarios.ItemDone || it.State == scenarios.ItemFailed {
			continue
		}
		v := vignettes[it.VignetteID]
		if v == nil { // cannot happen: items are made from the suite
			it.State, it.Result = scenarios.ItemFailed, &scenarios.Result{VignetteID: it.VignetteID, Repeat: it.Repeat, Error: "the vignette is not in the run's suite"}
			if err := s.d.Store.SaveScenarioItem(ctx, it, 0, owner); err != nil {
				s.stopped(log, err)
				return
			}
			continue
		}
		if w, ok := variations.Apply(v, it.Variation, VariationSeed); ok {
			v = w
		} else { // cannot happen: items are made from what applies
			it.State, it.Result = scenarios.ItemFailed, &scenarios.Result{VignetteID: it.VignetteID, Repeat: it.Repeat, Variation: it.Variation, Error: "the variation does not apply to the vignette"}
			if err := s.d.Store.SaveScenarioItem(ctx, it, 0, owner); err != nil {
				s.stopped(log, err)
				return
			}
			continue
		}
		if wait, until, why := s.mustWait(ctx, v, it); wait {
			s.wait(ctx, r, until, why)
			return
		}
		res, raw, err := play.Play(pctx, s.d.Client, v, r.ID, it.Repeat, play.State{EncounterID: it.EncounterID, Turns: it.Turns},
			func(st play.State, spent int) error {
				it.State, it.EncounterID, it.Turns, it.UpdatedAt = scenarios.ItemPlaying, st.EncounterID, st.Turns, s.now().UTC()
				return s.d.Store.SaveScenarioItem(ctx, it, spent, owner)
			})
		if errors.Is(err, play.ErrQuota) {
			s.wait(ctx, r, nextReset(s.now()), "The key's daily quota is spent; the run goes on after the reset.")
			return
		}
		if err != nil {
			s.stopped(log, err)
			return
		}
		res.Variation = it.Variation
		it.Result, it.Handoff, it.UpdatedAt = &res, raw, s.now().UTC()
		it.State = scenarios.ItemDone
		if res.Error != "" {
			it.State = scenarios.ItemFailed
			log.Warn("a scenario vignette failed", "vignette", it.VignetteID, "repeat", it.Repeat, "error", res.Error)
		}
		if err := s.d.Store.SaveScenarioItem(ctx, it, 0, owner); err != nil {
			s.stopped(log, err)
			return
		}
		if r.Release == "" {
			r.Release = res.Provenance.Release
		}
		r.Summary = summaryOf(items)
		if err := s.update(ctx, r); err != nil {
			s.stopped(log, err)
			return
		}
	}
	now := s.now().UTC()
	r.State, r.FinishedAt, r.UpdatedAt, r.LeaseOwner, r.LeaseUntil = scenarios.RunDone, now, now, "", time.Time{}
	if err := s.d.Store.UpdateScenarioRun(ctx, r, owner); err != nil {
		s.stopped(log, err)
		return
	}
	log.Info("scenario run done", "items", r.Items)
}

// mustWait says whether the item must wait for tomorrow's quota: runs may
// spend today's turns only down to the Reserve kept for patients, and an
// item starts only when what is left covers its turn limit (so it never
// stops half way and lets its intake expire).
func (s *Service) mustWait(ctx context.Context, v *scenarios.Vignette, it *scenarios.Item) (bool, time.Time, string) {
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
	need := max(maxTurns(v)-len(it.Turns), 1)
	if left := limit - s.d.Reserve - used; left < need {
		until := nextReset(s.now())
		return true, until, fmt.Sprintf("Today's turns for runs are spent (%d of %d used, %d kept for patients); the run goes on at %s.",
			used, limit, s.d.Reserve, until.Format("2006-01-02 15:04 UTC"))
	}
	return false, time.Time{}, ""
}

// wait parks the run until until and gives its lease up.
func (s *Service) wait(ctx context.Context, r *scenarios.Run, until time.Time, why string) {
	owner := s.d.Replica
	r.State, r.NotBefore, r.Note, r.UpdatedAt = scenarios.RunWaiting, until.UTC(), why, s.now().UTC()
	r.LeaseOwner, r.LeaseUntil = "", time.Time{}
	if err := s.d.Store.UpdateScenarioRun(ctx, r, owner); err != nil {
		s.stopped(s.log.With("run", r.ID), err)
	}
}

// update writes the run's state, keeping this replica's lease.
func (s *Service) update(ctx context.Context, r *scenarios.Run) error {
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
func summaryOf(items []*scenarios.Item) *scenarios.Summary {
	var results []scenarios.Result
	for _, it := range items {
		if it.Result != nil {
			results = append(results, *it.Result)
		}
	}
	sum := scenarios.Score(results)
	return &sum
}
