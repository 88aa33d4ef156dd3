package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/templates"
)

// showScenarioProgress is the progress region alone, for scenarios.js.
func (s *Server) showScenarioProgress(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	pr, err := s.deps.Scenarios.Progress(c.UserContext(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.ScenarioProgressView(progressView(pr.Run, pr.Playing)))
}
