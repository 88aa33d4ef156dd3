package templates

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func clinLayout(title string) Layout {
	return Layout{
		Title:      title,
		CSRF:       "csrf-clin-42",
		Nav:        []NavLink{{Label: "Worklist", URL: "/clinician/", Current: true}, {Label: "Audit log", URL: "/clinician/audit"}},
		SignedInAs: "dr.lee",
		SignOutURL: "/clinician/signout",
	}
}

// renderRows parses the rows fragment as clinician.js does: the innerHTML of
// a <template>, whose <tr> children parse as in a <tbody>.
func renderRows(t *testing.T, c templ.Component) *doc {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	tbody := &html.Node{Type: html.ElementNode, Data: "tbody", DataAtom: atom.Tbody}
	nodes, err := html.ParseFragment(strings.NewReader(b.String()), tbody)
	if err != nil {
		t.Fatalf("parse fragment: %v", err)
	}
	for _, n := range nodes {
		tbody.AppendChild(n)
	}
	return &doc{t: t, src: b.String(), root: tbody}
}

// checkClinicianPage checks what every clinician page shares: its own
// stylesheet and module script, and nothing a strict CSP would block.
func checkClinicianPage(t *testing.T, d *doc) {
	t.Helper()
	css := d.all(and(tag("link"), withAttr("rel", "stylesheet"), withAttr("href", asset("css/clinician.css"))))
	if len(css) != 1 {
		t.Errorf("%d clinician.css links, want 1", len(css))
	}
	js := d.all(and(tag("script"), withAttr("src", asset("js/clinician.js")), withAttr("type", "module")))
	if len(js) != 1 {
		t.Errorf("%d clinician.js module scripts, want 1", len(js))
	}
	for _, s := range d.all(tag("script")) {
		if strings.TrimSpace(text(s)) != "" {
			t.Errorf("inline script: %q", text(s))
		}
	}
	for _, n := range d.all(func(*html.Node) bool { return true }) {
		if n.Data == "style" {
			t.Errorf("<style> element")
		}
		for _, a := range n.Attr {
			if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s=%q> needs an unsafe CSP", n.Data, a.Key, a.Val)
			}
		}
	}
}

func roleAlerts(d *doc) []*html.Node { return d.all(withAttr("role", "alert")) }

func headingTexts(d *doc, level string) []string {
	var out []string
	for _, h := range d.all(tag(level)) {
		out = append(out, norm(text(h)))
	}
	return out
}

// precedes reports whether a comes before b in document order.
func precedes(root, a, b *html.Node) bool {
	seen := false
	for _, n := range all(root, func(*html.Node) bool { return true }) {
		if n == a {
			seen = true
		}
		if n == b {
			return seen
		}
	}
	return false
}

func TestSignInPage(t *testing.T) {
	p := SignInPage{Layout: clinLayout("Sign in"), Action: "/clinician/signin", Next: "/clinician/intakes/enc_1"}
	p.SignedInAs = ""
	d := render(t, SignInPageView(p))
	checkClinicianPage(t, d)

	user := d.labelled("Username", false)
	if user.Data != "input" || attrOr(user, "name") != "username" || attrOr(user, "autocomplete") != "username" {
		t.Errorf("Username field: <%s name=%q autocomplete=%q>", user.Data, attrOr(user, "name"), attrOr(user, "autocomplete"))
	}
	pass := d.labelled("Password", false)
	if pass.Data != "input" || attrOr(pass, "type") != "password" || attrOr(pass, "name") != "password" || attrOr(pass, "autocomplete") != "current-password" {
		t.Errorf("Password field: <%s type=%q name=%q autocomplete=%q>", pass.Data, attrOr(pass, "type"), attrOr(pass, "name"), attrOr(pass, "autocomplete"))
	}
	btns := d.buttons(nil, "Sign in")
	if len(btns) != 1 || attrOr(btns[0], "type") != "submit" {
		t.Fatalf("want one submit button named Sign in, got %d", len(btns))
	}
	form := ancestor(btns[0], tag("form"))
	if form == nil || attrOr(form, "method") != "post" || attrOr(form, "action") != "/clinician/signin" {
		t.Fatalf("Sign in is not in a POST form to /clinician/signin")
	}
	if ancestor(user, tag("form")) != form || ancestor(pass, tag("form")) != form {
		t.Errorf("fields are not in the sign-in form")
	}
	if !hasHidden(form, "_csrf", "csrf-clin-42") || !hasHidden(form, "next", "/clinician/intakes/enc_1") {
		t.Errorf("hidden _csrf/next missing")
	}
	if len(roleAlerts(d)) != 0 {
		t.Errorf("alert shown without an error")
	}
	if !strings.Contains(norm(text(d.root)), "created by an administrator with intake-web clinician add") {
		t.Errorf("account creation line missing")
	}

	p.Error = "Wrong username or password."
	p.Username = `dr."o'neil"`
	d = render(t, SignInPageView(p))
	alerts := roleAlerts(d)
	if len(alerts) != 1 || !strings.Contains(text(alerts[0]), "Wrong username or password.") {
		t.Fatalf("error alert: %d", len(alerts))
	}
	form = ancestor(d.buttons(nil, "Sign in")[0], tag("form"))
	if !precedes(d.root, alerts[0], form) {
		t.Errorf("the error is not above the form")
	}
	if got := attrOr(d.labelled("Username", false), "value"); got != p.Username {
		t.Errorf("username not kept: %q", got)
	}
	if got := attrOr(d.labelled("Password", false), "value"); got != "" {
		t.Errorf("password echoed back: %q", got)
	}
}

