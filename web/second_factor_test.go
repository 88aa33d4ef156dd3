package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

var (
	secretWords   = regexp.MustCompile(`<p class="secret mono"[^>]*>(.*?)</p>`)
	recoveryCodes = regexp.MustCompile(`<li>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})</li>`)
	qrImage       = regexp.MustCompile(`<img class="qr" src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"`)
)

func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enrolThroughThePage sets up the browser's clinician's second factor from
// the page (the QR code's secret, as written out for screen readers) and
// returns the secret and the recovery codes shown.
func enrolThroughThePage(t *testing.T, b *browser, now time.Time) (string, []string) {
	t.Helper()
	p := b.get("/clinician/second-factor")
	if p.status != http.StatusOK || !qrImage.MatchString(p.body) {
		t.Fatalf("set-up page: %d, QR code shown: %v", p.status, qrImage.MatchString(p.body))
	}
	m := secretWords.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no secret in text on the set-up page")
	}
	secret := regexp.MustCompile(`<[^>]+>|\s`).ReplaceAllString(m[1], "")
	token := csrfMeta.FindStringSubmatch(p.body)[1]
	if again := b.get("/clinician/second-factor"); !strings.Contains(again.body, m[1]) {
		t.Fatal("a reload of the set-up shows another secret")
	}
	wrong := b.post("/clinician/second-factor", url.Values{"_csrf": {token}, "code": {"000000"}})
	if wrong.status != http.StatusUnprocessableEntity || !strings.Contains(wrong.body, "That code does not match") || !strings.Contains(wrong.body, m[1]) {
		t.Fatalf("a wrong code: %d, same secret kept: %v", wrong.status, strings.Contains(wrong.body, m[1]))
	}
	ok := b.post("/clinician/second-factor", url.Values{"_csrf": {token}, "code": {totpCode(t, secret, now)}})
	codes := recoveryCodes.FindAllStringSubmatch(ok.body, -1)
	if ok.status != http.StatusOK || len(codes) != 10 || ok.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the right code: %d, %d recovery codes, Cache-Control %q", ok.status, len(codes), ok.header.Get("Cache-Control"))
	}
	var shown []string
	for _, c := range codes {
		shown = append(shown, c[1])
	}
	if again := b.get("/clinician/second-factor"); !strings.Contains(again.body, "10 of your 10 recovery codes are unused") || recoveryCodes.MatchString(again.body) {
		t.Fatal("after set-up, the page does not say the factor is on, or shows the codes again")
	}
	return secret, shown
}

// TestSecondFactorEnrolmentAndSignIn: set up from the page, then signing in
// asks for the code after the password; a wrong code is refused on the same
// page, the right one signs in, a recovery code does once.
func TestSecondFactorEnrolmentAndSignIn(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) { c.Now = clock })
	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	secret, codes := enrolThroughThePage(t, b, clock())

	advance(time.Minute)
	other := a.browser()
	p := other.signIn("dr.ada", clinPassword)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/signin/code" {
		t.Fatalf("password of an account with a second factor: %d to %q", p.status, p.header.Get("Location"))
	}
	if p := other.get("/clinician"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin") {
		t.Fatalf("the worklist with the password alone: %d %s", p.status, p.header.Get("Location"))
	}
	form := other.get("/clinician/signin/code")
	if form.status != http.StatusOK || !strings.Contains(form.body, `autocomplete="one-time-code"`) {
		t.Fatalf("code page: %d", form.status)
	}
	token := csrfMeta.FindStringSubmatch(form.body)[1]
	wrong := other.post("/clinician/signin/code", url.Values{"_csrf": {token}, "code": {"123456"}})
	if wrong.status != http.StatusUnauthorized || !strings.Contains(wrong.body, "The code is wrong") || !strings.Contains(wrong.body, `aria-invalid="true"`) {
		t.Fatalf("a wrong code: %d", wrong.status)
	}
	right := other.post("/clinician/signin/code", url.Values{"_csrf": {token}, "code": {totpCode(t, secret, clock())}})
	if right.status != http.StatusSeeOther || right.header.Get("Location") != "/clinician" {
		t.Fatalf("the right code: %d to %q", right.status, right.header.Get("Location"))
	}
	if p := other.get("/clinician"); p.status != http.StatusOK {
		t.Fatalf("worklist after the code: %d", p.status)
	}

	third := a.browser()
	third.signIn("dr.ada", clinPassword)
	token = csrfMeta.FindStringSubmatch(third.get("/clinician/signin/code").body)[1]
	if p := third.post("/clinician/signin/code", url.Values{"_csrf": {token}, "code": {codes[0]}}); p.status != http.StatusSeeOther {
		t.Fatalf("a recovery code: %d", p.status)
	}
	fourth := a.browser()
	fourth.signIn("dr.ada", clinPassword)
	token = csrfMeta.FindStringSubmatch(fourth.get("/clinician/signin/code").body)[1]
	if p := fourth.post("/clinician/signin/code", url.Values{"_csrf": {token}, "code": {codes[0]}}); p.status != http.StatusUnauthorized {
		t.Fatalf("a recovery code used again: %d", p.status)
	}
	// The pending step lasts 5 minutes.
	advance(6 * time.Minute)
	if p := fourth.get("/clinician/signin/code"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/signin" {
		t.Fatalf("the code step after 6 minutes: %d %q", p.status, p.header.Get("Location"))
	}
}

