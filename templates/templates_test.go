package templates

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func sampleLayout() Layout {
	return Layout{
		Title:    "Intake",
		CSRF:     "csrf-tok-123",
		Embedded: true,
		Release:  "2026.08.1+abc123",
		Nav:      []NavLink{{Label: "Start", URL: "/", Current: true}, {Label: "Clinicians", URL: "/clinician"}},
	}
}

func sampleIntake() IntakePage {
	return IntakePage{
		Layout:    sampleLayout(),
		ID:        "enc_t_0a1b",
		URL:       "/intakes/enc_t_0a1b",
		Status:    "open",
		TimeLeft:  "1 h 42 min left",
		ExpiresAt: "2026-08-01T12:00:00Z",
		State:     StateView{SafetyStatus: "no_red_flags_yet", Disposition: "continue_intake", DispositionLabel: "Continue intake"},
		Turns: []TurnView{
			{Index: 1, Message: "I have a <b>sore</b> throat & fever", Reply: "How long have you had it?\n\n  - days\n  - weeks", Status: "completed"},
		},
		Composer: ComposerView{
			Open: true, Action: "/intakes/enc_t_0a1b/turns", CSRF: "csrf-tok-123", SubmissionID: "sub-1",
			Choices: []string{"2 days", "A week", `Say "<no>"`}, MaxChars: 8000, NewIntakeURL: "/",
		},
	}
}

func TestLayoutLandmarksAndHead(t *testing.T) {
	d := render(t, IntakePageView(sampleIntake()))
	if h := d.all(tag("html")); len(h) != 1 || attrOr(h[0], "lang") != "en" {
		t.Errorf("<html lang=en> missing")
	}
	if !strings.HasPrefix(strings.ToLower(d.src), "<!doctype html>") {
		t.Errorf("no doctype")
	}
	for _, name := range []string{"header", "main", "footer"} {
		if n := d.all(tag(name)); len(n) != 1 {
			t.Errorf("%d <%s> landmarks, want 1", len(n), name)
		}
	}
	skip := d.all(and(tag("a"), withAttr("href", "#main")))
	if len(skip) != 1 || d.byID("main") == nil || d.byID("main").Data != "main" {
		t.Errorf("skip link to #main (a <main>) missing")
	}
	metas := d.all(and(tag("meta"), withAttr("name", "csrf-token")))
	if len(metas) != 1 || attrOr(metas[0], "content") != "csrf-tok-123" {
		t.Errorf("csrf meta: %v", metas)
	}
	scripts := d.all(tag("script"))
	if len(scripts) != 1 || attrOr(scripts[0], "src") != asset("js/app.js") || attrOr(scripts[0], "type") != "module" {
		t.Errorf("want exactly one module script from /static/js/app.js")
	}
	if strings.TrimSpace(text(scripts[0])) != "" {
		t.Errorf("inline script content: %q", text(scripts[0]))
	}
	if st := d.all(func(n *html.Node) bool { _, ok := attr(n, "style"); return ok || n.Data == "style" }); len(st) > 0 {
		t.Errorf("inline styles would need 'unsafe-inline': %d", len(st))
	}
	if l := d.all(and(tag("link"), withAttr("rel", "stylesheet"))); len(l) != 1 || attrOr(l[0], "href") != asset("css/app.css") {
		t.Errorf("stylesheet link missing")
	}
	if !strings.Contains(text(d.all(tag("header"))[0]), "Practice engine: replies come from an offline rules engine, not a clinical service. Synthetic data only.") {
		t.Errorf("embedded banner missing")
	}
	if !strings.Contains(text(d.all(tag("footer"))[0]), "2026.08.1+abc123") {
		t.Errorf("release missing from footer")
	}
	cur := d.all(withAttr("aria-current", "page"))
	if len(cur) != 1 || norm(text(cur[0])) != "Start" {
		t.Errorf("aria-current nav link: %v", cur)
	}
	if len(d.buttons(nil, "Sign out")) != 0 {
		t.Errorf("sign-out shown to a patient")
	}

	l := sampleLayout()
	l.Embedded, l.Release, l.SignedInAs = false, "", "dr.who"
	d = render(t, ErrorPageView(ErrorPage{Layout: l, Status: 404}))
	if strings.Contains(d.src, "Practice engine") || strings.Contains(d.src, "Service release") {
		t.Errorf("banner or release shown when not set")
	}
	so := d.buttons(nil, "Sign out")
	if len(so) != 1 {
		t.Fatalf("sign-out button missing for a clinician")
	}
	f := ancestor(so[0], tag("form"))
	if attrOr(f, "method") != "post" || attrOr(f, "action") != "/signout" || !hasHidden(f, "_csrf", "csrf-tok-123") {
		t.Errorf("sign-out form: method=%q action=%q", attrOr(f, "method"), attrOr(f, "action"))
	}
	if !strings.Contains(text(d.root), "dr.who") {
		t.Errorf("signed-in user not shown")
	}
}

