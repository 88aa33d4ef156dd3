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
	in, err := s.svc.StartIntake(c.UserContext(), s.owner(c, true), bff.StartForm(form))
	if err == nil {
		return c.Redirect("/intakes/"+in.ID, http.StatusSeeOther)
	}
	errs := templates.FieldErrors{}
	var fe *bff.FormError
	if errors.As(err, &fe) {
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
	return render(c, statusOf(err), templates.StartPageView(page))
}
