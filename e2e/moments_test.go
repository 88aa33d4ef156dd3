package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// The moments that matter (issue #14): what a patient sees first when it
// matters most, in words they understand, with the focus where they are.

var (
	phone  = &playwright.Size{Width: 390, Height: 844}
	laptop = &playwright.Size{Width: 1280, Height: 800}
)

// TestEmergencyPageLeadsWithTheInstruction: after an emergency phrase the
// first thing on the page (above the fold on a phone) is the engine's reply,
// unedited, in the one role="alert"; the status region does not repeat it;
// nothing suggests waiting for a clinician. Live and after a reload.
func TestEmergencyPageLeadsWithTheInstruction(t *testing.T) {
	t.Parallel()
	for _, vp := range []struct {
		name string
		size *playwright.Size
	}{{"phone", phone}, {"laptop", laptop}} {
		t.Run(vp.name, func(t *testing.T) {
			t.Parallel()
			a := startApp(t)
			page := newPage(t, playwright.BrowserNewContextOptions{Viewport: vp.size})
			startIntake(t, page, a)
			send(t, page, "I have crushing chest pain spreading to my left arm")
			waitReply(t, page, urgentReplyPart)
			checkEmergencyPage(t, page, vp.size, true)
			shot(t, page, "moments-emergency-"+vp.name)
			audit(t, page, "emergency page ("+vp.name+")")

			_, err := page.Reload()
			must(t, err, "reload")
			checkEmergencyPage(t, page, vp.size, false)
			shot(t, page, "moments-emergency-"+vp.name+"-reloaded")
		})
	}
}

func checkEmergencyPage(t *testing.T, page playwright.Page, size *playwright.Size, live bool) {
	t.Helper()
	alert := page.GetByRole("alert")
	must(t, expect.Locator(alert).ToHaveCount(1), "one alert on the emergency page")
	must(t, expect.Locator(alert).ToContainText(urgentReplyPart), "the alert holds the engine's reply")
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText(urgentLabel), "the disposition label as received")
	// The engine's reply in the card is exactly the one in the transcript.
	card, err := evalString(page, `() => document.querySelector('.care-card__message').textContent`)
	must(t, err, "read the card's message")
	last, err := evalString(page, `() => [...document.querySelectorAll('#transcript [data-reply]')].pop().textContent`)
	must(t, err, "read the last reply")
	if card != last || !strings.Contains(card, urgentReplyPart) {
		t.Errorf("the card's message %q is not the engine's reply %q", card, last)
	}
	// First in the main content, and its message above the fold.
	first, err := evalString(page, `() => {
		const main = document.querySelector('main') || document.body;
		const c = document.querySelector('.care-card');
		const h1 = main.querySelector('h1');
		return String(!!c && !!h1 && (c.compareDocumentPosition(h1) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0)
			+ ' ' + Math.round(document.querySelector('.care-card__message').getBoundingClientRect().bottom);
	}`)
	must(t, err, "locate the card")
	parts := strings.Fields(first)
	if parts[0] != "true" {
		t.Errorf("the emergency card is not before the page heading")
	}
	if live {
		// The page scrolled to it; after a reload it is at the top anyway.
		t.Logf("card message bottom at %s px (viewport %d)", parts[1], size.Height)
	}
	bottom, err := evalString(page, `() => String(document.querySelector('.care-card__message').getBoundingClientRect().bottom <= window.innerHeight)`)
	must(t, err, "measure the card")
	if bottom != "true" {
		t.Errorf("the engine's instruction is below the fold at %dx%d", size.Width, size.Height)
	}
	body, err := evalString(page, `() => document.querySelector('main, body').innerText.toLowerCase()`)
	must(t, err, "read the page")
	for _, bad := range []string{"clinician review", "a clinician reviews", "is complete"} {
		if strings.Contains(body, bad) {
			t.Errorf("the emergency page says %q", bad)
		}
	}
	if live {
		st, err := statusRegion(page).TextContent()
		must(t, err, "read the status region")
		if strings.TrimSpace(st) != "" {
			t.Errorf("the status region repeats the alert: %q", st)
		}
	}
}

// statusLog records every text the status region shows (init script: not
// subject to the page's CSP).
const statusLog = `
window.__statusLog = [];
new MutationObserver(() => {
	const s = document.getElementById('status');
	if (s) window.__statusLog.push(s.textContent);
}).observe(document, {subtree: true, childList: true, characterData: true});
`

func statusTexts(t *testing.T, page playwright.Page) string {
	t.Helper()
	s, err := evalString(page, `() => (window.__statusLog || []).join('\n')`)
	must(t, err, "read the status log")
	return s
}

