package web_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/engine"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
)

// app is the web app in front of an in-process sandbox (apptest), with a
// record of every response a browser got, searched for the API key.
type app struct {
	t     *testing.T
	stack *apptest.Stack
	web   *appwire.App
	sb    *sandbox.Server
	seen  []string // every response header block and body, to search for the key
}

// startApp runs the app in front of the scripted engine; mutate changes
// the app's configuration before it opens.
func startApp(t *testing.T, mutate ...func(*appwire.Config)) *app {
	t.Helper()
	return startAppOn(t, enginetest.Scripted{}, mutate...)
}

// startAppOn is startApp with eng behind the sandbox.
func startAppOn(t *testing.T, eng engine.Engine, mutate ...func(*appwire.Config)) *app {
	t.Helper()
	st := apptest.Start(t, apptest.Options{
		Engine: eng,
		App: func(c *appwire.Config) {
			for _, m := range mutate {
				m(c)
			}
		},
	})
	a := &app{t: t, stack: st, web: st.App, sb: st.Sandbox}
	t.Cleanup(func() {
		key := st.Key
		for _, s := range a.seen {
			if strings.Contains(s, key) || strings.Contains(s, key[len(key)-12:]) {
				t.Errorf("the API key reached a browser: %.300s", s)
			}
		}
	})
	return a
}

// browser is one cookie jar: one patient session.
type browser struct {
	a    *app
	http *http.Client
}

func (a *app) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{a: a, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.a.t.Helper()
	res, err := b.http.Do(req)
	if err != nil {
		b.a.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var hdr strings.Builder
	_ = res.Header.Write(&hdr)
	b.a.seen = append(b.a.seen, hdr.String(), string(body))
	return page{status: res.StatusCode, header: res.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	req, _ := http.NewRequest("GET", b.a.web.URL+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values, header ...string) page {
	req, _ := http.NewRequest("POST", b.a.web.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

var csrfMeta = regexp.MustCompile(`name="csrf-token" content="([0-9a-f]+)"`)

// csrf loads the start page and returns the session's token.
func (b *browser) csrf() string {
	b.a.t.Helper()
	m := csrfMeta.FindStringSubmatch(b.get("/").body)
	if m == nil {
		b.a.t.Fatal("no csrf-token meta on the start page")
	}
	return m[1]
}

// start creates an intake through the form and returns its path.
func (b *browser) start(fields ...string) string {
	b.a.t.Helper()
	form := url.Values{"_csrf": {b.csrf()}, "synthetic": {"on"}, "submission_id": {"s-" + time.Now().Format("150405.000000000")}}
	for i := 0; i+1 < len(fields); i += 2 {
		form.Set(fields[i], fields[i+1])
	}
	p := b.post("/intakes", form)
	if p.status != http.StatusSeeOther {
		b.a.t.Fatalf("start intake: %d %s", p.status, p.body)
	}
	loc := p.header.Get("Location")
	if !strings.HasPrefix(loc, "/intakes/iw_") {
		b.a.t.Fatalf("start intake redirected to %q", loc)
	}
	return loc
}

// say sends a message the no-JavaScript way and follows the redirect.
func (b *browser) say(intake, message string) page {
	b.a.t.Helper()
	p := b.post(intake+"/turns", url.Values{"_csrf": {b.csrf()}, "message": {message}, "submission_id": {"t-" + time.Now().Format("150405.000000000")}})
	if p.status != http.StatusSeeOther {
		return p
	}
	return b.get(strings.SplitN(p.header.Get("Location"), "#", 2)[0])
}

// encounter is the service's id of the app's intake id (or its path), as
// the app's store holds it: "" before the intake's first turn created it.
func (a *app) encounter(t *testing.T, id string) string {
	t.Helper()
	return a.stack.Intake(t, strings.TrimPrefix(id, "/intakes/")).EncounterID
}

func (a *app) upstreamTurns() int  { return a.sb.Service.Stats().Requests["turn"] }
func (a *app) upstreamCreate() int { return a.sb.Service.Stats().Requests["create"] }

// events reads a turn's event stream to its settling event.
func (b *browser) events(path, lastID string) []string {
	b.a.t.Helper()
	req, _ := http.NewRequest("GET", b.a.web.URL+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := b.http.Do(req)
	if err != nil {
		b.a.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		b.a.t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var lines []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		b.a.seen = append(b.a.seen, sc.Text())
	}
	return lines
}

func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, s)
	}
	return m
}
