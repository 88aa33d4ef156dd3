package scenarioruns

import (
	"context"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/services/play"
)

// turnTime is what one blocking turn is expected to take against the real
// service (the spec: 20-40 s).
const turnTime = 30 * time.Second

// runHeadroom is the requests of the key's rolling minute a run's calls
// leave free, so a patient who arrives finds one at once.
const runHeadroom = 1

// Parallel is how many items a run plays at once: enough that the key's
// requests a minute left to runs (perMinute less runHeadroom; perMinute
// <= 0: no limit) are all used, at most ceiling, at least one. An item of
// turnsPerItem turns sends that many turns plus its intake and its handoff
// over turnsPerItem × turnTime, so it asks (turnsPerItem+2)/(turnsPerItem ×
// turnTime) requests a minute. The bound rounds up, so the items together
// ask at least the runs' share, and adds one, so that a request is waiting
// whenever the gate would grant one: the others may all be inside a turn
// at that moment (at the spec's 6 a minute one item alone asked 3.6 of the
// 5, and a second one in its turn could leave the slot unused). The items
// beyond wait in the key's queue, behind every patient's call (the gate
// orders by priority, and runs leave runHeadroom free): at the spec's 6 a
// minute and the built-in suite's 6 turns an item, three.
func Parallel(perMinute, turnsPerItem, ceiling int) int {
	ceiling = max(ceiling, 1)
	if perMinute <= 0 {
		return ceiling
	}
	share := max(perMinute-runHeadroom, 1)
	t := max(turnsPerItem, 1)
	per := time.Duration(t+2) * time.Minute // one item's requests, times a minute
	feed := (time.Duration(share*t)*turnTime + per - 1) / per
	return min(max(int(feed)+1, 1), ceiling)
}

// Budget is what an estimate knows of where a run plays: the app's runs
// (the service's Deps and the key's spend today) and the command line's
// (intake-web scenarios run: its configuration, today's spend unknown) fill
// it alike, so both expect the same of the same run (Estimate).
type Budget struct {
	// Unlimited: an embedded sandbox with its limits off; the rest but
	// Parallel does not apply.
	Unlimited bool
	// PerMinute is the key's requests a minute (<= 0: no limit).
	PerMinute int
	// Parallel is the most items played at once (the operator's ceiling);
	// 0 or 1: one at a time.
	Parallel int
	// Used and Limit are the key's turns spent today and its daily quota
	// (Limit <= 0: none); Reserve is the turns of it kept for patients.
	Used, Limit, Reserve int
	Now                  time.Time
}

// parallel is Parallel for a run of items expected to take turns.
func (b Budget) parallel(turns, items int) int {
	if b.Unlimited {
		return max(b.Parallel, 1)
	}
	return Parallel(b.PerMinute, (turns+items-1)/max(items, 1), b.Parallel)
}

// budget is the service's Budget without today's spend.
func (s *Service) budget() Budget {
	return Budget{Unlimited: s.d.TurnsToday == nil, PerMinute: s.d.PerMinute, Parallel: s.d.Parallel, Reserve: s.d.Reserve}
}

// parallel is Parallel for a run of items expected to take turns.
func (s *Service) parallel(turns, items int) int { return s.budget().parallel(turns, items) }

// estimate says what a run of plays × repeats would cost and when it would
// finish: Estimate under the service's budget and the key's spend today,
// each vignette expected to take what its newest finished play took in the
// latest runs where there is one (pastTurns).
func (s *Service) estimate(ctx context.Context, h *history, suite *scenarios.Suite, plays []play.Vignette, repeats int) (*bff.ScenarioRunEstimate, error) {
	seen, err := h.pastTurns(ctx, suite)
	if err != nil {
		return nil, err
	}
	b := s.budget()
	b.Now = s.now().UTC()
	if !b.Unlimited {
		if b.Used, b.Limit, err = s.d.TurnsToday(ctx); err != nil {
			return nil, err
		}
	}
	return Estimate(plays, repeats, seen, b), nil
}

