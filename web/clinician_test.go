package web_test

import (
	"bufio"
	"context"
	"fmt"
	"github.com/clinical-intake/intake-web/bff"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
)

const clinPassword = "correct horse battery"

// withClinician adds an account with every role to the app's database
// before it starts.
func withClinician(t *testing.T, name string) func(*appwire.Config) {
	return withClinicianRoles(t, name, bff.AllRoles()...)
}

// withClinicianRoles adds an account with roles to the app's database
// before it starts.
func withClinicianRoles(t *testing.T, name string, roles ...bff.Role) func(*appwire.Config) {
	return func(c *appwire.Config) {
		c.BcryptCost = 4
		db, err := sqlite.Open(context.Background(), c.DatabasePath, nil)
		if err != nil {
			t.Fatal(err)
		}
		svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, BcryptCost: 4})
		if _, err := svc.AddClinician(context.Background(), "system", name, clinPassword, roles); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}

func (b *browser) signIn(user, password string, header ...string) page {
	b.a.t.Helper()
	token := csrfMeta.FindStringSubmatch(b.get("/clinician/signin").body)
	if token == nil {
		b.a.t.Fatal("no csrf token on the sign-in page")
	}
	return b.post("/clinician/signin", url.Values{"_csrf": {token[1]}, "username": {user}, "password": {password}}, header...)
}

func sessionCookie(b *browser, base string) string {
	u, _ := url.Parse(base)
	for _, c := range b.http.Jar.Cookies(u) {
		if c.Name == "intake_session" {
			return c.Value
		}
	}
	return ""
}

func TestClinicianSignIn(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	// Unauthenticated: pages redirect to sign-in, streams and downloads are 401.
	if p := b.get("/clinician"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin?next=") {
		t.Fatalf("worklist without sign-in: %d %s", p.status, p.header.Get("Location"))
	}
	for _, path := range []string{"/clinician/events", "/clinician/intakes/enc_x/handoff.json"} {
		if p := b.get(path); p.status != http.StatusUnauthorized {
			t.Fatalf("%s without sign-in: %d", path, p.status)
		}
	}
	p := b.get("/clinician/signin")
	for _, want := range []string{`<label for="username">Username</label>`, `type="password"`, ">Sign in<"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("sign-in page lacks %q", want)
		}
	}
	// A wrong password: the same answer as an unknown user, shown on the form.
	for _, try := range [][2]string{{"dr.ada", "wrong password!!"}, {"nobody", clinPassword}} {
		p := b.signIn(try[0], try[1])
		if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "The username or password is wrong") || !strings.Contains(p.body, `role="alert"`) {
			t.Fatalf("sign-in %v: %d", try, p.status)
		}
	}
	before, tokenBefore := sessionCookie(b, a.web.URL), b.csrf()
	p = b.signIn("Dr.Ada", clinPassword) // usernames are case-insensitive
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/clinician" {
		t.Fatalf("sign-in: %d %s", p.status, p.header.Get("Location"))
	}
	if after := sessionCookie(b, a.web.URL); after == "" || after == before {
		t.Fatal("the session token was not renewed at sign-in")
	}
	if b.csrf() == tokenBefore {
		t.Fatal("the CSRF token was not rotated at sign-in")
	}
	if p := b.get("/clinician"); p.status != http.StatusOK || !strings.Contains(p.body, "Worklist") || !strings.Contains(p.body, "dr.ada") {
		t.Fatalf("worklist after sign-in: %d", p.status)
	}
	// Sign-out is a POST, renews the token again and ends the rights.
	token := csrfMeta.FindStringSubmatch(b.get("/clinician").body)[1]
	signedIn := sessionCookie(b, a.web.URL)
	if p := b.post("/clinician/signout", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", p.status)
	}
	if sessionCookie(b, a.web.URL) == signedIn {
		t.Fatal("the session token was not renewed at sign-out")
	}
	if p := b.get("/clinician"); p.status != http.StatusSeeOther {
		t.Fatalf("worklist after sign-out: %d", p.status)
	}
}

