package accounts_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/oidc"
	"github.com/clinical-intake/intake-web/bff/adapters/oidc/oidctest"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
)

// ssoRig is the account service with single sign-on through a real OpenID
// Provider on loopback.
type ssoRig struct {
	p     *oidctest.Provider
	run   *clinicianRun
	sso   *accounts.SSO
	clock *manualNow
}

var (
	ssoAlice = oidctest.User{Username: "alice", Password: "alice-pw", Roles: []string{"reviewer"}}
	ssoBob   = oidctest.User{Username: "Alice", Subject: "sub-bob", Password: "bob-pw", Roles: []string{"reviewer"}} // calls himself alice there
	ssoNone  = oidctest.User{Username: "nobody", Password: "nobody-pw", Roles: []string{"cleaner"}}
	ssoMail  = oidctest.User{Username: "Dr.Who@Trust.Example", Password: "who-pw", Roles: []string{"administrator", "reviewer"}}
	ssoCSO   = oidctest.User{Username: "dr.cso", Password: "cso-pw", Roles: []string{"safety_officer", "cso-group"}}
)

func newSSORig(t *testing.T, roleMap map[string][]string) *ssoRig {
	t.Helper()
	p := oidctest.Start(t, ssoAlice, ssoBob, ssoNone, ssoMail, ssoCSO)
	clock := newManualNow(time.Now().UTC())
	run := openClinicianRun(t, filepath.Join(t.TempDir(), "app.db"), clock.now)
	rp, err := oidc.New(oidc.Config{Name: "Test IdP", Issuer: p.URL, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		RedirectURL: "http://127.0.0.1:1/clinician/sso/callback"})
	if err != nil {
		t.Fatal(err)
	}
	return &ssoRig{p: p, run: run, clock: clock,
		sso: run.svc.SSO(accounts.SSOConfig{Provider: rp, Links: run.db, RoleMap: roleMap, LocalPasswords: true})}
}

// at signs u in at the provider: the flow the app keeps and what the
// provider sends back.
func (r *ssoRig) at(t *testing.T, u oidctest.User) (*bff.SSOFlow, bff.SSOCallback) {
	t.Helper()
	authURL, flow, err := r.sso.Start(context.Background(), "/clinician")
	if err != nil {
		t.Fatal(err)
	}
	back := r.p.SignIn(t, authURL, u.Username, u.Password).Query()
	return flow, bff.SSOCallback{State: back.Get("state"), Code: back.Get("code")}
}

func (r *ssoRig) signIn(t *testing.T, u oidctest.User) (*bff.SSOSignIn, error) {
	t.Helper()
	flow, cb := r.at(t, u)
	return r.sso.Finish(context.Background(), flow, cb, "127.0.0.1")
}

