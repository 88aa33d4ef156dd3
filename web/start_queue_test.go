package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// upstreamRequests is every request the sandbox has seen, of any kind.
func (a *app) upstreamRequests() int {
	n := 0
	for _, c := range a.sb.Service.Stats().Requests {
		n += c
	}
	return n
}

// Issue #12 item 4, "Queue, never refuse, at the limit": with the key's
// requests for the minute spent, starting an intake answers at once with the
// intake page, sends nothing upstream, and the page says the intake starts
// with the first message; that message then waits in the key's queue (and
// the browser is told its place), which shows the minute really was spent.
func TestStartingAnIntakeWhileTheMinuteIsSpentAnswersAtOnce(t *testing.T) {
	t.Parallel()
	a := startApp(t, func(c *appwire.Config) { c.PacerPerMinute = 2 })
	b := a.browser()
	first := b.start()
	b.say(first, "hello") // the intake's creation and its turn: the key's 2 requests for the minute
	if a.upstreamCreate() != 1 || a.upstreamTurns() != 1 {
		t.Fatalf("the first intake's first message: %d creates, %d turns upstream, want 1 and 1", a.upstreamCreate(), a.upstreamTurns())
	}
	sent := a.upstreamRequests()

	// Before the change a start waited for a request slot (up to 45 s) and
	// was then refused: 10 s is ample for a start that waits for nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	form := url.Values{"_csrf": {b.csrf()}, "synthetic": {"on"}, "submission_id": {"at-the-limit"}}
	req, _ := http.NewRequestWithContext(ctx, "POST", a.web.URL+"/intakes", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := b.http.Do(req)
	if err != nil {
		t.Fatalf("starting an intake with the minute spent did not answer within 10 s: %v", err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/intakes/iw_") {
		t.Fatalf("starting an intake with the minute spent: %d to %q", res.StatusCode, loc)
	}
	if got := a.upstreamRequests(); got != sent {
		t.Fatalf("starting an intake sent %d requests upstream", got-sent)
	}
	if enc := a.encounter(t, loc); enc != "" {
		t.Fatalf("the new intake has an encounter before its first message: %s", enc)
	}
	p := b.get(loc)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Your intake starts at the intake service with your first message.") ||
		!strings.Contains(p.body, `id="message"`) {
		t.Fatalf("the new intake's page: %d, says it starts with the first message: %v", p.status,
			strings.Contains(p.body, "starts at the intake service with your first message"))
	}

	// Its first message is accepted and queued behind the spent minute.
	j := b.post(loc+"/turns", url.Values{"message": {"my throat hurts"}, "submission_id": {"queued-1"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	if j.status != http.StatusAccepted {
		t.Fatalf("the first message: %d %s", j.status, j.body)
	}
	status, lines, stop := b.openStream(jsonOf(t, j.body)["events_url"].(string))
	defer stop()
	if status != http.StatusOK {
		t.Fatalf("the first message's events: %d", status)
	}
	deadline := time.After(10 * time.Second)
	for queued := false; !queued; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the first message's events ended without saying it was queued")
			}
			queued = l == "event: queued"
		case <-deadline:
			t.Fatal("the first message was not queued within 10 s")
		}
	}
	if a.upstreamCreate() != 1 {
		t.Fatalf("the queued intake was created upstream before a request slot was free: %d creates", a.upstreamCreate())
	}
	// A page made on the server (read without JavaScript) says the place
	// and the wait, as the stream last reported them.
	if p := b.get(loc); !strings.Contains(p.body, "Waiting: your message is next in line; your turn in about") {
		t.Fatalf("the page of a queued first message does not state its place and wait: %d", p.status)
	}
}