func sampleRows() []WorklistRow {
	return []WorklistRow{
		{ID: "enc_urgent", URL: "/clinician/intakes/enc_urgent", Group: "Urgent", Created: "1 Aug 10:00", Status: "open", Turns: 3,
			SafetyStatus: "red_flag_escalated", DispositionLabel: "Go to the emergency department now", Urgent: true, ActiveProtocol: "chest_pain"},
		{ID: "enc_done", URL: "/clinician/intakes/enc_done", Group: "Reviewed", Created: "1 Aug 09:00", Status: "closed", Turns: 7,
			SafetyStatus: "no_red_flags", DispositionLabel: "Self-care", ActiveProtocol: "sore_throat",
			Reviewed: true, ReviewedBy: "dr.lee", ReviewedAt: "1 Aug 11:30"},
		{ID: "enc_new", URL: "/clinician/intakes/enc_new", Group: "Open", Created: "1 Aug 11:00", Status: "open", Turns: 0},
	}
}

func rowByID(t *testing.T, d *doc, id string) *html.Node {
	t.Helper()
	rows := d.all(and(tag("tr"), withAttr("data-intake-id", id)))
	if len(rows) != 1 {
		t.Fatalf("%d rows for %s in:\n%s", len(rows), id, d.src)
	}
	return rows[0]
}

func TestWorklistRows(t *testing.T) {
	d := renderRows(t, WorklistRows(sampleRows()))
	if trs := d.all(tag("tr")); len(trs) != 3 {
		t.Fatalf("%d rows, want 3", len(trs))
	}
	if strings.Contains(d.src, "<tbody") || strings.Contains(d.src, "<table") {
		t.Errorf("fragment must hold only <tr> elements")
	}

	urgent := rowByID(t, d, "enc_urgent")
	if !strings.Contains(" "+attrOr(urgent, "class")+" ", " worklist-row--urgent ") {
		t.Errorf("urgent row not marked: class=%q", attrOr(urgent, "class"))
	}
	badges := all(urgent, func(n *html.Node) bool { return strings.Contains(attrOr(n, "class"), "badge--urgent") })
	if len(badges) != 1 || norm(text(badges[0])) != "Urgent" {
		t.Errorf("urgent row has no visible Urgent badge")
	}
	links := all(urgent, tag("a"))
	if len(links) != 1 || attrOr(links[0], "href") != "/clinician/intakes/enc_urgent" || norm(text(links[0])) != "enc_urgent" {
		t.Errorf("intake id does not link to the handoff")
	}
	if !strings.Contains(norm(text(urgent)), "Not reviewed") {
		t.Errorf("unreviewed row: %q", norm(text(urgent)))
	}
	if !strings.Contains(text(urgent), "red_flag_escalated") || !strings.Contains(text(urgent), "Go to the emergency department now") {
		t.Errorf("safety status/disposition not shown as received")
	}

	done := rowByID(t, d, "enc_done")
	if strings.Contains(attrOr(done, "class"), "worklist-row--urgent") || strings.Contains(text(done), "Urgent") {
		t.Errorf("non-urgent row looks urgent: %q", norm(text(done)))
	}
	if !strings.Contains(norm(text(done)), "by dr.lee at 1 Aug 11:30") || strings.Contains(text(done), "Not reviewed") {
		t.Errorf("reviewed row: %q", norm(text(done)))
	}
	if cells := all(done, func(n *html.Node) bool { return n.Data == "td" || n.Data == "th" }); len(cells) != worklistColumns {
		t.Errorf("%d cells, want %d", len(cells), worklistColumns)
	}

	fresh := norm(text(rowByID(t, d, "enc_new")))
	if !strings.Contains(fresh, "not reported") {
		t.Errorf("missing safety status not said: %q", fresh)
	}

	empty := renderRows(t, WorklistRows(nil))
	trs := empty.all(tag("tr"))
	if len(trs) != 1 || !strings.Contains(text(trs[0]), "No intakes match this filter.") {
		t.Fatalf("empty state: %s", empty.src)
	}
	if td := all(trs[0], tag("td")); len(td) != 1 || attrOr(td[0], "colspan") != "12" {
		t.Errorf("empty state should span the 12 columns")
	}
}