// TestRequiredSecondFactor: with CLINICIAN_REQUIRE_TOTP an account without
// one reaches nothing but its set-up (and sign-out) until it has one.
func TestRequiredSecondFactor(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), withSandboxFaults, func(c *appwire.Config) { c.RequireTOTP = true })
	b := a.browser()
	if p := b.signIn("dr.ada", clinPassword); p.status != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", p.status)
	}
	for _, path := range []string{"/clinician", "/clinician/audit", "/clinician/scenarios", "/clinician/faults", "/clinician/sessions"} {
		if p := b.get(path); p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician/second-factor" {
			t.Fatalf("%s before set-up: %d to %q", path, p.status, p.header.Get("Location"))
		}
	}
	if p := b.get("/clinician/events"); p.status != http.StatusForbidden {
		t.Fatalf("the worklist stream before set-up: %d", p.status)
	}
	p := b.get("/clinician/second-factor")
	if !strings.Contains(p.body, "This app requires a second factor") {
		t.Fatal("the set-up page does not say it is required")
	}
	token := csrfMeta.FindStringSubmatch(p.body)[1]
	if p := b.post("/clinician/faults", url.Values{"_csrf": {token}, "kind": {"slow"}}); p.status != http.StatusForbidden {
		t.Fatalf("a form before set-up: %d", p.status)
	}
	enrolThroughThePage(t, b, time.Now())
	if p := b.get("/clinician"); p.status != http.StatusOK {
		t.Fatalf("the worklist after set-up: %d", p.status)
	}
}

