package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

// fakeClock is a web clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func sessionRows(t *testing.T, dbPath string) int {
	t.Helper()
	db, err := sqlite.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Anonymous page views store nothing; the first intake stores the session,
// and a form opened before it (another tab) still posts.
func TestAnonymousPagesStoreNoSession(t *testing.T) {
	t.Parallel()
	var dbPath string
	a := startApp(t, func(c *appwire.Config) { dbPath = c.DatabasePath })
	b := a.browser()
	for range 5 {
		for _, path := range []string{"/", "/clinician/signin", "/nowhere"} {
			if ck := b.get(path).header.Values("Set-Cookie"); strings.Contains(strings.Join(ck, ";"), "intake_session=") {
				t.Fatalf("GET %s set a session cookie: %q", path, ck)
			}
		}
	}
	if n := sessionRows(t, dbPath); n != 0 {
		t.Fatalf("anonymous page views stored %d sessions", n)
	}
	otherTab := b.csrf()
	b.start()
	if n := sessionRows(t, dbPath); n != 1 {
		t.Fatalf("starting an intake stored %d sessions, want 1", n)
	}
	p := b.post("/intakes", url.Values{"_csrf": {otherTab}, "synthetic": {"on"}, "submission_id": {"other-tab"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("a form opened before the session was stored: %d", p.status)
	}
}

// The pre-session CSRF token must be this app's and match the cookie.
func TestPreSessionCSRFIsChecked(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	victim, attacker := a.browser(), a.browser()
	attackerToken := attacker.csrf()
	victim.csrf() // the victim has a cookie of their own
	for name, tok := range map[string]string{
		"another browser's token": attackerToken,
		"a made-up token":         strings.Repeat("ab", 32),
		"no token":                "",
	} {
		p := victim.post("/intakes", url.Values{"_csrf": {tok}, "synthetic": {"on"}, "submission_id": {"x-" + name}})
		if p.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, p.status)
		}
	}
	// A planted cookie that this app did not sign is refused even when the
	// form carries the same value.
	forged := strings.Repeat("cd", 32)
	u, _ := url.Parse(a.web.URL)
	fresh := a.browser()
	fresh.http.Jar.SetCookies(u, []*http.Cookie{{Name: "intake_csrf", Value: forged, Path: "/"}})
	if p := fresh.post("/intakes", url.Values{"_csrf": {forged}, "synthetic": {"on"}, "submission_id": {"forged"}}); p.status != http.StatusForbidden {
		t.Errorf("a forged cookie and field: %d, want 403", p.status)
	}
}

func TestIntakesPerHourAreCapped(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	a := startApp(t, func(c *appwire.Config) {
		c.Now = clock.Now
		c.Limits.IntakesPerHour, c.Limits.IntakesPerHourPerAddress = 2, 3
	})
	b := a.browser()
	// A refused form does not count.
	if p := b.post("/intakes", url.Values{"_csrf": {b.csrf()}, "age": {"200"}, "synthetic": {"on"}, "submission_id": {"bad"}}); p.status != http.StatusUnprocessableEntity {
		t.Fatalf("an invalid age: %d", p.status)
	}
	b.start()
	b.start()
	before := len(a.stack.Intakes(t))
	p := b.post("/intakes", url.Values{"_csrf": {b.csrf()}, "history": {"penicillin allergy"}, "synthetic": {"on"}, "submission_id": {"third"}})
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "started 2 intakes within the hour") {
		t.Fatalf("a third intake in the hour: %d %.300s", p.status, p.body)
	}
	if !strings.Contains(p.body, "penicillin allergy") {
		t.Error("the refused form lost what was typed")
	}
	if n := len(a.stack.Intakes(t)); n != before {
		t.Errorf("a refused intake was recorded: %d intakes, want %d", n, before)
	}
	// Another session from the same address: the address's cap.
	other := a.browser()
	other.start()
	if p := other.post("/intakes", url.Values{"_csrf": {other.csrf()}, "synthetic": {"on"}, "submission_id": {"o2"}}); p.status != http.StatusTooManyRequests ||
		!strings.Contains(p.body, "from your network address") {
		t.Fatalf("a fourth intake from the address: %d", p.status)
	}
	clock.advance(time.Hour)
	b.start()
}

func TestTurnsPerMinuteAreCapped(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	a := startApp(t, func(c *appwire.Config) { c.Now = clock.Now; c.Limits.TurnsPerMinute = 2 })
	b := a.browser()
	in := b.start()
	b.say(in, "I have a sore throat")
	b.say(in, "3 days")
	before := a.upstreamTurns()
	p := b.say(in, "a third message too soon")
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "2 a minute") || !strings.Contains(p.body, "a third message too soon") {
		t.Fatalf("a third turn within the minute: %d %.400s", p.status, p.body)
	}
	if a.upstreamTurns() != before {
		t.Error("a refused turn reached the service")
	}
	clock.advance(time.Minute)
	if p := b.say(in, "now it may go"); p.status != http.StatusOK {
		t.Fatalf("after a minute: %d", p.status)
	}
}

