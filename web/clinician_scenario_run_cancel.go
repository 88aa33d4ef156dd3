package web

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
)

// cancelScenarioRun stops a run (its played items stay), then shows it.
func (s *Server) cancelScenarioRun(c *fiber.Ctx) error {
	id, err := runParam(c)
	if err != nil {
		return err
	}
	err = s.deps.Scenarios.CancelRun(c.UserContext(), clinicianOf(c), id)
	switch {
	case err == nil:
		s.setFlash(c, "Run cancelled. The items already played stay in its results.")
	case bff.ErrorCode(err) == bff.ECONFLICT:
		s.setFlash(c, "The run had already ended: there was nothing to cancel.")
	default:
		return err
	}
	return c.Redirect(runPath(id), http.StatusSeeOther)
}
