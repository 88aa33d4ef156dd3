package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/metrics"
)

// ops holds the app's operational state: metrics and what readiness knows
// about the upstream without spending the key's budget on probes.
type ops struct {
	reg        *metrics.Registry
	upLatency  *metrics.Histogram
	upErrors   *metrics.Counter
	gateWait   *metrics.Histogram
	lastAnswer atomic.Int64 // unix nanoseconds of the last upstream answer of any kind

	probeMu    sync.Mutex
	probedAt   time.Time
	probeErr   error
	probeEvery time.Duration
}

func newOps() *ops {
	reg := metrics.New()
	return &ops{
		reg: reg,
		upLatency: reg.Histogram("intake_web_upstream_request_seconds", "Upstream HTTP attempts by operation and status (whole streams for streaming turns: time to headers).",
			[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120, 240}, "op", "status"),
		upErrors: reg.Counter("intake_web_upstream_errors_total", "Upstream attempts that failed, by operation and error code (\"no_answer\" when none came).", "op", "code"),
		gateWait: reg.Histogram("intake_web_pacer_wait_seconds", "Time calls waited in the pacer for a request slot, by priority.",
			[]float64{0.01, 0.1, 1, 5, 10, 20, 30, 60, 120}, "priority"),
		probeEvery: 5 * time.Minute,
	}
}

// observe records one upstream attempt (intakeapi.Config.Observer).
func (o *ops) observe(ob intakeapi.Observation) {
	o.upLatency.Observe(ob.Elapsed.Seconds(), string(ob.Op), strconv.Itoa(ob.Status))
	switch {
	case ob.Status == 0:
		o.upErrors.Inc(string(ob.Op), "no_answer")
	case ob.Status >= 400:
		code := string(ob.Code)
		if code == "" {
			code = "http_" + strconv.Itoa(ob.Status)
		}
		o.upErrors.Inc(string(ob.Op), code)
	}
	if ob.Status != 0 && ob.Status < 500 {
		o.lastAnswer.Store(time.Now().UnixNano())
	}
}

// timedGate measures how long calls wait in the pacer.
type timedGate struct {
	intakeapi.Gate
	wait *metrics.Histogram
}

func (g timedGate) Wait(ctx context.Context, call intakeapi.Call) (func(intakeapi.Outcome), error) {
	start := time.Now()
	release, err := g.Gate.Wait(ctx, call)
	g.wait.Observe(time.Since(start).Seconds(), call.Priority.String())
	return release, err
}

func (s *Server) registerMetrics() {
	reg := s.ops.reg
	reg.CounterFunc("intake_web_turns_total", "Settled turns by outcome since start.", "outcome", func() map[string]float64 {
		out := map[string]float64{}
		for k, v := range s.svc.Outcomes() {
			out[string(k)] = float64(v)
		}
		return out
	})
	reg.CounterFunc("intake_web_reconciliations_total", "Turns settled by reading the handoff.", "", func() map[string]float64 {
		return map[string]float64{"": float64(s.svc.Reconciliations())}
	})
	reg.GaugeFunc("intake_web_pacer_queue_depth", "Calls waiting for a request slot.", func() float64 { return float64(s.pacer.Stats().Waiting) })
	reg.GaugeFunc("intake_web_pacer_turns_used_today", "Turns counted against today's quota.", func() float64 { return float64(s.pacer.Stats().TurnsUsed) })
	reg.GaugeFunc("intake_web_http_connections_open", "Open HTTP connections.", func() float64 {
		return float64(s.app.Server().GetOpenConnectionsCount())
	})
	reg.GaugeFunc("intake_web_http_connections_max", "The connection cap: beyond it connections get 503.", func() float64 { return float64(s.maxConns) })
	reg.CounterFunc("intake_web_accept_failures_total", "Accepting a connection failed (out of file descriptors and the like) and was retried.", "", func() map[string]float64 {
		return map[string]float64{"": float64(s.ln.failures.Load())}
	})
	reg.GaugeFunc("intake_web_browser_streams_open", "Open browser event streams (turns and worklists).", func() float64 {
		return float64(s.svc.Hub().Subscribers() + s.svc.Feed().Subscribers())
	})
}

// healthz: the process is up.
func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"ok": true})
}

// readyz: the database answers, and the upstream answered recently. The
// upstream is probed at most once per five minutes, and only when no real
// call has been answered since: every probe spends one of the key's six
// requests a minute.
func (s *Server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 3*time.Second)
	defer cancel()
	checks := fiber.Map{}
	ready := true
	if err := s.db.Ping(ctx); err != nil {
		ready = false
		checks["database"] = "unreachable"
		s.log.Error("readiness: database", "err", err)
	} else {
		checks["database"] = "ok"
	}
	// Saturated: near the connection cap (beyond it the server answers 503
	// before any handler), or out of file descriptors moments ago.
	open := s.app.Server().GetOpenConnectionsCount()
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
	switch err := s.upstreamReady(ctx); {
	case err == nil:
		checks["upstream"] = "ok"
	case ctx.Err() != nil:
		checks["upstream"] = "not probed: the key's request budget is busy"
	default:
		ready = false
		checks["upstream"] = "unavailable"
		s.log.Warn("readiness: upstream", "err", err)
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	return c.Status(status).JSON(fiber.Map{"ready": ready, "checks": checks})
}

func (s *Server) upstreamReady(ctx context.Context) error {
	o := s.ops
	if last := o.lastAnswer.Load(); last != 0 && time.Since(time.Unix(0, last)) < o.probeEvery {
		return nil
	}
	o.probeMu.Lock()
	defer o.probeMu.Unlock()
	if !o.probedAt.IsZero() && time.Since(o.probedAt) < o.probeEvery {
		return o.probeErr
	}
	_, _, err := s.client.Health(intakeapi.WithPriority(ctx, intakeapi.PriorityBackground))
	if ctx.Err() != nil {
		return ctx.Err() // waiting for a slot: try again next time
	}
	o.probedAt, o.probeErr = time.Now(), err
	return err
}

// metrics serves the Prometheus text format.
func (s *Server) metrics(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "text/plain; version=0.0.4; charset=utf-8")
	s.ops.reg.Expose(c.Response().BodyWriter())
	return nil
}
