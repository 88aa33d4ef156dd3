package web

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"github.com/clinical-intake/intake-web/static"
)

// routes builds the Fiber app: one line per route, each handler in its own
// file named after the action.
func (s *Server) routes() *fiber.App {
	l := s.cfg.Limits
	app := fiber.New(fiber.Config{
		AppName:               "intake-web",
		DisableStartupMessage: true,
		ErrorHandler:          s.handleError,
		// The limits and why: docs/operations.md. Errors the server raises
		// itself (431, 413, 408, 400) reach handleError with no session.
		BodyLimit:      l.MaxBodyBytes,
		ReadBufferSize: l.MaxHeaderBytes, // fasthttp: the request line and headers must fit
		ReadTimeout:    l.ReadTimeout,
		// Event streams push the write deadline forward at every write
		// (streamConn), so this bounds a page but not a long stream.
		WriteTimeout: l.WriteTimeout,
		IdleTimeout:  l.IdleTimeout,
		Concurrency:  s.maxConns, // beyond it fasthttp answers 503 and closes
	})
	app.Use(s.recoverPanics, s.requestID, s.securityHeaders)
	app.Use("/static", staticFilesOnly, filesystem.New(filesystem.Config{
		Root:   http.FS(static.FS),
		MaxAge: 3600,
	}))
	// Operations endpoints: no session, no CSRF.
	app.Get("/healthz", s.healthz)
	app.Get("/readyz", s.readyz)
	app.Get("/metrics", adaptor.HTTPHandler(s.deps.MetricsHandler))
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
	if s.deps.Faults != nil { // the embedded sandbox with faults on
		clin.Get("/faults", s.showFaults)
		clin.Post("/faults", s.armFault)
	}

	app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
	return app
}

// staticFilesOnly answers 404 for anything under /static that is not a file
// (a directory, a missing name): the filesystem middleware would otherwise
// refuse directories with an error of its own.
func staticFilesOnly(c *fiber.Ctx) error {
	name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(c.Path(), "/static")), "/")
	if fi, err := fs.Stat(static.FS, name); err != nil || !fi.Mode().IsRegular() {
		return fiber.ErrNotFound
	}
	return c.Next()
}
