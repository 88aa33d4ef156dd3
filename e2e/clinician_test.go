package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// The clinician area in the browser: sign-in, the live worklist, the
// handoff (compared field for field with the service's JSON), review and
// the audit log.

// TestClinicianSignIn: the worklist sends a signed-out browser to the
// sign-in page; a wrong password is refused on the form (the username
// kept); the right one leads to the worklist, signed in as dr.e2e.
func TestClinicianSignIn(t *testing.T) {
	t.Parallel()
	a := startClinicApp(t)
	page := newPage(t)
	_, err := page.Goto(a.URL + "/clinician")
	must(t, err, "open /clinician signed out")
	must(t, expect.Page(page).ToHaveURL(signInPath), "a signed-out browser lands on the sign-in page")
	must(t, expect.Locator(byLabel(page, "Username")).ToBeVisible(), "the Username field")
	must(t, expect.Locator(byLabel(page, "Password")).ToBeVisible(), "the Password field")
	must(t, expect.Locator(role(page, "button", "Sign in")).ToBeVisible(), "the Sign in button")
	shot(t, page, "clinician-01-signin")
	audit(t, page, "sign-in page")

	submitSignIn(t, page, clinUser, "not the password!")
	alert := page.GetByRole("alert")
	must(t, expect.Locator(alert).ToContainText("The username or password is wrong"), "a wrong password is refused")
	must(t, expect.Page(page).ToHaveURL(signInPath), "still on the sign-in page")
	must(t, expect.Locator(byLabel(page, "Username")).ToHaveValue(clinUser), "the username is kept")
	must(t, expect.Locator(byLabel(page, "Password")).ToHaveValue(""), "the password is not sent back")
	must(t, expect.Locator(role(page, "heading", "Worklist")).ToHaveCount(0), "no worklist after a failure")
	shot(t, page, "clinician-02-signin-failed")
	audit(t, page, "sign-in page with an error")

	submitSignIn(t, page, clinUser, clinPassword)
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician"), "signing in leads to the worklist")
	must(t, expect.Locator(role(page, "heading", "Worklist")).ToBeVisible(), "the Worklist heading")
	must(t, expect.Locator(page.GetByText("Signed in as "+clinUser)).ToBeVisible(), "signed in as dr.e2e")
	must(t, expect.Locator(role(page, "button", "Sign out")).ToBeVisible(), "a Sign out button")
	must(t, expect.Locator(page.GetByRole("table")).ToContainText("No intakes match this filter."), "an empty worklist")
	shot(t, page, "clinician-03-worklist-empty")
	audit(t, page, "empty worklist")
}

// TestClinicianPatientSessionRefused: a patient's browser (a session with
// an intake) that opens the clinician area lands on the sign-in page and
// sees nothing of it.
func TestClinicianPatientSessionRefused(t *testing.T) {
	t.Parallel()
	a := startClinicApp(t)
	page := newPage(t)
	startIntake(t, page, a)
	send(t, page, soreThroatOpening)
	waitReply(t, page, firstReply)
	id := intakeIDOf(t, page)

	for _, path := range []string{"/clinician", "/clinician/intakes/" + id, "/clinician/audit"} {
		_, err := page.Goto(a.URL + path)
		must(t, err, "open %s as the patient", path)
		must(t, expect.Page(page).ToHaveURL(signInPath), "the patient's %s lands on the sign-in page", path)
		must(t, expect.Locator(role(page, "button", "Sign in")).ToBeVisible(), "the Sign in form instead of %s", path)
		must(t, expect.Locator(role(page, "heading", "Worklist")).ToHaveCount(0), "no worklist for the patient (%s)", path)
		must(t, expect.Locator(role(page, "heading", "Subjective")).ToHaveCount(0), "no handoff for the patient (%s)", path)
		must(t, expect.Locator(page.Locator("body")).Not().ToContainText(soreThroatOpening), "nothing of the intake (%s)", path)
	}
}

