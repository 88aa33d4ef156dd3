package web

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/templates"
)

// reviewReading records a reviewer's decision on one question's reading,
// under the signed-in clinician's name, then shows the page again at the
// same position (PRG), where the next unreviewed question now stands. A
// refused decision comes back beside its question, the note as typed.
func (s *Server) reviewReading(c *fiber.Ctx) error {
	f := bff.ReadingReviewForm{
		Release: utils.CopyString(c.FormValue("release")), Question: utils.CopyString(c.FormValue("question")),
		Decision: scenarios.ReviewDecision(utils.CopyString(c.FormValue("decision"))), Concept: utils.CopyString(c.FormValue("concept")),
		Inverse: c.FormValue("inverse") != "", Note: utils.CopyString(c.FormValue("note")),
	}
	at, _ := strconv.Atoi(c.FormValue("at"))
	at = max(at, 0)
	_, err := s.deps.Readings.ReviewReading(c.UserContext(), clinicianOf(c), f)
	field, msg, invalid := invalidField(err)
	if err != nil && !invalid {
		return err
	}
	if !invalid {
		s.setFlash(c, "Decision recorded. Later runs against release "+f.Release+" use it.")
		return c.Redirect(readingsURL(f.Release, at), http.StatusSeeOther)
	}
	p, err := s.readingsPage(c, f.Release, at)
	if err != nil {
		return err
	}
	found := false
	for i := range p.Questions {
		q := &p.Questions[i]
		if q.Question != f.Question {
			continue
		}
		found = true
		q.Note, q.Concept, q.Inverse = f.Note, f.Concept, f.Inverse
		switch field {
		case "decision", "concept", "note":
			q.Errors = templates.FieldErrors{q.Anchor + "-" + field: msg}
		default:
			q.Errors = templates.FieldErrors{"": msg}
		}
	}
	if !found {
		p.Layout.Flash = msg
	}
	return render(c, http.StatusUnprocessableEntity, templates.ReadingsPageView(p))
}
