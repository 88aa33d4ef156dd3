package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/templates"
)

// showSafetyRelease is one release's safety case
// (?release=&voice=): the evidence now, the decision in force, the
// comparison with the previous release, and the officer's decision form.
func (s *Server) showSafetyRelease(c *fiber.Ctx) error {
	sub := subjectOf(utils.CopyString(c.Query("release")), utils.CopyString(c.Query("voice")))
	p, err := s.safetyReleasePage(c, sub)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.SafetyReleasePageView(p))
}

func (s *Server) safetyReleasePage(c *fiber.Ctx, sub safety.Subject) (templates.SafetyReleasePage, error) {
	p := templates.SafetyReleasePage{Layout: s.clinicianLayout(c, "Release "+sub.String()), Subject: sub.String(),
		Release: sub.Release, Voice: sub.Voice, DecideAction: safetyPath + "/decisions", ReportURL: safetyReportURL(sub), BackURL: safetyPath}
	if sub.Release == "" {
		return p, bff.Errorf(bff.ENOTFOUND, "Name a release.")
	}
	view, err := s.deps.Safety.Release(c.UserContext(), sub)
	if err != nil {
		return p, err
	}
	p.Live, p.Changed, p.Comparison = evaluationView(view.Live), view.Changed, comparisonView(view)
	if view.Decision != nil {
		d := decisionView(view.Decision)
		p.Decision = &d
	}
	for _, d := range view.Decisions {
		p.Decisions = append(p.Decisions, decisionView(d))
	}
	me, err := s.accounts.ActiveClinician(c.UserContext(), clinicianOf(c))
	if err != nil {
		return p, err
	}
	p.MayDecide = s.deps.Safety.MayDecide(me)
	return p, nil
}
