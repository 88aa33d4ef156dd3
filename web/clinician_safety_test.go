package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

const (
	safetyRelease = "sandbox-2026.08"
	plainVoice    = "plain-short-en/1"
	chattyVoice   = "conversational-en/1"
)

// withSafetyRuns records, before the app opens, two finished runs of one
// release in two voices: every emergency escalated in the plain voice,
// three of five under-triaged in the conversational one.
func withSafetyRuns(t *testing.T) func(*appwire.Config) {
	return func(c *appwire.Config) {
		db, err := sqlite.Open(context.Background(), c.DatabasePath, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		now := time.Now().UTC()
		finishRun(t, db, "sr_plain", plainVoice, now.Add(-2*time.Hour), 0)
		finishRun(t, db, "sr_chatty", chattyVoice, now.Add(-time.Hour), 3)
	}
}

// finishRun stores a finished run of five emergency vignettes in voice,
// the first misses of them ending routine.
func finishRun(t *testing.T, db *sqlite.DB, id, voice string, at time.Time, misses int) {
	t.Helper()
	var results []scenarios.Result
	for i := range 5 {
		res := scenarios.Result{VignetteID: "emergency-" + string(rune('a'+i)), Title: "An emergency", Repeat: 1, Terminal: true,
			Gold: scenarios.Gold{Class: scenarios.Emergency}, Final: scenarios.Emergency, Disposition: "urgent_escalation", Urgent: true,
			Provenance: scenarios.Provenance{Release: safetyRelease, VoiceProfile: voice}}
		if i < misses {
			res.Final, res.Urgent, res.Disposition = scenarios.Routine, false, "clinician_review"
		}
		results = append(results, res)
	}
	storetest.MustFinishRun(t, db, &bff.ScenarioRun{ID: id, Suite: &scenarios.Suite{Name: "small"}, SuiteName: "small", Repeats: 1,
		Target: "sandbox", StartedBy: "dr.ada", FinishedAt: at}, results)
}

var hiddenHash = regexp.MustCompile(`name="hash" value="([^"]+)"`)

func chattyURL() string {
	return "/clinician/safety/release?" + url.Values{"release": {safetyRelease}, "voice": {chattyVoice}}.Encode()
}

// A reviewer sees the evidence but cannot record a decision: no form, and
// a forged post is refused with 403 and audited, nothing recorded. The
// officer rejects the release whose control is unmet, with a reason; a
// decision without one comes back with the field named and the typed
// conditions kept; the report then carries the decision and the failing
// items.
func TestSafetyCaseDecision(t *testing.T) {
	// dr.rev holds every role but the officer's; dr.cso only the officer's.
	a := startApp(t, withClinicianRoles(t, "dr.rev", bff.RoleReviewer, bff.RoleScenarioRunner, bff.RoleAdministrator),
		withClinicianRoles(t, "dr.cso", bff.RoleSafetyOfficer), withSafetyRuns(t))
	rev := a.browser()
	if p := rev.signIn("dr.rev", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", p.status)
	}
	home := rev.get("/clinician/safety")
	wantAll(t, "the safety case", ok200(t, home).body, "Hazard log, version 1", "An emergency is not escalated",
		html.EscapeString(safetyRelease+", voice "+chattyVoice), "no decision yet", "catastrophic × medium")
	p := rev.get(chattyURL())
	wantAll(t, "the release page", ok200(t, p).body, "Emergency vignettes escalated", "not met", "2 of 5 correct (40%)",
		"/clinician/scenarios/runs/sr_chatty/items/0", "under-triaged: routine where the gold class is emergency",
		"only an account with the <strong>clinical safety officer</strong> role records its decision",
		"intake-web clinician grant USERNAME safety_officer", "Against release")
	if hiddenHash.MatchString(p.body) {
		t.Fatal("a reviewer is shown the decision form")
	}
	token := csrfMeta.FindStringSubmatch(p.body)[1]
	forged := url.Values{"_csrf": {token}, "release": {safetyRelease}, "voice": {chattyVoice}, "verdict": {"approve"}, "reasoning": {"looks fine"}}
	if r := rev.post("/clinician/safety/decisions", forged); r.status != http.StatusForbidden {
		t.Fatalf("a reviewer's decision: %d", r.status)
	}

	cso := a.browser()
	if r := cso.signIn("dr.cso", clinPassword); r.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", r.status)
	}
	p = cso.get(chattyURL())
	m := hiddenHash.FindStringSubmatch(ok200(t, p).body)
	if m == nil {
		t.Fatalf("the officer has no decision form: %.3000s", p.body)
	}
	token = csrfMeta.FindStringSubmatch(p.body)[1]
	form := url.Values{"_csrf": {token}, "release": {safetyRelease}, "voice": {chattyVoice}, "hash": {m[1]}, "verdict": {"reject"},
		"conditions": {"typed conditions"}, "reasoning": {"  "}}
	r := cso.post("/clinician/safety/decisions", form)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a decision without reasoning: %d", r.status)
	}
	wantAll(t, "the refused decision", r.body, "Give your reasoning", "typed conditions", `value="reject" id="verdict-reject" checked`)
	form.Set("reasoning", "C1.1 not met: three emergencies sent to routine review in the conversational voice.")
	r = cso.post("/clinician/safety/decisions", form)
	if r.status != http.StatusSeeOther {
		t.Fatalf("the officer's decision: %d %.500s", r.status, r.body)
	}
	p = cso.get(r.header.Get("Location"))
	wantAll(t, "the release after the decision", ok200(t, p).body, "Decision in force", "rejected", "dr.cso, clinical safety officer", m[1])
	report := cso.get("/clinician/safety/report?" + url.Values{"release": {safetyRelease}, "voice": {chattyVoice}}.Encode())
	wantAll(t, "the report", ok200(t, report).body, "Clinical safety case report", "1. Introduction", "5. Open risks",
		"6. Clinical safety statement and signature", "rejected", "C1.1", "not met", "/clinician/scenarios/runs/sr_chatty/items/2", m[1])
	if strings.Contains(report.body, "Draft:") {
		t.Fatal("a signed report says it is a draft")
	}
	audit := rev.get("/clinician/audit") // the officer alone does not open the audit log
	wantAll(t, "the audit log", audit.body, "safety_decision_refused", "safety_decision", "dr.rev")
}

