package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
)

// upstreamMetrics observe the client's attempts and the pacer's waits; they
// also remember when the upstream last answered, so readiness spares the
// key's budget.
type upstreamMetrics struct {
	latency    *prometheus.HistogramVec
	errors     *prometheus.CounterVec
	gateWait   *prometheus.HistogramVec
	lastAnswer atomic.Int64 // unix nanoseconds of the last upstream answer of any kind
}

func newUpstreamMetrics(reg prometheus.Registerer) *upstreamMetrics {
	m := &upstreamMetrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "intake_web_upstream_request_seconds",
			Help:    "Upstream HTTP attempts by operation and status (whole streams for streaming turns: time to headers).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120, 240},
		}, []string{"op", "status"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "intake_web_upstream_errors_total",
			Help: "Upstream attempts that failed, by operation and error code (\"no_answer\" when none came).",
		}, []string{"op", "code"}),
		gateWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "intake_web_pacer_wait_seconds",
			Help:    "Time calls waited in the pacer for a request slot, by priority.",
			Buckets: []float64{0.01, 0.1, 1, 5, 10, 20, 30, 60, 120},
		}, []string{"priority"}),
	}
	reg.MustRegister(m.latency, m.errors, m.gateWait,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe records one upstream attempt (intakeapi.Config.Observer).
func (m *upstreamMetrics) observe(ob intakeapi.Observation) {
	m.latency.WithLabelValues(string(ob.Op), strconv.Itoa(ob.Status)).Observe(ob.Elapsed.Seconds())
	switch {
	case ob.Status == 0:
		m.errors.WithLabelValues(string(ob.Op), "no_answer").Inc()
	case ob.Status >= 400:
		code := string(ob.Code)
		if code == "" {
			code = "http_" + strconv.Itoa(ob.Status)
		}
		m.errors.WithLabelValues(string(ob.Op), code).Inc()
	}
	if ob.Status != 0 && ob.Status < 500 {
		m.lastAnswer.Store(time.Now().UnixNano())
	}
}

// answeredWithin reports whether the upstream answered in the last d.
func (m *upstreamMetrics) answeredWithin(d time.Duration) bool {
	last := m.lastAnswer.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < d
}

// timedGate measures how long calls wait in the pacer.
type timedGate struct {
	intakeapi.Gate
	wait *prometheus.HistogramVec
}

func (g timedGate) Wait(ctx context.Context, call intakeapi.Call) (func(intakeapi.Outcome), error) {
	start := time.Now()
	release, err := g.Gate.Wait(ctx, call)
	g.wait.WithLabelValues(call.Priority.String()).Observe(time.Since(start).Seconds())
	return release, err
}

// Await keeps a caller's place without a goroutine when the pacer can
// (intakeapi.AsyncGate), timed the same.
func (g timedGate) Await(ctx context.Context, call intakeapi.Call, granted func(func(intakeapi.Outcome), error)) {
	start, prio := time.Now(), call.Priority // not call: a waiter keeps what this captures
	intakeapi.Await(g.Gate, ctx, call, func(release func(intakeapi.Outcome), err error) {
		g.wait.WithLabelValues(prio.String()).Observe(time.Since(start).Seconds())
		granted(release, err)
	})
}

// registerServiceMetrics exposes the core's counters and the pacer's state,
// read at scrape time.
func registerServiceMetrics(reg prometheus.Registerer, runner *intakes.Runner, budget func(context.Context) (waiting, turnsUsed int, err error), streams func() int) {
	reg.MustRegister(
		outcomeCollector{runner: runner, desc: prometheus.NewDesc("intake_web_turns_total", "Settled turns by outcome since start.", []string{"outcome"}, nil)},
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "intake_web_reconciliations_total", Help: "Turns settled by reading the handoff."},
			func() float64 { return float64(runner.Reconciliations()) }),
		budgetCollector{read: budget,
			waiting: prometheus.NewDesc("intake_web_pacer_queue_depth", "Calls waiting for a request slot.", nil, nil),
			used:    prometheus.NewDesc("intake_web_pacer_turns_used_today", "Turns counted against today's quota.", nil, nil)},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "intake_web_browser_streams_open", Help: "Open browser event streams (turns and worklists)."},
			func() float64 { return float64(streams()) }),
	)
}

// outcomeCollector reads the runner's settled-turn counts at scrape time:
// the counts live in the runner, which knows nothing of Prometheus.
type outcomeCollector struct {
	runner *intakes.Runner
	desc   *prometheus.Desc
}

func (c outcomeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c outcomeCollector) Collect(ch chan<- prometheus.Metric) {
	for outcome, n := range c.runner.Outcomes() {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), string(outcome))
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// budgetCollector reads the key's budget once a scrape for both of its
// gauges (with PostgreSQL, a read is a query).
type budgetCollector struct {
	read          func(context.Context) (waiting, turnsUsed int, err error)
	waiting, used *prometheus.Desc
}

func (c budgetCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.waiting; ch <- c.used }

func (c budgetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	w, u := math.NaN(), math.NaN() // the database did not answer: unknown, not zero
	if waiting, used, err := c.read(ctx); err == nil {
		w, u = float64(waiting), float64(used)
	}
	ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, w)
	ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, u)
}