func (r *ssoRig) audit(t *testing.T) []*bff.AuditEntry {
	t.Helper()
	es, err := r.run.db.Audit(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func wantRefused(t *testing.T, err error, code, says string) {
	t.Helper()
	if bff.ErrorCode(err) != code || !strings.Contains(bff.ErrorMessage(err), says) {
		t.Fatalf("got %v; want %s saying %q", err, code, says)
	}
}

// A first sign-in makes the account, linked to the subject; the next finds
// it by the subject. Both audited with the roles.
func TestSSOFirstSignInMakesTheAccount(t *testing.T) {
	r := newSSORig(t, nil)
	in, err := r.signIn(t, ssoAlice)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Created || in.Clinician.Username != "alice" || !slices.Equal(in.Roles, []string{"reviewer"}) || in.IDToken == "" {
		t.Fatalf("first sign-in: %+v", in)
	}
	if len(in.Clinician.PasswordHash) != 0 {
		t.Fatal("an SSO account has a password")
	}
	if _, err := r.run.svc.SignIn(context.Background(), "alice", "", "127.0.0.1"); err == nil {
		t.Fatal("an SSO account signed in with an empty password")
	}
	in, err = r.signIn(t, ssoAlice)
	if err != nil || in.Created || in.Clinician.Username != "alice" {
		t.Fatalf("second sign-in: %+v, %v", in, err)
	}
	es := r.audit(t)
	if es[0].Action != bff.AuditSSOSignIn || es[0].Actor != "alice" || !strings.Contains(es[0].Detail, "subject sub-alice") ||
		!strings.Contains(es[0].Detail, "roles reviewer") || strings.Contains(es[0].Detail, "created") ||
		!strings.Contains(es[2].Detail, "account created") {
		t.Fatalf("audit: %+v %+v", es[0], es[2])
	}
	// An e-mail-shaped username (Entra ID's upn) gives its part before @.
	in, err = r.signIn(t, ssoMail)
	if err != nil || in.Clinician.Username != "dr.who" || !slices.Equal(in.Roles, []string{"reviewer", "administrator"}) {
		t.Fatalf("upn: %+v, %v", in, err)
	}
}

// A state that is not the flow's is refused before the code is redeemed,
// and audited.
func TestSSOWrongStateRefused(t *testing.T) {
	r := newSSORig(t, nil)
	flow, cb := r.at(t, ssoAlice)
	cb.State = flow.State[:len(flow.State)-1] + "x"
	_, err := r.sso.Finish(context.Background(), flow, cb, "127.0.0.1")
	wantRefused(t, err, bff.EUNAUTHORIZED, "does not belong to the sign-in started in this browser")
	if es := r.audit(t); len(es) != 1 || es[0].Action != bff.AuditSSORefused || !strings.Contains(es[0].Detail, "state") {
		t.Fatalf("audit: %+v", es)
	}
	// Another browser's flow (its own, valid state) with this code: refused
	// by the state too.
	other, _ := r.at(t, ssoAlice)
	_, err = r.sso.Finish(context.Background(), other, bff.SSOCallback{State: flow.State, Code: cb.Code}, "127.0.0.1")
	wantRefused(t, err, bff.EUNAUTHORIZED, "does not belong")
	_, err = r.sso.Finish(context.Background(), nil, cb, "127.0.0.1")
	wantRefused(t, err, bff.EUNAUTHORIZED, "No sign-in")
}

// A code used once is refused the second time (the provider says so).
func TestSSOReplayedCodeRefused(t *testing.T) {
	r := newSSORig(t, nil)
	flow, cb := r.at(t, ssoAlice)
	if _, err := r.sso.Finish(context.Background(), flow, cb, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	_, err := r.sso.Finish(context.Background(), flow, cb, "127.0.0.1")
	wantRefused(t, err, bff.EUNAUTHORIZED, "refused the sign-in code")
	if es := r.audit(t); es[0].Action != bff.AuditSSORefused || !strings.Contains(es[0].Detail, "refused the sign-in code") {
		t.Fatalf("audit: %+v", es[0])
	}
}

func TestSSOFlowExpires(t *testing.T) {
	r := newSSORig(t, nil)
	flow, cb := r.at(t, ssoAlice)
	r.clock.add(accounts.FlowLifetime + time.Second)
	_, err := r.sso.Finish(context.Background(), flow, cb, "127.0.0.1")
	wantRefused(t, err, bff.EUNAUTHORIZED, "took longer than 10 minutes")
}

func TestSSOProviderErrorRefused(t *testing.T) {
	r := newSSORig(t, nil)
	flow, _ := r.at(t, ssoAlice)
	_, err := r.sso.Finish(context.Background(), flow, bff.SSOCallback{State: flow.State, Error: "access_denied", ErrorDescription: "<script>"}, "127.0.0.1")
	wantRefused(t, err, bff.EUNAUTHORIZED, "did not sign you in (access_denied)")
	if strings.Contains(bff.ErrorMessage(err), "<script>") {
		t.Fatal("the provider's description is shown")
	}
}

// A username the provider sends never takes an account: a local account of
// that name is not linked by it, nor is an account linked to another
// subject. Whoever runs the app links them (LinkSSO), and then the subject
// signs in.
func TestSSONeverLinksByUsername(t *testing.T) {
	r := newSSORig(t, nil)
	ctx := context.Background()
	if _, err := r.run.svc.AddClinician(ctx, "system", "alice", goodPassword, nil); err != nil {
		t.Fatal(err)
	}
	_, err := r.signIn(t, ssoAlice)
	wantRefused(t, err, bff.EFORBIDDEN, "An account named alice exists here and is not linked")
	if _, err := r.run.db.SSOLink(ctx, r.p.URL, "sub-alice"); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("a link was made: %v", err)
	}
	if es := r.audit(t); es[0].Action != bff.AuditSSORefused || !strings.Contains(es[0].Detail, "subject sub-alice") {
		t.Fatalf("audit: %+v", es[0])
	}
	if err := r.sso.LinkSSO(ctx, "cli:root", "alice", "sub-alice"); err != nil {
		t.Fatal(err)
	}
	in, err := r.signIn(t, ssoAlice)
	if err != nil || in.Created || in.Clinician.Username != "alice" {
		t.Fatalf("after the link: %+v, %v", in, err)
	}
	// Bob calls himself Alice at the provider: not alice's account here.
	_, err = r.signIn(t, ssoBob)
	wantRefused(t, err, bff.EFORBIDDEN, "An account named alice exists here")
	if err := r.sso.LinkSSO(ctx, "cli:root", "alice", "sub-bob"); bff.ErrorCode(err) != bff.EINVALID {
		t.Fatalf("a second link to alice: %v", err)
	}
}

func TestSSODisabledAccountStaysOut(t *testing.T) {
	r := newSSORig(t, nil)
	if _, err := r.signIn(t, ssoAlice); err != nil {
		t.Fatal(err)
	}
	if err := r.run.svc.DisableClinician(context.Background(), "system", "alice"); err != nil {
		t.Fatal(err)
	}
	_, err := r.signIn(t, ssoAlice)
	wantRefused(t, err, bff.EFORBIDDEN, "disabled")
	if es := r.audit(t); es[0].Action != bff.AuditSSORefused || !strings.Contains(es[0].Detail, "disabled") {
		t.Fatalf("audit: %+v", es[0])
	}
}

func TestSSORoles(t *testing.T) {
	r := newSSORig(t, nil)
	_, err := r.signIn(t, ssoNone)
	wantRefused(t, err, bff.EFORBIDDEN, "gives you no role")
	if _, err := r.run.db.Clinician(context.Background(), "nobody"); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("an account was made for no role: %v", err)
	}
	r = newSSORig(t, map[string][]string{"cleaner": {"reviewer", "scenario_runner"}})
	in, err := r.signIn(t, ssoNone)
	if err != nil || !slices.Equal(in.Roles, []string{"reviewer", "scenario_runner"}) {
		t.Fatalf("mapped: %+v, %v", in, err)
	}
	// The account holds them, as the role checks of every page read them.
	c, err := r.run.db.Clinician(context.Background(), in.Clinician.Username)
	if err != nil || !slices.Equal(c.Roles, []bff.Role{bff.RoleReviewer, bff.RoleScenarioRunner}) {
		t.Fatalf("the account's roles after an SSO sign-in: %+v, %v; want reviewer, scenario_runner", c, err)
	}
	// With a map, the role names themselves map to nothing.
	_, err = r.signIn(t, ssoAlice)
	wantRefused(t, err, bff.EFORBIDDEN, "gives you no role")
}

// The clinical safety officer's role comes from the provider like the
// others: by its own name with no map, and through OIDC_ROLE_MAP.
func TestSSOSafetyOfficerRole(t *testing.T) {
	for _, roleMap := range []map[string][]string{nil, {"cso-group": {"safety_officer"}}} {
		r := newSSORig(t, roleMap)
		in, err := r.signIn(t, ssoCSO)
		if err != nil || !slices.Equal(in.Roles, []string{"safety_officer"}) {
			t.Fatalf("map %v: %+v, %v", roleMap, in, err)
		}
		c, err := r.run.db.Clinician(context.Background(), "dr.cso")
		if err != nil || !slices.Equal(c.Roles, []bff.Role{bff.RoleSafetyOfficer}) {
			t.Fatalf("map %v: the account's roles %+v, %v", roleMap, c, err)
		}
	}
}
