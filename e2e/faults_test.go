package e2e

import (
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Fault journeys in the browser (issue 7): the sandbox is armed with a
// fault for the intake's next turn, then the patient sends through the page
// with JavaScript on. After each, the sandbox's own record holds every
// message exactly once.

const (
	notLandedMessage = "Your message did not reach the intake service. You can send it again."
	// cutOffMessage: part of the reply had streamed, so the message did
	// reach the service; it did not keep it (issue #14: say what happened).
	cutOffMessage = "The reply was cut off, and the intake service did not keep your message. You can send it again."
)

// TestFaultStreamDrop: the upstream stream is cut after a few fragments
// (the turn was applied). The reply still appears, reconciled from the
// handoff, the message shows exactly once, nothing offers to send it
// again, and the conversation goes on.
func TestFaultStreamDrop(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	startIntake(t, page, a)
	id := intakeIDOf(t, page)
	armFault(t, a, id, "stream_drop")

	send(t, page, soreThroatOpening)
	waitReply(t, page, firstReply)
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(1), "one exchange after a dropped stream")
	if n := countIn(t, conversation(page), soreThroatOpening); n != 1 {
		t.Errorf("the message shows %d times, want once", n)
	}
	if n := countIn(t, conversation(page), firstReply); n != 1 {
		t.Errorf("the reconciled reply shows %d times, want once", n)
	}
	must(t, expect.Locator(role(page, "button", "Send again")).ToHaveCount(0), "no Send again after a turn that landed")
	must(t, expect.Locator(conversation(page)).Not().ToContainText(notLandedMessage), "no failure message")
	must(t, expect.Locator(conversation(page)).Not().ToContainText(cutOffMessage), "no cut-off failure message")
	shot(t, page, "fault-stream-drop")
	// The fault did strike: the app had to reconcile this turn.
	if !strings.Contains(a.logs.String(), "turn stream failed; reconciling from the handoff") {
		t.Errorf("the armed stream_drop did not reach the app (no reconciliation logged)")
	}
	checkServiceRecord(t, a, id, []string{soreThroatOpening})

	// The intake goes on: the next message is answered normally. (The
	// handoff carries no quick replies, so the patient types it.)
	send(t, page, "No")
	waitReply(t, page, soreThroatNo[1])
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(2), "two exchanges")
	checkServiceRecord(t, a, id, []string{soreThroatOpening, "No"})
}

// TestFaultStreamError: the stream ends with an error event after part of
// the reply (the turn was not applied). While the app checks, the page says
// the reply was cut off; the turn then shows it was not kept (never that it
// "did not reach" the service) and a "Send again" button; it sends the same
// text and the reply appears; the service saw it once.
func TestFaultStreamError(t *testing.T) {
	t.Parallel()
	faultThenRetry(t, "stream_error", cutOffMessage)
}

// TestFaultUpstreamError: a 502 before the stream starts: the same outcome
// as a stream error (failed, then Send again works).
func TestFaultUpstreamError(t *testing.T) {
	t.Parallel()
	faultThenRetry(t, "upstream_error", notLandedMessage)
}

