package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// clinicianRoutes is the one table of what each part of the clinician area
// needs: the first path segment after /clinician ("" is the worklist) and
// the roles that open it (any one of them; none listed: every signed-in
// clinician). requireRole checks every /clinician route against it after
// requireClinician; a segment missing here is refused (404), and
// TestEveryClinicianRouteHasARoleRule fails when a registered route has no
// row. Pages show links only to what the table lets the clinician open
// (mayOpen).
var clinicianRoutes = map[string][]bff.Role{
	"":              {bff.RoleReviewer}, // the worklist
	"worklist":      {bff.RoleReviewer}, // a worklist row
	"events":        {bff.RoleReviewer}, // the worklist's live feed
	"intakes":       {bff.RoleReviewer}, // handoffs, downloads (JSON, FHIR), refresh, review
	"audit":         {bff.RoleReviewer, bff.RoleAdministrator},
	"scenarios":     {bff.RoleScenarioRunner},                                                                 // runs, readings, variations, compare
	"safety":        {bff.RoleReviewer, bff.RoleScenarioRunner, bff.RoleAdministrator, bff.RoleSafetyOfficer}, // the safety case; deciding: safetycase.MayDecide
	"faults":        {bff.RoleAdministrator},
	"admin":         {bff.RoleAdministrator}, // anyone's sessions
	"sessions":      {},                      // one's own sessions
	"signout":       {},
	"second-factor": {}, // one's own second factor
}

const sessionsPath = "/clinician/sessions"

// routeSegment is the part of path clinicianRoutes is keyed by, lower-cased
// as Fiber matches routes (case-insensitively), and whether path is in the
// clinician area at all.
func routeSegment(path string) (string, bool) {
	if path != "/clinician" && !strings.HasPrefix(path, "/clinician/") {
		return "", false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/clinician"), "/")
	seg, _, _ := strings.Cut(rest, "/")
	return strings.ToLower(seg), true
}

// rolesFor is the roles that open path (none: every signed-in clinician),
// and whether the table has a rule for it.
func rolesFor(path string) ([]bff.Role, bool) {
	seg, ok := routeSegment(path)
	if !ok {
		return nil, false
	}
	roles, ok := clinicianRoutes[seg]
	return roles, ok
}

// mayOpen reports whether c may open path by the table.
func mayOpen(c *bff.Clinician, path string) bool {
	roles, ok := rolesFor(path)
	if !ok || c == nil {
		return false
	}
	if len(roles) == 0 {
		return true
	}
	for _, r := range roles {
		if c.HasRole(r) {
			return true
		}
	}
	return false
}

// requireRole lets a signed-in clinician (requireClinician ran before)
// through to what their roles open. A refusal is a 403 page that says which
// role the page needs and how to get it (a stream or a download gets the
// error alone), audited as AuditAccessRefused.
func (s *Server) requireRole(c *fiber.Ctx) error {
	acc := accountOf(c)
	roles, ok := rolesFor(c.Path())
	if !ok {
		return fiber.ErrNotFound // no part of the area is there
	}
	if mayOpen(acc, c.Path()) {
		return c.Next()
	}
	need := make([]string, len(roles))
	for i, r := range roles {
		need[i] = r.Label()
	}
	seg, _ := routeSegment(c.Path())
	s.accounts.AccessRefused(c.UserContext(), acc.Username,
		fmt.Sprintf("%s /clinician/%s needs %s; has %s", logMethod(c), seg, strings.Join(need, " or "), bff.RoleNames(acc.Roles)))
	err := &bff.Error{Code: bff.EFORBIDDEN, Message: fmt.Sprintf(
		"Your account (%s) cannot open this page: it needs the %s role. Whoever runs this app can grant it with: intake-web clinician grant %s %s.",
		acc.Username, strings.Join(need, " or "), acc.Username, roles[0])}
	if c.Method() != fiber.MethodGet || strings.HasSuffix(c.Path(), "/events") || strings.HasSuffix(c.Path(), ".json") ||
		strings.HasSuffix(c.Path(), ".csv") || wantsJSON(c) {
		return err
	}
	page := templates.ErrorPage{Layout: s.clinicianLayout(c, "Not allowed"), Status: http.StatusForbidden, Heading: "Not allowed", Message: err.Message}
	page.BackURL, page.BackLabel = s.homeOf(acc), "Back to your first page"
	return render(c, http.StatusForbidden, templates.ErrorPageView(page))
}

// homeOf is where a clinician lands after signing in: the worklist, or
// the first part of the area their roles open.
func (s *Server) homeOf(acc *bff.Clinician) string {
	for _, p := range []string{"/clinician", scenariosPath, faultsPath, "/clinician/audit", safetyPath} {
		if mayOpen(acc, p) && (p != scenariosPath || s.deps.Scenarios != nil) && (p != faultsPath || s.deps.Faults != nil) &&
			(p != safetyPath || s.deps.Safety != nil) {
			return p
		}
	}
	return sessionsPath
}