// Estimate is what a run of plays (as play.Plays makes them: each
// vignette as written and under each variation), each played repeats
// times, is expected to cost under b, and when it would finish. A play is
// expected to take the turns past gives for its vignette's id (a varied
// play keeps its vignette's id; nil: none known), else ExpectedTurns. The
// app's estimate page and the command line both call it: one rule.
func Estimate(plays []play.Vignette, repeats int, past map[string]int, b Budget) *bff.ScenarioRunEstimate {
	e := &bff.ScenarioRunEstimate{Intakes: len(plays) * repeats}
	longest := 0 // the expected turns of the longest item: however many play at once, the run lasts as long
	for _, p := range plays {
		limit := maxTurns(p.Vignette)
		n, ok := past[p.Vignette.ID]
		if !ok {
			n = ExpectedTurns(*p.Vignette)
		}
		longest = max(longest, n)
		e.Turns += n * repeats
		e.MaxTurns += limit * repeats
	}
	e.PerVariation = perVariation(plays, repeats, e)
	e.Parallel = min(b.parallel(e.Turns, e.Intakes), e.Intakes)
	if b.Unlimited {
		e.Unlimited, e.Days = true, 1
		return e
	}
	// The pace: turns one after another in each of the items played at
	// once (and no sooner than the longest item's own turns), and the
	// key's requests a minute less the one kept free for patients;
	// whichever is slower.
	pace := func(turns, intakes int) time.Duration {
		byTurns := time.Duration(turns) * turnTime / time.Duration(max(min(e.Parallel, intakes), 1))
		byTurns = max(byTurns, time.Duration(longest)*turnTime)
		if b.PerMinute <= 0 {
			return byTurns
		}
		perMinute := max(b.PerMinute-runHeadroom, 1)
		byRequests := time.Duration(turns+2*intakes) * time.Minute / time.Duration(perMinute)
		return max(byTurns, byRequests)
	}
	now := b.Now.UTC()
	if b.Limit <= 0 { // no daily quota: the key's requests a minute still pace the run
		e.NoQuota, e.Days = true, 1
		e.Finish = now.Add(pace(e.Turns, e.Intakes))
		return e
	}
	e.PerDay = max(b.Limit-b.Reserve, 0)
	e.LeftToday = max(b.Limit-b.Reserve-b.Used, 0)
	if e.PerDay == 0 {
		return e // Days 0: the reserve leaves runs nothing (the page says so)
	}
	if e.Turns <= e.LeftToday {
		e.Days, e.Finish = 1, now.Add(pace(e.Turns, e.Intakes))
		return e
	}
	rest := e.Turns - e.LeftToday
	later := (rest + e.PerDay - 1) / e.PerDay // days after today
	e.Days = 1 + later
	last := rest - (later-1)*e.PerDay
	share := max(e.Intakes*last/e.Turns, 1)
	e.Finish = nextReset(now).Add(time.Duration(later-1) * 24 * time.Hour).Add(pace(last, share))
	return e
}

// recentRuns is how many of the latest runs an estimate and an
// urgent-first order look back at.
const recentRuns = 5

// history is the latest runs, newest first, read once for an estimate or a
// start: the urgent-first order (flipped) and the estimate (pastTurns) both
// look back at them, and each run's items are read at most once, when the
// first of the two needs them (each stops as soon as it has what it needs).
type history struct {
	store bff.ScenarioRunStore
	runs  []*bff.ScenarioRun
	items map[string][]*bff.ScenarioItem
}

func (s *Service) history(ctx context.Context) (*history, error) {
	runs, err := s.d.Store.ScenarioRuns(ctx, recentRuns)
	if err != nil {
		return nil, err
	}
	return &history{store: s.d.Store, runs: runs, items: map[string][]*bff.ScenarioItem{}}, nil
}

// played is r's items; none for a run that has played nothing.
func (h *history) played(ctx context.Context, r *bff.ScenarioRun) ([]*bff.ScenarioItem, error) {
	if r.Played == 0 {
		return nil, nil
	}
	if items, ok := h.items[r.ID]; ok {
		return items, nil
	}
	items, err := h.store.ScenarioItems(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	h.items[r.ID] = items
	return items, nil
}

// pastTurns maps suite's vignette ids to the turns their newest finished
// play took, over the latest runs; it reads no further run once every
// vignette has one (the estimate page is shown before every start).
func (h *history) pastTurns(ctx context.Context, suite *scenarios.Suite) (map[string]int, error) {
	want := make(map[string]bool, len(suite.Vignettes))
	for _, v := range suite.Vignettes {
		want[v.ID] = true
	}
	seen := map[string]int{}
	for _, r := range h.runs { // newest first: the first seen wins
		if len(seen) == len(want) {
			break
		}
		items, err := h.played(ctx, r)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if _, ok := seen[it.VignetteID]; !ok && want[it.VignetteID] && it.State == bff.ItemDone && it.Result != nil {
				seen[it.VignetteID] = it.Result.Turns
			}
		}
	}
	return seen, nil
}

// ExpectedTurns is the turns a play of v is expected to take when no
// earlier run says: one for the opening and one per fact, within its turn
// limit (an engine asks roughly a question per fact it needs). The app's
// estimate and the command line's (intake-web scenarios run) both use it.
func ExpectedTurns(v scenarios.Vignette) int {
	return min(maxTurns(&v), len(v.Facts)+1)
}

func maxTurns(v *scenarios.Vignette) int {
	if v.MaxTurns > 0 {
		return v.MaxTurns
	}
	return scenarios.DefaultMaxTurns
}

// nextReset is the next daily quota reset, 00:00 UTC.
func nextReset(now time.Time) time.Time {
	return now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
}
