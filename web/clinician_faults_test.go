package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

func withSandboxFaults(c *appwire.Config) { c.SandboxFaults = true }

// Without the embedded sandbox's faults there is no fault panel.
func TestFaultPanelOnlyWithSandboxFaults(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	if p := b.get("/clinician"); strings.Contains(p.body, "Sandbox faults") {
		t.Error("the worklist links a fault panel without sandbox faults")
	}
	if p := b.get("/clinician/faults"); p.status != http.StatusNotFound {
		t.Errorf("GET /clinician/faults without sandbox faults: %d", p.status)
	}
}

// A clinician arms a fault through the panel with the app's intake id; the
// sandbox's key never reaches the browser (startApp checks every response);
// before the intake's first message (no encounter at the sandbox yet) it is
// refused; after it, the next turn of the intake meets the fault; the arming is audited; a bad form comes back
// with an error summary linking each field.
func TestFaultPanelArmsAFault(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), withSandboxFaults)
	patient := a.browser()
	intake := patient.start()
	id := strings.TrimPrefix(intake, "/intakes/")

	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	p := b.get("/clinician/faults")
	if p.status != http.StatusOK {
		t.Fatalf("fault panel: %d", p.status)
	}
	for _, kind := range []string{"upstream_error", "unavailable", "internal_error", "rate_limited", "quota_exceeded",
		"stream_drop", "stream_error", "null_state", "slow_start"} {
		if !strings.Contains(p.body, `value="`+kind+`"`) {
			t.Errorf("the panel lacks the kind %s", kind)
		}
	}
	token := csrfMeta.FindStringSubmatch(p.body)[1]

	// Errors: no kind, a count out of range, an unknown intake.
	bad := b.post("/clinician/faults", url.Values{"_csrf": {token}, "count": {"0"}, "intake": {"enc_nope"}})
	if bad.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad form: %d", bad.status)
	}
	for _, want := range []string{`id="error-summary" role="alert" tabindex="-1"`, `href="#kind"`, `href="#count"`, `value="enc_nope"`} {
		if !strings.Contains(bad.body, want) {
			t.Errorf("the refused form lacks %q", want)
		}
	}
	for _, nobody := range []string{"iw_000000000000000000000000", "enc_00000000_0000000000000000"} {
		unknown := b.post("/clinician/faults", url.Values{"_csrf": {token}, "kind": {"upstream_error"}, "intake": {nobody}})
		if unknown.status != http.StatusUnprocessableEntity || !strings.Contains(unknown.body, `href="#intake"`) || !strings.Contains(unknown.body, "no intake with this id") {
			t.Errorf("an unknown intake %s: %d", nobody, unknown.status)
		}
	}
	// Before its first message the intake has no encounter at the sandbox:
	// refused with the way out, and nothing armed.
	early := b.post("/clinician/faults", url.Values{"_csrf": {token}, "kind": {"upstream_error"}, "intake": {id}, "count": {"1"}})
	if early.status != http.StatusUnprocessableEntity || !strings.Contains(early.body, "it starts with its first message") {
		t.Errorf("arming an intake before its first message: %d", early.status)
	}
	before := a.upstreamTurns()
	patient.say(intake, "hello")
	if n := a.upstreamTurns() - before; n != 1 || a.encounter(t, id) == "" {
		t.Fatalf("the first message: %d turn calls, encounter %q", n, a.encounter(t, id))
	}
	// Without the CSRF token: refused.
	if p := b.post("/clinician/faults", url.Values{"kind": {"upstream_error"}}); p.status != http.StatusForbidden {
		t.Errorf("arming without CSRF: %d", p.status)
	}

	ok := b.post("/clinician/faults", url.Values{"_csrf": {token}, "kind": {"upstream_error"}, "intake": {id}, "count": {"1"}})
	if ok.status != http.StatusSeeOther || !strings.HasPrefix(ok.header.Get("Location"), "/clinician/faults") {
		t.Fatalf("arming: %d %s", ok.status, ok.header.Get("Location"))
	}
	if p := b.get(ok.header.Get("Location")); !strings.Contains(p.body, "Fault armed: upstream_error for the next turn of "+id) {
		t.Error("the panel does not say the fault was armed")
	}
	before = a.upstreamTurns()
	patient.say(intake, "I have a sore throat")
	// The blocking turn met the 502 and was retried with its Idempotency-Key:
	// two calls for one turn show the fault happened.
	if n := a.upstreamTurns() - before; n != 2 {
		t.Errorf("the sandbox saw %d turn calls, want 2 (the armed 502, then the retry)", n)
	}
	if p := b.get("/clinician/audit"); !strings.Contains(p.body, "fault_armed") || !strings.Contains(p.body, "upstream_error × 1") {
		t.Error("the audit log lacks the arming")
	}
}