// A row offers the handoff's downloads: the JSON and the FHIR document,
// each link named for its intake.
func TestWorklistRowDownloads(t *testing.T) {
	d := renderRows(t, WorklistRows([]WorklistRow{{ID: "enc_dl", URL: "/clinician/intakes/enc_dl", Status: "closed",
		DownloadURL: "/clinician/intakes/enc_dl/handoff.json", FHIRURL: "/clinician/intakes/enc_dl/handoff.fhir.json"}}))
	row := rowByID(t, d, "enc_dl")
	var got []string
	for _, a := range all(row, tag("a")) {
		got = append(got, attrOr(a, "href")+" "+norm(text(a)))
	}
	want := []string{"/clinician/intakes/enc_dl enc_dl", "/clinician/intakes/enc_dl/handoff.json JSON of enc_dl",
		"/clinician/intakes/enc_dl/handoff.fhir.json FHIR document of enc_dl"}
	if !slices.Equal(got, want) {
		t.Errorf("links %q, want %q", got, want)
	}
}

func TestWorklistRowsEscapesText(t *testing.T) {
	rows := []WorklistRow{{ID: "enc_x", URL: "/clinician/intakes/enc_x", Status: "open", DispositionLabel: `<img src=x> & "go"`}}
	d := renderRows(t, WorklistRows(rows))
	if len(d.all(tag("img"))) != 0 || !strings.Contains(text(d.root), `<img src=x> & "go"`) {
		t.Errorf("disposition label not rendered as text: %s", d.src)
	}
}

func TestWorklistPage(t *testing.T) {
	p := WorklistPage{
		Layout:    clinLayout("Worklist"),
		Filter:    WorklistFilter{Status: "closed", Unreviewed: true},
		Rows:      sampleRows(),
		RowURL:    "/clinician/worklist/row/",
		RowQuery:  "?status=closed&unreviewed=1",
		EventsURL: "/clinician/events",
		AuditURL:  "/clinician/audit",
		PageURL:   "/clinician?status=closed&unreviewed=1",
		FirstURL:  "/clinician?status=closed&unreviewed=1",
		PrevURL:   "/clinician?cursor=prev&status=closed&unreviewed=1",
		NextURL:   "/clinician?cursor=next&status=closed&unreviewed=1",
	}
	d := render(t, WorklistPageView(p))
	checkClinicianPage(t, d)
	if h := headingTexts(d, "h1"); !slices.Equal(h, []string{"Worklist"}) {
		t.Errorf("h1: %q", h)
	}

	btn := d.buttons(nil, "Filter")
	if len(btn) != 1 {
		t.Fatalf("want one Filter button")
	}
	form := ancestor(btn[0], tag("form"))
	if form == nil || strings.ToLower(attrOr(form, "method")) != "get" {
		t.Fatalf("filter is not a GET form")
	}
	sel := d.labelled("Status", false)
	if sel.Data != "select" || attrOr(sel, "name") != "status" || ancestor(sel, tag("form")) != form {
		t.Fatalf("status select")
	}
	var opts, selected []string
	for _, o := range all(sel, tag("option")) {
		opts = append(opts, norm(text(o)))
		if _, ok := attr(o, "selected"); ok {
			selected = append(selected, attrOr(o, "value"))
		}
	}
	if !slices.Equal(opts, []string{"All", "Open", "Closed", "Expired"}) || !slices.Equal(selected, []string{"closed"}) {
		t.Errorf("options %q, selected %q", opts, selected)
	}
	urgent := d.labelled("Urgent only", false)
	unrev := d.labelled("Not yet reviewed", false)
	for _, c := range []*html.Node{urgent, unrev} {
		if attrOr(c, "type") != "checkbox" || ancestor(c, tag("form")) != form {
			t.Errorf("%s is not a checkbox of the filter form", attrOr(c, "id"))
		}
	}
	if _, ok := attr(urgent, "checked"); ok {
		t.Errorf("Urgent only checked but not in the filter")
	}
	if _, ok := attr(unrev, "checked"); !ok {
		t.Errorf("Not yet reviewed not checked")
	}

	tables := d.all(tag("table"))
	if len(tables) != 1 {
		t.Fatalf("%d tables", len(tables))
	}
	if c := all(tables[0], tag("caption")); len(c) != 1 || norm(text(c[0])) == "" {
		t.Errorf("table caption missing")
	}
	var cols []string
	for _, th := range all(tables[0], and(tag("th"), withAttr("scope", "col"))) {
		cols = append(cols, norm(text(th)))
	}
	want := []string{"Intake", "Opening message", "Group", "Created", "Status", "Turns", "Safety status", "Disposition", "Urgent", "Protocol", "Reviewed", "Downloads"}
	if !slices.Equal(cols, want) {
		t.Errorf("columns %q, want %q", cols, want)
	}
	tbody := d.mustID("worklist-rows")
	if tbody.Data != "tbody" || attrOr(tbody, "data-row-url") != p.RowURL || attrOr(tbody, "data-row-query") != p.RowQuery || attrOr(tbody, "data-events-url") != p.EventsURL {
		t.Errorf("tbody data attributes: %v", tbody.Attr)
	}
	// Page links: plain links in a labelled nav, in First, Previous, Next order.
	navs := d.all(and(tag("nav"), withAttr("aria-label", "Worklist pages")))
	if len(navs) != 1 {
		t.Fatalf("%d worklist page navs", len(navs))
	}
	var links []string
	for _, a := range all(navs[0], tag("a")) {
		links = append(links, norm(text(a))+" "+attrOr(a, "href"))
	}
	if want := []string{"First page " + p.FirstURL, "Previous page " + p.PrevURL, "Next page " + p.NextURL}; !slices.Equal(links, want) {
		t.Errorf("page links %q, want %q", links, want)
	}
	changes := d.mustID("worklist-changes")
	if a := all(changes, tag("a")); len(a) != 1 || attrOr(a[0], "href") != p.PageURL {
		t.Errorf("the changes link does not reload this page")
	}
	if n := len(all(tbody, tag("tr"))); n != 3 {
		t.Errorf("%d rows in the tbody", n)
	}

	statuses := d.all(withAttr("role", "status"))
	if len(statuses) != 1 || attrOr(statuses[0], "id") != "worklist-status" || attrOr(statuses[0], "aria-live") != "polite" {
		t.Errorf("want exactly one polite status region #worklist-status, got %d", len(statuses))
	}
	// The header's navigation links the audit log; the page does not repeat it.
	for _, a := range d.all(and(tag("a"), withAttr("href", "/clinician/audit"))) {
		if ancestor(a, tag("main")) != nil {
			t.Errorf("the page content repeats the Audit log link of the navigation")
		}
	}

	p.Rows = nil
	d = render(t, WorklistPageView(p))
	if !strings.Contains(text(d.mustID("worklist-rows")), "No intakes match this filter.") {
		t.Errorf("empty state missing from the page")
	}
}

