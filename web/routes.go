package web

import (
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/compress"
	"github.com/gofiber/fiber/v2/utils"

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
		// (eventStream.write), so this bounds a page but not a long stream.
		WriteTimeout: l.WriteTimeout,
		IdleTimeout:  l.IdleTimeout,
		Concurrency:  s.maxConns, // beyond it fasthttp answers 503 and closes
	})
	// An event stream hands its connection to its own goroutine, and
	// fasthttp takes back the 16 KiB read buffer and the request context at
	// once (web/stream.go): about 10 KiB per open stream instead of 32.
	// The listener still counts the connection against the cap.
	app.Server().KeepHijackedConns = true
	app.Use(s.recoverPanics, s.requestID, s.securityHeaders)
	// Pages and assets are compressed (brotli or gzip, as the browser
	// accepts); event streams are not (each event must leave at once), nor
	// the operations endpoints (tiny, or read by machines).
	app.Use(compress.New(compress.Config{Level: compress.LevelDefault, Next: uncompressed}))
	app.Get("/static/*", serveStatic)
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
	if s.deps.SSO != nil {
		app.Get(ssoStartPath, s.startSSO)
		app.Get(ssoCallbackPath, s.ssoCallback)
	}
	app.Get(signInCodePath, s.showSignInCode) // the second factor, after the password
	app.Post(signInCodePath, s.signInCode)
	clin := app.Group("/clinician", s.requireClinician, s.requireRole) // roles: web/roles.go
	clin.Post("/signout", s.signOut)
	clin.Get("/second-factor", s.showSecondFactor)
	clin.Post("/second-factor", s.enrolSecondFactor)
	clin.Get("/sessions", s.showSessions)
	clin.Post("/sessions/end-others", s.endOtherSessions)
	clin.Post("/sessions/:id/end", s.endSession)
	clin.Get("/admin/sessions", s.showAdminSessions)
	clin.Post("/admin/sessions/:id/end", s.endAnySession)
	clin.Get("/", s.showWorklist)
	clin.Get("/worklist/row/:id", s.showWorklistRow)
	clin.Get("/events", s.worklistEvents)
	clin.Get("/audit", s.showAudit)
	clin.Get("/intakes/:id", s.showHandoff)
	clin.Get("/intakes/:id/handoff.json", s.downloadHandoff)
	clin.Get("/intakes/:id/handoff.fhir.json", s.downloadFHIR)
	clin.Post("/intakes/:id/refresh", s.refreshHandoff)
	clin.Post("/intakes/:id/review", s.reviewHandoff)
	if s.deps.Faults != nil { // the embedded sandbox with faults on
		clin.Get("/faults", s.showFaults)
		clin.Post("/faults", s.armFault)
	}
	if s.deps.Scenarios != nil {
		clin.Get("/scenarios", s.showScenarios)
		clin.Get("/scenarios/new", s.showScenarioEstimate)
		clin.Get("/scenarios/format", s.showSuiteFormat)
		clin.Post("/scenarios/runs", s.startScenarioRun)
		clin.Get("/scenarios/runs/:id", s.showScenarioRun)
		clin.Get("/scenarios/runs/:id/progress", s.showScenarioProgress)
		clin.Get("/scenarios/runs/:id/report.json", s.downloadScenarioJSON)
		clin.Get("/scenarios/runs/:id/report.csv", s.downloadScenarioCSV)
		clin.Post("/scenarios/runs/:id/cancel", s.cancelScenarioRun)
		clin.Get("/scenarios/runs/:id/items/:seq", s.showScenarioItem)
		clin.Get("/scenarios/runs/:id/flips", s.showScenarioSide)
		clin.Get("/scenarios/compare", s.showScenarioCompare)
		clin.Post("/scenarios/compare/adjudicate", s.adjudicateScenario)
	}
	if s.deps.Readings != nil {
		clin.Get("/scenarios/readings", s.showReadings)
		clin.Post("/scenarios/readings/review", s.reviewReading)
		clin.Post("/scenarios/readings/replay", s.replayReading)
	}
	if s.deps.Safety != nil {
		clin.Get("/safety", s.showSafety)
		clin.Get("/safety/log.yaml", s.downloadHazardLog)
		clin.Post("/safety/log", s.importHazardLog)
		clin.Get("/safety/hazard", s.showHazardForm)
		clin.Post("/safety/hazards", s.saveHazard)
		clin.Get("/safety/release", s.showSafetyRelease)
		clin.Post("/safety/decisions", s.decideSafetyRelease)
		clin.Get("/safety/report", s.showSafetyReport)
	}

	app.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
	return app
}

// uncompressed lists the responses sent as they are: event streams and the
// operations endpoints.
func uncompressed(c *fiber.Ctx) bool {
	p := c.Path()
	return strings.HasSuffix(p, "/events") || p == "/metrics" || p == "/healthz" || p == "/readyz"
}

// serveStatic serves the embedded assets. A content-hashed name
// (/static/css/app.3f2a9c1d0b.css, what pages link: static.URL) is cached
// for a year as immutable; the plain name (/static/css/app.css, linked by
// pages rendered before a deploy) for five minutes. Both carry the hash as
// their ETag. Anything else under /static is 404.
func serveStatic(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodGet && c.Method() != fiber.MethodHead {
		return fiber.ErrMethodNotAllowed
	}
	a, hashed, ok := static.Lookup(strings.TrimPrefix(c.Path(), "/static/"))
	if !ok {
		return fiber.ErrNotFound
	}
	if hashed {
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	}
	etag := `"` + a.Hash + `"`
	c.Set(fiber.HeaderETag, etag)
	if match := c.Get(fiber.HeaderIfNoneMatch); match != "" && strings.Contains(match, etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Type(path.Ext(a.Name))
	return c.Send(a.Data) // the embedded bytes are never changed: Send may keep them
}

// param is the path parameter name, copied: fiber reuses the bytes of a
// request's values once the handler returns, and ids outlive it (a turn's
// stream, an audit entry, a log line).
func param(c *fiber.Ctx, name string) string {
	return utils.CopyString(c.Params(name))
}