// openStream opens an event stream and returns its first status, a channel
// of its lines (closed at the end) and a way to close it.
func (b *browser) openStream(path string) (int, <-chan string, func()) {
	b.a.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", b.a.web.URL+path, nil)
	res, err := b.http.Do(req)
	if err != nil {
		cancel()
		b.a.t.Fatal(err)
	}
	lines := make(chan string, 64)
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		close(lines)
		cancel()
		return res.StatusCode, lines, func() {}
	}
	go func() {
		defer close(lines)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return res.StatusCode, lines, cancel
}

// endsWith waits for the stream to end and reports whether it said event.
func endsWith(t *testing.T, lines <-chan string, event string) bool {
	t.Helper()
	said := false
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return said
			}
			if l == "event: "+event {
				said = true
			}
		case <-timeout:
			t.Fatal("the stream is still open 10 s later")
		}
	}
}

func TestStreamsPerSessionAreCapped(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) {
		c.Limits.StreamsPerSession, c.Limits.Heartbeat = 2, 50*time.Millisecond
	})
	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	var closers []func()
	for range 2 {
		status, _, stop := doc.openStream("/clinician/events")
		if status != http.StatusOK {
			t.Fatalf("a stream within the cap: %d", status)
		}
		closers = append(closers, stop)
	}
	if status, _, _ := doc.openStream("/clinician/events"); status != http.StatusTooManyRequests {
		t.Fatalf("a third stream: %d, want 429", status)
	}
	// The refusal says when to try again, in the header clients read.
	res, err := doc.http.Get(a.web.URL + "/clinician/events")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "5" {
		t.Errorf("a third stream: %d with Retry-After %q, want 429 with 5", res.StatusCode, res.Header.Get("Retry-After"))
	}
	// Another browser has its own slots.
	other := a.browser()
	other.signIn("dr.ada", clinPassword)
	if status, _, stop := other.openStream("/clinician/events"); status != http.StatusOK {
		t.Fatalf("another session's stream: %d", status)
	} else {
		defer stop()
	}
	// A closed stream gives its slot back (noticed at the next heartbeat).
	closers[0]()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, stop := doc.openStream("/clinician/events")
		if status == http.StatusOK {
			stop()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed stream never gave its slot back")
		}
		time.Sleep(20 * time.Millisecond) // the server notices the close at its next heartbeat
	}
	closers[1]()
}

// Signing out (in another tab), a disabled account, the reviewer role taken
// away, a session ended elsewhere and the idle limit each end an open
// worklist stream within seconds.
func TestRevocationEndsWorklistStreams(t *testing.T) {
	t.Parallel()
	var dbPath string
	clock := newFakeClock()
	a := startApp(t, withClinician(t, "dr.ada"), func(c *appwire.Config) {
		dbPath, c.Now, c.Limits.StreamRecheck = c.DatabasePath, clock.Now, 50*time.Millisecond
	})
	open := func(doc *browser) <-chan string {
		t.Helper()
		status, lines, stop := doc.openStream("/clinician/events")
		t.Cleanup(stop)
		if status != http.StatusOK {
			t.Fatalf("worklist stream: %d", status)
		}
		return lines
	}

	t.Run("sign-out in another tab", func(t *testing.T) {
		doc := a.browser()
		doc.signIn("dr.ada", clinPassword)
		lines := open(doc)
		token := csrfMeta.FindStringSubmatch(doc.get("/clinician").body)[1]
		if p := doc.post("/clinician/signout", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", p.status)
		}
		if !endsWith(t, lines, "signedout") {
			t.Error("the stream ended without saying why")
		}
	})
	t.Run("account disabled", func(t *testing.T) {
		doc := a.browser()
		doc.signIn("dr.ada", clinPassword)
		lines := open(doc)
		db, err := sqlite.Open(context.Background(), dbPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SetClinicianDisabled(context.Background(), "dr.ada", true); err != nil {
			t.Fatal(err)
		}
		endsWith(t, lines, "signedout")
		if err := db.SetClinicianDisabled(context.Background(), "dr.ada", false); err != nil {
			t.Fatal(err)
		}
		_ = db.Close()
	})
	t.Run("reviewer role taken away", func(t *testing.T) {
		doc := a.browser()
		doc.signIn("dr.ada", clinPassword)
		lines := open(doc)
		db, err := sqlite.Open(context.Background(), dbPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		before, err := db.Clinician(context.Background(), "dr.ada")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // the subtests after need the reviewer role
			if err := db.SetClinicianRoles(context.Background(), "dr.ada", before.Roles); err != nil {
				t.Error(err)
			}
		})
		if err := db.SetClinicianRoles(context.Background(), "dr.ada", []bff.Role{bff.RoleScenarioRunner}); err != nil {
			t.Fatal(err)
		}
		if !endsWith(t, lines, "forbidden") {
			t.Error("the stream ended without saying why")
		}
	})
	t.Run("session ended from another session", func(t *testing.T) {
		doc, other := a.browser(), a.browser()
		doc.signIn("dr.ada", clinPassword)
		other.signIn("dr.ada", clinPassword)
		lines := open(doc)
		token := csrfMeta.FindStringSubmatch(other.get("/clinician/sessions").body)[1]
		if p := other.post("/clinician/sessions/end-others", url.Values{"_csrf": {token}}); p.status != http.StatusSeeOther {
			t.Fatalf("sign out everywhere else: %d", p.status)
		}
		if !endsWith(t, lines, "signedout") {
			t.Error("the stream ended without saying why")
		}
	})
	t.Run("idle limit", func(t *testing.T) {
		doc := a.browser()
		doc.signIn("dr.ada", clinPassword)
		lines := open(doc)
		clock.advance(31 * time.Minute)
		endsWith(t, lines, "signedout")
	})
}