func hasHidden(form *html.Node, name, val string) bool {
	for _, in := range all(form, and(tag("input"), withAttr("type", "hidden"), withAttr("name", name))) {
		if attrOr(in, "value") == val {
			return true
		}
	}
	return false
}

func TestStartPageFields(t *testing.T) {
	p := StartPage{
		Layout: sampleLayout(),
		Form:   StartForm{SubmissionID: "sub-9"},
		Limits: StartLimits{AgeMin: 0, AgeMax: 130, HistoryMax: 4000},
	}
	p.Embedded = false // a real upstream
	d := render(t, StartPageView(p))
	if hs := d.all(tag("h1")); len(hs) != 1 {
		t.Errorf("%d h1, want 1", len(hs))
	}
	age := d.labelled("Age", false)
	if age.Data != "input" || attrOr(age, "name") != "age" {
		t.Errorf("Age control: <%s name=%q>", age.Data, attrOr(age, "name"))
	}
	sex := d.labelled("Sex", false)
	if sex.Data != "select" || attrOr(sex, "name") != "sex" {
		t.Fatalf("Sex control: <%s>", sex.Data)
	}
	var vals, labels []string
	for _, o := range all(sex, tag("option")) {
		vals = append(vals, attrOr(o, "value"))
		labels = append(labels, norm(text(o)))
	}
	if strings.Join(vals, ",") != ",female,male,intersex" || labels[0] != "Not given: the assistant will ask" {
		t.Errorf("sex options: values %q labels %q", vals, labels)
	}
	// What leaving Sex out does is said with the box (the engine then asks
	// it first, with no "prefer not to say").
	var sexDesc string
	for _, id := range describedByIDs(sex) {
		sexDesc += " " + text(d.mustID(id))
	}
	for _, want := range []string{"left out, it asks first", "female, male or intersex"} {
		if !strings.Contains(sexDesc, want) {
			t.Errorf("the Sex box's description lacks %q: %q", want, sexDesc)
		}
	}
	hist := d.labelled("Medical history", false)
	if hist.Data != "textarea" || attrOr(hist, "name") != "history" || attrOr(hist, "maxlength") != "4000" {
		t.Errorf("Medical history: <%s name=%q maxlength=%q>", hist.Data, attrOr(hist, "name"), attrOr(hist, "maxlength"))
	}
	var desc string
	for _, id := range describedByIDs(hist) {
		desc += " " + text(d.mustID(id))
	}
	for _, want := range []string{"4,000", "allergies", "medications", "Synthetic"} {
		if !strings.Contains(desc, want) {
			t.Errorf("history description %q lacks %q", desc, want)
		}
	}
	syn := d.labelled("This is a synthetic scenario", true)
	if attrOr(syn, "type") != "checkbox" || attrOr(syn, "name") != "synthetic" {
		t.Errorf("synthetic checkbox: %v", syn.Attr)
	}
	if _, checked := attr(syn, "checked"); checked {
		t.Errorf("synthetic box pre-checked")
	}
	btn := d.buttons(nil, "Start intake")
	if len(btn) != 1 {
		t.Fatalf("Start intake button missing")
	}
	form := ancestor(btn[0], tag("form"))
	if attrOr(form, "method") != "post" || attrOr(form, "action") != "/intakes" {
		t.Errorf("start form method=%q action=%q", attrOr(form, "method"), attrOr(form, "action"))
	}
	if !hasHidden(form, "_csrf", "csrf-tok-123") || !hasHidden(form, "submission_id", "sub-9") {
		t.Errorf("start form lacks _csrf or submission_id")
	}
	main := text(d.all(tag("main"))[0])
	for _, want := range []string{"research-preview sandbox", "synthetic scenarios only", "Never enter real patient data", "20 to 40 seconds"} {
		if !strings.Contains(main, want) {
			t.Errorf("start page does not say %q", want)
		}
	}
	// With the embedded sandbox a reply takes a few seconds, and the page
	// says so (the 20 to 40 s of the real service would be wrong).
	emb := p
	emb.Embedded = true
	embText := text(render(t, StartPageView(emb)).all(tag("main"))[0])
	if !strings.Contains(embText, "a few seconds") || strings.Contains(embText, "20 to 40") {
		t.Errorf("embedded start page reply time: %q", embText)
	}
	for _, n := range d.all(withAttr("aria-invalid", "true")) {
		t.Errorf("aria-invalid without errors on #%s", attrOr(n, "id"))
	}
	if d.byID("error-summary") != nil || d.all(withAttr("role", "alert")) != nil {
		t.Errorf("error summary shown without errors")
	}
	if strings.Contains(d.src, "earlier-heading") {
		t.Errorf("earlier intakes section shown with none")
	}
}

