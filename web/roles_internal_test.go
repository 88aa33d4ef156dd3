package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
)

// publicClinicianRoutes are the routes under /clinician served before
// sign-in (registered ahead of the group that checks it): they need no
// role.
var publicClinicianRoutes = map[string]bool{
	"/clinician/signin":      true,
	"/clinician/signin/code": true,
}

// TestEveryClinicianRouteHasARoleRule walks every route the app registers,
// with every optional part on (faults, scenarios, readings), and fails for
// a /clinician route that clinicianRoutes has no rule for: a route added
// without saying who may open it is caught here, before requireRole would
// refuse it to everyone.
func TestEveryClinicianRouteHasARoleRule(t *testing.T) {
	s := &Server{deps: Deps{
		Faults: struct{ bff.FaultArmer }{}, Scenarios: struct{ bff.ScenarioService }{}, Readings: struct{ bff.ReadingService }{},
		MetricsHandler: http.NotFoundHandler(),
	}}
	checked := 0
	for _, r := range s.routes().GetRoutes(true) {
		if _, area := routeSegment(r.Path); !area || publicClinicianRoutes[r.Path] {
			continue
		}
		checked++
		if _, ok := rolesFor(r.Path); !ok {
			t.Errorf("%s %s has no role rule in clinicianRoutes (web/roles.go)", r.Method, r.Path)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d clinician routes found: the walk is not seeing the app's routes", checked)
	}
}

// Each part of the area opens to the roles the table gives it, and to
// nothing else; links follow the same rule.
func TestMayOpen(t *testing.T) {
	reviewer := &bff.Clinician{Username: "r", Roles: []bff.Role{bff.RoleReviewer}}
	runner := &bff.Clinician{Username: "s", Roles: []bff.Role{bff.RoleScenarioRunner}}
	admin := &bff.Clinician{Username: "a", Roles: []bff.Role{bff.RoleAdministrator}}
	officer := &bff.Clinician{Username: "o", Roles: []bff.Role{bff.RoleSafetyOfficer}}
	none := &bff.Clinician{Username: "n"}
	for _, tc := range []struct {
		path string
		who  []*bff.Clinician // the only ones who may open it
	}{
		{"/clinician", []*bff.Clinician{reviewer}},
		{"/clinician/", []*bff.Clinician{reviewer}},
		{"/clinician/intakes/iw_1/handoff.fhir.json", []*bff.Clinician{reviewer}},
		{"/clinician/INTAKES/iw_1", []*bff.Clinician{reviewer}}, // Fiber matches routes case-insensitively
		{"/clinician/events", []*bff.Clinician{reviewer}},
		{"/clinician/audit", []*bff.Clinician{reviewer, admin}},
		{"/clinician/scenarios/readings", []*bff.Clinician{runner}},
		{"/clinician/scenarios/runs/sr_1/cancel", []*bff.Clinician{runner}},
		{"/clinician/faults", []*bff.Clinician{admin}},
		{"/clinician/Faults/", []*bff.Clinician{admin}},
		{"/clinician/admin/sessions", []*bff.Clinician{admin}},
		{"/clinician/safety", []*bff.Clinician{reviewer, runner, admin, officer}},
		{"/clinician/safety/decisions", []*bff.Clinician{reviewer, runner, admin, officer}}, // the page opens; deciding is the officer's (safetycase.MayDecide)
		{"/clinician/sessions", []*bff.Clinician{reviewer, runner, admin, officer, none}},
		{"/clinician/nowhere", nil},
		{"/clinicianfaults", nil},
		{"/", nil},
	} {
		for _, c := range []*bff.Clinician{reviewer, runner, admin, officer, none} {
			want := false
			for _, w := range tc.who {
				want = want || w == c
			}
			if got := mayOpen(c, tc.path); got != want {
				t.Errorf("mayOpen(%s, %s) = %v, want %v", strings.Join([]string{string(bff.RoleNames(c.Roles))}, ""), tc.path, got, want)
			}
		}
		if mayOpen(nil, tc.path) {
			t.Errorf("no account may open %s", tc.path)
		}
	}
}