// TestClinicianWorklistLive: with the worklist open, a patient in another
// browser completes an urgent intake; the new row appears without a
// reload, with its Urgent badge, and the status region announces it.
func TestClinicianWorklistLive(t *testing.T) {
	t.Parallel()
	a := startClinicApp(t)
	clin := newPage(t)
	clinicianSignIn(t, clin, a)
	must(t, expect.Locator(clin.GetByRole("table")).ToContainText("No intakes match this filter."), "an empty worklist first")
	// A marker that a reload or a navigation would wipe.
	_, err := clin.Evaluate(`() => { window.__sameDocument = true; }`)
	must(t, err, "mark the worklist document")

	patient := newPage(t)
	startIntake(t, patient, a)
	id := intakeIDOf(t, patient)
	send(t, patient, "I have crushing chest pain")
	waitReply(t, patient, urgentReplyPart)

	row := worklistRow(clin, id)
	must(t, expect.Locator(row).ToBeVisible(), "the new intake's row appears on the open worklist")
	must(t, expect.Locator(worklistCell(t, clin, row, "Urgent")).ToHaveText("Urgent"), "the row's Urgent badge")
	must(t, expect.Locator(worklistCell(t, clin, row, "Group")).ToHaveText("Urgent"), "the row is in the Urgent group")
	must(t, expect.Locator(worklistCell(t, clin, row, "Disposition")).ToHaveText(urgentLabel), "the row's disposition label as received")
	must(t, expect.Locator(worklistCell(t, clin, row, "Status")).ToHaveText("Closed"), "the row's status")
	must(t, expect.Locator(worklistCell(t, clin, row, "Reviewed")).ToHaveText("Not reviewed"), "not reviewed yet")
	status := statusRegion(clin)
	must(t, expect.Locator(status).ToHaveCount(1), "one status region on the worklist")
	must(t, expect.Locator(status).ToHaveText("Urgent: intake "+id+" escalated"), "the status region announces the urgent intake")
	same, err := clin.Evaluate(`() => window.__sameDocument === true`)
	must(t, err, "read the marker")
	if same != true {
		t.Errorf("the worklist was reloaded to show the new row")
	}
	shot(t, clin, "clinician-04-worklist-live-urgent")
	audit(t, clin, "worklist with an urgent intake")
}

// TestClinicianHandoff: a completed self-care intake's handoff page has
// every section, and every value of the service's handoff JSON shows as
// received; being closed, it is served with no upstream call. The print
// view hides the controls.
func TestClinicianHandoff(t *testing.T) {
	t.Parallel()
	a := startClinicApp(t)
	patient := newPage(t)
	startIntake(t, patient, a)
	id := intakeIDOf(t, patient)
	send(t, patient, soreThroatOpening)
	waitReply(t, patient, firstReply)
	for turn := 1; turn < len(soreThroatNo); turn++ {
		answerNo(t, patient, soreThroatNo[turn])
	}
	must(t, expect.Locator(patient.Locator("#disposition")).ToHaveText(selfCareLabel), "the patient's intake ends in self-care")

	want, raw := serviceHandoff(t, a, id)
	t.Logf("the service's handoff: %s", raw)
	if !want.Terminal {
		t.Fatalf("the service's handoff is not terminal")
	}

	page := newPage(t)
	clinicianSignIn(t, page, a)
	link := worklistRow(page, id).GetByRole("link", playwright.LocatorGetByRoleOptions{Name: id, Exact: playwright.Bool(true)})
	reads := a.Sandbox.Service.Stats().Requests["handoff"]
	must(t, link.Click(), "open the handoff from the worklist")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/intakes/"+id), "on the handoff page")
	for _, h := range []string{"Subjective", "Objective", "Assessment", "Plan", "Safety", "Scores", "Conversation", "Provenance"} {
		must(t, expect.Locator(role(page, "heading", h)).ToBeVisible(), "the %s heading", h)
	}
	must(t, expect.Locator(role(page, "region", "Provenance")).ToBeVisible(), "the page is rendered")
	if got := a.Sandbox.Service.Stats().Requests["handoff"]; got != reads {
		t.Errorf("opening a closed handoff cost %d upstream handoff reads, want 0", got-reads)
	}

	checkHandoffPage(t, page, want, raw)
	shot(t, page, "clinician-05-handoff")
	audit(t, page, "handoff page")

	// Print view: the note without the controls.
	must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaPrint}), "emulate print media")
	must(t, expect.Locator(role(page, "heading", "Subjective")).ToBeVisible(), "the SOAP note prints")
	must(t, expect.Locator(role(page, "heading", "Provenance")).ToBeVisible(), "the provenance prints")
	must(t, expect.Locator(role(page, "button", "Mark as reviewed")).ToBeHidden(), "no review button in print")
	must(t, expect.Locator(role(page, "button", "Sign out")).ToBeHidden(), "no sign-out button in print")
	must(t, expect.Locator(role(page, "link", "Download JSON")).ToBeHidden(), "no download link in print")
	shot(t, page, "clinician-06-handoff-print")
	must(t, page.EmulateMedia(playwright.PageEmulateMediaOptions{Media: playwright.MediaScreen}), "back to screen media")
	if got := a.Sandbox.Service.Stats().Requests["handoff"]; got != reads {
		t.Errorf("the closed handoff cost %d upstream handoff reads in all, want 0", got-reads)
	}
}

