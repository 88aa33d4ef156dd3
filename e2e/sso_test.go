package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/bff/adapters/oidc/oidctest"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
)

// TestSSOThroughTheProvider signs a clinician in through a real OpenID
// Provider's login page (zitadel/oidc's op package, oidctest), lands on the
// worklist, signs out of the app and then of the provider. Screenshots of
// the sign-in page with its SSO button at 1280 and 390 px go to
// e2e/artifacts (and SSO_SHOTS_DIR when set).
func TestSSOThroughTheProvider(t *testing.T) {
	t.Parallel()
	p := oidctest.Start(t, oidctest.User{Username: "dr.okafor", Password: "provider-password", Roles: []string{"reviewer"}})
	st := apptest.Start(t, apptest.Options{App: apptest.WithSSO(t, p, true)})

	for _, vp := range []struct {
		name string
		size *playwright.Size
	}{{"1280", &playwright.Size{Width: 1280, Height: 800}}, {"390", &playwright.Size{Width: 390, Height: 844}}} {
		page := newPage(t, playwright.BrowserNewContextOptions{Viewport: vp.size})
		_, err := page.Goto(st.URL + "/clinician/signin")
		must(t, err, "open the sign-in page")
		must(t, expect.Locator(role(page, "link", "Sign in with Test IdP")).ToBeVisible(), "the SSO button at %s px", vp.name)
		must(t, expect.Locator(page.GetByLabel("Password")).ToBeVisible(), "the local form beside it")
		audit(t, page, "sign-in with SSO at "+vp.name)
		shot(t, page, "sso-signin-"+vp.name)
		if dir := os.Getenv("SSO_SHOTS_DIR"); dir != "" {
			_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(dir, "signin-"+vp.name+".png")), FullPage: playwright.Bool(true)})
			must(t, err, "screenshot")
		}
	}

	page := newPage(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1280, Height: 800}})
	_, err := page.Goto(st.URL + "/clinician")
	must(t, err, "open the worklist")
	must(t, role(page, "link", "Sign in with Test IdP").Click(), "press Sign in with Test IdP")
	// The provider's own login page.
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(p.URL)+"/login")), "at the provider's login page")
	must(t, page.GetByLabel("Username").Fill("dr.okafor"), "type the username")
	must(t, page.GetByLabel("Password").Fill("provider-password"), "type the password")
	must(t, role(page, "button", "Sign in at the provider").Click(), "sign in at the provider")
	// Back on the worklist, signed in as the provider's user.
	must(t, expect.Page(page).ToHaveURL(st.URL+"/clinician"), "back on the worklist")
	must(t, expect.Locator(role(page, "heading", "Worklist")).ToBeVisible(), "the worklist")
	must(t, expect.Locator(page.GetByText("dr.okafor").First()).ToBeVisible(), "signed in as dr.okafor")
	shot(t, page, "sso-worklist")

	must(t, role(page, "button", "Sign out").Click(), "sign out")
	must(t, expect.Locator(page.GetByText("You are signed out.")).ToBeVisible(), "signed out of the app")
	end := page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Sign out of Test IdP too"})
	must(t, expect.Locator(end).ToBeVisible(), "the provider's sign-out offered")
	shot(t, page, "sso-signed-out")
	must(t, end.Click(), "sign out of the provider too")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(st.URL)+"/clinician/signin")), "back on the sign-in page")
	_, err = page.Goto(st.URL + "/clinician")
	must(t, err, "open the worklist again")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile("/clinician/signin")), "signed out: sent to sign in")
}