func TestStartPageErrorsKeepValues(t *testing.T) {
	p := StartPage{
		Layout: sampleLayout(),
		Form:   StartForm{Age: "200", Sex: "intersex", History: "\nPenicillin <allergy>\n  ibuprofen", Synthetic: false},
		Errors: FieldErrors{"age": "Age must be a whole number from 0 to 130.", "synthetic": "Confirm that this is a synthetic scenario.", "": "The service is busy."},
		Limits: StartLimits{AgeMax: 130, HistoryMax: 4000},
	}
	d := render(t, StartPageView(p))
	check := func(ctl *html.Node, field, msg string) {
		t.Helper()
		if attrOr(ctl, "aria-invalid") != "true" {
			t.Errorf("%s: aria-invalid not set", field)
		}
		ids := describedByIDs(ctl)
		found := false
		for _, id := range ids {
			if strings.Contains(text(d.mustID(id)), msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: message %q not in aria-describedby %v", field, msg, ids)
		}
		// The message sits in the same field wrapper as the control.
		wrap := ancestor(ctl, func(n *html.Node) bool { return strings.Contains(" "+attrOr(n, "class")+" ", " field ") })
		if wrap == nil || !strings.Contains(text(wrap), msg) {
			t.Errorf("%s: message not next to the field", field)
		}
	}
	age := d.labelled("Age", false)
	check(age, "age", "whole number from 0 to 130")
	if attrOr(age, "value") != "200" {
		t.Errorf("age value not kept: %q", attrOr(age, "value"))
	}
	check(d.labelled("This is a synthetic scenario", true), "synthetic", "Confirm that this is a synthetic scenario.")
	sex := d.labelled("Sex", false)
	if attrOr(sex, "aria-invalid") != "" {
		t.Errorf("sex marked invalid without an error")
	}
	sel := all(sex, and(tag("option"), func(n *html.Node) bool { _, ok := attr(n, "selected"); return ok }))
	if len(sel) != 1 || attrOr(sel[0], "value") != "intersex" {
		t.Errorf("sex selection not kept")
	}
	hist := d.labelled("Medical history", false)
	if got := text(hist); got != p.Form.History {
		t.Errorf("history value: got %q, want %q (leading newline must survive)", got, p.Form.History)
	}
	if d.labelled("Medical history", false) != nil && attrOr(hist, "aria-invalid") != "" {
		t.Errorf("history marked invalid")
	}
	if strings.Contains(d.src, "<allergy>") {
		t.Errorf("history not escaped")
	}
	sum := d.mustID("error-summary")
	if attrOr(sum, "role") != "alert" || !strings.Contains(text(sum), "The service is busy.") {
		t.Errorf("form-level error not in the summary")
	}
	links := all(sum, tag("a"))
	if len(links) != 2 || attrOr(links[0], "href") != "#age" || attrOr(links[1], "href") != "#synthetic" {
		t.Errorf("summary links: %d", len(links))
	}
	if c := d.mustID("history-count"); norm(text(c)) != "33 / 4,000" {
		t.Errorf("history counter %q", text(c))
	}
}

func TestStartPageEarlierIntakes(t *testing.T) {
	p := StartPage{Layout: sampleLayout(), Earlier: []IntakeLink{
		{URL: "/intakes/enc_a", Created: "Today 10:42", Status: "open", Turns: 3},
		{URL: "/intakes/enc_b", Created: "Yesterday 09:00", Status: "closed", DispositionLabel: "Urgent escalation", Urgent: true, Turns: 1},
	}}
	d := render(t, StartPageView(p))
	h := d.all(tag("h2"))
	var found bool
	for _, n := range h {
		if norm(text(n)) == "Your earlier intakes" {
			found = true
		}
	}
	if !found {
		t.Errorf("earlier intakes heading missing")
	}
	links := d.all(func(n *html.Node) bool { return n.Data == "a" && strings.HasPrefix(norm(text(n)), "Resume") })
	if len(links) != 2 || attrOr(links[0], "href") != "/intakes/enc_a" || attrOr(links[1], "href") != "/intakes/enc_b" {
		t.Fatalf("resume links: %d", len(links))
	}
	if norm(text(links[0])) == norm(text(links[1])) {
		t.Errorf("resume links have the same accessible name %q", norm(text(links[0])))
	}
	li := ancestor(links[1], tag("li"))
	for _, want := range []string{"Urgent escalation", "Urgent", "1 turn", "Closed"} {
		if !strings.Contains(text(li), want) {
			t.Errorf("earlier intake item lacks %q: %q", want, norm(text(li)))
		}
	}
}

func TestIntakePageStructure(t *testing.T) {
	p := sampleIntake()
	d := render(t, IntakePageView(p))
	log := d.mustID("transcript")
	if log.Data != "div" || attrOr(log, "role") != "log" || attrOr(log, "aria-label") != "Conversation" {
		t.Errorf("transcript: <%s role=%q aria-label=%q>", log.Data, attrOr(log, "role"), attrOr(log, "aria-label"))
	}
	st := d.mustID("status")
	if attrOr(st, "role") != "status" || attrOr(st, "aria-live") != "polite" {
		t.Errorf("status region attributes")
	}
	if n := d.all(withAttr("role", "status")); len(n) != 1 {
		t.Errorf("%d role=status regions, want 1", len(n))
	}
	d.mustID("state")
	d.mustID("composer")
	if d.all(withAttr("role", "alert")) != nil {
		t.Errorf("urgent alert shown on a non-urgent intake")
	}
	tl := d.mustID("time-left")
	if attrOr(tl, "data-expires-at") != "2026-08-01T12:00:00Z" || norm(text(tl)) != "1 h 42 min left" {
		t.Errorf("time left: %q %q", attrOr(tl, "data-expires-at"), text(tl))
	}
	// Heading levels never skip.
	prev := 0
	for _, h := range d.all(func(n *html.Node) bool {
		return len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6'
	}) {
		lvl := int(h.Data[1] - '0')
		if lvl > prev+1 {
			t.Errorf("heading %s %q skips a level after h%d", h.Data, norm(text(h)), prev)
		}
		prev = lvl
	}
	if d.byID("pending") != nil {
		t.Errorf("pending item without a pending turn")
	}
	for _, f := range d.all(tag("form")) {
		if attrOr(f, "method") != "post" {
			t.Errorf("form without method=post: %v", f.Attr)
		}
	}
}

func TestTurnItemKeepsTextUnedited(t *testing.T) {
	tv := TurnView{Index: 4, Message: "  <script>alert(1)</script>\nline two  ", Reply: "Line 1\n\n    indented <i>not italic</i>\n", Status: "completed"}
	d := renderFragment(t, TurnItem(tv))
	roots := d.all(func(n *html.Node) bool { return strings.Contains(" "+attrOr(n, "class")+" ", " turn ") })
	if len(roots) != 1 || roots[0].Data != "div" || attrOr(roots[0], "data-index") != "4" || attrOr(roots[0], "id") != "turn-4" || len(d.all(tag("li"))) != 0 {
		t.Fatalf("turn item root: %d .turn, %v", len(roots), d.src)
	}
	texts := d.all(func(n *html.Node) bool { return strings.Contains(" "+attrOr(n, "class")+" ", " msg__text ") })
	if len(texts) != 2 {
		t.Fatalf("%d message texts, want 2", len(texts))
	}
	if got := text(texts[0]); got != tv.Message {
		t.Errorf("patient message: %q, want %q", got, tv.Message)
	}
	if got := text(texts[1]); got != tv.Reply {
		t.Errorf("reply: %q, want %q", got, tv.Reply)
	}
	if _, ok := attr(texts[1], "data-reply"); !ok {
		t.Errorf("reply element lacks data-reply")
	}
	if strings.Contains(d.src, "<script>") || strings.Contains(d.src, "<i>") {
		t.Errorf("message HTML not escaped: %s", d.src)
	}
	if d.all(tag("script")) != nil || d.all(tag("i")) != nil {
		t.Errorf("message text became elements")
	}
	// Patient first, then the reply.
	if strings.Index(d.src, "alert(1)") > strings.Index(d.src, "Line 1") {
		t.Errorf("reply rendered before the patient's message")
	}
}

func TestPendingAndFailedTurns(t *testing.T) {
	p := sampleIntake()
	p.Turns = append(p.Turns, TurnView{Index: 2, Message: "next", Reply: "Partial", Status: "streaming", Pending: true})
	p.EventsURL = "/intakes/enc_t_0a1b/turns/2/events"
	p.Composer.Busy = true
	d := render(t, IntakePageView(p))
	pend := d.mustID("pending")
	if pend.Data != "div" || attrOr(pend, "data-events-url") != p.EventsURL || attrOr(pend, "data-index") != "2" {
		t.Errorf("pending item: %v", pend.Attr)
	}
	if r := all(pend, withAttr("data-reply", "")); len(r) != 1 || text(r[0]) != "Partial" {
		t.Errorf("partial reply not shown")
	}
	send := d.buttons(d.mustID("composer"), "Send")
	if len(send) != 1 {
		t.Fatalf("Send missing")
	}
	if _, dis := attr(send[0], "disabled"); !dis {
		t.Errorf("Send enabled while a turn is in progress")
	}
	for _, b := range d.all(withAttr("name", "message")) {
		if b.Data == "button" {
			if _, dis := attr(b, "disabled"); !dis {
				t.Errorf("quick reply %q enabled while busy", attrOr(b, "value"))
			}
		}
	}
	if _, dis := attr(d.mustID("message"), "disabled"); dis {
		t.Errorf("message box disabled while busy: typing ahead must stay possible")
	}

	// Own events URL wins; failed turns are never "pending".
	d = renderFragment(t, TurnItem(TurnView{Index: 3, Message: "m", Pending: true, Status: "queued", EventsURL: "/e/3"}))
	if attrOr(d.mustID("pending"), "data-events-url") != "/e/3" {
		t.Errorf("fragment pending events url")
	}
	d = renderFragment(t, TurnItem(TurnView{Index: 3, Message: "my words", Failed: true, Status: "failed", ErrorMessage: "The engine failed.",
		Retry: RetryForm{Action: "/intakes/x/turns", CSRF: "c", SubmissionID: "s2"}}))
	if d.byID("pending") != nil || d.byID("turn-3") == nil {
		t.Errorf("failed turn id")
	}
	if !strings.Contains(text(d.root), "The engine failed.") {
		t.Errorf("failure message missing")
	}
	again := d.buttons(nil, "Send again")
	if len(again) != 1 {
		t.Fatalf("retry button missing")
	}
	f := ancestor(again[0], tag("form"))
	if attrOr(f, "method") != "post" || !hasHidden(f, "message", "my words") || !hasHidden(f, "submission_id", "s2") || !hasHidden(f, "_csrf", "c") {
		t.Errorf("retry form fields")
	}
	d = renderFragment(t, TurnItem(TurnView{Index: 3, Message: "m", Failed: true, ErrorMessage: "x"}))
	if len(d.buttons(nil, "Send again")) != 0 {
		t.Errorf("retry offered without an action")
	}
}

func TestEmergencyCard(t *testing.T) {
	const reply = "Please call emergency services now.\n  Do not wait for a reply here."
	d := renderFragment(t, EmergencyCard(EmergencyView{Show: true, Message: reply, DispositionLabel: "Urgent escalation"}))
	alerts := d.all(withAttr("role", "alert"))
	if len(alerts) != 1 {
		t.Fatalf("emergency card alerts: %d", len(alerts))
	}
	if !strings.Contains(text(alerts[0]), reply) {
		t.Errorf("the engine's message is not shown unedited: %q", text(alerts[0]))
	}
	txt := strings.ToLower(norm(text(alerts[0])))
	for _, bad := range []string{"clinician review", "complete", "a clinician"} {
		if strings.Contains(txt, bad) {
			t.Errorf("the emergency card says %q: %q", bad, txt)
		}
	}
	d = renderFragment(t, EmergencyCard(EmergencyView{}))
	if d.all(withAttr("role", "alert")) != nil {
		t.Errorf("an emergency card without Show")
	}
}

// Patients read plain words for the known safety_status and disposition
// values, never the codes; an unknown value is shown as received (putting
// it in words would be a guess), none as "not reported yet".
func TestPatientsReadPlainWordsNotCodes(t *testing.T) {
	for status, want := range map[string]string{
		"no_red_flags_yet":     "No warning signs found so far",
		"cannot_miss_negative": "The serious causes checked for were not found",
		"cannot_miss_positive": "A sign of a possibly serious problem was found",
		"some_new_status":      "some_new_status",
		"":                     "not reported yet",
	} {
		d := renderFragment(t, StatePanel(StateView{SafetyStatus: status}))
		if got := text(d.mustID("safety-status")); got != want {
			t.Errorf("safety status %q shown as %q, want %q", status, got, want)
		}
		if txt := norm(text(d.mustID("state"))); want != status && status != "" && strings.Contains(txt, status) {
			t.Errorf("a patient sees the code %s: %q", status, txt)
		}
	}
	for _, tc := range []struct {
		code, label string
		urgent      bool
		want        string
	}{
		{"urgent_escalation", "Urgent escalation", true, "Urgent escalation"}, // the service's label, always, when sent
		{"continue_intake", "", false, "Intake in progress"},
		{"self_care", "", false, "Self-care advice"},
		{"clinician_review", "", false, "A clinician should review this"},
		{"urgent_escalation", "", true, "Urgent: seek emergency care now"},
		// Same-day urgent: never "emergency" words without the urgent flag.
		{"urgent_escalation", "", false, "Urgent: be seen today"},
		{"some_new_disposition", "", false, "some_new_disposition"},
		{"", "", false, "not reported yet"},
	} {
		d := renderFragment(t, StatePanel(StateView{Disposition: tc.code, DispositionLabel: tc.label, Urgent: tc.urgent}))
		if got := text(d.mustID("disposition")); got != tc.want {
			t.Errorf("disposition %q (label %q) shown as %q, want %q", tc.code, tc.label, got, tc.want)
		}
	}
}

func TestStatePanel(t *testing.T) {
	d := renderFragment(t, StatePanel(StateView{Urgent: true, SafetyStatus: "cannot_miss_positive", Disposition: "urgent_escalation", DispositionLabel: "Urgent escalation"}))
	root := d.mustID("state")
	// The emergency card carries the page's one alert, not the state panel.
	if alerts := all(root, withAttr("role", "alert")); len(alerts) != 0 {
		t.Errorf("the state panel repeats the alert: %d", len(alerts))
	}
	txt := norm(text(root))
	for _, want := range []string{"Safety status: A sign of a possibly serious problem was found", "Disposition: Urgent escalation"} {
		if !strings.Contains(txt, want) {
			t.Errorf("state lacks %q: %q", want, txt)
		}
	}
	for _, code := range []string{"cannot_miss_positive", "urgent_escalation"} {
		if strings.Contains(txt, code) {
			t.Errorf("a patient sees the code %s: %q", code, txt)
		}
	}

	d = renderFragment(t, StatePanel(StateView{}))
	if d.all(withAttr("role", "alert")) != nil {
		t.Errorf("alert shown when not urgent")
	}
	txt = norm(text(d.mustID("state")))
	for _, want := range []string{"Safety status: not reported yet", "Disposition: not reported yet"} {
		if !strings.Contains(txt, want) {
			t.Errorf("empty state lacks %q: %q", want, txt)
		}
	}
	if strings.Contains(txt, "complete") {
		t.Errorf("non-terminal state says complete")
	}

	// Unknown values are shown as received, never rewritten.
	d = renderFragment(t, StatePanel(StateView{SafetyStatus: "some_new_status", Disposition: "some_new_disposition", Terminal: true}))
	txt = norm(text(d.mustID("state")))
	for _, want := range []string{"Safety status: some_new_status", "Disposition: some_new_disposition"} {
		if !strings.Contains(txt, want) {
			t.Errorf("state lacks %q: %q", want, txt)
		}
	}
}

func TestComposerOpen(t *testing.T) {
	c := sampleIntake().Composer
	c.Message = "typed <b>text</b> 🙂"
	c.Error = "Your message is too long."
	d := renderFragment(t, ComposerPanel(c))
	root := d.mustID("composer")
	box := d.labelled("Your message", false)
	if box.Data != "textarea" || attrOr(box, "id") != "message" || attrOr(box, "name") != "message" {
		t.Errorf("message box: <%s id=%q name=%q>", box.Data, attrOr(box, "id"), attrOr(box, "name"))
	}
	if text(box) != c.Message {
		t.Errorf("typed message not kept: %q", text(box))
	}
	if attrOr(box, "aria-invalid") != "true" || !contains(describedByIDs(box), "message-error") {
		t.Errorf("error not tied to the box: %v", box.Attr)
	}
	if e := d.mustID("message-error"); !strings.Contains(text(e), c.Error) || hiddenAttr(e) {
		t.Errorf("error text not shown")
	}
	if cnt := d.mustID("message-count"); norm(text(cnt)) != "19 / 8,000" || !contains(describedByIDs(box), "message-count") {
		t.Errorf("counter %q", text(cnt))
	}
	send := d.buttons(root, "Send")
	if len(send) != 1 {
		t.Fatalf("Send button missing")
	}
	if _, dis := attr(send[0], "disabled"); dis {
		t.Errorf("Send disabled when not busy")
	}
	mf := ancestor(box, tag("form"))
	if mf != ancestor(send[0], tag("form")) || attrOr(mf, "method") != "post" || attrOr(mf, "action") != c.Action ||
		!hasHidden(mf, "_csrf", c.CSRF) || !hasHidden(mf, "submission_id", c.SubmissionID) {
		t.Errorf("message form")
	}
	groups := all(root, and(withAttr("role", "group"), withAttr("aria-label", "Suggested replies")))
	if len(groups) != 1 {
		t.Fatalf("suggested replies group: %d", len(groups))
	}
	btns := all(groups[0], tag("button"))
	if len(btns) != len(c.Choices) {
		t.Fatalf("%d quick replies, want %d", len(btns), len(c.Choices))
	}
	for i, b := range btns {
		if attrOr(b, "type") != "submit" || attrOr(b, "name") != "message" || attrOr(b, "value") != c.Choices[i] || norm(text(b)) != c.Choices[i] {
			t.Errorf("quick reply %d: %v %q", i, b.Attr, text(b))
		}
	}
	qf := ancestor(groups[0], tag("form"))
	if qf == nil || attrOr(qf, "method") != "post" || attrOr(qf, "action") != c.Action || !hasHidden(qf, "_csrf", c.CSRF) || !hasHidden(qf, "submission_id", c.SubmissionID) {
		t.Errorf("quick reply form")
	}
	if strings.Contains(d.src, `<no>`) || strings.Contains(d.src, "<b>text") {
		t.Errorf("choice or message not escaped")
	}
	if len(d.all(func(n *html.Node) bool { return n.Data == "a" && attrOr(n, "href") != "#message" })) != 0 {
		t.Errorf("open composer offers a new-intake link")
	}
	// The error is summarised at the top of the composer (focusable, linked
	// to the box): the error summary pattern of every form.
	sum := d.mustID("error-summary")
	if attrOr(sum, "tabindex") != "-1" || !strings.Contains(text(sum), c.Error) {
		t.Errorf("composer error summary: %v", sum.Attr)
	}
	if links := all(sum, tag("a")); len(links) != 1 || attrOr(links[0], "href") != "#message" {
		t.Errorf("the summary's error does not link to the message box")
	}

	c = sampleIntake().Composer
	c.Choices = nil
	d = renderFragment(t, ComposerPanel(c))
	if d.all(withAttr("role", "group")) != nil {
		t.Errorf("empty suggested replies group rendered")
	}
	if e := d.mustID("message-error"); !hiddenAttr(e) || attrOr(d.mustID("message"), "aria-invalid") != "" {
		t.Errorf("error slot visible without an error")
	}
}

func TestComposerClosedAndTerminalPage(t *testing.T) {
	p := sampleIntake()
	p.Status = "closed"
	p.TimeLeft = ""
	p.StatusNote = "This intake is complete: its summary was handed to a clinician."
	p.State = StateView{Terminal: true, Urgent: true, SafetyStatus: "cannot_miss_positive", Disposition: "urgent_escalation", DispositionLabel: "Urgent escalation"}
	p.Emergency = EmergencyView{Show: true, Message: "Call emergency services now.", DispositionLabel: "Urgent escalation"}
	p.Composer = ComposerView{Open: false, NewIntakeURL: "/", Choices: []string{"should not show"}}
	d := render(t, IntakePageView(p))
	if d.byID("message") != nil || d.all(tag("textarea")) != nil {
		t.Errorf("message box present on a terminal intake")
	}
	if len(d.buttons(nil, "Send")) != 0 || d.all(withAttr("aria-label", "Suggested replies")) != nil {
		t.Errorf("Send or quick replies present on a terminal intake")
	}
	links := d.all(func(n *html.Node) bool { return n.Data == "a" && norm(text(n)) == "Start a new intake" })
	if len(links) != 1 || attrOr(links[0], "href") != "/" {
		t.Errorf("Start a new intake link: %d", len(links))
	}
	if ancestor(links[0], withAttr("id", "composer")) == nil {
		t.Errorf("new intake link is not inside #composer")
	}
	if !strings.Contains(text(d.root), p.StatusNote) {
		t.Errorf("status note missing")
	}
	if d.byID("time-left") != nil {
		t.Errorf("time left shown on a closed intake")
	}
	if len(d.all(withAttr("role", "alert"))) != 1 || !strings.Contains(norm(text(d.mustID("state"))), "Disposition: Urgent escalation") {
		t.Errorf("final disposition or urgent flag missing")
	}
	d = renderFragment(t, ComposerPanel(ComposerView{}))
	if a := d.all(tag("a")); len(a) != 1 || attrOr(a[0], "href") != "/" {
		t.Errorf("new intake link defaults to /")
	}
}

func TestErrorPage(t *testing.T) {
	d := render(t, ErrorPageView(ErrorPage{Layout: sampleLayout(), Status: 404, Message: "No intake <here>."}))
	h := d.all(tag("h1"))
	if len(h) != 1 || norm(text(h[0])) != "Page not found" {
		t.Errorf("default heading: %v", h)
	}
	if !strings.Contains(text(d.root), "No intake <here>.") || strings.Contains(d.src, "<here>") {
		t.Errorf("message missing or not escaped")
	}
	d = render(t, ErrorPageView(ErrorPage{Layout: sampleLayout(), Status: 500, Heading: "Custom"}))
	if norm(text(d.all(tag("h1"))[0])) != "Custom" || !strings.Contains(text(d.root), "Error 500") {
		t.Errorf("custom heading or status")
	}
}

func TestHelpers(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 8000: "8,000", 1234567: "1,234,567", -4000: "-4,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := counterText("héllo 🙂", 8000); got != "7 / 8,000" {
		t.Errorf("counter counts code points: %q", got)
	}
}
