package web

import (
	"net/url"
	"slices"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/templates"
)

// A run's results as its page lists them and its item pages step through
// them: one order and one filter (?show=), so "next" on an item page is
// the row below it on the run's page.

// resultFilter is one choice of ?show= on a run's page.
type resultFilter struct {
	name, label string // name "" is every result
	match       func(listedResult) bool
}

var resultFilters = []resultFilter{
	{"", "All", func(listedResult) bool { return true }},
	{"under", "Under-triaged", func(x listedResult) bool { return x.outcome.Triage == scenarios.TriageUnder }},
	{"over", "Over-triaged", func(x listedResult) bool { return x.outcome.Triage == scenarios.TriageOver }},
	// Wrong: the engine's final class or disposition is not the gold's
	// (under, over, a disposition the gold does not accept, undecided);
	// a failed play is not the engine's answer.
	{"wrong", "Wrong", func(x listedResult) bool {
		return x.outcome.Triage != scenarios.TriageCorrect && x.outcome.Triage != scenarios.TriageError
	}},
	{"limited", "Simulator-limited", func(x listedResult) bool { return x.outcome.SimulatorLimited }},
	// Flipped: both plays of a vignette a variation flipped, the one as
	// written and the varied one.
	{"flipped", "Flipped", func(x listedResult) bool { return x.flipped }},
}

// showParam is the run page's ?show=, or a 404 for a value it does not
// offer.
func showParam(c *fiber.Ctx) (resultFilter, error) {
	show := c.Query("show")
	for _, f := range resultFilters {
		if f.name == show {
			return f, nil
		}
	}
	return resultFilter{}, fiber.ErrNotFound
}

// listedResult is one finished item of a run.
type listedResult struct {
	seq     int
	result  scenarios.Result
	outcome scenarios.Outcome
	flipped bool
}

// listResults are a run's finished items in the order its page lists
// them: under-triaged first (the safety figure), then simulator-limited
// ones (not the engine's alone: to be seen before trusting the rest), then
// the others, each group in the run's order.
func listResults(items []*bff.ScenarioItem, flips *scenarios.FlipReport) []listedResult {
	flippedPlay := map[[2]string]bool{}
	if flips != nil {
		for _, f := range flips.Flips {
			flippedPlay[[2]string{f.VignetteID, f.Variation}] = true
			flippedPlay[[2]string{f.VignetteID, ""}] = true
		}
	}
	var out []listedResult
	for _, it := range items {
		if it.Result == nil {
			continue
		}
		r := *it.Result
		out = append(out, listedResult{seq: it.Seq, result: r, outcome: scenarios.Assess(r), flipped: flippedPlay[[2]string{r.VignetteID, r.Variation}]})
	}
	rank := func(x listedResult) int {
		switch {
		case x.outcome.Triage == scenarios.TriageUnder:
			return 0
		case x.outcome.SimulatorLimited:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b listedResult) int { return rank(a) - rank(b) })
	return out
}

// keep is the results f shows.
func (f resultFilter) keep(all []listedResult) []listedResult {
	var out []listedResult
	for _, x := range all {
		if f.match(x) {
			out = append(out, x)
		}
	}
	return out
}

// query is "?show=under", or "" for every result.
func (f resultFilter) query() string {
	if f.name == "" {
		return ""
	}
	return "?" + url.Values{"show": {f.name}}.Encode()
}

// itemURL is an item's page, stepping through the results f shows.
func itemURL(runID string, seq int, f resultFilter) string {
	return runPath(runID) + "/items/" + strconv.Itoa(seq) + f.query()
}

// filterLinks are the run page's filter choices with their counts.
func filterLinks(runID string, all []listedResult, current resultFilter) []templates.ScenarioResultFilter {
	out := make([]templates.ScenarioResultFilter, len(resultFilters))
	for i, f := range resultFilters {
		out[i] = templates.ScenarioResultFilter{Label: f.label, Count: len(f.keep(all)), Current: f.name == current.name,
			URL: runPath(runID) + f.query() + "#results-heading"}
	}
	return out
}