// After sign-in the browser goes only to a page of the clinician area,
// whatever next says: no open redirect.
func TestSignInRedirectsOnlyInsideTheClinicianArea(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	for next, want := range map[string]string{
		"/clinician/audit":            "/clinician/audit",
		"https://evil.example/":       "/clinician",
		"//evil.example/clinician":    "/clinician",
		"/clinician\\@evil.example":   "/clinician",
		"/clinician/signin":           "/clinician",
		"/clinician\r\nSet-Cookie: x": "/clinician",
	} {
		b := a.browser()
		token := csrfMeta.FindStringSubmatch(b.get("/clinician/signin").body)[1]
		p := b.post("/clinician/signin", url.Values{"_csrf": {token}, "username": {"dr.ada"}, "password": {clinPassword}, "next": {next}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != want {
			t.Errorf("next %q: %d to %q, want %q", next, p.status, p.header.Get("Location"), want)
		}
	}
}

func TestFailedSignInsAreLimited(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	b := a.browser()
	for i := 0; i < 5; i++ {
		if p := b.signIn("dr.ada", "not the password"); p.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, p.status)
		}
	}
	p := b.signIn("dr.ada", clinPassword)
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "Too many failed sign-ins") {
		t.Fatalf("after 5 failures the right password: %d", p.status)
	}
	// The page says how long the lock lasts and how to lift it.
	for _, w := range []string{"locked for 15 minutes more", "intake-web clinician unlock dr.ada", `role="alert"`} {
		if !strings.Contains(p.body, w) {
			t.Errorf("the sign-in page of a locked account does not say %q", w)
		}
	}
	// The refusal says when to come back, in the header clients read too.
	if ra, err := strconv.Atoi(p.header.Get("Retry-After")); err != nil || ra <= 0 {
		t.Errorf("Retry-After %q: want a positive number of seconds", p.header.Get("Retry-After"))
	}
}

// Behind a trusted proxy, the failures counted per address are the
// client's the proxy saw, not the proxy's: one client's failures do not
// lock out a clinician behind the same proxy.
func TestFailedSignInsAreCountedPerClientBehindAProxy(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	attacker := a.browser()
	for i := range 20 { // the cap per address, each on another account
		if p := attacker.signIn(fmt.Sprintf("guess%d", i), "not the password", "X-Forwarded-For", "203.0.113.66"); p.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i+1, p.status)
		}
	}
	if p := attacker.signIn("dr.ada", clinPassword, "X-Forwarded-For", "203.0.113.66"); p.status != http.StatusTooManyRequests {
		t.Fatalf("from the address with 20 failures, the right password: %d, want 429", p.status)
	}
	if p := a.browser().signIn("dr.ada", clinPassword, "X-Forwarded-For", "203.0.113.7"); p.status != http.StatusSeeOther {
		t.Fatalf("another client behind the proxy: %d, want 303", p.status)
	}
}

func TestPatientSessionsNeverGainClinicianRights(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	patient := a.browser()
	intake := patient.start()
	patient.say(intake, "hello")
	for _, path := range []string{"/clinician", "/clinician/intakes/" + strings.TrimPrefix(intake, "/intakes/"), "/clinician/audit"} {
		if p := patient.get(path); p.status != http.StatusSeeOther {
			t.Fatalf("patient GET %s: %d", path, p.status)
		}
	}
	p := patient.post("/clinician/intakes/"+strings.TrimPrefix(intake, "/intakes/")+"/review", url.Values{"_csrf": {patient.csrf()}})
	if p.status != http.StatusUnauthorized {
		t.Fatalf("patient review: %d", p.status)
	}
}

