package web

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/templates"
)

// replayReading starts, after a decision on a question's reading, a
// replay of the items of a run that asked it: a new run linked to that
// one, estimated, budgeted and audited like any run started, then shows
// the new run (PRG) with its estimate. A refusal comes back beside the
// question on the readings page, or on the run's page when offered there.
func (s *Server) replayReading(c *fiber.Ctx) error {
	release, question, run := utils.CopyString(c.FormValue("release")), utils.CopyString(c.FormValue("question")), utils.CopyString(c.FormValue("run"))
	at, _ := strconv.Atoi(c.FormValue("at"))
	r, est, err := s.deps.Readings.StartReplay(c.UserContext(), clinicianOf(c), run, release, question)
	_, msg, invalid := invalidField(err)
	if err != nil && !invalid {
		return err
	}
	if !invalid {
		s.setFlash(c, "Replay of run "+run+": "+estimateSentence(est))
		return c.Redirect(runPath(r.ID), http.StatusSeeOther)
	}
	if c.FormValue("back") == "run" && validRunID(run) {
		// Offered on the run's page: the refusal goes back there.
		s.setFlash(c, "No replay started: "+msg)
		return c.Redirect(runPath(run), http.StatusSeeOther)
	}
	p, err := s.readingsPage(c, release, max(at, 0))
	if err != nil {
		return err
	}
	found := false
	for i := range p.Questions {
		if q := &p.Questions[i]; q.Question == question {
			found, q.Errors = true, templates.FieldErrors{"": msg}
		}
	}
	if !found {
		p.Layout.Flash = msg
	}
	return render(c, http.StatusUnprocessableEntity, templates.ReadingsPageView(p))
}
