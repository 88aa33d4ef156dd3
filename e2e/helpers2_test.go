package e2e

// Helpers of the clinician and fault journeys (clinician_test.go,
// faults_test.go): an app with a clinician account, sign-in through the
// page, and reads of the sandbox's own record of an intake.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// The clinician account of the clinician journeys.
const (
	clinUser     = "dr.e2e"
	clinPassword = "a long enough password"
)

var signInPath = regexp.MustCompile(`/clinician/signin(\?|$)`)

// startClinicApp is startApp with the clinician account dr.e2e in its
// database.
func startClinicApp(t *testing.T) *app {
	t.Helper()
	return startApp(t, appOptions{Clinicians: map[string]string{clinUser: clinPassword}})
}

func byLabel(page playwright.Page, label string) playwright.Locator {
	return page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
}

// clinicianSignIn opens the sign-in page, signs in as dr.e2e and waits for
// the worklist.
func clinicianSignIn(t *testing.T, page playwright.Page, a *app) {
	t.Helper()
	_, err := page.Goto(a.URL + "/clinician/signin")
	must(t, err, "open the sign-in page")
	submitSignIn(t, page, clinUser, clinPassword)
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician"), "signing in leads to the worklist")
	must(t, expect.Locator(role(page, "heading", "Worklist")).ToBeVisible(), "the Worklist heading")
}

// submitSignIn fills Username and Password and presses Sign in.
func submitSignIn(t *testing.T, page playwright.Page, user, password string) {
	t.Helper()
	must(t, byLabel(page, "Username").Fill(user), "fill Username")
	must(t, byLabel(page, "Password").Fill(password), "fill Password")
	must(t, role(page, "button", "Sign in").Click(), "click Sign in")
}

// intakeIDOf is the intake id in the page's /intakes/{id} URL.
func intakeIDOf(t *testing.T, page playwright.Page) string {
	t.Helper()
	u, err := url.Parse(page.URL())
	must(t, err, "parse the page URL")
	id, ok := strings.CutPrefix(u.Path, "/intakes/")
	if !ok || id == "" || strings.Contains(id, "/") {
		t.Fatalf("not on an intake page: %s", page.URL())
	}
	return id
}

// sandboxCall makes one request to the sandbox with the test's key and
// returns the body; any status but 200 fails the test.
func sandboxCall(t *testing.T, a *app, method, path string, body any) []byte {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		must(t, err, "encode %s body", path)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), expectTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, a.Sandbox.URL+path, rd)
	must(t, err, "request %s", path)
	req.Header.Set("Authorization", "Bearer "+a.Key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	must(t, err, "%s %s", method, path)
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	must(t, err, "read %s", path)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sandbox %s %s answered %d: %s", method, path, res.StatusCode, b)
	}
	return b
}

// upstreamRequests is every request the sandbox has seen, of any kind.
func upstreamRequests(a *app) int {
	n := 0
	for _, c := range a.Sandbox.Service.Stats().Requests {
		n += c
	}
	return n
}

// encounterOf is the sandbox's id of the app's intake (its encounter), as
// the app's store holds it: "" before the intake's first turn created it
// upstream. Pages never show it.
func encounterOf(t *testing.T, a *app, intakeID string) string {
	t.Helper()
	return a.stack.Intake(t, intakeID).EncounterID
}

// armFault arms the next turn of the app's intake with a sandbox fault.
// Before its first turn the intake has no encounter at the sandbox, so the
// fault is armed for the key: the next turn of any intake takes it (each
// test has its own sandbox and key).
func armFault(t *testing.T, a *app, intakeID, kind string) {
	t.Helper()
	fault := map[string]any{"kind": kind}
	if enc := encounterOf(t, a, intakeID); enc != "" {
		fault["encounter_id"] = enc
	}
	sandboxCall(t, a, http.MethodPost, "/v1/sandbox/faults", fault)
}

// serviceEncounter is the encounter of the app's intake; the test fails if
// the intake has not reached the sandbox.
func serviceEncounter(t *testing.T, a *app, intakeID string) string {
	t.Helper()
	enc := encounterOf(t, a, intakeID)
	if enc == "" {
		t.Fatalf("the intake %s has not reached the sandbox (no encounter id)", intakeID)
	}
	return enc
}

// serviceHandoff is the sandbox's handoff of the app's intake (of its
// encounter), decoded, and its raw JSON.
func serviceHandoff(t *testing.T, a *app, intakeID string) (*intakeapi.Handoff, []byte) {
	t.Helper()
	raw := sandboxCall(t, a, http.MethodGet, "/v1/intakes/"+url.PathEscape(serviceEncounter(t, a, intakeID))+"/handoff", nil)
	var h intakeapi.Handoff
	must(t, json.Unmarshal(raw, &h), "decode the sandbox's handoff")
	return &h, raw
}

// serviceTurnCount is turn_count of the sandbox's summary of the intake.
func serviceTurnCount(t *testing.T, a *app, intakeID string) int {
	t.Helper()
	var s struct {
		TurnCount *int `json:"turn_count"`
	}
	raw := sandboxCall(t, a, http.MethodGet, "/v1/intakes/"+url.PathEscape(serviceEncounter(t, a, intakeID)), nil)
	must(t, json.Unmarshal(raw, &s), "decode the sandbox's summary")
	if s.TurnCount == nil {
		t.Fatalf("the sandbox's summary has no turn_count: %s", raw)
	}
	return *s.TurnCount
}

// checkServiceRecord: the sandbox's record of the intake holds exactly the
// patient messages sent, in order, once each (no turn lost, none
// duplicated), and its turn_count agrees.
func checkServiceRecord(t *testing.T, a *app, intakeID string, want []string) {
	t.Helper()
	h, _ := serviceHandoff(t, a, intakeID)
	var got []string
	for _, m := range h.Conversation {
		if m.Role == intakeapi.RolePatient {
			got = append(got, m.Text)
		}
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("the service's conversation holds the patient messages %q, want %q", got, want)
	}
	if n := serviceTurnCount(t, a, intakeID); n != len(want) {
		t.Errorf("the service's turn_count is %d, want %d", n, len(want))
	}
}