func sampleHandoff() HandoffPage {
	return HandoffPage{
		Layout:           clinLayout("Handoff enc_t_77"),
		ID:               "enc_t_77",
		BackURL:          "/clinician/",
		Status:           "closed",
		Urgent:           true,
		Terminal:         true,
		CapturedAt:       "2026-08-01 10:42:07 UTC",
		FetchedAt:        "2026-08-01 10:45:00 UTC",
		Release:          "2026.08.1+abc123",
		EngineRelease:    "2026.08.1",
		RefreshAction:    "/clinician/intakes/enc_t_77/refresh",
		DownloadURL:      "/clinician/intakes/enc_t_77/handoff.json",
		CSRF:             "csrf-clin-42",
		SafetyStatus:     "red_flag_escalated",
		Disposition:      "emergency_department",
		DispositionLabel: "Go to the emergency department now",
		IntakeStatus:     "complete",
		SOAP: SOAPView{
			Subjective: "Chest pain <script>alert(1)</script>\n  radiating to the left arm",
			Objective:  "Age 54.\n\tNo vitals captured.",
			Assessment: "Possible ACS & <b>red flag</b>",
			Plan:       "Emergency department now.",
		},
		SafetyNotes:        []string{"Chest pain with exertion", "Shortness of breath"},
		Facts:              []Fact{{Name: "age", Label: "Age", Value: "54"}, {Name: "sex", Label: "Sex", Value: "male"}, {Name: "pregnancy", Label: "Pregnancy"}},
		ActiveProtocol:     "chest_pain",
		CandidateProtocols: []string{"chest_pain", "dyspepsia"},
		Scores: []ScoreView{
			{Key: "heart", Total: "6", Band: "strong", Components: "history 2, ecg 1, age 1"},
			{Key: "wells", Total: "1.5", Band: "weak", Components: "hr > 100"},
		},
		Conversation: []MessageView{
			{Role: "patient", Text: "I have <b>pain</b>\n\n   here"},
			{Role: "assistant", Text: "Does it spread?  \n- arm\n- jaw"},
		},
		Provenance: []Fact{
			{Name: "release", Label: "Release", Value: "2026.08.1"},
			{Name: "server_model", Label: "Server model", Value: "sandbox-rules-1"},
			{Name: "prompt_hash", Label: "Prompt hash"},
			{Name: "source_commit", Label: "Source commit", Value: "abc123"},
			{Name: "directory_hash", Label: "Directory hash", Value: "sha256:ff00"},
			{Name: "runtime_profile", Label: "Runtime profile"},
			{Name: "prompt_profile", Label: "Prompt profile", Value: "default"},
			{Name: "voice_profile", Label: "Voice profile"},
			{Name: "audit_ref", Label: "Audit reference", Value: "aud_9f8e7d", Copy: true},
			{Name: "latency_ms", Label: "Latency (ms)", Value: "1234"},
			{Name: "protocol_count", Label: "Protocol count"},
		},
		Reviews:      []ReviewView{{By: "dr.kim", At: "2026-08-01 11:00", Note: "Called the patient.\nAdvised ED."}},
		ReviewAction: "/clinician/intakes/enc_t_77/review",
	}
}