// TestSessionsPages: a clinician sees their sessions (device, address,
// times) and signs out everywhere else; an administrator sees everyone's
// and ends one; a reviewer cannot end another's. An ended session is
// signed out at its next request, and its worklist stream ends.
func TestSessionsPages(t *testing.T) {
	t.Parallel()
	var dbPath string
	a := startApp(t, withClinicianRoles(t, "dr.rev", bff.RoleReviewer), withClinicianRoles(t, "dr.boss", bff.RoleAdministrator),
		func(c *appwire.Config) { dbPath = c.DatabasePath; c.Limits.StreamRecheck = 50 * time.Millisecond })
	signInWith := func(ua string) *browser {
		b := a.browser()
		b.signIn("dr.rev", clinPassword, "User-Agent", ua)
		return b
	}
	laptop := signInWith("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	phone := signInWith("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")
	tablet := signInWith("Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36")

	p := laptop.get("/clinician/sessions")
	for _, want := range []string{"Firefox on Linux", "Safari on iPhone", "Chrome on Android", "this browser", "127.0.0.1", "Sign out everywhere else"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the sessions page lacks %q", want)
		}
	}
	if strings.Contains(p.body, sessionCookie(phone, a.web.URL)) {
		t.Fatal("the sessions page shows another session's token")
	}
	if strings.Contains(p.body, "/clinician/admin/sessions") {
		t.Error("a reviewer's page links the administrator's")
	}
	// The phone's worklist stream ends when the phone is signed out from here.
	status, lines, stop := phone.openStream("/clinician/events")
	t.Cleanup(stop)
	if status != http.StatusOK {
		t.Fatalf("the phone's worklist stream: %d", status)
	}
	token := csrfMeta.FindStringSubmatch(p.body)[1]
	if r := laptop.post("/clinician/sessions/end-others", url.Values{"_csrf": {token}}); r.status != http.StatusSeeOther {
		t.Fatalf("sign out everywhere else: %d", r.status)
	}
	if !endsWith(t, lines, "signedout") {
		t.Fatal("the ended session's stream ended without saying why")
	}
	for name, b := range map[string]*browser{"phone": phone, "tablet": tablet} {
		if r := b.get("/clinician"); r.status != http.StatusSeeOther {
			t.Fatalf("%s after sign out everywhere else: %d", name, r.status)
		}
	}
	if r := laptop.get("/clinician"); r.status != http.StatusOK {
		t.Fatalf("this browser after sign out everywhere else: %d", r.status)
	}

	// An administrator ends the reviewer's last session; the reviewer
	// cannot end the administrator's.
	boss := a.browser()
	boss.signIn("dr.boss", clinPassword)
	admin := boss.get("/clinician/admin/sessions")
	if admin.status != http.StatusOK || !strings.Contains(admin.body, "dr.rev") || !strings.Contains(admin.body, "dr.boss") {
		t.Fatalf("the administrator's page: %d", admin.status)
	}
	revID := bff.SessionID(sessionCookie(laptop, a.web.URL))
	bossID := bff.SessionID(sessionCookie(boss, a.web.URL))
	rt := csrfMeta.FindStringSubmatch(laptop.get("/clinician/sessions").body)[1]
	if r := laptop.post("/clinician/sessions/"+bossID+"/end", url.Values{"_csrf": {rt}}); r.status != http.StatusNotFound {
		t.Fatalf("a reviewer ends an administrator's session: %d", r.status)
	}
	if r := laptop.post("/clinician/admin/sessions/"+bossID+"/end", url.Values{"_csrf": {rt}}); r.status != http.StatusForbidden {
		t.Fatalf("a reviewer on the administrator's route: %d", r.status)
	}
	bt := csrfMeta.FindStringSubmatch(admin.body)[1]
	if r := boss.post("/clinician/admin/sessions/"+revID+"/end", url.Values{"_csrf": {bt}}); r.status != http.StatusSeeOther {
		t.Fatalf("the administrator ends a session: %d", r.status)
	}
	if r := laptop.get("/clinician"); r.status != http.StatusSeeOther {
		t.Fatalf("the ended session: %d", r.status)
	}
	if r := boss.get("/clinician/admin/sessions"); r.status != http.StatusOK {
		t.Fatalf("the administrator's own session: %d", r.status)
	}
	db, err := sqlite.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log, _ := db.Audit(context.Background(), 200, 0)
	ended := map[string]int{}
	for _, e := range log {
		if e.Action == bff.AuditSessionEnd {
			ended[e.Actor]++
		}
	}
	if ended["dr.rev"] != 2 || ended["dr.boss"] != 1 {
		t.Fatalf("session ends audited %v, want dr.rev 2, dr.boss 1", ended)
	}
}

// A session whose index row is gone is signed out at its next request,
// even while its session row stands (a request in flight when it was ended
// may write the row back).
func TestSessionOutOfTheIndexIsSignedOut(t *testing.T) {
	t.Parallel()
	var dbPath string
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) { dbPath = c.DatabasePath })
	b := a.browser()
	b.signIn("dr.ada", clinPassword)
	if p := b.get("/clinician"); p.status != http.StatusOK {
		t.Fatalf("worklist: %d", p.status)
	}
	db, err := sqlite.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.RemoveClinicianSession(context.Background(), sessionCookie(b, a.web.URL)); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/clinician"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin") {
		t.Fatalf("a session out of the index: %d %q", p.status, p.header.Get("Location"))
	}
}
