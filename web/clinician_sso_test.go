package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/oidc/oidctest"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
)

var ssoUser = oidctest.User{Username: "dr.sso", Password: "sso-password", Roles: []string{"reviewer"}}

// ssoStart follows "Sign in with Test IdP" on the sign-in page (asking to
// land on the audit log) and returns where the app sends the browser.
func (b *browser) ssoStart(t *testing.T) string {
	t.Helper()
	pg := b.get("/clinician/signin")
	if pg.status != http.StatusOK || !strings.Contains(pg.body, "Sign in with Test IdP") {
		t.Fatalf("sign-in page: %d %.500s", pg.status, pg.body)
	}
	if !strings.Contains(pg.body, `href="/clinician/sso/start?next=%2Fclinician"`) {
		t.Fatalf("no link to start: %.2000s", pg.body)
	}
	pg = b.get("/clinician/sso/start?next=" + url.QueryEscape("/clinician/audit"))
	if pg.status != http.StatusSeeOther {
		t.Fatalf("start: %d %.300s", pg.status, pg.body)
	}
	return pg.header.Get("Location")
}

// callback opens the URL the provider sent the browser back to.
func (b *browser) callback(u *url.URL) page {
	return b.get(u.Path + "?" + u.RawQuery)
}

// TestSSOSignInThroughTheProvider: the button leads to the provider with
// PKCE, state and nonce; coming back signs in, lands on the page asked
// for; the callback replayed is refused; sign-out offers the provider's
// end-session endpoint.
func TestSSOSignInThroughTheProvider(t *testing.T) {
	p := oidctest.Start(t, ssoUser)
	a := startApp(t, apptest.WithSSO(t, p, true))
	b := a.browser()
	to := b.ssoStart(t)
	q := mustURL(t, to).Query()
	if !strings.HasPrefix(to, p.URL+"/") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		len(q.Get("state")) < 40 || len(q.Get("nonce")) < 40 || q.Get("client_id") != p.ClientID {
		t.Fatalf("sent to %s", to)
	}
	back := p.SignIn(t, to, ssoUser.Username, ssoUser.Password)
	pg := b.callback(back)
	if pg.status != http.StatusSeeOther || pg.header.Get("Location") != "/clinician/audit" {
		t.Fatalf("callback: %d %s %.300s", pg.status, pg.header.Get("Location"), pg.body)
	}
	if pg = b.get("/clinician/audit"); pg.status != http.StatusOK || !strings.Contains(pg.body, "sso_sign_in") || !strings.Contains(pg.body, "dr.sso") {
		t.Fatalf("the audit log after signing in: %d %.300s", pg.status, pg.body)
	}
	// The same answer again: its flow was used.
	if pg = b.callback(back); pg.status != http.StatusUnauthorized || !strings.Contains(pg.body, "No sign-in with Test IdP was in progress") {
		t.Fatalf("replayed callback: %d %.500s", pg.status, pg.body)
	}
	// Sign out: the app's session ends, and the provider's end-session
	// endpoint is offered once.
	pg = b.get("/clinician")
	m := csrfMeta.FindStringSubmatch(pg.body)
	if m == nil {
		t.Fatal("no csrf on the worklist")
	}
	if pg = b.post("/clinician/signout", url.Values{"_csrf": {m[1]}}); pg.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", pg.status)
	}
	pg = b.get("/clinician/signin")
	end := regexp.MustCompile(`href="(` + regexp.QuoteMeta(p.URL) + `/[^"]+)">Sign out of Test IdP too`).FindStringSubmatch(pg.body)
	if end == nil || !strings.Contains(end[1], "id_token_hint=") || !strings.Contains(end[1], "post_logout_redirect_uri=") {
		t.Fatalf("no end-session link after signing out: %.2000s", pg.body)
	}
	if pg = b.get("/clinician"); pg.status != http.StatusSeeOther {
		t.Fatalf("after sign-out the worklist answered %d", pg.status)
	}
	if pg = b.get("/clinician/signin"); strings.Contains(pg.body, "Sign out of Test IdP too") {
		t.Fatal("the end-session link is offered twice")
	}
	// The provider ends its session and sends the browser back.
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(strings.ReplaceAll(end[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, a.web.URL+"/clinician/signin") {
		t.Fatalf("the provider's end session sent the browser to %q (%d)", loc, res.StatusCode)
	}
}

// TestSSOWrongStateRefused: an answer whose state is not the one this
// browser's sign-in sent is refused, and nobody is signed in.
func TestSSOWrongStateRefused(t *testing.T) {
	p := oidctest.Start(t, ssoUser)
	a := startApp(t, apptest.WithSSO(t, p, true))
	b := a.browser()
	back := p.SignIn(t, b.ssoStart(t), ssoUser.Username, ssoUser.Password)
	q := back.Query()
	q.Set("state", "not-"+q.Get("state"))
	back.RawQuery = q.Encode()
	pg := b.callback(back)
	if pg.status != http.StatusUnauthorized || !strings.Contains(pg.body, "does not belong to the sign-in started in this browser") {
		t.Fatalf("wrong state: %d %.500s", pg.status, pg.body)
	}
	if pg = b.get("/clinician"); pg.status != http.StatusSeeOther {
		t.Fatalf("signed in after a wrong state: %d", pg.status)
	}
	// Another browser, which started nothing, brings a good answer (a
	// login CSRF): refused.
	back = p.SignIn(t, b.ssoStart(t), ssoUser.Username, ssoUser.Password)
	other := a.browser()
	if pg = other.callback(back); pg.status != http.StatusUnauthorized {
		t.Fatalf("another browser's answer: %d", pg.status)
	}
	if pg = other.get("/clinician"); pg.status != http.StatusSeeOther {
		t.Fatalf("the other browser is signed in: %d", pg.status)
	}
}

// TestSSOLocalPasswordsOff: with local passwords off the page has only the
// button, and a posted password is refused without being checked.
func TestSSOLocalPasswordsOff(t *testing.T) {
	p := oidctest.Start(t, ssoUser)
	a := startApp(t, apptest.WithSSO(t, p, false))
	b := a.browser()
	pg := b.get("/clinician/signin")
	if !strings.Contains(pg.body, "Sign in with Test IdP") || strings.Contains(pg.body, `type="password"`) {
		t.Fatalf("sign-in page with local passwords off: %.2000s", pg.body)
	}
	m := csrfMeta.FindStringSubmatch(pg.body)
	pg = b.post("/clinician/signin", url.Values{"_csrf": {m[1]}, "username": {"demo"}, "password": {"whatever-password"}})
	if pg.status != http.StatusForbidden || !strings.Contains(pg.body, "Local passwords are turned off here") {
		t.Fatalf("a local sign-in: %d %.300s", pg.status, pg.body)
	}
}

// Without single sign-on its routes do not exist: the clinician area's
// guard answers them (sign in first).
func TestSSORoutesOffWithoutIt(t *testing.T) {
	a := startApp(t)
	b := a.browser()
	if pg := b.get("/clinician/sso/callback?state=x&code=y"); pg.status != http.StatusSeeOther || !strings.HasPrefix(pg.header.Get("Location"), "/clinician/signin") {
		t.Fatalf("callback without SSO: %d %s", pg.status, pg.header.Get("Location"))
	}
	if pg := b.get("/clinician/signin"); strings.Contains(pg.body, "Sign in with") {
		t.Fatal("an SSO button without SSO")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestSSOSignInNotAskedForTheLocalSecondFactor: CLINICIAN_REQUIRE_TOTP is
// for local accounts; an SSO account (the provider's own factor) lands on
// the page it asked for, not on the enrolment.
func TestSSOSignInNotAskedForTheLocalSecondFactor(t *testing.T) {
	p := oidctest.Start(t, ssoUser)
	a := startApp(t, apptest.WithSSO(t, p, true), func(c *appwire.Config) { c.RequireTOTP = true })
	b := a.browser()
	back := p.SignIn(t, b.ssoStart(t), ssoUser.Username, ssoUser.Password)
	if pg := b.callback(back); pg.status != http.StatusSeeOther {
		t.Fatalf("callback: %d %.300s", pg.status, pg.body)
	}
	if pg := b.get("/clinician/audit"); pg.status != http.StatusOK || !strings.Contains(pg.body, "sso_sign_in") {
		t.Fatalf("an SSO account with CLINICIAN_REQUIRE_TOTP: %d to %q, want the audit log", pg.status, pg.header.Get("Location"))
	}
}