// Behind a trusted proxy the cap per address counts the address the proxy
// saw (the rightmost X-Forwarded-For entry), so clients behind one proxy
// are capped each on their own, and an address a client writes into the
// header itself changes nothing.
func TestAddressCapsSeeTheClientBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	a := startApp(t, func(c *appwire.Config) {
		c.Limits.IntakesPerHour, c.Limits.IntakesPerHourPerAddress = 10, 1
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	})
	start := func(b *browser, id, forwardedFor string) page {
		return b.post("/intakes", url.Values{"_csrf": {b.csrf()}, "synthetic": {"on"}, "submission_id": {id}},
			"X-Forwarded-For", forwardedFor)
	}
	if p := start(a.browser(), "first", "203.0.113.5"); p.status != http.StatusSeeOther {
		t.Fatalf("the first intake from 203.0.113.5: %d", p.status)
	}
	// Another client behind the same proxy has a cap of its own.
	if p := start(a.browser(), "other", "203.0.113.6"); p.status != http.StatusSeeOther {
		t.Fatalf("the first intake from 203.0.113.6: %d %.200s", p.status, p.body)
	}
	// The first client again, from a fresh session, naming another address
	// in front of the one the proxy appended: still capped.
	if p := start(a.browser(), "spoof", "198.51.100.77, 203.0.113.5"); p.status != http.StatusTooManyRequests ||
		!strings.Contains(p.body, "from your network address") {
		t.Fatalf("a written address before the proxy's: %d, want 429", p.status)
	}
	// A written address on a line of its own, then the proxy's line, and a
	// second trusted proxy (10.0.0.2) after it: the same client, still
	// capped.
	b := a.browser()
	req, _ := http.NewRequest("POST", a.web.URL+"/intakes", strings.NewReader(url.Values{
		"_csrf": {b.csrf()}, "synthetic": {"on"}, "submission_id": {"chain"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Add("X-Forwarded-For", "198.51.100.77")
	req.Header.Add("X-Forwarded-For", "203.0.113.5, 10.0.0.2")
	if p := b.do(req); p.status != http.StatusTooManyRequests {
		t.Fatalf("the same client through two proxies: %d, want 429", p.status)
	}
	// A header that is not an address is believed no further than the
	// proxy: it counts as the proxy's own address, for everyone who sends one.
	if p := start(a.browser(), "junk1", "not-an-address"); p.status != http.StatusSeeOther {
		t.Fatalf("the first intake with a junk header: %d", p.status)
	}
	if p := start(a.browser(), "junk2", "203.0.113.9, still-junk"); p.status != http.StatusTooManyRequests {
		t.Fatalf("a second junk header: %d, want 429 (the proxy's address is capped)", p.status)
	}
}

// Without trusted proxies X-Forwarded-For is nobody's word: every request
// from this connection's address shares its cap, whatever it says.
func TestAddressCapsIgnoreForwardedForFromAnyoneElse(t *testing.T) {
	t.Parallel()
	a := startApp(t, func(c *appwire.Config) {
		c.Limits.IntakesPerHour, c.Limits.IntakesPerHourPerAddress = 10, 1
	})
	b := a.browser()
	if p := b.post("/intakes", url.Values{"_csrf": {b.csrf()}, "synthetic": {"on"}, "submission_id": {"first"}},
		"X-Forwarded-For", "203.0.113.5"); p.status != http.StatusSeeOther {
		t.Fatalf("the first intake: %d", p.status)
	}
	other := a.browser()
	if p := other.post("/intakes", url.Values{"_csrf": {other.csrf()}, "synthetic": {"on"}, "submission_id": {"second"}},
		"X-Forwarded-For", "203.0.113.6"); p.status != http.StatusTooManyRequests {
		t.Fatalf("a second intake naming another address: %d, want 429", p.status)
	}
}
