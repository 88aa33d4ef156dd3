package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// seenResponse is one response the browser received, as it received it.
type seenResponse struct {
	URL, Type string
	Status    int
	Headers   map[string]string
	Body      []byte
	BodyErr   error
}

// responseRecorder keeps every response a page receives. Headers and bodies
// are read at once, off the event loop, before a navigation can evict them;
// event streams never finish, so their bodies are read separately.
type responseRecorder struct {
	mu   sync.Mutex
	wg   sync.WaitGroup
	seen []seenResponse
}

func recordResponses(page playwright.Page) *responseRecorder {
	rec := &responseRecorder{}
	page.OnResponse(func(r playwright.Response) {
		rec.wg.Add(1)
		go func() {
			defer rec.wg.Done()
			s := seenResponse{URL: r.URL(), Type: r.Request().ResourceType(), Status: r.Status()}
			s.Headers, _ = r.AllHeaders()
			if s.Type != "eventsource" && (s.Status < 300 || s.Status >= 400) {
				s.Body, s.BodyErr = r.Body()
			}
			rec.mu.Lock()
			rec.seen = append(rec.seen, s)
			rec.mu.Unlock()
		}()
	})
	return rec
}

func (rec *responseRecorder) all(t *testing.T) []seenResponse {
	t.Helper()
	done := make(chan struct{})
	go func() { rec.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(expectTimeout):
		t.Errorf("reading the recorded responses did not finish in %s", expectTimeout)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seenResponse(nil), rec.seen...)
}

// secrets are the forms of the key that must never reach a browser: the
// key itself and its random part alone.
func secrets(key string) []string {
	out := []string{key}
	if i := strings.LastIndex(key, "_"); i >= 0 {
		out = append(out, key[i+1:])
	}
	return out
}

func leaks(s string, key string) bool {
	for _, k := range secrets(key) {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

// TestAPIKeyNeverReachesBrowser records every response of a whole journey
// (start page, a validation error, a new intake, streamed turns, a quick
// reply, an urgent escalation, a 404) and reads each event stream again
// with fetch: the upstream API key is in no header, body, cookie or storage.
func TestAPIKeyNeverReachesBrowser(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	rec := recordResponses(page)
	streams := recordEventStreams(page)

	_, err := page.Goto(a.URL + "/")
	must(t, err, "open the start page")
	fillStartForm(t, page, "200", "female", "None")
	must(t, role(page, "button", "Start intake").Click(), "submit an invalid age")
	must(t, expect.Locator(page.GetByLabel("Age", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToHaveAttribute("aria-invalid", "true"), "the age error")
	must(t, page.GetByLabel("Age", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("30"), "fix the age")
	must(t, role(page, "button", "Start intake").Click(), "click Start intake")
	must(t, expect.Page(page).ToHaveURL(intakePath), "the intake page")

	send(t, page, soreThroatOpening)
	waitReply(t, page, firstReply)
	answerNo(t, page, soreThroatNo[1])
	send(t, page, "I can't breathe")
	waitReply(t, page, urgentReplyPart)
	must(t, expect.Locator(page.GetByRole("alert")).ToBeVisible(), "the urgent alert")

	// Every event stream again, read in the page with fetch.
	urls := streams()
	if len(urls) == 0 {
		t.Fatal("the journey opened no EventSource")
	}
	for _, u := range urls {
		raw, err := evalString(page, `async (u) => {
			const ctl = new AbortController();
			const timer = setTimeout(() => ctl.abort(), 3000);
			let status = 0, headers = [], text = '';
			try {
				const r = await fetch(u, {signal: ctl.signal, headers: {'Accept': 'text/event-stream'}});
				status = r.status;
				headers = [...r.headers.entries()];
				const rd = r.body.getReader(), dec = new TextDecoder();
				for (;;) {
					const {done, value} = await rd.read();
					if (done) break;
					text += dec.decode(value, {stream: true});
				}
			} catch (e) {
				if (e.name !== 'AbortError') throw e;
			}
			clearTimeout(timer);
			return JSON.stringify({status, headers, text});
		}`, u)
		must(t, err, "fetch the event stream %s", u)
		var got struct {
			Status  int
			Headers [][2]string
			Text    string
		}
		must(t, json.Unmarshal([]byte(raw), &got), "decode the fetched stream")
		if got.Status != 200 || !strings.Contains(got.Text, "data:") {
			t.Errorf("the event stream %s answered %d with %d bytes and no data: lines; cannot check it", u, got.Status, len(got.Text))
		}
		if leaks(raw, a.Key) {
			t.Errorf("the event stream %s carries the API key", u)
		}
	}

	// A 404 page too.
	resp, err := page.Goto(a.URL + "/intakes/does-not-exist")
	must(t, err, "open a missing intake")
	if resp.Status() != 404 {
		t.Errorf("a missing intake answered %d, want 404", resp.Status())
	}

	types := map[string]int{}
	for _, s := range rec.all(t) {
		types[s.Type]++
		for name, v := range s.Headers {
			if leaks(name+": "+v, a.Key) {
				t.Errorf("%s %s (%d): header %s carries the API key", s.Type, s.URL, s.Status, name)
			}
		}
		if s.BodyErr != nil {
			t.Logf("%s %s (%d): body unreadable: %v", s.Type, s.URL, s.Status, s.BodyErr)
			continue
		}
		if leaks(string(s.Body), a.Key) {
			t.Errorf("%s %s (%d): the body carries the API key", s.Type, s.URL, s.Status)
		}
	}
	var kinds []string
	for k, n := range types {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kinds)
	t.Logf("responses checked: %s; event streams re-read: %d", strings.Join(kinds, " "), len(urls))
	for _, k := range []string{"document", "script", "stylesheet", "eventsource"} {
		if types[k] == 0 {
			t.Errorf("the journey received no %s response: the check did not cover it", k)
		}
	}

	cookies, err := page.Context().Cookies()
	must(t, err, "read cookies")
	for _, c := range cookies {
		if leaks(c.Name+"="+c.Value, a.Key) {
			t.Errorf("cookie %s carries the API key", c.Name)
		}
	}
	storage, err := evalString(page, `() => JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.documentElement.outerHTML])`)
	must(t, err, "read storage")
	if leaks(storage, a.Key) {
		t.Error("the page's storage or DOM carries the API key")
	}
	if leaks(a.logs.String(), a.Key) {
		t.Error("the app's log carries the API key")
	}
}
