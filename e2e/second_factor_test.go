package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// TestSecondFactorAndSessions: a clinician sets up a second factor from
// the page (QR code and the secret in text), keeps the recovery codes, signs
// in again with a code, and sees and ends their other sessions, at 1,280 and
// 390 px, each page audited with axe-core.
func TestSecondFactorAndSessions(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a := startApp(t, appOptions{Clinicians: map[string]string{clinUser: clinPassword}, Now: clock})
	wide := newPage(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1280, Height: 900}})
	clinicianSignIn(t, wide, a)

	must(t, wide.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Second factor", Exact: playwright.Bool(true)}).Click(), "open Second factor")
	must(t, expect.Locator(role(wide, "heading", "Second factor")).ToBeVisible(), "the set-up page")
	must(t, expect.Locator(wide.GetByRole("img", playwright.PageGetByRoleOptions{Name: "QR code of your intake-web sign-in secret; the same secret is written out below"})).ToBeVisible(), "the QR code")
	secretText, err := wide.Locator(".secret").InnerText()
	must(t, err, "read the secret in text")
	secret := strings.ReplaceAll(secretText, " ", "")
	if !regexp.MustCompile(`^[A-Z2-7]{32}$`).MatchString(secret) {
		t.Fatalf("the secret in text is %q", secretText)
	}
	shot(t, wide, "second-factor-01-setup-1280")
	audit(t, wide, "second factor set-up")

	// The same page on a phone (another session: its own secret, until one
	// is confirmed).
	small := newPage(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}, IsMobile: playwright.Bool(true), HasTouch: playwright.Bool(true)})
	clinicianSignIn(t, small, a)
	_, err = small.Goto(a.URL + "/clinician/second-factor")
	must(t, err, "open Second factor on a phone")
	must(t, expect.Locator(small.Locator(".qr")).ToBeVisible(), "the QR code on a phone")
	if w, err := evalString(small, `() => String(document.documentElement.scrollWidth)`); err != nil || w != "390" {
		t.Errorf("the set-up page is %s px wide on a phone (%v), want 390", w, err)
	}
	shot(t, small, "second-factor-04-setup-390")
	audit(t, small, "second factor set-up on a phone")

	// A wrong code: the error summary takes the focus; the same secret stays.
	must(t, byLabel(wide, "Type the 6-digit code the app now shows").Fill("000000"), "type a wrong code")
	must(t, role(wide, "button", "Turn on the second factor").Click(), "confirm")
	must(t, expect.Locator(wide.Locator("#error-summary")).ToBeFocused(), "the error summary has the focus")
	must(t, expect.Locator(wide.Locator(".secret")).ToHaveText(secretText), "the same secret is kept")
	audit(t, wide, "second factor set-up with an error")

	must(t, byLabel(wide, "Type the 6-digit code the app now shows").Fill(code(t, secret, clock())), "type the code")
	must(t, role(wide, "button", "Turn on the second factor").Click(), "confirm")
	must(t, expect.Locator(wide.Locator(".recovery-codes li")).ToHaveCount(10), "ten recovery codes")
	shot(t, wide, "second-factor-02-recovery-codes-1280")
	audit(t, wide, "recovery codes")

	// Signing in on a phone now asks for the code after the password.
	phone := newPage(t, playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 390, Height: 844}, IsMobile: playwright.Bool(true), HasTouch: playwright.Bool(true),
		UserAgent: playwright.String("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")})
	_, err = phone.Goto(a.URL + "/clinician/signin")
	must(t, err, "open the sign-in page")
	submitSignIn(t, phone, clinUser, clinPassword)
	must(t, expect.Page(phone).ToHaveURL(a.URL+"/clinician/signin/code"), "the password leads to the code")
	shot(t, phone, "second-factor-03-code-390")
	audit(t, phone, "second step of sign-in on a phone")
	mu.Lock()
	now = now.Add(time.Minute) // a code is accepted once: the next one is a later step's
	mu.Unlock()
	must(t, byLabel(phone, "Code").Fill(code(t, secret, clock())), "type the code")
	must(t, role(phone, "button", "Sign in").Click(), "sign in")
	must(t, expect.Page(phone).ToHaveURL(a.URL+"/clinician"), "the code leads to the worklist")

	// The sessions page at both widths.
	_, err = phone.Goto(a.URL + "/clinician/sessions")
	must(t, err, "open Sessions on the phone")
	must(t, expect.Locator(phone.Locator(".sessions-table tbody tr")).ToHaveCount(3), "three sessions")
	must(t, expect.Locator(phone.Locator("main")).ToContainText("Safari on iPhone"), "the phone named in words")
	if w, err := evalString(phone, `() => String(document.documentElement.scrollWidth)`); err != nil || w != "390" {
		t.Errorf("the sessions page is %s px wide on a phone (%v), want 390", w, err)
	}
	shot(t, phone, "sessions-01-390")
	audit(t, phone, "sessions on a phone")
	_, err = wide.Goto(a.URL + "/clinician/sessions")
	must(t, err, "open Sessions")
	if fits, err := evalString(wide, `() => String(document.querySelector(".sessions .table-wrap").scrollWidth <= document.querySelector(".sessions .table-wrap").clientWidth)`); err != nil || fits != "true" {
		t.Errorf("the sessions table is wider than its place at 1,280 px (%v): a button is cut off", err)
	}
	shot(t, wide, "sessions-02-1280")
	audit(t, wide, "sessions")
	must(t, role(wide, "button", "Sign out everywhere else").Click(), "sign out everywhere else")
	must(t, expect.Locator(flash(wide)).ToHaveText("Every other session is signed out."), "said")
	must(t, expect.Locator(wide.Locator(".sessions-table tbody tr")).ToHaveCount(1), "one session left")
	_, err = small.Goto(a.URL + "/clinician")
	must(t, err, "the other phone again")
	must(t, expect.Page(small).ToHaveURL(regexp.MustCompile(`/clinician/signin`)), "the other phone is signed out")
	_, err = phone.Goto(a.URL + "/clinician")
	must(t, err, "the phone again")
	must(t, expect.Page(phone).ToHaveURL(regexp.MustCompile(`/clinician/signin`)), "the phone is signed out")

	if dir := os.Getenv("AUTH38_SHOTS"); dir != "" {
		for _, n := range []string{"second-factor-01-setup-1280", "second-factor-02-recovery-codes-1280", "second-factor-03-code-390", "second-factor-04-setup-390", "sessions-01-390", "sessions-02-1280"} {
			b, err := os.ReadFile(filepath.Join(artifactsDir, n+".png"))
			if err == nil {
				_ = os.WriteFile(filepath.Join(dir, n+".png"), b, 0o644)
			}
		}
	}
}

func code(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	must(t, err, "make a code")
	return c
}