func TestHandoffPageHeadingsAndHeader(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	checkClinicianPage(t, d)

	h2 := headingTexts(d, "h2")
	for _, want := range []string{"Subjective", "Objective", "Assessment", "Plan", "Safety", "Scores", "Conversation", "Provenance", "Captured facts", "Protocols", "Reviews"} {
		if n := slices.Index(h2, want); n < 0 {
			t.Errorf("no heading %q in %q", want, h2)
		}
	}
	if h1 := headingTexts(d, "h1"); len(h1) != 1 || !strings.Contains(h1[0], "enc_t_77") {
		t.Errorf("h1: %q", h1)
	}

	head := d.mustID("handoff-heading").Parent
	ht := norm(text(head))
	for _, want := range []string{
		"enc_t_77", "Closed", "Go to the emergency department now", "emergency_department",
		"red_flag_escalated", "complete", "As of 2026-08-01 10:42:07 UTC", "Last updated 2026-08-01 10:45:00 UTC",
		// The two release strings, each labelled for what it is.
		"Engine release2026.08.1 the engine that wrote this handoff (its provenance)",
		"Service release and build2026.08.1+abc123 the service that answered the last read (its x-service-release header)",
	} {
		if !strings.Contains(ht, want) {
			t.Errorf("header block lacks %q: %q", want, ht)
		}
	}

	// Urgent and reviewed: the banner says both and no longer demands a
	// review (no alert).
	if n := len(roleAlerts(d)); n != 0 {
		t.Errorf("an urgent handoff already reviewed has %d alerts", n)
	}
	banner := d.all(func(n *html.Node) bool { return strings.Contains(attrOr(n, "class"), "handoff__urgent") })
	if b := banner; len(b) != 1 || norm(text(b[0])) !=
		"Urgent, reviewed: the engine asked for immediate clinician review; dr.kim reviewed it at 2026-08-01 11:00." {
		t.Errorf("urgent reviewed banner: %d %q", len(b), d.src)
	}
	p.Reviews = nil
	d = render(t, HandoffPageView(p))
	alerts := roleAlerts(d)
	if len(alerts) != 1 || norm(text(alerts[0])) != "Urgent: this intake needs immediate clinician review." {
		t.Errorf("urgent handoff: %d alerts", len(alerts))
	}
	p.Urgent = false
	d = render(t, HandoffPageView(p))
	if n := len(roleAlerts(d)); n != 0 {
		t.Errorf("non-urgent handoff has %d alerts", n)
	}
}

func TestHandoffPageNullsShownAsNull(t *testing.T) {
	p := sampleHandoff()
	p.SafetyStatus, p.Disposition, p.DispositionLabel, p.IntakeStatus = "", "", "", ""
	d := render(t, HandoffPageView(p))
	if got := norm(text(d.mustID("safety-status"))); got != "null" {
		t.Errorf("null safety status shown as %q", got)
	}
	if got := norm(text(d.mustID("disposition"))); got != "null (code: null)" {
		t.Errorf("null disposition shown as %q", got)
	}
}