func TestWorklistAndHandoffReview(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	patient := a.browser()
	calm := patient.start()
	patient.say(calm, "hello")
	patient.say(calm, "I am done")
	urgent := patient.start()
	patient.say(urgent, "this is an emergency")
	open := patient.start()
	patient.say(open, "still talking")
	id := func(path string) string { return strings.TrimPrefix(path, "/intakes/") }

	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	list := doc.get("/clinician").body
	iu, ic, io := strings.Index(list, id(urgent)), strings.Index(list, id(calm)), strings.Index(list, id(open))
	if iu < 0 || ic < 0 || io < 0 || iu > ic || ic > io {
		t.Fatalf("worklist order: urgent@%d closed@%d open@%d", iu, ic, io)
	}
	if f := doc.get("/clinician?urgent=1").body; !strings.Contains(f, id(urgent)) || strings.Contains(f, id(calm)) {
		t.Fatal("the urgent filter does not filter")
	}

	// A closed intake's handoff is served from the store: no upstream call.
	reads := a.sb.Service.Stats().Requests["handoff"]
	h := doc.get("/clinician/intakes/" + id(calm))
	if h.status != http.StatusOK {
		t.Fatalf("handoff page: %d", h.status)
	}
	if got := a.sb.Service.Stats().Requests["handoff"]; got != reads {
		t.Fatalf("a closed handoff cost %d upstream reads", got-reads)
	}
	for _, want := range []string{">Subjective<", ">Objective<", ">Assessment<", ">Plan<", ">Safety<", ">Scores<", ">Conversation<", ">Provenance<",
		"Self-care advice", "cannot_miss_negative", "scripted_score", "audit_ref", "scripted-test-engine/0"} {
		if !strings.Contains(h.body, want) {
			t.Errorf("handoff page lacks %q", want)
		}
	}
	if strings.Contains(h.body, "/refresh") {
		t.Error("a closed handoff offers a refresh")
	}
	// The download is the service's JSON byte for byte.
	dl := doc.get("/clinician/intakes/" + id(calm) + "/handoff.json")
	upstream := a.upstreamHandoff(t, id(calm))
	if dl.status != http.StatusOK || dl.body != upstream || !strings.Contains(dl.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("download: %d, equal to the service's: %v", dl.status, dl.body == upstream)
	}

	// An open intake is read once, then served fresh for 30 s.
	reads = a.sb.Service.Stats().Requests["handoff"]
	doc.get("/clinician/intakes/" + id(open))
	doc.get("/clinician/intakes/" + id(open))
	if got := a.sb.Service.Stats().Requests["handoff"] - reads; got != 1 {
		t.Fatalf("two views of an open handoff cost %d reads, want 1", got)
	}

	// Review, with a note; the worklist shows who.
	token := csrfMeta.FindStringSubmatch(h.body)[1]
	if p := doc.post("/clinician/intakes/"+id(calm)+"/review", url.Values{"_csrf": {token}, "note": {"Agree with self-care."}}); p.status != http.StatusSeeOther {
		t.Fatalf("review: %d %s", p.status, p.body)
	}
	if p := doc.get("/clinician/intakes/" + id(calm)); !strings.Contains(p.body, "Agree with self-care.") {
		t.Fatal("the review note is not shown")
	}
	if list := doc.get("/clinician").body; !strings.Contains(list, "dr.ada") {
		t.Fatal("the worklist does not say who reviewed")
	}
	tooLong := doc.post("/clinician/intakes/"+id(calm)+"/review", url.Values{"_csrf": {token}, "note": {strings.Repeat("n", 2001)}})
	if tooLong.status != http.StatusUnprocessableEntity || !strings.Contains(tooLong.body, "at most 2,000 characters") {
		t.Fatalf("a 2,001-character note: %d", tooLong.status)
	}
	// Everything was audited.
	audit := doc.get("/clinician/audit").body
	// Each action in its own cell: "review" must not match "view_handoff".
	for _, want := range []string{"sign_in", "view_handoff", "download_handoff", "review"} {
		if !strings.Contains(audit, `<td class="mono" data-label="Action">`+want+`</td>`) {
			t.Errorf("the audit log lacks %q", want)
		}
	}
	if !strings.Contains(audit, id(calm)) {
		t.Errorf("the audit log lacks the intake %s", id(calm))
	}
}

