package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// scenariosPage is the section's index, its forms filled with in.
func (s *Server) scenariosPage(c *fiber.Ctx, in startInput, base, head string) (templates.ScenariosPage, error) {
	ctx := c.UserContext()
	svc := s.deps.Scenarios
	p := templates.ScenariosPage{Layout: s.clinicianLayout(c, "Scenarios"),
		Start: templates.ScenarioStartForm{Action: scenariosPath + "/new"},
		Upload: templates.ScenarioUploadForm{Action: scenariosPath + "/runs", MaxSize: sizeText(int64(s.uploadLimit())),
			MaxBytes: s.uploadLimit(), TooLarge: uploadTooLarge(0, s.uploadLimit()), FormatURL: formatPath},
		Compare: templates.ScenarioCompareForm{Action: scenariosPath + "/compare", Base: base, Head: head},
	}
	if s.deps.Readings != nil {
		p.ReadingsURL = readingsPath
	}
	if in.upload {
		p.Upload.Repeats, p.Upload.Label, p.Upload.UrgentFirst = in.repeats, in.label, in.urgentFirst
		p.Upload.Variations, p.Start.Variations = variationOptions(in.variations), variationOptions(nil)
	} else {
		p.Start.Suite, p.Start.Repeats, p.Start.Label, p.Start.UrgentFirst = in.suite, in.repeats, in.label, in.urgentFirst
		p.Start.Variations, p.Upload.Variations = variationOptions(in.variations), variationOptions(nil)
	}
	for _, si := range svc.Suites() {
		p.Suites = append(p.Suites, templates.ScenarioSuite{Name: si.Name, Title: si.Title, Vignettes: si.Vignettes, AtOnce: si.AtOnce})
	}
	runs, err := svc.Runs(ctx)
	if err != nil {
		return p, err
	}
	for _, r := range runs {
		row := templates.ScenarioRunRow{ID: r.ID, URL: runPath(r.ID), Label: runLabel(r), Suite: suiteName(r), Target: r.Target,
			State: string(r.State), StartedBy: r.StartedBy, Started: compact(r.CreatedAt), Played: r.Played, Items: r.Items}
		if sum := r.Summary; sum != nil && sum.Scored > 0 {
			row.Scored, row.Accuracy, row.UnderTriage = true, percent(sum.Accuracy), percent(sum.UnderTriage)
		}
		p.Runs = append(p.Runs, row)
		p.Compare.Runs = append(p.Compare.Runs, templates.ScenarioRunOption{ID: r.ID, Label: runLabel(r)})
	}
	if p.Compare.Base == "" && len(runs) > 1 {
		// By default the two newest runs that played something (newest as
		// the head), else the two newest.
		var played []*bff.ScenarioRun
		for _, r := range runs {
			if r.Played > 0 {
				played = append(played, r)
			}
		}
		if len(played) < 2 {
			played = runs
		}
		p.Compare.Base, p.Compare.Head = played[1].ID, played[0].ID
	}
	return p, nil
}

// showScenarios is the section's index; ?suite=&repeats=&label= refill the
// start form (the estimate page's "Change the run").
func (s *Server) showScenarios(c *fiber.Ctx) error {
	in := startInput{suite: utils.CopyString(c.Query("suite")), repeats: utils.CopyString(c.Query("repeats")), label: utils.CopyString(c.Query("label"))}.withVariations(c)
	p, err := s.scenariosPage(c, in, "", "")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ScenariosPageView(p))
}