func TestHandoffPageActions(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	ref := d.buttons(nil, "Refresh")
	if len(ref) != 1 {
		t.Fatalf("%d Refresh buttons", len(ref))
	}
	form := ancestor(ref[0], tag("form"))
	if form == nil || attrOr(form, "method") != "post" || attrOr(form, "action") != p.RefreshAction || !hasHidden(form, "_csrf", "csrf-clin-42") {
		t.Errorf("Refresh is not a POST form with _csrf to %s", p.RefreshAction)
	}
	dl := d.all(and(tag("a"), withAttr("href", p.DownloadURL)))
	if len(dl) != 1 || norm(text(dl[0])) != "Download JSON" {
		t.Fatalf("Download JSON link")
	}
	if _, ok := attr(dl[0], "download"); !ok {
		t.Errorf("Download JSON has no download attribute")
	}
	pr := d.buttons(nil, "Print")
	if len(pr) != 1 || attrOr(pr[0], "type") != "button" || !slices.Contains(strings.Fields(attrOr(pr[0], "class")), "js-only") {
		t.Errorf("Print must be a type=button hidden without JS (class js-only)")
	}
	if _, ok := attr(pr[0], "data-print"); !ok {
		t.Errorf("Print button lacks data-print for clinician.js")
	}
	back := d.all(and(tag("a"), withAttr("href", "/clinician/")))
	if !slices.ContainsFunc(back, func(n *html.Node) bool { return norm(text(n)) == "Back to the worklist" }) {
		t.Errorf("no Back to the worklist link")
	}
	if d.byID("as-of") == nil {
		t.Errorf("as-of time missing")
	}
	for _, s := range d.all(withAttr("role", "status")) {
		if strings.Contains(text(s), "out of date") {
			t.Errorf("stale warning on a fresh handoff")
		}
	}

	p.RefreshAction = ""
	p.Stale = true
	p.StaleReason = "The intake service did not answer."
	d = render(t, HandoffPageView(p))
	if n := len(d.buttons(nil, "Refresh")); n != 0 {
		t.Errorf("Refresh shown for a handoff that cannot change")
	}
	stale := false
	for _, s := range d.all(withAttr("role", "status")) {
		if strings.Contains(text(s), "The intake service did not answer.") {
			stale = true
		}
	}
	if !stale {
		t.Errorf("stale reason not in a role=status warning")
	}
}

func sectionOf(t *testing.T, d *doc, heading string) *html.Node {
	t.Helper()
	for _, h := range d.all(tag("h2")) {
		if norm(text(h)) == heading {
			if s := ancestor(h, tag("section")); s != nil {
				return s
			}
		}
	}
	t.Fatalf("no section headed %q", heading)
	return nil
}

func hasClass(n *html.Node, c string) bool {
	return slices.Contains(strings.Fields(attrOr(n, "class")), c)
}

func TestHandoffPageKeepsTextUnedited(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	if strings.Contains(d.src, "<script>alert") || strings.Contains(d.src, "<b>") {
		t.Fatalf("engine text rendered as HTML")
	}
	soap := map[string]string{"Subjective": p.SOAP.Subjective, "Objective": p.SOAP.Objective, "Assessment": p.SOAP.Assessment, "Plan": p.SOAP.Plan}
	for h, want := range soap {
		s := sectionOf(t, d, h)
		pre := all(s, func(n *html.Node) bool { return hasClass(n, "prewrap") })
		if len(pre) != 1 || text(pre[0]) != want {
			t.Errorf("%s: got %q, want %q in a pre-wrap element", h, text(pre[0]), want)
		}
	}

	conv := sectionOf(t, d, "Conversation")
	ol := all(conv, tag("ol"))
	if len(ol) != 1 {
		t.Fatalf("conversation is not an ordered list")
	}
	items := all(ol[0], tag("li"))
	if len(items) != 2 {
		t.Fatalf("%d messages", len(items))
	}
	for i, wantWho := range []string{"Patient", "Assistant"} {
		who := all(items[i], func(n *html.Node) bool { return hasClass(n, "msg__who") })
		body := all(items[i], func(n *html.Node) bool { return hasClass(n, "msg__text") })
		if len(who) != 1 || norm(text(who[0])) != wantWho {
			t.Errorf("message %d not labelled %s", i, wantWho)
		}
		if len(body) != 1 || text(body[0]) != p.Conversation[i].Text {
			t.Errorf("message %d: %q, want %q", i, text(body[0]), p.Conversation[i].Text)
		}
	}
}

func TestHandoffPageSafetyFactsProtocols(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	safety := norm(text(sectionOf(t, d, "Safety")))
	for _, want := range []string{"red_flag_escalated", "Chest pain with exertion", "Shortness of breath"} {
		if !strings.Contains(safety, want) {
			t.Errorf("Safety lacks %q", want)
		}
	}
	facts := sectionOf(t, d, "Captured facts")
	dts, dds := all(facts, tag("dt")), all(facts, tag("dd"))
	if len(dts) != 3 || len(dds) != 3 {
		t.Fatalf("facts: %d dt, %d dd", len(dts), len(dds))
	}
	for i, want := range []string{"54", "male", "not captured"} {
		if got := norm(text(dds[i])); got != want {
			t.Errorf("fact %s: %q, want %q", norm(text(dts[i])), got, want)
		}
	}
	prot := sectionOf(t, d, "Protocols")
	pdt, pdd := all(prot, tag("dt")), all(prot, tag("dd"))
	if len(pdt) != 2 || len(pdd) != 2 || norm(text(pdt[0])) != "Active protocol" || norm(text(pdd[0])) != "chest_pain" {
		t.Fatalf("active protocol not shown")
	}
	var cands []string
	for _, li := range all(pdd[1], tag("li")) {
		cands = append(cands, norm(text(li)))
	}
	if !slices.Equal(cands, p.CandidateProtocols) {
		t.Errorf("candidates %q", cands)
	}
}

