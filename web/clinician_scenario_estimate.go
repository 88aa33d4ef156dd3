package web

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// showScenarioEstimate says what a run of a built-in suite will cost, with
// the form that starts it. Nothing starts here.
func (s *Server) showScenarioEstimate(c *fiber.Ctx) error {
	in := startInput{suite: utils.CopyString(c.Query("suite")), repeats: utils.CopyString(c.Query("repeats")), label: utils.CopyString(c.Query("label"))}.withVariations(c)
	f, errs := in.form()
	if errs != nil {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, errs)
	}
	est, err := s.deps.Scenarios.Estimate(c.UserContext(), f)
	if field, msg, ok := invalidField(err); ok {
		return s.refuseStart(c, in, http.StatusUnprocessableEntity, in.fieldErrors(field, msg))
	} else if err != nil {
		return err
	}
	p := templates.ScenarioEstimatePage{Layout: s.clinicianLayout(c, "Start a scenario run"), Repeats: f.Repeats, Label: f.Label,
		Estimate: estimateView(est), Action: scenariosPath + "/runs",
		ChangeURL:  scenariosPath + "?" + changeValues(f).Encode(),
		Variations: chosenVariations(f.Variations), UrgentFirst: f.UrgentFirst}
	p.Suite.Name = f.Suite
	for _, si := range s.deps.Scenarios.Suites() {
		if si.Name == f.Suite {
			p.Suite = templates.ScenarioSuite{Name: si.Name, Title: si.Title, Vignettes: si.Vignettes}
		}
	}
	return render(c, http.StatusOK, templates.ScenarioEstimatePageView(p))
}

func estimateView(e *bff.ScenarioRunEstimate) templates.ScenarioEstimate {
	v := templates.ScenarioEstimate{Intakes: e.Intakes, Turns: e.Turns, MaxTurns: e.MaxTurns, Parallel: e.Parallel, Unlimited: e.Unlimited, NoQuota: e.NoQuota,
		PerDay: e.PerDay, LeftToday: e.LeftToday, Days: e.Days, PerVariation: variationCosts(e)}
	if !e.Finish.IsZero() {
		v.Finish = e.Finish.UTC().Format("2 Jan 2006 15:04 UTC")
	}
	return v
}

// estimateSentence is the estimate in one sentence of ours (numbers only),
// for the flash after a start.
func estimateSentence(e *bff.ScenarioRunEstimate) string {
	s := fmt.Sprintf("Run started: %d intakes, about %d turns (at most %d), up to %d at once.", e.Intakes, e.Turns, e.MaxTurns, max(e.Parallel, 1))
	if e.Unlimited {
		return s + " Limits off: embedded sandbox." + perVariationSentence(e)
	}
	if e.NoQuota {
		s += " No daily quota; 1 day"
	} else {
		s += fmt.Sprintf(" %d turns a day for runs, %d left today; %d day", e.PerDay, e.LeftToday, e.Days)
	}
	if e.Days != 1 {
		s += "s"
	}
	if !e.Finish.IsZero() {
		s += ", expected to finish " + e.Finish.UTC().Format("2 Jan 2006 15:04 UTC")
	}
	return s + "." + perVariationSentence(e)
}
