package metrics

import (
	"strings"
	"testing"
)

func TestExpositionFormat(t *testing.T) {
	r := New()
	c := r.Counter("app_turns_total", "Turns by outcome.", "outcome")
	c.Inc("completed")
	c.Inc("completed")
	c.Inc(`fa"il`)
	r.GaugeFunc("app_streams_open", "Open streams.", func() float64 { return 3 })
	h := r.Histogram("app_latency_seconds", "Latency.", []float64{0.1, 1}, "op")
	h.Observe(0.05, "turn")
	h.Observe(0.5, "turn")
	h.Observe(5, "turn")
	var b strings.Builder
	r.Expose(&b)
	want := `# HELP app_latency_seconds Latency.
# TYPE app_latency_seconds histogram
app_latency_seconds_bucket{op="turn",le="0.1"} 1
app_latency_seconds_bucket{op="turn",le="1"} 2
app_latency_seconds_bucket{op="turn",le="+Inf"} 3
app_latency_seconds_sum{op="turn"} 5.55
app_latency_seconds_count{op="turn"} 3
# HELP app_streams_open Open streams.
# TYPE app_streams_open gauge
app_streams_open 3
# HELP app_turns_total Turns by outcome.
# TYPE app_turns_total counter
app_turns_total{outcome="completed"} 2
app_turns_total{outcome="fa\"il"} 1
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestCounterFunc(t *testing.T) {
	r := New()
	r.CounterFunc("app_reconciliations_total", "Reconciliations.", "", func() map[string]float64 { return map[string]float64{"": 4} })
	r.CounterFunc("app_outcomes_total", "Outcomes.", "outcome", func() map[string]float64 { return map[string]float64{"failed": 1, "completed": 7} })
	var b strings.Builder
	r.Expose(&b)
	for _, want := range []string{"app_reconciliations_total 4\n", `app_outcomes_total{outcome="completed"} 7`, `app_outcomes_total{outcome="failed"} 1`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
