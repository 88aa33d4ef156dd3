package scenarioruns

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/bff/services/play"
)

// VariationSeed seeds every run's variations: the same typos in every
// run, so two runs' flips compare the engines, not the seeds.
const VariationSeed = 1

// checkVariations refuses a name that is not a variation, and a name given
// twice: each would add a play of every vignette (a form sends each once;
// thousands of repeats would cost the server thousands of plays before the
// run's size is checked).
func checkVariations(names []string) error {
	for i, n := range names {
		if !slices.Contains(variations.Names(), n) {
			return bff.Invalid("variations", "Unknown variation %q: choose from %s.", n, strings.Join(variations.Names(), ", "))
		}
		if slices.Contains(names[:i], n) {
			return bff.Invalid("variations", "The variation %q is chosen twice: choose each at most once.", n)
		}
	}
	return nil
}

// perVariation splits the estimate's turns by variation, in the order the
// plays name them; nil for a run without variations. Each play is
// expected to take what its vignette takes unvaried.
func perVariation(plays []play.Vignette, repeats int, est *bff.ScenarioRunEstimate) []bff.ScenarioVariationCost {
	if !slices.ContainsFunc(plays, func(p play.Vignette) bool { return p.Variation != "" }) {
		return nil
	}
	var out []bff.ScenarioVariationCost
	idx := map[string]int{}
	for _, p := range plays {
		i, ok := idx[p.Variation]
		if !ok {
			i = len(out)
			idx[p.Variation] = i
			out = append(out, bff.ScenarioVariationCost{Variation: p.Variation})
		}
		out[i].Intakes += repeats
		out[i].Turns += ExpectedTurns(*p.Vignette) * repeats
	}
	// Scale to the estimate's total, which knows the turns past runs took.
	sum := 0
	for _, c := range out {
		sum += c.Turns
	}
	if sum > 0 && est.Turns > 0 {
		for i := range out {
			out[i].Turns = cmp.Or(out[i].Turns*est.Turns/sum, 1)
		}
	}
	return out
}

// flipped is the ids a variation flipped in the latest run that played
// variations (of the few latest runs); none when there is none.
func (h *history) flipped(ctx context.Context) (map[string]bool, error) {
	for _, r := range h.runs { // newest first
		items, err := h.played(ctx, r)
		if err != nil {
			return nil, err
		}
		results := bff.ScenarioResults(items)
		f := scenarios.Flips(results)
		if f == nil {
			continue
		}
		out := map[string]bool{}
		for _, x := range f.Flips {
			out[x.VignetteID] = true
		}
		return out, nil
	}
	return map[string]bool{}, nil
}
