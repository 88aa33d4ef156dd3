package web

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// createIntake handles the start form: on success it redirects to the new
// intake (post-redirect-get); on any error it shows the form again with what
// was typed and the error next to its field.
func (s *Server) createIntake(c *fiber.Ctx) error {
	form := templates.StartForm{
		Age:          utils.CopyString(c.FormValue("age")),
		Sex:          utils.CopyString(c.FormValue("sex")),
		History:      utils.CopyString(c.FormValue("history")),
		Synthetic:    c.FormValue("synthetic") != "",
		SubmissionID: utils.CopyString(c.FormValue("submission_id")),
	}
	owner := s.owner(c, true)
	refund, err := s.takeIntakeSlot(c, owner)
	if err == nil {
		var in *bff.Intake
		if in, err = s.patients.StartIntake(c.UserContext(), owner, bff.StartForm(form)); err == nil {
			return c.Redirect("/intakes/"+in.ID, http.StatusSeeOther)
		}
		refund()
	}
	err = s.unsaved(err)
	errs := templates.FieldErrors{}
	var fe *bff.Error
	if errors.As(err, &fe) && len(fe.Fields) > 0 {
		for k, v := range fe.Fields {
			errs[k] = v
		}
	} else if bff.ErrorCode(err) == bff.EINTERNAL {
		return err
	} else {
		errs[""] = bff.ErrorMessage(err)
	}
	page, perr := s.startPage(c, form, errs)
	if perr != nil {
		return perr
	}
	return render(c, refusal(c, err), templates.StartPageView(page))
}

// takeIntakeSlot spends one intake of the session's hourly cap and one of
// the client address's (a script that drops its cookies is a new session
// each time). Each intake spends the key's shared daily budget, so one
// browser must not spend it for everyone.
func (s *Server) takeIntakeSlot(c *fiber.Ctx, owner string) (refund func(), err error) {
	now := s.now()
	l := s.cfg.Limits
	r1, wait := s.caps.intakes.take(owner, now)
	if wait > 0 {
		return nil, bff.Errorf(bff.ERATELIMIT,
			"This browser has started %d intakes within the hour, the most this app allows, as every intake spends the service's daily budget shared by everyone. You can start another in %s.",
			l.IntakesPerHour, waitWords(wait))
	}
	r2, wait := s.caps.addrIntakes.take(s.clientAddress(c), now)
	if wait > 0 {
		r1()
		return nil, bff.Errorf(bff.ERATELIMIT,
			"%d intakes were started from your network address within the hour, the most this app allows, as every intake spends the service's daily budget shared by everyone. You can start another in %s.",
			l.IntakesPerHourPerAddress, waitWords(wait))
	}
	return func() { r1(); r2() }, nil
}
