package web

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/templates"
)

// decideSafetyRelease records the clinical safety officer's decision on a
// release (PRG to the release page). Anyone else is refused with 403 (and
// the refusal audited); a refused form comes back with the errors beside
// its fields and what was typed; evidence that changed since the page was
// read comes back as the page now, saying so.
func (s *Server) decideSafetyRelease(c *fiber.Ctx) error {
	f := bff.SafetyDecisionForm{
		Subject:    subjectOf(utils.CopyString(c.FormValue("release")), utils.CopyString(c.FormValue("voice"))),
		Verdict:    safety.Verdict(utils.CopyString(c.FormValue("verdict"))),
		Conditions: utils.CopyString(c.FormValue("conditions")),
		Reasoning:  utils.CopyString(c.FormValue("reasoning")),
		Hash:       utils.CopyString(c.FormValue("hash")),
	}
	me, err := s.accounts.ActiveClinician(c.UserContext(), clinicianOf(c))
	if err != nil {
		return err
	}
	_, err = s.deps.Safety.Decide(c.UserContext(), me, f)
	if err == nil {
		s.setFlash(c, "Decision recorded: "+f.Verdict.Label()+". The evidence it rests on is frozen.")
		return c.Redirect(safetyReleaseURL(f.Subject), http.StatusSeeOther)
	}
	var be *bff.Error
	if !errors.As(err, &be) || (be.Code != bff.EINVALID && be.Code != bff.ECONFLICT) {
		return err
	}
	p, perr := s.safetyReleasePage(c, f.Subject)
	if perr != nil {
		return perr
	}
	p.Verdict, p.Conditions, p.Reasoning = string(f.Verdict), f.Conditions, f.Reasoning
	p.Errors = templates.FieldErrors{}
	for k, v := range be.Fields {
		p.Errors[k] = v
	}
	if len(be.Fields) == 0 {
		p.Errors[""] = be.Message
	}
	return render(c, refusal(c, err), templates.SafetyReleasePageView(p))
}
