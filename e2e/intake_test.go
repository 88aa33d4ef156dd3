package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// TestStartPage: the start page has the contract's fields and passes axe;
// an out-of-range age keeps every typed value and shows the error next to
// the Age field (linked to it), and that state passes axe too.
func TestStartPage(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	resp, err := page.Goto(a.URL + "/")
	must(t, err, "open the start page")
	if resp.Status() != 200 {
		t.Fatalf("GET / answered %d", resp.Status())
	}
	for _, label := range []string{"Age", "Sex", "Medical history"} {
		must(t, expect.Locator(page.GetByLabel(label, playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeVisible(), "field %s", label)
	}
	must(t, expect.Locator(page.GetByRole("checkbox", playwright.PageGetByRoleOptions{Name: "This is a synthetic scenario"})).ToBeVisible(), "synthetic scenario checkbox")
	must(t, expect.Locator(role(page, "button", "Start intake")).ToBeVisible(), "Start intake button")
	shot(t, page, "01-start-page")
	audit(t, page, "start page")

	const history = "Asthma as a child.\nPenicillin allergy (rash)."
	fillStartForm(t, page, "200", "male", history)
	must(t, role(page, "button", "Start intake").Click(), "click Start intake")

	age := page.GetByLabel("Age", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
	must(t, expect.Locator(age).ToHaveAttribute("aria-invalid", "true"), "Age is marked invalid")
	if intakePath.MatchString(page.URL()) {
		t.Fatalf("an age of 200 started an intake: %s", page.URL())
	}
	// Every typed value is kept.
	must(t, expect.Locator(age).ToHaveValue("200"), "Age keeps 200")
	must(t, expect.Locator(page.GetByLabel("Sex", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToHaveValue("male"), "Sex keeps male")
	must(t, expect.Locator(page.GetByLabel("Medical history")).ToHaveValue(history), "Medical history keeps its text")
	must(t, expect.Locator(page.GetByLabel("This is a synthetic scenario")).ToBeChecked(), "the synthetic box stays checked")

	// The error is next to the Age field: a visible message in the field's
	// own container that the input's aria-describedby points at.
	raw, err := age.Evaluate(`el => {
		const ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
		const out = [];
		for (const id of ids) {
			const d = document.getElementById(id);
			if (!d) continue;
			const r = d.getBoundingClientRect(), ri = el.getBoundingClientRect();
			out.push({id, text: d.textContent.trim(), visible: r.width > 0 && r.height > 0,
				sameField: el.parentElement.contains(d), distance: Math.abs(r.top - ri.top)});
		}
		return JSON.stringify(out);
	}`, nil)
	must(t, err, "read the Age field's descriptions")
	var descs []struct {
		ID, Text           string
		Visible, SameField bool
		Distance           float64
	}
	must(t, json.Unmarshal([]byte(raw.(string)), &descs), "decode descriptions")
	found := false
	for _, d := range descs {
		// The field's hint ("Optional. In whole years, ...") is described too.
		if d.Text != "" && d.Visible && d.SameField && d.Distance < 120 && !strings.HasPrefix(d.Text, "Optional") {
			found = true
			t.Logf("Age error %q (#%s, %.0f px from the input)", d.Text, d.ID, d.Distance)
		}
	}
	if !found {
		t.Errorf("no visible error next to the Age field and linked by aria-describedby; descriptions: %+v", descs)
	}
	must(t, expect.Locator(page.GetByRole("alert")).ToContainText("problem"), "an error summary announces the problem")
	shot(t, page, "02-start-page-errors")
	audit(t, page, "start page with validation errors")
}

// TestFullIntakeSelfCare: a whole sore-throat intake answered with the "No"
// quick reply reaches the self-care disposition, shown as received; then
// the message box and the quick replies are gone and nothing is urgent.
func TestFullIntakeSelfCare(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	startIntake(t, page, a)

	send(t, page, soreThroatOpening)
	waitReply(t, page, firstReply)
	must(t, expect.Locator(conversation(page)).ToContainText(soreThroatOpening), "the patient's message is in the conversation")
	must(t, expect.Locator(quickReplies(page)).ToBeVisible(), "quick replies after the first reply")
	shot(t, page, "04-quick-replies")
	audit(t, page, "quick replies shown")

	// Loop bound: the engine needs len(soreThroatNo)-1 answers; a few more
	// would show a conversation that does not end.
	for turn := 1; turn < len(soreThroatNo); turn++ {
		answerNo(t, page, soreThroatNo[turn])
	}
	must(t, expect.Locator(messageBox(page)).ToHaveCount(0), "the message box is gone once terminal")
	must(t, expect.Locator(sendButton(page)).ToHaveCount(0), "the Send button is gone once terminal")
	must(t, expect.Locator(quickReplies(page)).ToHaveCount(0), "no quick replies once terminal")
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText(selfCareLabel), "the disposition label as received")
	must(t, expect.Locator(page.GetByRole("alert")).ToHaveCount(0), "no alert on a self-care intake")
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(len(soreThroatNo)), "one exchange per turn")
	shot(t, page, "06-completed-intake")
	audit(t, page, "completed intake")

	// The completed state is stored: a reload shows the same.
	_, err := page.Reload()
	must(t, err, "reload the completed intake")
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText(selfCareLabel), "the disposition after a reload")
	must(t, expect.Locator(messageBox(page)).ToHaveCount(0), "no message box after a reload")
	must(t, expect.Locator(conversation(page)).ToContainText(soreThroatNo[len(soreThroatNo)-1]), "the last reply after a reload")
}

// TestUrgentEscalation: an emergency phrase on the first turn shows the
// urgent alert and the disposition label as received, and ends the intake
// (no message box), also after a reload.
func TestUrgentEscalation(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	startIntake(t, page, a)
	must(t, expect.Locator(page.GetByRole("alert")).ToHaveCount(0), "no alert before any turn")

	send(t, page, "I have crushing chest pain")
	waitReply(t, page, urgentReplyPart)
	alert := page.GetByRole("alert")
	must(t, expect.Locator(alert).ToBeVisible(), "the urgent alert is visible")
	must(t, expect.Locator(alert).ToContainText("Urgent"), "the alert says urgent")
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText(urgentLabel), "the urgent disposition label as received")
	must(t, expect.Locator(messageBox(page)).ToHaveCount(0), "the message box is gone after escalation")
	must(t, expect.Locator(quickReplies(page)).ToHaveCount(0), "no quick replies after escalation")
	shot(t, page, "05-urgent-escalation")
	audit(t, page, "urgent escalation")

	_, err := page.Reload()
	must(t, err, "reload")
	must(t, expect.Locator(page.GetByRole("alert")).ToBeVisible(), "the alert after a reload")
	must(t, expect.Locator(messageBox(page)).ToHaveCount(0), "no message box after a reload")
}

// TestQuickReplies: the first reply offers its choices as buttons in the
// Suggested replies group; clicking one sends it as the patient's message
// (shown in the conversation) and the next question comes with new buttons.
func TestQuickReplies(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	startIntake(t, page, a)
	must(t, expect.Locator(quickReplies(page)).ToHaveCount(0), "no quick replies before the first turn")

	send(t, page, soreThroatOpening)
	waitReply(t, page, firstReply)
	buttons := quickReplies(page).GetByRole("button")
	must(t, expect.Locator(buttons).ToHaveText([]string{"Yes", "No"}), "the first question's choices")
	must(t, expect.Locator(messageBox(page)).ToBeVisible(), "the message box stays beside the quick replies")
	must(t, expect.Locator(messageBox(page)).ToHaveValue(""), "the message box is empty after sending")

	answerNo(t, page, soreThroatNo[1])
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(2), "two exchanges")
	must(t, expect.Locator(conversation(page).GetByText("No", playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})).ToBeVisible(), "the clicked reply shows as the patient's message")
	must(t, expect.Locator(buttons).ToHaveText([]string{"Yes", "No"}), "the second question's choices")

	// Three-way choices come with the score questions.
	answerNo(t, page, soreThroatNo[2])
	answerNo(t, page, soreThroatNo[3])
	must(t, expect.Locator(buttons).ToHaveText([]string{"Yes", "No", "Not sure"}), "the fever question's choices")
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText("Intake in progress"), "the in-progress label as received")
}

