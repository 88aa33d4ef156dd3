package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// reopen stops a's app and starts another on the same configuration and
// database file, as a restart does.
func (a *app) reopen(cfg appwire.Config) *app {
	a.t.Helper()
	a.web.Close()
	srv, err := appwire.Open(context.Background(), cfg)
	if err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(srv.Close)
	return &app{t: a.t, stack: a.stack, web: srv, sb: a.sb}
}

// A restart keeps the sign-in limits and today's intake count: both are in
// the database now, not in the process (issue #10).
func TestRestartKeepsLimits(t *testing.T) {
	t.Parallel()
	var cfg appwire.Config
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) {
		c.IntakesPerDay = 2
		cfg = *c
	})
	doc := a.browser()
	for i := range 5 {
		if p := doc.signIn("dr.ada", "not the password"); p.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, p.status)
		}
	}
	patient := a.browser()
	for range 2 { // an intake counts when its first message creates it upstream
		if p := patient.say(patient.start(), "hello"); p.status != http.StatusOK {
			t.Fatalf("first message: %d", p.status)
		}
	}

	a = a.reopen(cfg)
	doc = a.browser()
	if p := doc.signIn("dr.ada", clinPassword); p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many failed sign-ins") {
		t.Fatalf("after a restart the locked account's right password: %d", p.status)
	}
	patient = a.browser()
	form := url.Values{"_csrf": {patient.csrf()}, "synthetic": {"on"}, "submission_id": {"s-" + time.Now().Format("150405.000000000")}}
	p := patient.post("/intakes", form)
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "intakes") || a.upstreamCreate() != 2 || len(a.stack.Intakes(t)) != 2 {
		t.Fatalf("a third intake of 2 a day after a restart: %d, upstream creations %d, %d intakes recorded", p.status, a.upstreamCreate(), len(a.stack.Intakes(t)))
	}
}

// A 200 KB username is refused on the form with the rule, not echoed back,
// and leaves one short audit line.
func TestOverlongSignInFields(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	huge := strings.Repeat("x", 200<<10)
	for range 3 {
		p := b.signIn(huge, "whatever")
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "3 to 32") || !strings.Contains(p.body, `role="alert"`) || len(p.body) > 64<<10 {
			t.Fatalf("a 200 KB username: %d, %d bytes", p.status, len(p.body))
		}
	}
	if p := b.signIn("dr.ada", strings.Repeat("p", 300)); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "72 bytes") {
		t.Fatalf("a 300-byte password: %d", p.status)
	}
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("then the right password: %d", p.status)
	}
	audit := b.get("/clinician/audit")
	if audit.status != http.StatusOK || len(audit.body) > 64<<10 || !strings.Contains(audit.body, strings.Repeat("x", 32)+"…") {
		t.Fatalf("audit page: %d, %d bytes", audit.status, len(audit.body))
	}
}
