package web_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestHealthReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	if p := b.get("/healthz"); p.status != http.StatusOK {
		t.Fatalf("healthz: %d", p.status)
	}
	probes := a.sb.Service.Stats().Requests["health"]
	p := b.get("/readyz")
	if p.status != http.StatusOK || !strings.Contains(p.body, `"database":"ok"`) || !strings.Contains(p.body, `"upstream":"ok"`) {
		t.Fatalf("readyz: %d %s", p.status, p.body)
	}
	b.get("/readyz")
	if got := a.sb.Service.Stats().Requests["health"] - probes; got != 1 {
		t.Fatalf("two readiness checks probed the upstream %d times, want 1 (each probe spends the key's budget)", got)
	}
	intake := b.start()
	b.say(intake, "hello")
	m := b.get("/metrics")
	for _, want := range []string{
		`intake_web_turns_total{outcome="completed"} 1`,
		`intake_web_upstream_request_seconds_count{op="turn",status="200"} 1`,
		`intake_web_pacer_queue_depth 0`,
		`intake_web_browser_streams_open`,
		`intake_web_reconciliations_total 0`,
		`intake_web_pacer_wait_seconds_count{priority=`,
		`intake_web_http_connections_open`,
		`intake_web_accept_failures_total 0`,
		"go_goroutines ",
		"process_open_fds ",
	} {
		if !strings.Contains(m.body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(m.body, "Set-Cookie") || m.header.Get("Set-Cookie") != "" {
		t.Error("the metrics endpoint starts a session")
	}
}
