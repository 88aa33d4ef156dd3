package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/templates"
)

// showScenarioSide shows a vignette as written and under a variation,
// side by side: for each, the repeat that ended in its most common class.
func (s *Server) showScenarioSide(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	vignette, variation := c.Query("vignette"), c.Query("variation")
	if !slices.Contains(variations.Names(), variation) {
		return bff.Invalid("variation", "Choose one of the variations: %s.", strings.Join(variations.Names(), ", "))
	}
	run, items, err := s.deps.Scenarios.Run(c.UserContext(), id)
	if err != nil {
		return err
	}
	results := bff.ScenarioResults(items)
	byKey := map[string]*bff.ScenarioItem{}
	for _, it := range items {
		byKey[itemKey(it.VignetteID, it.Variation, it.Repeat)] = it
	}
	var flip *scenarios.Flip
	if f := scenarios.Flips(results); f != nil {
		for i := range f.Flips {
			if f.Flips[i].VignetteID == vignette && f.Flips[i].Variation == variation {
				flip = &f.Flips[i]
			}
		}
	}
	if flip == nil {
		return bff.Errorf(bff.ENOTFOUND, "This run has no flip of vignette %q under %s.", vignette, variations.Label(variation))
	}
	p := templates.ScenarioSidePage{Layout: s.clinicianLayout(c, "Flip of "+vignette), RunURL: runPath(run.ID), RunLabel: runLabel(run),
		VignetteID: vignette, Title: flip.Title, Variation: variations.Label(variation), Gold: flip.Gold.Label(),
		Down: flip.Direction == scenarios.FlipDown}
	for i, side := range []struct {
		variation string
		repeat    int
		final     scenarios.Class
	}{{"", flip.BaseRepeat, flip.Base}, {variation, flip.VariedRepeat, flip.Varied}} {
		sd := templates.ScenarioSide{Heading: variations.Label(side.variation) + " (repeat " + strconv.Itoa(side.repeat) + ")", Final: side.final.Label()}
		if it := byKey[itemKey(vignette, side.variation, side.repeat)]; it != nil {
			sd.URL = runPath(run.ID) + "/items/" + strconv.Itoa(it.Seq)
			sd.Turns = scenarioExchanges(it.Turns)
		}
		p.Sides[i] = sd
	}
	return render(c, http.StatusOK, templates.ScenarioSidePageView(p))
}