// TestClinicianReviewAndAudit: marking an urgent intake reviewed with a
// note shows the note on the handoff and "by dr.e2e" on the worklist; the
// audit log lists the view and the review with the intake id.
func TestClinicianReviewAndAudit(t *testing.T) {
	t.Parallel()
	a := startClinicApp(t)
	patient := newPage(t)
	startIntake(t, patient, a)
	id := intakeIDOf(t, patient)
	send(t, patient, "I have crushing chest pain")
	waitReply(t, patient, urgentReplyPart)

	page := newPage(t)
	clinicianSignIn(t, page, a)
	must(t, expect.Locator(worklistCell(t, page, worklistRow(page, id), "Reviewed")).ToHaveText("Not reviewed"), "not reviewed yet")
	_, err := page.Goto(a.URL + "/clinician/intakes/" + id)
	must(t, err, "open the handoff")
	must(t, expect.Locator(page.GetByRole("alert")).ToContainText("needs immediate clinician review"), "the urgent banner")
	must(t, expect.Locator(role(page, "region", "Reviews")).ToContainText("Not reviewed yet."), "no reviews yet")

	const note = "Agree: emergency care advised.\nCalled the patient back."
	must(t, byLabel(page, "Review note (optional)").Fill(note), "type a review note")
	must(t, role(page, "button", "Mark as reviewed").Click(), "click Mark as reviewed")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/intakes/"+id+"#reviews"), "back on the handoff after reviewing")
	reviews := role(page, "region", "Reviews")
	must(t, expect.Locator(reviews).ToContainText(clinUser+" at "), "the review names its clinician")
	must(t, expect.Locator(reviews).ToContainText("Called the patient back."), "the review note shows")
	must(t, expect.Locator(page.GetByRole("alert")).ToHaveCount(0), "no alert demands a review once it is reviewed")
	must(t, expect.Locator(page.Locator(".handoff__urgent")).ToContainText("Urgent, reviewed: the engine asked for immediate clinician review; "+clinUser+" reviewed it at "),
		"the banner says it was urgent and reviewed")
	shot(t, page, "clinician-07-reviewed")
	audit(t, page, "reviewed handoff")

	must(t, role(page, "link", "Worklist").Click(), "back to the worklist")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician"), "on the worklist")
	must(t, expect.Locator(worklistCell(t, page, worklistRow(page, id), "Reviewed")).ToContainText("by "+clinUser), "the worklist says who reviewed")
	must(t, expect.Locator(worklistCell(t, page, worklistRow(page, id), "Group")).ToHaveText("Reviewed"), "the row moved to Reviewed")

	must(t, role(page, "link", "Audit log").First().Click(), "open the audit log")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/audit"), "on the audit log")
	must(t, expect.Locator(role(page, "heading", "Audit log")).ToBeVisible(), "the Audit log heading")
	for _, action := range []string{"view_handoff", "review"} {
		entry := page.GetByRole("row").Filter(playwright.LocatorFilterOptions{
			Has: page.GetByRole("cell", playwright.PageGetByRoleOptions{Name: action, Exact: playwright.Bool(true)}),
		}).Filter(playwright.LocatorFilterOptions{
			Has: page.GetByRole("link", playwright.PageGetByRoleOptions{Name: id, Exact: playwright.Bool(true)}),
		})
		must(t, expect.Locator(entry.First()).ToBeVisible(), "an audit entry %s for %s", action, id)
		must(t, expect.Locator(entry.First()).ToContainText(clinUser), "the %s entry names dr.e2e", action)
	}
	shot(t, page, "clinician-08-audit")
	audit(t, page, "audit log")
}

// worklistRow is the worklist row of an intake (its row header is the id).
func worklistRow(page playwright.Page, id string) playwright.Locator {
	return page.GetByRole("row").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("rowheader", playwright.PageGetByRoleOptions{Name: id, Exact: playwright.Bool(true)}),
	})
}

