package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/templates"
)

// showIntake is the conversation page of one of this browser's intakes.
func (s *Server) showIntake(c *fiber.Ctx) error {
	in, turns, err := s.patients.Intake(c.UserContext(), s.owner(c, false), param(c, "id"))
	if err != nil {
		return err
	}
	page := s.intakePage(s.layout(c, "Intake conversation"), in, turns, s.now())
	return render(c, http.StatusOK, templates.IntakePageView(page))
}
