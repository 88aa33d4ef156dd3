package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	appwire "github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

func TestPagesCarryStrictSecurityHeaders(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	p := b.get("/")
	csp := p.header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "default-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if p.header.Get("X-Frame-Options") != "DENY" || p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("Referrer-Policy") != "strict-origin-when-cross-origin" {
		t.Errorf("headers: %v", p.header)
	}
	// No inline script or style the CSP would have to allow.
	if strings.Contains(p.body, "<script>") || strings.Contains(p.body, " style=") || strings.Contains(p.body, "onclick=") {
		t.Error("the page has inline script or style")
	}
	ck := p.header.Get("Set-Cookie")
	if !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Lax") || strings.Contains(strings.ToLower(ck), "secure") {
		t.Errorf("session cookie over http: %q", ck)
	}
	// Over https the cookie is Secure and HSTS is on.
	s := startApp(t, func(c *appwire.Config) { c.PublicURL = "https://intake.example" }).browser().get("/")
	if !strings.Contains(strings.ToLower(s.header.Get("Set-Cookie")), "; secure") || s.header.Get("Strict-Transport-Security") == "" {
		t.Errorf("https public URL: cookie %q, HSTS %q", s.header.Get("Set-Cookie"), s.header.Get("Strict-Transport-Security"))
	}
}

func TestEveryPostNeedsTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	other := a.browser()
	otherToken := other.csrf()
	for _, form := range []url.Values{
		{"message": {"hi"}},
		{"message": {"hi"}, "_csrf": {"deadbeef"}},
		{"message": {"hi"}, "_csrf": {otherToken}}, // a valid token of another session
	} {
		if p := b.post(intake+"/turns", form); p.status != http.StatusForbidden {
			t.Fatalf("turn with %v: %d", form, p.status)
		}
		if p := b.post("/intakes", form); p.status != http.StatusForbidden {
			t.Fatalf("start with %v: %d", form, p.status)
		}
	}
	// A browser whose session has no token yet (it never loaded a page)
	// cannot post with an empty one either.
	for _, path := range []string{"/intakes", "/clinician/signin"} {
		fresh := a.browser()
		form := url.Values{"_csrf": {""}, "synthetic": {"on"}, "username": {"x"}, "password": {"y"}}
		if p := fresh.post(path, form, "X-CSRF-Token", ""); p.status != http.StatusForbidden {
			t.Fatalf("a post to %s from a session without a token: %d", path, p.status)
		}
	}
	// Starting sends nothing upstream (the intake is created there with its
	// first turn): the refused starts left no intake in the app, and the
	// refused turns reached nothing.
	if n := len(a.stack.Intakes(t)); n != 1 {
		t.Fatalf("refused starts made intakes: %d in the app, want 1", n)
	}
	if a.upstreamTurns() != 0 || a.upstreamCreate() != 0 {
		t.Fatalf("refused posts reached the service: %d turns, %d creates", a.upstreamTurns(), a.upstreamCreate())
	}
	// The header works too (the page script sends it).
	p := b.post(intake+"/turns", url.Values{"message": {"hi"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	if p.status != http.StatusAccepted {
		t.Fatalf("turn with the header token: %d %s", p.status, p.body)
	}
	b.events(jsonOf(t, p.body)["events_url"].(string), "")
	if a.upstreamTurns() != 1 || a.upstreamCreate() != 1 {
		t.Fatalf("the accepted turn (the intake's first): %d turns, %d creates upstream, want 1 and 1", a.upstreamTurns(), a.upstreamCreate())
	}
}

func TestStartFormErrorsShowNextToTheFieldAndKeepValues(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	cases := []struct {
		form  url.Values
		field string
		text  string
	}{
		{url.Values{"age": {"200"}, "history": {"Asthma; salbutamol <inhaler>"}, "synthetic": {"on"}}, "age", "Age must be a whole number from 0 to 130"},
		{url.Values{"age": {"forty"}, "synthetic": {"on"}}, "age", "Age must be a whole number"},
		{url.Values{"sex": {"unknown"}, "synthetic": {"on"}}, "sex", "Sex must be"},
		{url.Values{"history": {strings.Repeat("x", 4001)}, "synthetic": {"on"}}, "history", "at most 4,000 characters"},
		{url.Values{"age": {"40"}}, "synthetic", "synthetic scenario"},
	}
	for _, c := range cases {
		c.form.Set("_csrf", b.csrf())
		p := b.post("/intakes", c.form)
		if p.status != http.StatusUnprocessableEntity {
			t.Fatalf("%v: status %d", c.form, p.status)
		}
		if !strings.Contains(p.body, c.text) {
			t.Errorf("%v: the page does not say %q", c.form, c.text)
		}
		if !strings.Contains(p.body, `id="`+c.field+`"`) || !strings.Contains(p.body, `aria-invalid="true"`) {
			t.Errorf("%v: field %s not marked invalid", c.form, c.field)
		}
		// What was typed is still there (escaped).
		if h := c.form.Get("history"); h != "" && len(h) < 100 && !strings.Contains(p.body, "Asthma; salbutamol &lt;inhaler&gt;") {
			t.Errorf("history not kept: %s", h)
		}
		if age := c.form.Get("age"); age != "" && !strings.Contains(p.body, `value="`+age+`"`) {
			t.Errorf("age %q not kept", age)
		}
	}
	if n := len(a.stack.Intakes(t)); n != 0 {
		t.Fatalf("%d invalid forms were recorded as intakes", n)
	}
}

func TestAConversationWithoutJavaScript(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start("age", "34", "sex", "female")
	p := b.say(intake, "My   throat <hurts>\nsince Tuesday")
	if p.status != http.StatusOK {
		t.Fatalf("after a turn: %d", p.status)
	}
	// The reply is shown unedited: escaped, whitespace kept (pre-wrap).
	for _, want := range []string{
		`Reply 1: You said &#34;My   throat &lt;hurts&gt;\nsince Tuesday&#34;.
  Anything else?`,
		`role="log"`, `aria-label="Conversation"`, `aria-label="Suggested replies"`,
		`value="Yes"`, `value="No"`, `No warning signs found so far`, `Intake in progress`, `<label for="message">Your message</label>`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("intake page lacks %q", want)
		}
	}
	if strings.Contains(p.body, `role="alert"`) {
		t.Error("an urgent alert on a non-urgent intake")
	}
	if strings.Contains(p.body, "no_red_flags_yet") {
		t.Error("a patient's page shows the code no_red_flags_yet")
	}
	// The terminal turn: the box goes, the disposition stands, and no
	// further turn reaches the service.
	p = b.say(intake, "I am done")
	if strings.Contains(p.body, `id="message"`) || !strings.Contains(p.body, "Self-care advice") || !strings.Contains(p.body, "The serious causes checked for were not found") {
		t.Fatalf("terminal page: box present=%v", strings.Contains(p.body, `id="message"`))
	}
	if strings.Contains(p.body, "cannot_miss_negative") {
		t.Error("a patient's page shows the code cannot_miss_negative")
	}
	if !strings.Contains(p.body, "Start a new intake") {
		t.Error("a closed intake does not offer a new one")
	}
	before := a.upstreamTurns()
	refused := b.post(intake+"/turns", url.Values{"_csrf": {b.csrf()}, "message": {"one more"}, "submission_id": {"x"}})
	if refused.status != http.StatusConflict || !strings.Contains(refused.body, "no more messages can be sent") {
		t.Fatalf("turn after terminal: %d", refused.status)
	}
	if a.upstreamTurns() != before {
		t.Fatal("a turn after terminal was sent upstream")
	}
}

func TestUrgentEscalationShowsAnAlert(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	p := b.say(intake, "this is an emergency")
	if !strings.Contains(p.body, `role="alert"`) || !strings.Contains(p.body, "Urgent escalation") || !strings.Contains(p.body, "A sign of a possibly serious problem was found") {
		t.Fatal("urgent intake without its alert, label or safety status")
	}
	if strings.Contains(p.body, "cannot_miss_positive") {
		t.Error("a patient's page shows the code cannot_miss_positive")
	}
	if strings.Contains(p.body, `id="message"`) {
		t.Fatal("the message box is still there after a terminal escalation")
	}
	// The page leads with the engine's own reply, unedited, in the one
	// alert; nothing suggests waiting for a clinician.
	card, h1 := strings.Index(p.body, `id="emergency-heading"`), strings.Index(p.body, "<h1")
	reply := strings.Index(p.body, "Reply 1: This needs urgent attention. Please call emergency services now.")
	if card < 0 || reply < card || h1 < reply {
		t.Fatalf("the emergency card with the reply is not first: card@%d reply@%d h1@%d", card, reply, h1)
	}
	if n := strings.Count(p.body, `role="alert"`); n != 1 {
		t.Errorf("%d alerts on the emergency page", n)
	}
	lower := strings.ToLower(p.body)
	for _, bad := range []string{"clinician review", "a clinician reviews", "is complete"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the emergency page says %q", bad)
		}
	}
}

