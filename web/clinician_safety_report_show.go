package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/templates"
)

// showSafetyReport is a release's clinical safety case report
// (?release=&voice=), printable: the decision in force with the evidence
// it froze, or a draft on the evidence now.
func (s *Server) showSafetyReport(c *fiber.Ctx) error {
	sub := subjectOf(utils.CopyString(c.Query("release")), utils.CopyString(c.Query("voice")))
	if sub.Release == "" {
		return bff.Errorf(bff.ENOTFOUND, "Name a release.")
	}
	r, err := s.deps.Safety.Report(c.UserContext(), sub)
	if err != nil {
		return err
	}
	l := s.clinicianLayout(c, "Clinical safety case report: "+sub.String())
	return render(c, http.StatusOK, templates.SafetyReportPageView(SafetyReportView(l, r, safetyReleaseURL(sub))))
}

// SafetyReportView is the report page's view of r: what the page and the
// command line's PDF (cmd/intake-web, through the same template) show.
func SafetyReportView(l templates.Layout, r *bff.SafetyReport, back string) templates.SafetyReportPage {
	p := templates.SafetyReportPage{Layout: l, Subject: r.Subject.String(), System: r.Evaluation.System, Draft: r.Draft,
		Generated: dateTime(r.Generated), LogVersion: r.Evaluation.LogVersion, Matrix: riskMatrixView(),
		Eval: evaluationView(r.Evaluation), BackURL: back}
	if r.Log != nil {
		p.LogBy, p.LogAt = r.Log.By, dateTime(r.Log.At)
	}
	if r.Decision != nil {
		d := decisionView(r.Decision)
		p.Decision = &d
	}
	for _, h := range p.Eval.Hazards {
		if h.Status == string(safety.StatusOpen) || h.State == string(safety.Unmet) || h.State == string(safety.NoEvidence) {
			p.OpenRisks = append(p.OpenRisks, h)
		}
	}
	return p
}
