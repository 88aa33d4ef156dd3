package web

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/templates"
)

// importHazardLog saves the YAML pasted in the form as the next version of
// the hazard log, under the signed-in clinician's name (PRG to the
// safety page). A refused file comes back in the form as typed, the error
// naming its line and field. Only an administrator or the clinical safety
// officer may (safetycase.MayEditLog), as for a hazard's form.
func (s *Server) importHazardLog(c *fiber.Ctx) error {
	if ok, err := s.mayEditLog(c); err != nil {
		return err
	} else if !ok {
		return errMayNotEditLog
	}
	text, note := utils.CopyString(c.FormValue("file")), utils.CopyString(c.FormValue("note"))
	v, err := s.deps.Safety.ImportLog(c.UserContext(), clinicianOf(c), []byte(text), note)
	field, msg, invalid := invalidField(err)
	if err != nil && !invalid {
		return err
	}
	if !invalid {
		s.setFlash(c, "Saved as version "+strconv.Itoa(v.Version)+" of the hazard log.")
		return c.Redirect(safetyPath, http.StatusSeeOther)
	}
	p, perr := s.safetyPage(c)
	if perr != nil {
		return perr
	}
	if field != "note" {
		field = "file"
	}
	p.ImportText, p.ImportNote, p.Errors = text, note, templates.FieldErrors{field: msg}
	return render(c, http.StatusUnprocessableEntity, templates.SafetyPageView(p))
}