// TestStreamingReply: with a slower upstream the reply is seen growing in
// the pending turn while the status region announces progress, and then
// completes whole.
func TestStreamingReply(t *testing.T) {
	t.Parallel()
	a := startApp(t, appOptions{FragmentDelay: 250 * time.Millisecond})
	page := newPage(t)
	startIntake(t, page, a)
	must(t, expect.Locator(statusRegion(page)).ToHaveCount(1), "exactly one status region")

	send(t, page, soreThroatOpening)
	partial := waitPartial(t, page, firstReply)
	status, err := statusRegion(page).TextContent()
	must(t, err, "read the status region")
	t.Logf("partial reply seen: %q; status: %q", partial, strings.TrimSpace(status))
	if strings.TrimSpace(status) == "" {
		t.Errorf("the status region announces nothing while the reply streams")
	}
	shot(t, page, "03-streaming-reply")
	audit(t, page, "streaming reply")

	waitReply(t, page, firstReply)
	if n := countIn(t, conversation(page), firstReply); n != 1 {
		t.Errorf("the reply shows %d times, want once", n)
	}
	must(t, expect.Locator(statusRegion(page)).ToHaveCount(1), "still exactly one status region")
}

// waitPartial waits until the pending reply shows a non-empty prefix of
// full that is not all of it, and returns that text.
func waitPartial(t *testing.T, page playwright.Page, full string) string {
	t.Helper()
	return waitPartialFrom(t, page, full, "")
}

