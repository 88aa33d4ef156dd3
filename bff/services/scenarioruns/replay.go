package scenarioruns

import (
	"cmp"
	"context"
	"slices"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/services/play"
)

// PlanReplay implements bff.ReadingService.
func (s *Service) PlanReplay(ctx context.Context, run, release, question string) (*bff.ReplayPlan, error) {
	p, _, _, err := s.replay(ctx, run, release, question)
	return p, err
}

// StartReplay implements bff.ReadingService.
func (s *Service) StartReplay(ctx context.Context, clinician, run, release, question string) (*bff.ScenarioRun, *bff.ScenarioRunEstimate, error) {
	p, suite, plays, err := s.replay(ctx, run, release, question)
	if err != nil {
		return nil, nil, err
	}
	if err := playable(suite, p.Estimate); err != nil {
		return nil, nil, err
	}
	r, err := s.start(ctx, clinician, suite, plays, 1, p.Estimate, func(r *bff.ScenarioRun) {
		r.ReplayOf, r.ReplayQuestion = p.Run.ID, p.Question
	})
	if err != nil {
		return nil, nil, err
	}
	return r, p.Estimate, nil
}

// replay plans a replay of run's items that asked question of release:
// the plan, the suite of only their vignettes, and what it plays (each
// affected vignette and variation once, in the run's order), estimated as
// any run.
func (s *Service) replay(ctx context.Context, runID, release, question string) (*bff.ReplayPlan, *scenarios.Suite, []play.Vignette, error) {
	run, items, err := s.Run(ctx, runID)
	if err != nil {
		return nil, nil, nil, err
	}
	question = scenarios.NormalQuestion(question)
	p := &bff.ReplayPlan{Run: run, Release: release, Question: question}
	type key struct{ vignette, variation string }
	order := map[key]int{}
	var names []string
	for _, it := range items {
		if it.Result == nil || !asked(*it.Result, release, question) {
			continue
		}
		p.Items = append(p.Items, it)
		k := key{it.VignetteID, it.Variation}
		if _, ok := order[k]; !ok {
			order[k] = len(order)
		}
		if it.Variation != "" && !slices.Contains(names, it.Variation) {
			names = append(names, it.Variation)
		}
	}
	if len(p.Items) == 0 || run.Suite == nil {
		return nil, nil, nil, bff.Invalid("question", "No item of run %s asked that question of release %s: there is nothing to replay.", runID, release)
	}
	suite := &scenarios.Suite{Name: run.Suite.Name}
	for _, v := range run.Suite.Vignettes {
		if slices.ContainsFunc(p.Items, func(it *bff.ScenarioItem) bool { return it.VignetteID == v.ID }) {
			suite.Vignettes = append(suite.Vignettes, v)
		}
	}
	var plays []play.Vignette
	for _, pl := range play.Plays(suite, names, VariationSeed) {
		if _, ok := order[key{pl.Vignette.ID, pl.Variation}]; ok {
			plays = append(plays, pl)
		}
	}
	slices.SortStableFunc(plays, func(a, b play.Vignette) int {
		return cmp.Compare(order[key{a.Vignette.ID, a.Variation}], order[key{b.Vignette.ID, b.Variation}])
	})
	p.Plays = len(plays)
	h, err := s.history(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if p.Estimate, err = s.estimate(ctx, h, suite, plays, 1); err != nil {
		return nil, nil, nil, err
	}
	return p, suite, plays, nil
}

// asked reports whether r's transcript asked question (normal) of
// release, as the readings collect questions (scenarios.QuestionsRead).
func asked(r scenarios.Result, release, question string) bool {
	return slices.ContainsFunc(scenarios.QuestionsRead([]scenarios.Result{r}), func(q scenarios.QuestionRead) bool {
		return q.Release == release && q.Question == question
	})
}