// TestPlainWordsNotCodes: a patient reads each known safety_status value
// in plain words, never the code (clinicians get both: templates' tests);
// "compiling" is said only when the intake is closing, in plain words,
// never as a count of characters.
func TestPlainWordsNotCodes(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	must(t, page.AddInitScript(playwright.Script{Content: playwright.String(statusLog)}), "add the status log")
	startIntake(t, page, a)
	send(t, page, soreThroatOpening)
	waitReply(t, page, soreThroatNo[0])
	must(t, expect.Locator(page.Locator("#safety-status")).ToHaveText("No warning signs found so far"), "the plain words of no_red_flags_yet")
	must(t, expect.Locator(page.Locator("main")).Not().ToContainText("no_red_flags_yet"), "no code on a patient's page")
	mid := statusTexts(t, page)
	for _, bad := range []string{"Compiling", "ompil", "characters", "summary"} {
		if strings.Contains(mid, bad) {
			t.Errorf("a mid-intake turn's status says %q: %q", bad, mid)
		}
	}
	for _, next := range soreThroatNo[1:] {
		answerNo(t, page, next)
	}
	must(t, expect.Locator(page.Locator("#safety-status")).ToHaveText("The serious causes checked for were not found"), "the plain words of cannot_miss_negative")
	must(t, expect.Locator(page.Locator("body")).Not().ToContainText("cannot_miss_negative"), "no code on a patient's page")
	all := statusTexts(t, page)
	if strings.Contains(all, "characters") || strings.Contains(all, "Compiling") {
		t.Errorf("the status showed a code-like message: %q", all)
	}
	if !strings.Contains(all, "Writing a summary of this conversation") {
		t.Errorf("the closing turn did not say the summary is being written: %q", all)
	}
	audit(t, page, "plain words")
}

// TestQueuedWaitIsExplainedAndMoves: with the app's pacer at one request a
// minute, a message waits in line: starting the intake sent nothing (the
// page says it starts with the first message), the first message's
// creation of the intake upstream takes the minute's one request, and its
// turn waits. The page says why (a few requests a
// minute, shared by everyone), the place, and a countdown that ticks each
// second in an aria-hidden part (not re-announced), while the server's
// fresh queued events keep the estimate right.
func TestQueuedWaitIsExplainedAndMoves(t *testing.T) {
	t.Parallel()
	for _, vp := range []struct {
		name string
		size *playwright.Size
	}{{"phone", phone}, {"laptop", laptop}} {
		t.Run(vp.name, func(t *testing.T) {
			t.Parallel()
			a := startApp(t, appOptions{PacerPerMinute: 1})
			page := newPage(t, playwright.BrowserNewContextOptions{Viewport: vp.size})
			must(t, page.AddInitScript(playwright.Script{Content: playwright.String(statusLog)}), "add the status log")
			startIntake(t, page, a)
			if n := upstreamRequests(a); n != 0 {
				t.Fatalf("starting the intake sent %d requests upstream, want none", n)
			}
			must(t, expect.Locator(page.GetByText("Your intake starts at the intake service with your first message.")).ToBeVisible(), "the new intake says it starts with the first message")
			send(t, page, soreThroatOpening)
			status := statusRegion(page)
			must(t, expect.Locator(status).ToContainText("next in line"), "the place in line")
			if st := a.Sandbox.Service.Stats(); st.Requests["create"] != 1 || st.Requests["turn"] != 0 {
				t.Errorf("while the first message waits: %d creations, %d turns upstream, want 1 and 0", st.Requests["create"], st.Requests["turn"])
			}
			must(t, expect.Locator(status).ToContainText("a few requests a minute, shared by everyone using this app"), "why there is a wait")
			must(t, expect.Locator(status).ToContainText("Your turn in about"), "a countdown")

			extra := page.Locator("#status .status__extra")
			must(t, expect.Locator(extra).ToHaveAttribute("aria-hidden", "true"), "the countdown is not read out each second")
			first, err := extra.TextContent()
			must(t, err, "read the countdown")
			spoken, err := evalString(page, `() => document.querySelector('#status span:not([aria-hidden])').textContent`)
			must(t, err, "read the announced part")
			must(t, expect.Locator(extra).Not().ToHaveText(first, playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(3000)}), "the countdown moves within 3 s")
			second, err := extra.TextContent()
			must(t, err, "read the countdown again")
			spokenLater, err := evalString(page, `() => document.querySelector('#status span:not([aria-hidden])').textContent`)
			must(t, err, "read the announced part again")
			if spoken != spokenLater {
				t.Errorf("the announced part changed without a change of place: %q -> %q", spoken, spokenLater)
			}
			t.Logf("countdown %q -> %q; announced %q", first, second, spoken)
			must(t, expect.Locator(page.Locator("#pending .typing__text")).ToContainText("Waiting in line"), "the pending reply says it is waiting in line")
			shot(t, page, "moments-queued-"+vp.name)
			audit(t, page, "queued wait ("+vp.name+")")
		})
	}
}

// tabTo presses Tab until the focused element matches the CSS selector.
func tabTo(t *testing.T, page playwright.Page, selector string) {
	t.Helper()
	for range 80 {
		ok, err := evalString(page, `(sel) => String(!!document.activeElement && document.activeElement.matches(sel))`, selector)
		must(t, err, "check the focus")
		if ok == "true" {
			return
		}
		must(t, page.Keyboard().Press("Tab"), "press Tab")
	}
	t.Fatalf("Tab never reached %s", selector)
}