// worklistCell is the row's cell under the column header named column.
func worklistCell(t *testing.T, page playwright.Page, row playwright.Locator, column string) playwright.Locator {
	t.Helper()
	headers := page.GetByRole("columnheader")
	must(t, expect.Locator(headers.First()).ToBeVisible(), "the worklist's column headers")
	names, err := headers.AllTextContents()
	must(t, err, "read the column headers")
	for i, n := range names {
		if strings.TrimSpace(n) == column {
			return row.Locator(":scope > th, :scope > td").Nth(i)
		}
	}
	t.Fatalf("no column %q in %q", column, names)
	return nil
}

// checkHandoffPage compares the handoff page with the service's JSON, field
// for field, as a user reads it.
func checkHandoffPage(t *testing.T, page playwright.Page, h *intakeapi.Handoff, raw []byte) {
	t.Helper()
	// SOAP: each part exactly as received.
	for _, p := range []struct{ heading, text string }{
		{"Subjective", h.SOAP.Subjective}, {"Objective", h.SOAP.Objective},
		{"Assessment", h.SOAP.Assessment}, {"Plan", h.SOAP.Plan},
	} {
		region := role(page, "region", p.heading)
		if p.text == "" {
			must(t, expect.Locator(region).ToContainText("Nothing recorded."), "%s: nothing recorded", p.heading)
			continue
		}
		body := region.GetByText(p.text, playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})
		must(t, expect.Locator(body).ToBeVisible(), "the %s text as received", p.heading)
		got, err := body.TextContent()
		must(t, err, "read %s", p.heading)
		if got != p.text {
			t.Errorf("%s shows %q, the service sent %q", p.heading, got, p.text)
		}
	}

	// Disposition label and code, safety status, urgent.
	summary := dlPairs(t, page.Locator(".handoff__head dl"))
	wantDisp := fmt.Sprintf("%s (code: %s)", orNull(h.DispositionLabel), orNull((*string)(h.Disposition)))
	if summary["Disposition"] != wantDisp {
		t.Errorf("Disposition shows %q, want %q", summary["Disposition"], wantDisp)
	}
	// A known value's plain words with the code as received beside them.
	wantSafety := orNull((*string)(h.SafetyStatus))
	if words, ok := safetyWords[wantSafety]; ok {
		wantSafety = fmt.Sprintf("%s (code: %s)", words, wantSafety)
	}
	if got := summary["Safety status"]; got != wantSafety {
		t.Errorf("Safety status shows %q, want %q", got, wantSafety)
	}
	if got, want := summary["Intake status"], orNull((*string)(h.IntakeStatus)); got != want {
		t.Errorf("Intake status shows %q, want %q", got, want)
	}
	if got, want := summary["Urgent"], map[bool]string{true: "Urgent", false: "No"}[h.Urgent]; got != want {
		t.Errorf("Urgent shows %q, want %q", got, want)
	}

	// Safety: status and every note.
	safety := role(page, "region", "Safety")
	must(t, expect.Locator(safety).ToContainText(orNull((*string)(h.SafetyStatus))), "the Safety section's status")
	if len(h.SafetyNotes) == 0 {
		must(t, expect.Locator(safety).ToContainText("No safety notes."), "no safety notes")
	} else {
		must(t, expect.Locator(safety.GetByRole("listitem")).ToHaveText(h.SafetyNotes), "every safety note as received")
	}

	// Captured facts.
	facts := dlPairs(t, role(page, "region", "Captured facts").Locator("dl"))
	for label, v := range map[string]*string{"Age": h.CapturedFacts.Age, "Sex": h.CapturedFacts.Sex, "Pregnancy": h.CapturedFacts.Pregnancy} {
		want := "not captured"
		if v != nil {
			want = *v
		}
		if facts[label] != want {
			t.Errorf("captured fact %s shows %q, want %q", label, facts[label], want)
		}
	}

	// Protocols.
	protocols := dlPairs(t, role(page, "region", "Protocols").Locator("dl"))
	if got, want := protocols["Active protocol"], orValue(h.ActiveProtocol, "none"); got != want {
		t.Errorf("Active protocol shows %q, want %q", got, want)
	}
	if got, want := protocols["Candidate protocols"], strings.Join(h.CandidateProtocols, ""); len(h.CandidateProtocols) > 0 && got != want {
		t.Errorf("Candidate protocols show %q, want %q", got, want)
	}

	// Scores: key, total, band, components of each.
	scores := role(page, "region", "Scores")
	if len(h.Scores) == 0 {
		t.Logf("the service's handoff has no scores")
		must(t, expect.Locator(scores).ToContainText("No scores reported."), "no scores")
	}
	for _, sc := range h.Scores {
		row := scores.GetByRole("row").Filter(playwright.LocatorFilterOptions{
			Has: page.GetByRole("rowheader", playwright.PageGetByRoleOptions{Name: sc.Key, Exact: playwright.Bool(true)}),
		})
		must(t, expect.Locator(row).ToHaveCount(1), "one row for score %s", sc.Key)
		must(t, expect.Locator(row.GetByRole("cell")).ToHaveText([]string{sc.Total, string(sc.Band), sc.Components}), "score %s: total, band, components", sc.Key)
	}
	must(t, expect.Locator(scores.GetByRole("rowheader")).ToHaveCount(len(h.Scores)), "one row per score")

	// Conversation: every line, in order, with its speaker.
	conv := role(page, "region", "Conversation").GetByRole("listitem")
	must(t, expect.Locator(conv).ToHaveCount(len(h.Conversation)), "one line per message")
	var texts, who []string
	for _, m := range h.Conversation {
		texts = append(texts, m.Text)
		who = append(who, map[intakeapi.Role]string{intakeapi.RolePatient: "Patient", intakeapi.RoleAssistant: "Assistant"}[m.Role])
	}
	must(t, expect.Locator(conv.Locator(".msg__text")).ToHaveText(texts), "every conversation line as received")
	must(t, expect.Locator(conv.Locator(".msg__who")).ToHaveText(who), "every line's speaker")

	// Provenance: every field of the JSON object, by name.
	var doc struct {
		Provenance map[string]json.RawMessage `json:"provenance"`
	}
	must(t, json.Unmarshal(raw, &doc), "decode provenance")
	if len(doc.Provenance) == 0 {
		t.Errorf("the service's handoff has no provenance")
	}
	prov := role(page, "region", "Provenance")
	for name, v := range doc.Provenance {
		want := provenanceText(t, v)
		dd := prov.Locator(fmt.Sprintf(`dd[data-field=%q]`, name))
		must(t, expect.Locator(dd).ToHaveCount(1), "provenance field %s is shown", name)
		text, err := dd.Locator(".mono").First().TextContent()
		must(t, err, "read provenance %s", name)
		if text != want {
			t.Errorf("provenance %s shows %q, the service sent %q", name, text, want)
		}
	}
	if h.Provenance.AuditRef != nil {
		must(t, expect.Locator(prov.GetByText(*h.Provenance.AuditRef, playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})).ToBeVisible(), "the audit reference is visible")
	}
}