// A hazard log pasted with a fault comes back as typed, the message naming
// its line and field; a good one becomes version 2.
func TestSafetyLogImport(t *testing.T) {
	a := startApp(t, withClinicianRoles(t, "dr.cso", bff.RoleSafetyOfficer), withSafetyRuns(t))
	b := a.browser()
	if r := b.signIn("dr.cso", clinPassword); r.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", r.status)
	}
	file := b.get("/clinician/safety/log.yaml")
	if file.status != http.StatusOK || !strings.Contains(file.body, "id: H1") {
		t.Fatalf("export: %d %.300s", file.status, file.body)
	}
	token := csrfMeta.FindStringSubmatch(b.get("/clinician/safety").body)[1]
	bad := strings.Replace(file.body, "min: 0.95", "min: 95", 1)
	r := b.post("/clinician/safety/log", url.Values{"_csrf": {token}, "file": {bad}, "note": {"raise the bar"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad log: %d", r.status)
	}
	wantAll(t, "the refused log", r.body, "evidence[0].min", "line ", "raise the bar", html.EscapeString("min: 95"))
	good := strings.Replace(file.body, "min: 0.95", "min: 0.9", 1)
	r = b.post("/clinician/safety/log", url.Values{"_csrf": {token}, "file": {good}, "note": {"lower the bar"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("a good log: %d %.500s", r.status, r.body)
	}
	wantAll(t, "after the import", b.get("/clinician/safety").body, "Hazard log, version 2", "lower the bar", "at least 90%")
}

func ok200(t *testing.T, p page) page {
	t.Helper()
	if p.status != http.StatusOK {
		t.Fatalf("status %d: %.500s", p.status, p.body)
	}
	return p
}

// A hazard's form: the officer edits H1 (a fault comes back with every
// field as typed and the rule beside its field; a good save is the next
// version, PRG to the hazard), adds a hazard; a reviewer has no edit link,
// no form (403) and no import (403), and a forged save is refused.
func TestHazardForm(t *testing.T) {
	a := startApp(t, withClinicianRoles(t, "dr.rev", bff.RoleReviewer, bff.RoleScenarioRunner),
		withClinicianRoles(t, "dr.cso", bff.RoleSafetyOfficer))
	cso := a.browser()
	if r := cso.signIn("dr.cso", clinPassword); r.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", r.status)
	}
	home := ok200(t, cso.get("/clinician/safety"))
	wantAll(t, "the officer's log page", home.body, `href="/clinician/safety/hazard?id=H1"`, `href="/clinician/safety/hazard"`, "Save a new version")
	form := ok200(t, cso.get("/clinician/safety/hazard?id=H1"))
	wantAll(t, "H1's form", form.body, "Edit hazard H1", `name="base" value="1"`, `value="catastrophic" selected`,
		"the engine does not recognise the emergency in the patient&#39;s words", "- id: C1.1")
	token := csrfMeta.FindStringSubmatch(form.body)[1]
	fields := url.Values{"_csrf": {token}, "was": {"H1"}, "base": {"1"}, "id": {"H1"}, "title": {"An emergency is not escalated at once"},
		"description": {"typed description"}, "causes": {"one cause\nanother cause"}, "effects": {"an effect"},
		"initial_severity": {"catastrophic"}, "initial_likelihood": {"medium"}, "residual_severity": {"catastrophic"},
		"residual_likelihood": {"very high"}, "controls": {"- id: C1.1\n  title: Emergency vignettes escalated\n  evidence:\n    - {kind: accuracy, class: emergency, min: 95}\n"},
		"owner": {"clinical safety officer"}, "status": {"open"}, "note": {"raise the bar"}}
	r := cso.post("/clinician/safety/hazards", fields)
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("a faulty hazard: %d", r.status)
	}
	wantAll(t, "the refused hazard", r.body, "controls[0].evidence[0].min: accuracy needs min", "typed description",
		"one cause\nanother cause", "min: 95", `value="very high" selected`, `value="raise the bar"`, `id="controls-error"`)
	fields.Set("controls", "- id: C1.1\n  title: Emergency vignettes escalated\n  evidence:\n    - {kind: accuracy, class: emergency, min: 0.99}\n")
	r = cso.post("/clinician/safety/hazards", fields)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/clinician/safety#hazard-H1" {
		t.Fatalf("a good hazard: %d %q %.300s", r.status, r.header.Get("Location"), r.body)
	}
	wantAll(t, "the log after the save", cso.get("/clinician/safety").body, "Hazard H1 saved: version 2 of the hazard log.",
		"Hazard log, version 2", "An emergency is not escalated at once", "H1: raise the bar", "at least 99%")
	add := url.Values{"_csrf": {token}, "was": {""}, "base": {"2"}, "id": {"H7"}, "title": {"A voice the patient cannot follow"},
		"initial_severity": {"major"}, "initial_likelihood": {"medium"}, "residual_severity": {"major"}, "residual_likelihood": {"low"},
		"owner": {"clinical safety officer"}, "status": {"open"}, "note": {"seen in the two voices"}}
	if r := cso.post("/clinician/safety/hazards", add); r.status != http.StatusSeeOther {
		t.Fatalf("a new hazard: %d %.300s", r.status, r.body)
	}
	wantAll(t, "the log with H7", cso.get("/clinician/safety").body, "Hazard log, version 3", "A voice the patient cannot follow")

	rev := a.browser()
	if r := rev.signIn("dr.rev", clinPassword); r.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", r.status)
	}
	p := ok200(t, rev.get("/clinician/safety"))
	for _, not := range []string{"/clinician/safety/hazard", "Save a new version"} {
		if strings.Contains(p.body, not) {
			t.Errorf("a reviewer's log page shows %s", not)
		}
	}
	if r := rev.get("/clinician/safety/hazard?id=H1"); r.status != http.StatusForbidden {
		t.Errorf("a reviewer opens H1's form: %d", r.status)
	}
	token = csrfMeta.FindStringSubmatch(p.body)[1]
	add.Set("_csrf", token)
	add.Set("base", "3")
	add.Set("id", "H8")
	if r := rev.post("/clinician/safety/hazards", add); r.status != http.StatusForbidden {
		t.Errorf("a reviewer's forged hazard: %d", r.status)
	}
	if r := rev.post("/clinician/safety/log", url.Values{"_csrf": {token}, "file": {"system: x"}, "note": {"n"}}); r.status != http.StatusForbidden {
		t.Errorf("a reviewer's import: %d", r.status)
	}
	if strings.Contains(cso.get("/clinician/safety").body, "H8") {
		t.Error("a reviewer's forged hazard was saved")
	}
}
