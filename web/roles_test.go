package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// TestRolesAreCheckedOnEveryPart: each account reaches only what its roles
// open; a refusal is a 403 page in words (an error alone for a download or
// a form), audited; the navigation shows only what opens; and sign-in lands
// on the first page the account may open.
func TestRolesAreCheckedOnEveryPart(t *testing.T) {
	t.Parallel()
	var dbPath string
	a := startApp(t, withClinicianRoles(t, "dr.review", bff.RoleReviewer), withClinicianRoles(t, "dr.runner", bff.RoleScenarioRunner),
		withClinicianRoles(t, "dr.admin", bff.RoleAdministrator), withClinicianRoles(t, "dr.cso", bff.RoleSafetyOfficer), withSandboxFaults,
		func(c *appwire.Config) { dbPath = c.DatabasePath })
	patient := a.browser()
	intake := patient.start()
	id := strings.TrimPrefix(intake, "/intakes/")

	type try struct {
		method, path string
		open         bool
	}
	for _, tc := range []struct {
		user    string
		landing string
		tries   []try
		nav     []string // links the navigation shows
		hidden  []string // and does not
	}{
		{"dr.review", "/clinician", []try{
			{"GET", "/clinician", true}, {"GET", "/clinician/intakes/" + id, true}, {"GET", "/clinician/audit", true},
			{"GET", "/clinician/intakes/" + id + "/handoff.fhir.json", true},
			{"GET", "/clinician/scenarios", false}, {"GET", "/clinician/scenarios/readings", false},
			{"POST", "/clinician/scenarios/runs", false}, {"GET", "/clinician/faults", false}, {"POST", "/clinician/faults", false},
		}, []string{`href="/clinician"`, `href="/clinician/audit"`, `href="/clinician/safety"`}, []string{`href="/clinician/scenarios"`, `href="/clinician/faults"`}},
		{"dr.runner", "/clinician/scenarios", []try{
			{"GET", "/clinician/scenarios", true}, {"GET", "/clinician/scenarios/format", true},
			{"GET", "/clinician", false}, {"GET", "/clinician/intakes/" + id, false},
			{"GET", "/clinician/intakes/" + id + "/handoff.json", false}, {"POST", "/clinician/intakes/" + id + "/review", false},
			{"GET", "/clinician/audit", false}, {"GET", "/clinician/faults", false},
		}, []string{`href="/clinician/scenarios"`}, []string{`href="/clinician"`, `href="/clinician/audit"`, `href="/clinician/faults"`}},
		{"dr.admin", "/clinician/faults", []try{
			{"GET", "/clinician/faults", true}, {"GET", "/clinician/audit", true},
			{"GET", "/clinician", false}, {"GET", "/clinician/intakes/" + id, false}, {"GET", "/clinician/scenarios", false},
		}, []string{`href="/clinician/faults"`, `href="/clinician/audit"`}, []string{`href="/clinician"`, `href="/clinician/scenarios"`}},
		{"dr.cso", "/clinician/safety", []try{ // the clinical safety officer alone: the safety case, nothing else
			{"GET", "/clinician/safety", true}, {"GET", "/clinician/safety/log.yaml", true},
			{"GET", "/clinician", false}, {"GET", "/clinician/intakes/" + id, false}, {"GET", "/clinician/scenarios", false},
			{"GET", "/clinician/audit", false}, {"GET", "/clinician/faults", false},
		}, []string{`href="/clinician/safety"`, `href="/clinician/sessions"`}, []string{`href="/clinician"`, `href="/clinician/scenarios"`, `href="/clinician/audit"`, `href="/clinician/faults"`}},
	} {
		b := a.browser()
		p := b.signIn(tc.user, clinPassword)
		if p.status != http.StatusSeeOther || p.header.Get("Location") != tc.landing {
			t.Fatalf("%s signs in: %d, to %q; want %s", tc.user, p.status, p.header.Get("Location"), tc.landing)
		}
		home := b.get(tc.landing)
		if home.status != http.StatusOK {
			t.Fatalf("%s's landing page %s: %d", tc.user, tc.landing, home.status)
		}
		for _, want := range tc.nav {
			if !strings.Contains(home.body, want) {
				t.Errorf("%s's navigation lacks %s", tc.user, want)
			}
		}
		for _, not := range tc.hidden {
			if strings.Contains(home.body, not) {
				t.Errorf("%s's page links %s, which their roles do not open", tc.user, not)
			}
		}
		token := csrfMeta.FindStringSubmatch(home.body)[1]
		for _, tr := range tc.tries {
			var p page
			if tr.method == "GET" {
				p = b.get(tr.path)
			} else {
				p = b.post(tr.path, url.Values{"_csrf": {token}})
			}
			if tr.open {
				if p.status == http.StatusForbidden || p.status == http.StatusNotFound {
					t.Errorf("%s %s %s: %d, want it open", tc.user, tr.method, tr.path, p.status)
				}
				continue
			}
			if p.status != http.StatusForbidden {
				t.Errorf("%s %s %s: %d, want 403", tc.user, tr.method, tr.path, p.status)
				continue
			}
			if tr.method == "GET" && !strings.HasSuffix(tr.path, ".json") &&
				(!strings.Contains(p.body, "cannot open this page") || !strings.Contains(p.body, "intake-web clinician grant "+tc.user)) {
				t.Errorf("%s %s %s: the refusal does not say why in words: %.400s", tc.user, tr.method, tr.path, p.body)
			}
		}
	}

	db, err := sqlite.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log, err := db.Audit(context.Background(), 500, 0)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]int{}
	for _, e := range log {
		if e.Action == bff.AuditAccessRefused {
			refused[e.Actor]++
			if e.Actor == "dr.runner" && strings.Contains(e.Detail, "/clinician/faults") && !strings.Contains(e.Detail, "needs administrator") {
				t.Errorf("refusal detail %q does not say the role needed", e.Detail)
			}
		}
	}
	if refused["dr.review"] != 5 || refused["dr.runner"] != 6 || refused["dr.admin"] != 3 || refused["dr.cso"] != 5 {
		t.Fatalf("refusals audited %v, want dr.review 5, dr.runner 6, dr.admin 3, dr.cso 5", refused)
	}
}

// A role taken away closes its pages at the session's next request.
func TestRevokedRoleClosesAtOnce(t *testing.T) {
	t.Parallel()
	var dbPath string
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) { dbPath = c.DatabasePath })
	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	if p := b.get("/clinician/scenarios"); p.status != http.StatusOK {
		t.Fatalf("scenarios with every role: %d", p.status)
	}
	db, err := sqlite.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetClinicianRoles(context.Background(), "dr.ada", []bff.Role{bff.RoleReviewer}); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/clinician/scenarios"); p.status != http.StatusForbidden {
		t.Fatalf("scenarios after the role was revoked: %d", p.status)
	}
	if p := b.get("/clinician"); p.status != http.StatusOK {
		t.Fatalf("worklist, still a reviewer: %d", p.status)
	}
}
