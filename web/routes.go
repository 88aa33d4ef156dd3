package web

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"github.com/clinical-intake/intake-web/static"
)

// routes builds the Fiber app: one line per route, each handler in its own
// file named after the action.
func (s *Server) routes() *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "intake-web",
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		BodyLimit:             256 << 10, // a message (8,000 characters) and a history (4,000) with room to spare
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           2 * time.Minute,
		// No WriteTimeout: browser event streams run for minutes.
	})
	app.Use(s.recoverPanics, s.requestID, s.securityHeaders)
	app.Use("/static", filesystem.New(filesystem.Config{
		Root:   http.FS(static.FS),
		MaxAge: 3600,
	}))
	// Operations endpoints: no session, no CSRF.
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/metrics", s.metrics)
	app.Use(s.loadSession, s.csrf)

	app.Get("/", s.showStart)
	app.Post("/intakes", s.createIntake)
	app.Get("/intakes/:id", s.showIntake)
	app.Post("/intakes/:id/turns", s.createTurn)
	app.Get("/intakes/:id/turns/:n/events", s.turnEvents)

	app.Get("/clinician/signin", s.showSignIn)
	app.Post("/clinician/signin", s.signIn)
	clin := app.Group("/clinician", s.requireClinician)
	clin.Post("/signout", s.signOut)
	clin.Get("/", s.showWorklist)
	clin.Get("/worklist/rows", s.showWorklistRows)
	clin.Get("/events", s.worklistEvents)
	clin.Get("/audit", s.showAudit)
	clin.Get("/intakes/:id", s.showHandoff)
	clin.Get("/intakes/:id/handoff.json", s.downloadHandoff)
	clin.Post("/intakes/:id/refresh", s.refreshHandoff)
	clin.Post("/intakes/:id/review", s.reviewHandoff)

	app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
	return app
}