func TestHandoffPageScores(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	s := sectionOf(t, d, "Scores")
	tables := all(s, tag("table"))
	if len(tables) != 1 {
		t.Fatalf("scores are not a table")
	}
	var cols []string
	for _, th := range all(tables[0], and(tag("th"), withAttr("scope", "col"))) {
		cols = append(cols, norm(text(th)))
	}
	if !slices.Equal(cols, []string{"Score", "Total", "Band", "Components"}) {
		t.Errorf("score columns %q", cols)
	}
	rows := all(all(tables[0], tag("tbody"))[0], tag("tr"))
	if len(rows) != 2 {
		t.Fatalf("%d score rows", len(rows))
	}
	for i, sc := range p.Scores {
		cells := all(rows[i], func(n *html.Node) bool { return n.Data == "td" || n.Data == "th" })
		got := []string{norm(text(cells[0])), norm(text(cells[1])), norm(text(cells[2])), norm(text(cells[3]))}
		if !slices.Equal(got, []string{sc.Key, sc.Total, sc.Band, sc.Components}) {
			t.Errorf("score row %d: %q", i, got)
		}
		badge := all(cells[2], func(n *html.Node) bool { return hasClass(n, "band") })
		if len(badge) != 1 || !hasClass(badge[0], "band--"+sc.Band) {
			t.Errorf("score %s: no band--%s badge", sc.Key, sc.Band)
		}
		meter := all(cells[2], func(n *html.Node) bool { return hasClass(n, "band__meter") })
		if len(meter) != 1 || attrOr(meter[0], "aria-hidden") != "true" {
			t.Errorf("band meter should repeat the text and be hidden from assistive tech")
		}
	}

	p.Scores = nil
	d = render(t, HandoffPageView(p))
	if !strings.Contains(text(sectionOf(t, d, "Scores")), "No scores reported.") {
		t.Errorf("no-scores state missing")
	}
}

func TestHandoffPageProvenance(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	s := sectionOf(t, d, "Provenance")
	dds := all(s, tag("dd"))
	if len(dds) != len(p.Provenance) || len(all(s, tag("dt"))) != len(p.Provenance) {
		t.Fatalf("%d provenance values, want %d", len(dds), len(p.Provenance))
	}
	for i, f := range p.Provenance {
		dd := dds[i]
		if attrOr(dd, "data-field") != f.Name {
			t.Errorf("provenance %d is %q, want %q (spec order)", i, attrOr(dd, "data-field"), f.Name)
		}
		want := f.Value
		if want == "" {
			want = "null"
		}
		val := all(dd, func(n *html.Node) bool { return n.Data == "span" && hasClass(n, "mono") })
		if len(val) != 1 || text(val[0]) != want {
			t.Errorf("provenance %s shown as %q, want %q", f.Name, norm(text(dd)), want)
		}
		copies := d.buttons(dd, "Copy")
		if f.Copy {
			if len(copies) != 1 || attrOr(copies[0], "data-copy") != f.Value || attrOr(copies[0], "type") != "button" {
				t.Errorf("provenance %s: no Copy button carrying the value", f.Name)
			} else if !hasClass(val[0], "selectable") {
				t.Errorf("provenance %s: value is not selectable text", f.Name)
			}
		} else if len(copies) != 0 {
			t.Errorf("provenance %s: unexpected Copy button", f.Name)
		}
	}
}