func faultThenRetry(t *testing.T, kind, failure string) {
	t.Helper()
	a := startApp(t)
	page := newPage(t)
	must(t, page.AddInitScript(playwright.Script{Content: playwright.String(statusLog)}), "add the status log")
	startIntake(t, page, a)
	id := intakeIDOf(t, page)
	armFault(t, a, id, kind)

	send(t, page, soreThroatOpening)
	again := conversation(page).GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Send again", Exact: playwright.Bool(true)})
	must(t, expect.Locator(again).ToBeVisible(), "the failed turn offers Send again")
	must(t, expect.Locator(again).ToBeEnabled(), "Send again is enabled")
	must(t, expect.Locator(conversation(page)).ToContainText(failure), "the failed turn says what happened")
	must(t, expect.Locator(statusRegion(page)).ToContainText(failure), "the status region announces the failure")
	if failure == cutOffMessage {
		if strings.Contains(textOf(t, conversation(page)), "did not reach") {
			t.Errorf("a reply that had partly streamed is said not to have reached the service")
		}
		if log := statusTexts(t, page); !strings.Contains(log, "The reply was cut off. Checking with the intake service") {
			t.Errorf("no word that the reply was cut off while the app checked: %q", log)
		}
	}
	must(t, expect.Locator(page.Locator("#pending")).ToHaveCount(0), "no turn is pending after the failure")
	if n := countIn(t, conversation(page), firstReply); n != 0 {
		t.Errorf("a reply shows after a %s", kind)
	}
	shot(t, page, "fault-"+kind+"-failed")
	audit(t, page, kind+" failed turn")
	// Nothing reached the engine.
	checkServiceRecord(t, a, id, nil)

	must(t, again.Click(), "click Send again")
	waitReply(t, page, firstReply)
	if n := countIn(t, conversation(page), firstReply); n != 1 {
		t.Errorf("after Send again the reply shows %d times, want once", n)
	}
	// The used control is gone: no Send again is left working on the old
	// error, which says where its message went.
	must(t, expect.Locator(role(page, "button", "Send again")).ToHaveCount(0), "no Send again once the message was sent again")
	must(t, expect.Locator(conversation(page)).ToContainText("Sent again: see below."), "the old error says it was sent again")
	// The failed exchange stays in the transcript; the resent one follows.
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(2), "the failed exchange and the resent one")
	must(t, expect.Locator(conversation(page).GetByText(soreThroatOpening, playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})).ToHaveCount(2), "the resent text is the same text")
	must(t, expect.Locator(quickReplies(page)).ToBeVisible(), "the resent turn's quick replies")
	must(t, expect.Locator(statusRegion(page)).ToContainText("Reply received"), "the status region announces the reply")
	shot(t, page, "fault-"+kind+"-resent")
	checkServiceRecord(t, a, id, []string{soreThroatOpening})

	// The conversation goes on from there, with nothing sent twice.
	answerNo(t, page, soreThroatNo[1])
	checkServiceRecord(t, a, id, []string{soreThroatOpening, "No"})
}

// TestNoJSDisposition: with JavaScript off, the sore-throat script runs to
// its final disposition through plain form posts: each post blocks until
// the reply and redirects to the conversation, which already shows it (no
// reload). Then the message box is gone and the disposition label shows.
func TestNoJSDisposition(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
	startIntake(t, page, a)
	id := intakeIDOf(t, page)

	send(t, page, soreThroatOpening)
	noJSReply(t, page, firstReply, 1)
	sent := []string{soreThroatOpening}
	for turn := 1; turn < len(soreThroatNo); turn++ {
		no := quickReply(page, "No")
		must(t, expect.Locator(no).ToBeVisible(), "the No quick reply before turn %d", turn+1)
		must(t, no.Click(), "click the No quick reply (turn %d)", turn+1)
		noJSReply(t, page, soreThroatNo[turn], turn+1)
		sent = append(sent, "No")
	}
	must(t, expect.Locator(messageBox(page)).ToHaveCount(0), "the message box is gone once terminal")
	must(t, expect.Locator(sendButton(page)).ToHaveCount(0), "the Send button is gone once terminal")
	must(t, expect.Locator(quickReplies(page)).ToHaveCount(0), "no quick replies once terminal")
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText(selfCareLabel), "the disposition label as received")
	shot(t, page, "nojs-disposition")
	checkServiceRecord(t, a, id, sent)
}

// noJSReply: after a post without JavaScript the browser lands on the
// intake page with the reply already there and nothing pending.
func noJSReply(t *testing.T, page playwright.Page, want string, exchanges int) {
	t.Helper()
	must(t, expect.Page(page).ToHaveURL(intakePath), "the post redirects to the intake page")
	must(t, expect.Locator(conversation(page)).ToContainText(want), "the reply %q is on the page the post redirected to", want)
	must(t, expect.Locator(page.Locator("#pending")).ToHaveCount(0), "nothing pending after the redirect")
	must(t, expect.Locator(page.GetByText("Reload this page")).ToHaveCount(0), "no reload hint")
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(exchanges), "%d exchanges", exchanges)
}

func textOf(t *testing.T, l playwright.Locator) string {
	t.Helper()
	s, err := l.TextContent()
	must(t, err, "read text")
	return s
}