// waitPartialFrom waits until the pending reply shows a prefix of full that
// is at least seen (already shown) and not yet all of full.
func waitPartialFrom(t *testing.T, page playwright.Page, full, seen string) string {
	t.Helper()
	v, err := waitJS(page, `([full, seen]) => {
		const el = document.querySelector('#pending [data-reply]');
		const s = el ? el.textContent.trim() : '';
		return s.length > 0 && s.length < full.length && full.startsWith(s) && s.startsWith(seen) ? s : false;
	}`, []string{full, seen})
	must(t, err, "a partial reply streams into the pending turn")
	return fmt.Sprint(v)
}

// TestReloadMidReply: reloading while a reply streams shows the partial
// text again and the reply then completes, once.
func TestReloadMidReply(t *testing.T) {
	t.Parallel()
	a := startApp(t, appOptions{FragmentDelay: 300 * time.Millisecond})
	page := newPage(t)
	startIntake(t, page, a)

	send(t, page, soreThroatOpening)
	before := waitPartial(t, page, firstReply)
	_, err := page.Reload()
	must(t, err, "reload mid-reply")
	// What was shown before the reload shows again, and more streams in.
	after := waitPartialFrom(t, page, firstReply, before)
	t.Logf("before the reload: %q; after: %q", before, after)
	waitReply(t, page, firstReply)
	if n := countIn(t, conversation(page), firstReply); n != 1 {
		t.Errorf("after the reload the reply shows %d times, want once", n)
	}
	must(t, expect.Locator(quickReplies(page)).ToBeVisible(), "the quick replies come after the completed reply")
}

// TestOtherSessionDenied: another browser context (another session) that
// opens an intake's URL gets the 404 page, and its events URL answers 404.
func TestOtherSessionDenied(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	owner := newPage(t)
	streams := recordEventStreams(owner)
	startIntake(t, owner, a)
	send(t, owner, soreThroatOpening)
	waitReply(t, owner, firstReply)
	urls := streams()
	if len(urls) == 0 {
		t.Fatal("the intake page opened no EventSource for the reply")
	}
	events := urls[0]
	intakeURL := owner.URL()

	other := newPage(t)
	resp, err := other.Goto(intakeURL)
	must(t, err, "open another session's intake")
	if resp.Status() != 404 {
		t.Errorf("another session's intake answered %d, want 404", resp.Status())
	}
	must(t, expect.Locator(other.GetByRole("heading", playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToBeVisible(), "the 404 page has a heading")
	must(t, expect.Locator(other.Locator("body")).Not().ToContainText(soreThroatOpening), "nothing of the intake shows")
	must(t, expect.Locator(messageBox(other)).ToHaveCount(0), "no message box on the 404 page")
	audit(t, other, "not found page")

	st, err := other.Evaluate(`async (u) => (await fetch(u)).status`, events)
	must(t, err, "fetch the events URL from the other session")
	if fmt.Sprint(st) != "404" {
		t.Errorf("another session's events URL answered %v, want 404", st)
	}
}

// recordEventStreams records the URLs of the EventSource requests the
// page makes; the returned function lists them so far.
func recordEventStreams(page playwright.Page) func() []string {
	var mu sync.Mutex
	var urls []string
	page.OnRequest(func(r playwright.Request) {
		if r.ResourceType() == "eventsource" {
			mu.Lock()
			urls = append(urls, r.URL())
			mu.Unlock()
		}
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), urls...)
	}
}