// provenanceText is how a provenance value reads on the page: strings as
// received, numbers in their shortest form, null as "null".
func provenanceText(t *testing.T, v json.RawMessage) string {
	t.Helper()
	var x any
	must(t, json.Unmarshal(v, &x), "decode provenance value %s", v)
	switch x := x.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	t.Errorf("unexpected provenance value %s", v)
	return string(v)
}

// dlPairs reads a description list as term → description text (spaces
// collapsed), the way it reads on screen.
func dlPairs(t *testing.T, dl playwright.Locator) map[string]string {
	t.Helper()
	must(t, expect.Locator(dl.First()).ToBeVisible(), "the description list")
	v, err := dl.First().Evaluate(`dl => {
		const out = {};
		let term = null;
		for (const el of dl.querySelectorAll('dt, dd')) {
			const text = el.textContent.replace(/\s+/g, ' ').trim();
			if (el.tagName === 'DT') term = text;
			else if (term !== null && !(term in out)) out[term] = text;
		}
		return JSON.stringify(out);
	}`, nil)
	must(t, err, "read the description list")
	var m map[string]string
	must(t, json.Unmarshal([]byte(fmt.Sprint(v)), &m), "decode the description list")
	return m
}

// safetyWords are the plain words of the spec's safety_status values.
var safetyWords = map[string]string{
	"no_red_flags_yet":     "No warning signs found so far",
	"cannot_miss_negative": "The serious causes checked for were not found",
	"cannot_miss_positive": "A sign of a possibly serious problem was found",
}

func orNull(p *string) string { return orValue(p, "null") }

func orValue(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}