// TestClinicianActionsAreAudited: a refresh, a download of a handoff not
// yet stored, a failed sign-in and a sign-out each leave their entry.
func TestClinicianActionsAreAudited(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	patient := a.browser()
	open := patient.start()
	patient.say(open, "still talking")
	id := strings.TrimPrefix(open, "/intakes/")

	doc := a.browser()
	if p := doc.signIn("dr.ada", "wrong password!!"); p.status != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", p.status)
	}
	doc.signIn("dr.ada", clinPassword)
	if dl := doc.get("/clinician/intakes/" + id + "/handoff.json"); dl.status != http.StatusOK {
		t.Fatalf("download: %d", dl.status)
	}
	token := csrfMeta.FindStringSubmatch(doc.get("/clinician/intakes/" + id).body)[1]
	if p := doc.post("/clinician/intakes/"+id+"/refresh", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("refresh: %d", p.status)
	}
	if p := doc.post("/clinician/signout", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", p.status)
	}
	doc.signIn("dr.ada", clinPassword)
	audit := doc.get("/clinician/audit").body
	for _, want := range []string{"sign_in_failed", "download_handoff", "refresh_handoff", "sign_out"} {
		if !regexp.MustCompile(`>\s*` + want + `\s*<`).MatchString(audit) {
			t.Errorf("the audit log lacks %s", want)
		}
	}
}

func TestDisabledClinicianLosesAccess(t *testing.T) {
	t.Parallel()
	var dbPath string
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) { dbPath = c.DatabasePath })
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	db, err := sqlite.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetClinicianDisabled(context.Background(), "dr.ada", true); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if p := doc.get("/clinician"); p.status != http.StatusSeeOther {
		t.Fatalf("a disabled clinician's session still opens the worklist: %d", p.status)
	}
	if p := doc.signIn("dr.ada", clinPassword); p.status != http.StatusUnauthorized {
		t.Fatalf("a disabled clinician signed in: %d", p.status)
	}
}

func TestWorklistFeedAnnouncesChanges(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	req, _ := http.NewRequest("GET", a.web.URL+"/clinician/events", nil)
	res, err := doc.http.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("feed: %v %v", err, res)
	}
	defer res.Body.Close()
	got := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	patient := a.browser()
	intake := patient.start()
	patient.say(intake, "this is an emergency")
	deadline := time.After(10 * time.Second)
	for {
		select {
		case line := <-got:
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, strings.TrimPrefix(intake, "/intakes/")) && strings.Contains(line, `"urgent":true`) {
				return
			}
		case <-deadline:
			t.Fatal("no urgent intake event on the worklist feed")
		}
	}
}

// upstreamHandoff is the service's handoff of the app's intake id: the
// handoff of its encounter, read with the key.
func (a *app) upstreamHandoff(t *testing.T, id string) string {
	t.Helper()
	enc := a.encounter(t, id)
	if enc == "" {
		t.Fatalf("intake %s has no encounter at the service", id)
	}
	req, _ := http.NewRequest("GET", a.sb.URL+"/v1/intakes/"+enc+"/handoff", nil)
	req.Header.Set("Authorization", "Bearer "+a.stack.Key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func TestIdleClinicianIsSignedOut(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) { c.Now = clock })
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	for range 3 { // activity keeps the session alive past the idle limit
		advance(20 * time.Minute)
		if p := doc.get("/clinician"); p.status != http.StatusOK {
			t.Fatalf("an active clinician was signed out: %d", p.status)
		}
	}
	advance(31 * time.Minute)
	if p := doc.get("/clinician"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/clinician/signin") {
		t.Fatalf("after 31 idle minutes: %d %s", p.status, p.header.Get("Location"))
	}
}

func TestReadingAPageDoesNotWriteTheSession(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	if b.get("/").header.Get("Set-Cookie") == "" {
		t.Fatal("the first visit set no session cookie")
	}
	if ck := b.get("/").header.Get("Set-Cookie"); ck != "" {
		t.Fatalf("a second visit rewrote the session: %q", ck)
	}
}