func TestHandoffPageReviews(t *testing.T) {
	p := sampleHandoff()
	d := render(t, HandoffPageView(p))
	rev := sectionOf(t, d, "Reviews")
	if rt := norm(text(rev)); !strings.Contains(rt, "dr.kim at 2026-08-01 11:00") || !strings.Contains(text(rev), "Called the patient.\nAdvised ED.") {
		t.Errorf("review not shown: %q", rt)
	}
	note := d.labelled("Review note (optional)", false)
	if note.Data != "textarea" || attrOr(note, "name") != "note" || attrOr(note, "maxlength") != "2000" {
		t.Errorf("review note: <%s name=%q maxlength=%q>", note.Data, attrOr(note, "name"), attrOr(note, "maxlength"))
	}
	btn := d.buttons(nil, "Mark as reviewed")
	if len(btn) != 1 {
		t.Fatalf("%d Mark as reviewed buttons", len(btn))
	}
	form := ancestor(btn[0], tag("form"))
	if form == nil || ancestor(note, tag("form")) != form || attrOr(form, "method") != "post" || attrOr(form, "action") != p.ReviewAction || !hasHidden(form, "_csrf", "csrf-clin-42") {
		t.Errorf("review form is not a POST with _csrf to %s", p.ReviewAction)
	}
	if _, ok := attr(note, "aria-invalid"); ok {
		t.Errorf("note invalid without an error")
	}

	p.ReviewError = "The note is too long."
	p.ReviewNote = "\nkept <i>note</i>"
	p.Reviews = nil
	d = render(t, HandoffPageView(p))
	note = d.labelled("Review note (optional)", false)
	if text(note) != p.ReviewNote {
		t.Errorf("note not kept: %q", text(note))
	}
	if attrOr(note, "aria-invalid") != "true" || !contains(describedByIDs(note), "review-error") {
		t.Errorf("note not marked invalid / described by the error")
	}
	if !strings.Contains(text(d.mustID("review-error")), "The note is too long.") {
		t.Errorf("review error missing")
	}
	if !strings.Contains(text(sectionOf(t, d, "Reviews")), "Not reviewed yet.") {
		t.Errorf("no-review state missing")
	}
}

func TestAuditPage(t *testing.T) {
	p := AuditPage{
		Layout: clinLayout("Audit log"),
		Entries: []AuditRow{
			{At: "2026-08-01 11:00", Actor: "dr.kim", Action: "review", Detail: "note: <b>ok</b>", IntakeID: "enc_t_77", IntakeURL: "/clinician/intakes/enc_t_77"},
			{At: "2026-08-01 10:00", Actor: "dr.kim", Action: "signin", Detail: "from 127.0.0.1"},
		},
		OlderURL: "/clinician/audit?before=41",
	}
	d := render(t, AuditPageView(p))
	checkClinicianPage(t, d)
	if h := headingTexts(d, "h1"); !slices.Equal(h, []string{"Audit log"}) {
		t.Errorf("h1: %q", h)
	}
	var cols []string
	for _, th := range d.all(and(tag("th"), withAttr("scope", "col"))) {
		cols = append(cols, norm(text(th)))
	}
	if !slices.Equal(cols, []string{"When", "Who", "Action", "Intake", "Detail"}) {
		t.Errorf("columns %q", cols)
	}
	rows := all(d.all(tag("tbody"))[0], tag("tr"))
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	if a := all(rows[0], tag("a")); len(a) != 1 || attrOr(a[0], "href") != "/clinician/intakes/enc_t_77" || norm(text(a[0])) != "enc_t_77" {
		t.Errorf("intake link missing")
	}
	if len(all(rows[1], tag("a"))) != 0 {
		t.Errorf("link in an entry without an intake")
	}
	if len(d.all(tag("b"))) != 0 || !strings.Contains(text(rows[0]), "note: <b>ok</b>") {
		t.Errorf("detail not rendered as text")
	}
	older := d.all(and(tag("a"), withAttr("href", p.OlderURL)))
	if len(older) != 1 || norm(text(older[0])) != "Older entries" {
		t.Errorf("Older entries link missing")
	}

	p.OlderURL = ""
	p.Entries = nil
	d = render(t, AuditPageView(p))
	for _, a := range d.all(tag("a")) {
		if norm(text(a)) == "Older entries" {
			t.Errorf("Older entries shown on the last page")
		}
	}
	if !strings.Contains(text(d.root), "No audit entries.") {
		t.Errorf("empty state missing")
	}
}

// Clinicians read a known safety_status's plain words with the code as
// received beside them, on the worklist and the handoff; an unknown value
// is shown alone, as received.
func TestCliniciansSeePlainWordsWithTheCode(t *testing.T) {
	const code, words = "cannot_miss_positive", "A sign of a possibly serious problem was found"
	rows := sampleRows()
	rows[0].SafetyStatus = code
	row := rowByID(t, renderRows(t, WorklistRows(rows)), "enc_urgent")
	cells := all(row, withAttr("data-label", "Safety status"))
	if len(cells) != 1 {
		t.Fatalf("%d Safety status cells", len(cells))
	}
	if got := norm(text(cells[0])); got != words+" "+code && got != words+code {
		t.Errorf("worklist safety status: %q, want the words and the code", got)
	}

	p := sampleHandoff()
	p.SafetyStatus = code
	d := render(t, HandoffPageView(p))
	if got := norm(text(d.mustID("safety-status"))); got != words+" (code: "+code+")" {
		t.Errorf("handoff safety status: %q", got)
	}
	p.SafetyStatus = "some_new_status"
	d = render(t, HandoffPageView(p))
	if got := norm(text(d.mustID("safety-status"))); got != "some_new_status" {
		t.Errorf("an unknown safety status: %q", got)
	}
}
