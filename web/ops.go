package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// registerMetrics registers the web layer's own collectors: connections and
// accept failures, read at scrape time.
func (s *Server) registerMetrics(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "intake_web_http_connections_open", Help: "Open HTTP connections."},
			func() float64 {
				if s.ln == nil {
					return 0
				}
				return float64(s.ln.Open())
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "intake_web_http_connections_max", Help: "The connection cap: beyond it connections get 503."},
			func() float64 { return float64(s.maxConns) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "intake_web_accept_failures_total", Help: "Accepting a connection failed (out of file descriptors and the like) and was retried."},
			func() float64 {
				if s.ln == nil {
					return 0
				}
				return float64(s.ln.failures.Load())
			}),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	return nil
}

// healthz: the process is up.
func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"ok": true})
}

// readyz: the app is not saturated, and the checks of the layers behind it
// (the database answers, the upstream answered recently) pass.
func (s *Server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 3*time.Second)
	defer cancel()
	checks, ready := s.deps.Ready(ctx)
	if !ready {
		s.log.Warn("not ready", "checks", checks)
	}
	// Saturated: near the connection cap (beyond it the server answers 503
	// before any handler), or out of file descriptors moments ago.
	open := s.ln.Open()
	switch {
	case s.ln.failedWithin(5 * time.Second):
		ready = false
		checks["connections"] = "saturated: accepting connections failed in the last 5 s (out of file descriptors)"
	case int(open) >= s.maxConns*9/10:
		ready = false
		checks["connections"] = fmt.Sprintf("saturated: %d open of at most %d", open, s.maxConns)
	default:
		checks["connections"] = fmt.Sprintf("ok: %d open of at most %d", open, s.maxConns)
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	return c.Status(status).JSON(fiber.Map{"ready": ready, "checks": checks})
}
