package web

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/templates"
)

// showSafety is the safety case's home: the hazard log in force, the
// releases with finished runs, the log's versions and its import form.
func (s *Server) showSafety(c *fiber.Ctx) error {
	p, err := s.safetyPage(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.SafetyPageView(p))
}

func (s *Server) safetyPage(c *fiber.Ctx) (templates.SafetyPage, error) {
	ctx := c.UserContext()
	p := templates.SafetyPage{Layout: s.clinicianLayout(c, "Clinical safety case"), Matrix: riskMatrixView(),
		ExportURL: safetyPath + "/log.yaml", ImportAction: safetyPath + "/log"}
	v, err := s.deps.Safety.HazardLog(ctx, 0)
	if err != nil {
		return p, err
	}
	p.LogVersion, p.LogBy, p.LogAt, p.LogNote, p.System = v.Version, v.By, dateTime(v.At), v.Note, v.Log.System
	if p.MayEdit, err = s.mayEditLog(c); err != nil {
		return p, err
	}
	p.NewHazardURL = hazardFormURL("")
	for _, h := range v.Log.Hazards {
		row := hazardRow(h)
		if p.MayEdit {
			row.EditURL = hazardFormURL(h.ID)
		}
		p.Hazards = append(p.Hazards, row)
	}
	versions, err := s.deps.Safety.HazardLogVersions(ctx)
	if err != nil {
		return p, err
	}
	for _, x := range versions {
		p.Versions = append(p.Versions, templates.SafetyVersionRow{Version: x.Version, By: x.By, At: dateTime(x.At), Note: x.Note,
			ExportURL: safetyPath + "/log.yaml?version=" + strconv.Itoa(x.Version)})
	}
	rels, err := s.deps.Safety.Releases(ctx)
	if err != nil {
		return p, err
	}
	for _, r := range rels {
		row := templates.SafetyReleaseRow{Subject: r.Subject.String(), URL: safetyReleaseURL(r.Subject), Runs: r.Runs, LastRun: dateTime(r.LastRun)}
		if d := r.Decision; d != nil {
			row.Decision = d.Verdict.Label() + " by " + d.By + " on " + d.At.UTC().Format("2006-01-02")
		}
		p.Releases = append(p.Releases, row)
	}
	return p, nil
}
