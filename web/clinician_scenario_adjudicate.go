package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/templates"
)

// adjudicateScenario records a clinician's verdict on a vignette of a
// comparison, under the signed-in clinician's name, then shows the
// comparison again (PRG); a refused verdict comes back on the comparison
// beside its change, with the note as typed.
func (s *Server) adjudicateScenario(c *fiber.Ctx) error {
	base, head, err := compareIDs(utils.CopyString(c.FormValue("base")), utils.CopyString(c.FormValue("head")))
	if err != nil {
		return err
	}
	vignette := utils.CopyString(c.FormValue("vignette"))
	verdict := utils.CopyString(c.FormValue("verdict"))
	note := utils.CopyString(c.FormValue("note"))
	_, err = s.deps.Scenarios.Adjudicate(c.UserContext(), clinicianOf(c), base, head, vignette, scenarios.Verdict(verdict), note)
	field, msg, invalid := invalidField(err)
	if err != nil && !invalid {
		return err
	}
	if !invalid {
		s.setFlash(c, "Verdict recorded. It applies to this vignette in every later comparison.")
		return c.Redirect(comparePath(base, head)+"#"+changeKey(vignette), http.StatusSeeOther)
	}
	p, err := s.comparePage(c, base, head)
	if err != nil {
		return err
	}
	key := changeKey(vignette)
	errs := templates.FieldErrors{}
	switch field {
	case "verdict", "note":
		errs[key+"-"+field] = msg
	default:
		errs[""] = msg
	}
	found := false
	for _, list := range [][]templates.ScenarioChange{p.Regressions, p.SetAside, p.Others, p.Improvements} {
		for i := range list {
			if list[i].VignetteID == vignette {
				list[i].Verdict, list[i].Note, list[i].Errors, found = verdict, note, errs, true
			}
		}
	}
	if !found { // not a change of this comparison: say so at the top
		p.Layout.Flash = msg
	}
	return render(c, http.StatusUnprocessableEntity, templates.ScenarioComparePageView(p))
}