// focused describes the focused element ("BODY" when the focus is lost).
func focused(t *testing.T, page playwright.Page) string {
	t.Helper()
	s, err := evalString(page, `() => {
		const a = document.activeElement;
		if (!a || a === document.body) return 'BODY';
		return a.tagName + (a.id ? '#' + a.id : '') + (a.disabled ? ' (disabled)' : '') + ' ' + (a.textContent || '').trim().slice(0, 40);
	}`)
	must(t, err, "read the focus")
	return s
}

func mustFocus(t *testing.T, page playwright.Page, prefix, when string) {
	t.Helper()
	deadline := time.Now().Add(expectTimeout)
	for {
		f := focused(t, page)
		if strings.HasPrefix(f, prefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the focus is on %q, want %s", when, f, prefix)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKeyboardOnlyIntake: a whole intake with Tab, Enter, Space and typing
// only: the start form, a message, the quick replies to a disposition. The
// focus is never lost to the page body: after Send and after a quick reply
// it stays in (or returns to) the message box, and at the end it is on the
// next sensible control.
func TestKeyboardOnlyIntake(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t)
	_, err := page.Goto(a.URL + "/")
	must(t, err, "open the start page")
	kb := page.Keyboard()
	tabTo(t, page, "#age")
	must(t, kb.Type("30"), "type the age")
	tabTo(t, page, "#sex")
	for range 4 { // the arrow keys choose an option of a focused select
		if v, _ := page.Locator("#sex").InputValue(); v == "female" {
			break
		}
		must(t, kb.Press("ArrowDown"), "choose the next Sex option")
	}
	must(t, expect.Locator(page.Locator("#sex")).ToHaveValue("female"), "Sex is female")
	tabTo(t, page, "#history")
	must(t, kb.Type("No known allergies."), "type the history")
	tabTo(t, page, "#synthetic")
	must(t, kb.Press("Space"), "tick the synthetic box")
	tabTo(t, page, ".start-form button[type=submit]")
	must(t, kb.Press("Enter"), "press Start intake")
	must(t, expect.Page(page).ToHaveURL(intakePath), "the intake page")

	tabTo(t, page, "#message")
	must(t, kb.Type(soreThroatOpening), "type the first message")
	tabTo(t, page, "#send")
	must(t, kb.Press("Enter"), "press Send")
	mustFocus(t, page, "TEXTAREA#message", "right after Send")
	waitReply(t, page, soreThroatNo[0])
	mustFocus(t, page, "TEXTAREA#message", "after the reply")

	for i, next := range soreThroatNo[1:] {
		tabTo(t, page, `.quick-replies button[value="No"]:not([disabled])`)
		must(t, kb.Press("Space"), "press the No quick reply")
		if f := focused(t, page); f == "BODY" {
			t.Fatalf("quick reply %d: the focus fell to the page body", i+1)
		}
		waitReply(t, page, next)
		if i < len(soreThroatNo)-2 {
			mustFocus(t, page, "TEXTAREA#message", "after a quick reply's answer")
		}
	}
	must(t, expect.Locator(page.Locator("#disposition")).ToHaveText(selfCareLabel), "the disposition as received")
	mustFocus(t, page, "A Start a new intake", "after the last reply")
	audit(t, page, "keyboard-only intake, final")
}

// TestErrorSummaries: the composer's refusals use the error summary
// pattern, with and without JavaScript: a summary at the top of the form,
// focused, whose link leads to the message box.
func TestErrorSummaries(t *testing.T) {
	t.Parallel()
	a := startApp(t)

	// With JavaScript: Send with an empty box.
	page := newPage(t)
	startIntake(t, page, a)
	must(t, sendButton(page).Click(), "press Send with nothing typed")
	summary := page.Locator("#error-summary")
	must(t, expect.Locator(summary).ToBeFocused(), "the error summary has the focus")
	link := summary.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Type a message before sending."})
	must(t, expect.Locator(link).ToHaveAttribute("href", "#message"), "the error links to the message box")
	audit(t, page, "composer error summary (JavaScript)")
	must(t, page.Keyboard().Press("Tab"), "Tab to the error's link")
	must(t, page.Keyboard().Press("Enter"), "follow the link")
	must(t, expect.Locator(messageBox(page)).ToBeFocused(), "the link leads to the message box")
	send(t, page, soreThroatOpening)
	waitReply(t, page, soreThroatNo[0])
	must(t, expect.Locator(summary).ToHaveCount(0), "the summary goes once a message is sent")

	// Without JavaScript: the server renders the same summary.
	nojs := newPage(t, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
	startIntake(t, nojs, a)
	must(t, sendButton(nojs).Click(), "send an empty message without JavaScript")
	s2 := nojs.Locator("#error-summary")
	must(t, expect.Locator(s2).ToHaveAttribute("tabindex", "-1"), "a focusable summary")
	must(t, expect.Locator(s2.Locator(`a[href="#message"]`)).ToHaveCount(1), "its error links to the message box")
}