func TestMessageErrorsKeepTheText(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	long := strings.Repeat("ü", 8001)
	for _, c := range []struct{ message, text string }{
		{"   ", "Type a message before sending"},
		{long, "the limit is 8,000"},
	} {
		p := b.post(intake+"/turns", url.Values{"_csrf": {b.csrf()}, "message": {c.message}, "submission_id": {"e"}})
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, c.text) {
			t.Fatalf("message %.10q: %d, says %q? %v", c.message, p.status, c.text, strings.Contains(p.body, c.text))
		}
		if len(c.message) > 100 && !strings.Contains(p.body, long) {
			t.Error("the refused message was not kept in the box")
		}
		// JSON callers get the field and the rule.
		j := b.post(intake+"/turns", url.Values{"message": {c.message}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
		e := jsonOf(t, j.body)["error"].(map[string]any)
		if j.status != http.StatusUnprocessableEntity || e["field"] != "message" || !strings.Contains(e["message"].(string), c.text) {
			t.Fatalf("JSON error: %d %v", j.status, e)
		}
	}
	if a.upstreamTurns() != 0 {
		t.Fatal("an invalid message reached the service")
	}
}

// TestPatientsSeeOnlyTheirOwnIntakes: the intruder has an intake and a
// settled turn of her own, so her session has an owner id and every earlier
// guard (no session, no owner, no such intake, no such turn) passes: only
// the owner comparison can refuse her. Every owner-scoped route is tried.
func TestPatientsSeeOnlyTheirOwnIntakes(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	alice, mallory := a.browser(), a.browser()
	intake := alice.start()
	alice.say(intake, "hello")
	id := strings.TrimPrefix(intake, "/intakes/")
	// Alice's turn 2 did not land: a Send again is open for it.
	a.armFault(t, id, "stream_error")
	if p := alice.post(intake+"/turns", url.Values{"message": {"lost words"}, "submission_id": {"alice-2"}}, "X-CSRF-Token", alice.csrf(), "Accept", "application/json"); p.status != http.StatusAccepted {
		t.Fatalf("alice's second turn: %d %s", p.status, p.body)
	}
	alice.events(intake+"/turns/2/events", "")

	// Mallory's own intake, with a turn 1 and a turn 2 at the same indexes.
	own := mallory.start()
	mallory.say(own, "mine")
	mallory.say(own, "mine too")
	if p := mallory.get(own); p.status != http.StatusOK || !strings.Contains(p.body, "mine too") {
		t.Fatalf("mallory cannot open her own intake: %d", p.status)
	}
	if lines := mallory.events(own+"/turns/1/events", ""); !strings.Contains(strings.Join(lines, "\n"), "event: final") {
		t.Fatal("mallory cannot follow her own turn's events")
	}
	before := a.upstreamTurns()

	if p := mallory.get(intake); p.status != http.StatusNotFound || strings.Contains(p.body, "hello") {
		t.Errorf("another browser opened the intake: %d", p.status)
	}
	for _, n := range []string{"1", "2"} {
		if p := mallory.get(intake + "/turns/" + n + "/events"); p.status != http.StatusNotFound || strings.Contains(p.body, "hello") {
			t.Errorf("another browser's events of turn %s: %d", n, p.status)
		}
	}
	for _, c := range []struct {
		name   string
		form   url.Values
		header []string
	}{
		{"streaming turn", url.Values{"message": {"injected"}, "submission_id": {"m-1"}}, []string{"Accept", "application/json"}},
		{"blocking turn", url.Values{"message": {"injected"}, "submission_id": {"m-2"}}, nil},
		{"send again (JSON)", url.Values{"message": {"lost words"}, "submission_id": {"m-3"}, "retry_of": {"2"}}, []string{"Accept", "application/json"}},
		{"send again (form)", url.Values{"message": {"lost words"}, "submission_id": {"m-4"}, "retry_of": {"2"}}, nil},
		// Alice's own submission id: must not hand Mallory Alice's turn.
		{"alice's submission id", url.Values{"message": {"x"}, "submission_id": {"alice-2"}}, []string{"Accept", "application/json"}},
	} {
		c.form.Set("_csrf", mallory.csrf())
		p := mallory.post(intake+"/turns", c.form, c.header...)
		if p.status != http.StatusNotFound || strings.Contains(p.body, "hello") || strings.Contains(p.body, "lost words") {
			t.Errorf("%s on another browser's intake: %d %.200s", c.name, p.status, p.body)
		}
	}
	if a.upstreamTurns() != before {
		t.Errorf("another browser's turns reached the service: %d -> %d", before, a.upstreamTurns())
	}
	if strings.Contains(mallory.get("/").body, id) {
		t.Error("another browser's start page lists the intake")
	}
	if !strings.Contains(alice.get("/").body, id) {
		t.Fatal("the owner's start page does not list the intake to resume")
	}
	// Alice's Send again is still hers to use.
	if p := alice.get(intake); !strings.Contains(p.body, "Send again") {
		t.Error("the intruder's attempts used up the owner's Send again")
	}
}

func TestStreamedTurnWithReplayAndDoubleSubmit(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	send := func() map[string]any {
		p := b.post(intake+"/turns", url.Values{"message": {"hello there"}, "submission_id": {"same"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
		if p.status != http.StatusAccepted {
			t.Fatalf("turn: %d %s", p.status, p.body)
		}
		return jsonOf(t, p.body)
	}
	first := send()
	if !strings.Contains(first["turn_html"].(string), `id="pending"`) || first["events_url"] != intake+"/turns/1/events" {
		t.Fatalf("202 body: %v", first)
	}
	lines := b.events(first["events_url"].(string), "")
	joined := strings.Join(lines, "\n")
	for _, want := range []string{"event: started", "event: delta", "event: completed", "event: final", `id=\"turn-1\"`, "state_html", "composer_html"} {
		if !strings.Contains(joined, want) {
			t.Errorf("stream lacks %q", want)
		}
	}
	var text strings.Builder
	ids := 0
	for i, l := range lines {
		if l == "event: delta" {
			text.WriteString(jsonOf(t, strings.TrimPrefix(lines[i+1], "data: "))["text"].(string))
		}
		if strings.HasPrefix(l, "id: ") {
			ids++
		}
	}
	if text.String() != "Reply 1: You said \"hello there\".\n  Anything else?" {
		t.Fatalf("deltas joined: %q", text.String())
	}
	// Resuming after id 3 gives the rest and nothing before it.
	rest := b.events(first["events_url"].(string), "3")
	if got := strings.Count(strings.Join(rest, "\n"), "\nid: ") + 0; got != ids-3-1 && got != ids-3 {
		t.Fatalf("resume after 3 of %d events gave %d", ids, got)
	}
	if strings.Contains(strings.Join(rest, "\n"), "id: 3\n") || !strings.Contains(strings.Join(rest, "\n"), "id: 4") {
		t.Fatal("resume replayed an event already seen, or skipped one")
	}
	// The same submission again is the same turn, not a second one.
	again := send()
	if again["index"] != float64(1) || a.upstreamTurns() != 1 {
		t.Fatalf("double submit: index %v, %d upstream turns", again["index"], a.upstreamTurns())
	}
}

func TestErrorsShowNoInternals(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	for _, path := range []string{"/nowhere", "/intakes/enc_x_y", "/intakes/enc_x_y/turns/1/events", "/intakes/x/turns/zero/events"} {
		p := b.get(path)
		if p.status != http.StatusNotFound || !strings.Contains(p.body, "Not found") {
			t.Errorf("%s: %d", path, p.status)
		}
		for _, leak := range []string{"sql", "goroutine", ".go:", "Cannot GET"} {
			if strings.Contains(p.body, leak) {
				t.Errorf("%s: the error page shows %q", path, leak)
			}
		}
	}
}

func TestSendAgainOnlyOnceAndOnlyWhileLast(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	id := strings.TrimPrefix(intake, "/intakes/")
	a.armFault(t, id, "stream_error")
	p := b.post(intake+"/turns", url.Values{"message": {"lost words"}, "submission_id": {"first"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	if p.status != http.StatusAccepted {
		t.Fatalf("turn: %d", p.status)
	}
	b.events(intake+"/turns/1/events", "") // to its settling event
	page := b.get(intake).body
	if !strings.Contains(page, "Send again") || !strings.Contains(page, `name="retry_of" value="1"`) {
		t.Fatal("a turn that did not land offers no Send again")
	}
	retry := url.Values{"message": {"lost words"}, "submission_id": {"retry-1"}, "retry_of": {"1"}}
	if p := b.post(intake+"/turns", retry, "X-CSRF-Token", b.csrf(), "Accept", "application/json"); p.status != http.StatusAccepted {
		t.Fatalf("send again: %d %s", p.status, p.body)
	}
	b.events(intake+"/turns/2/events", "")
	// A second click (another submission id) or a stale tab is refused.
	retry.Set("submission_id", "retry-2")
	if p := b.post(intake+"/turns", retry, "X-CSRF-Token", b.csrf(), "Accept", "application/json"); p.status != http.StatusConflict {
		t.Fatalf("second send again: %d", p.status)
	}
	if strings.Contains(b.get(intake).body, "Send again") {
		t.Fatal("Send again still offered after the message was answered")
	}
	if n := strings.Count(a.upstreamHandoff(t, id), `"lost words"`); n != 1 {
		t.Fatalf("the service holds the message %d times", n)
	}
}

// TestSendAgainOnlyForTheLastTurn: turn 1 did not land, its Send again
// (turn 2) did not land either. A stale tab's Send again of turn 1 is
// refused; only turn 2's may be sent, once.
func TestSendAgainOnlyForTheLastTurn(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	id := strings.TrimPrefix(intake, "/intakes/")
	post := func(form url.Values) page {
		return b.post(intake+"/turns", form, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	}
	a.armFault(t, id, "stream_error")
	if p := post(url.Values{"message": {"lost words"}, "submission_id": {"first"}}); p.status != http.StatusAccepted {
		t.Fatalf("turn: %d", p.status)
	}
	b.events(intake+"/turns/1/events", "")
	a.armFault(t, id, "stream_error")
	if p := post(url.Values{"message": {"lost words"}, "submission_id": {"retry-a"}, "retry_of": {"1"}}); p.status != http.StatusAccepted {
		t.Fatalf("send again: %d %s", p.status, p.body)
	}
	b.events(intake+"/turns/2/events", "")
	// Both turns failed and were proven not landed; turn 1 is no longer last.
	if p := post(url.Values{"message": {"lost words"}, "submission_id": {"retry-b"}, "retry_of": {"1"}}); p.status != http.StatusConflict {
		t.Fatalf("send again of a turn that is not the last: %d", p.status)
	}
	if p := post(url.Values{"message": {"lost words"}, "submission_id": {"retry-c"}, "retry_of": {"2"}}); p.status != http.StatusAccepted {
		t.Fatalf("send again of the last turn: %d %s", p.status, p.body)
	}
	b.events(intake+"/turns/3/events", "")
	if n := strings.Count(a.upstreamHandoff(t, id), `"lost words"`); n != 1 {
		t.Fatalf("the service holds the message %d times", n)
	}
	// Turn 3 landed: it is the last turn, but there is nothing to send again.
	if p := post(url.Values{"message": {"lost words"}, "submission_id": {"retry-d"}, "retry_of": {"3"}}); p.status != http.StatusConflict {
		t.Fatalf("send again of a turn that landed: %d", p.status)
	}
	// A dropped stream whose turn landed is no Send again either.
	a.armFault(t, id, "stream_drop")
	if p := post(url.Values{"message": {"dropped words"}, "submission_id": {"drop"}}); p.status != http.StatusAccepted {
		t.Fatalf("turn: %d", p.status)
	}
	b.events(intake+"/turns/4/events", "")
	if p := post(url.Values{"message": {"dropped words"}, "submission_id": {"retry-e"}, "retry_of": {"4"}}); p.status != http.StatusConflict {
		t.Fatalf("send again of a dropped turn that landed: %d", p.status)
	}
	if strings.Contains(b.get(intake).body, "Send again") {
		t.Fatal("Send again offered for a turn that landed")
	}
	if n := strings.Count(a.upstreamHandoff(t, id), `"dropped words"`); n != 1 {
		t.Fatalf("the service holds the dropped message %d times", n)
	}
}

// TestResubmittingTheLastFormReplays: a browser resubmits the form of the
// message that ended the intake (back button, reload). It is the same turn:
// the page comes back, no "intake has ended" error, nothing sent upstream.
func TestResubmittingTheLastFormReplays(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	form := url.Values{"_csrf": {b.csrf()}, "message": {"I am done"}, "submission_id": {"the-last-form"}}
	first := b.post(intake+"/turns", form)
	if first.status != http.StatusSeeOther {
		t.Fatalf("the last turn: %d", first.status)
	}
	before := a.upstreamTurns()
	again := b.post(intake+"/turns", form)
	if again.status != http.StatusSeeOther || again.header.Get("Location") != first.header.Get("Location") {
		t.Fatalf("the resubmitted form: %d %q, want the first answer's redirect %q", again.status, again.header.Get("Location"), first.header.Get("Location"))
	}
	j := b.post(intake+"/turns", url.Values{"message": {"I am done"}, "submission_id": {"the-last-form"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	if j.status != http.StatusAccepted || jsonOf(t, j.body)["index"] != float64(1) {
		t.Fatalf("the resubmission with JavaScript: %d %s", j.status, j.body)
	}
	if a.upstreamTurns() != before {
		t.Fatal("a resubmitted form was sent upstream again")
	}
}

// armFault arms a sandbox fault for the next turn of the app's intake id.
// Before its first turn the intake has no encounter at the service yet, so
// the fault is armed key-wide: the next turn of any intake takes it.
func (a *app) armFault(t *testing.T, id, kind string) {
	t.Helper()
	body := `{"kind":"` + kind + `"}`
	if enc := a.encounter(t, id); enc != "" {
		body = `{"encounter_id":"` + enc + `","kind":"` + kind + `"}`
	}
	req, _ := http.NewRequest("POST", a.sb.URL+"/v1/sandbox/faults", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.stack.Key)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("arm %s: %v %v", kind, err, res)
	}
	res.Body.Close()
}

func TestAnExpiredIntakeIsExplainedAndRefusesTurns(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a := startApp(t, func(c *appwire.Config) { c.Now = clock })
	b := a.browser()
	intake := b.start()
	b.say(intake, "hello")
	mu.Lock()
	now = now.Add(2*time.Hour + time.Minute) // past the service's two-hour limit
	mu.Unlock()
	p := b.get(intake)
	for _, want := range []string{"This intake expired", "Start a new intake", "Reply 1:"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("expired page lacks %q", want)
		}
	}
	if strings.Contains(p.body, `id="message"`) {
		t.Error("an expired intake still has a message box")
	}
	before := a.upstreamTurns()
	r := b.post(intake+"/turns", url.Values{"message": {"late"}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
	if r.status != http.StatusGone || !strings.Contains(r.body, "two-hour limit") || a.upstreamTurns() != before {
		t.Fatalf("a turn on an expired intake: %d %s (upstream turns %d -> %d)", r.status, r.body, before, a.upstreamTurns())
	}
}

// TestEmergencyCardArrivesWithTheFinalEvent: a turn sent with JavaScript
// that makes the intake urgent ends with a final event carrying the
// emergency card (the engine's reply, unedited, in the one alert); a calm
// turn's final event carries none.
func TestEmergencyCardArrivesWithTheFinalEvent(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	intake := b.start()
	final := func(message, sub string) map[string]any {
		t.Helper()
		p := b.post(intake+"/turns", url.Values{"message": {message}, "submission_id": {sub}}, "X-CSRF-Token", b.csrf(), "Accept", "application/json")
		if p.status != http.StatusAccepted {
			t.Fatalf("turn: %d %s", p.status, p.body)
		}
		lines := b.events(jsonOf(t, p.body)["events_url"].(string), "")
		for i, l := range lines {
			if l == "event: final" {
				return jsonOf(t, strings.TrimPrefix(lines[i+1], "data: "))
			}
		}
		t.Fatalf("no final event: %v", lines)
		return nil
	}
	if d := final("hello there", "s1"); d["emergency_html"] != nil || d["urgent"] != false {
		t.Fatalf("a calm turn's final event carries an emergency card: %v", d["emergency_html"])
	}
	d := final("this is an emergency", "s2")
	card, _ := d["emergency_html"].(string)
	if !strings.Contains(card, `role="alert"`) || !strings.Contains(card, "Reply 2: This needs urgent attention. Please call emergency services now.") || d["urgent"] != true {
		t.Fatalf("emergency card in the final event: %q", card)
	}
	if strings.Contains(d["state_html"].(string), `role="alert"`) {
		t.Error("the state panel repeats the alert")
	}
}

// Earlier intakes are told apart by their opening message (shortened, the
// whole of it for screen readers) and their protocol.
func TestEarlierIntakesShowTheirOpeningMessage(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	b := a.browser()
	first := b.start()
	b.say(first, "I have had a sore throat for three days and it is getting worse every single morning when I wake")
	b.start()
	p := b.get("/")
	if !strings.Contains(p.body, "Your earlier intakes") || !strings.Contains(p.body, "No message sent yet") {
		t.Fatalf("start page: %.300s", p.body)
	}
	if !strings.Contains(p.body, "I have had a sore throat for three days and it is getting worse every single…") ||
		!strings.Contains(p.body, `<span class="visually-hidden">I have had a sore throat for three days and it is getting worse every single morning when I wake</span>`) {
		t.Errorf("the opening message is not shown shortened with its whole text for screen readers:\n%s", p.body)
	}
}
