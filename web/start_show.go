package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// showStart is the start page: what this is, the form, earlier intakes.
func (s *Server) showStart(c *fiber.Ctx) error {
	page, err := s.startPage(c, templates.StartForm{SubmissionID: newSubmissionID()}, nil)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.StartPageView(page))
}

func (s *Server) startPage(c *fiber.Ctx, form templates.StartForm, errs templates.FieldErrors) (templates.StartPage, error) {
	earlier, err := s.patients.IntakesOf(c.UserContext(), s.owner(c, false))
	if err != nil {
		return templates.StartPage{}, err
	}
	return templates.StartPage{
		Layout:  s.layout(c, "Start a synthetic intake"),
		Form:    form,
		Errors:  errs,
		Earlier: intakeLinks(earlier),
		Limits:  templates.StartLimits{AgeMin: 0, AgeMax: bff.MaxAge, HistoryMax: bff.MaxHistoryChars},
	}, nil
}
