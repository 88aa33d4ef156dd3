package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Enter sends the message, Shift+Enter starts a new line, the page says so
// beside the box (tied to it for screen readers), and an Enter that confirms
// an input method's composition sends nothing. Without JavaScript, where
// Enter starts a new line, nothing says otherwise.
func TestEnterSendsShiftEnterStartsANewLine(t *testing.T) {
	const hintText = "Enter sends. Shift+Enter starts a new line."
	a := startApp(t)
	page := newPage(t)
	startIntake(t, page, a)
	box := messageBox(page)
	hint := page.Locator("#message-keys")
	must(t, expect.Locator(hint).ToBeVisible(), "the keys hint is shown beside the box")
	must(t, expect.Locator(hint).ToHaveText(hintText), "the keys hint's words")
	must(t, expect.Locator(box).ToHaveAccessibleDescription(regexp.MustCompile(regexp.QuoteMeta(hintText))),
		"the box's description (what a screen reader reads with it) includes the keys hint")

	// Shift+Enter: a new line, nothing sent.
	must(t, box.Click(), "click into the message box")
	kb := page.Keyboard()
	must(t, kb.Type("I have had a sore throat"), "type")
	must(t, kb.Press("Shift+Enter"), "press Shift+Enter")
	must(t, kb.Type("for 3 days"), "type")
	must(t, expect.Locator(box).ToHaveValue("I have had a sore throat\nfor 3 days"), "Shift+Enter starts a new line")
	must(t, expect.Locator(sendButton(page)).ToBeEnabled(), "Shift+Enter sends nothing")
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(0), "Shift+Enter sends nothing")

	// An Enter while an input method composes (isComposing), or the
	// keyCode 229 keydown some browsers send as it confirms: neither sends,
	// neither is taken from the input method (not default-prevented).
	for _, init := range []map[string]any{{"isComposing": true}, {"keyCode": 229}} {
		v, err := page.Evaluate(`(init) => {
			const box = document.getElementById('message');
			const ev = new KeyboardEvent('keydown', {key: 'Enter', code: 'Enter', bubbles: true, cancelable: true, ...init});
			const notPrevented = box.dispatchEvent(ev);
			return {notPrevented, sent: document.getElementById('send').disabled, keyCode: ev.keyCode, isComposing: ev.isComposing};
		}`, init)
		must(t, err, "dispatch a composing Enter %v", init)
		r := v.(map[string]any)
		for k, want := range init {
			if r[k] != want {
				t.Fatalf("the event's %s is %v, not %v: the browser ignored it", k, r[k], want)
			}
		}
		if r["notPrevented"] != true || r["sent"] != false {
			t.Errorf("an Enter while composing %v: %v (want not prevented, nothing sent)", init, r)
		}
	}
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(0), "a composing Enter sends nothing")

	// Enter sends what is in the box, new line included.
	must(t, kb.Press("Enter"), "press Enter")
	waitReply(t, page, "Are you drooling")
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(1), "Enter sent the message once")
	must(t, expect.Locator(conversation(page).Locator(".msg--patient .msg__text")).ToHaveText("I have had a sore throat\nfor 3 days"),
		"the sent message is the box's text")
	must(t, expect.Locator(box).ToHaveValue(""), "the box is empty after sending")
	// The composer the settled turn swapped in has the hint too.
	must(t, expect.Locator(hint).ToBeVisible(), "the new composer's keys hint is shown")
	must(t, expect.Locator(box).ToHaveAccessibleDescription(regexp.MustCompile(regexp.QuoteMeta(hintText))),
		"the new composer's box is described by the keys hint")
	shot(t, page, "keys-hint")
	audit(t, page, "the intake page with the keys hint")

	// Without JavaScript Enter starts a new line: the hint is not shown
	// and not read.
	nojs := newPage(t, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
	startIntake(t, nojs, a)
	must(t, expect.Locator(nojs.Locator("#message-keys")).ToBeHidden(), "without JavaScript the keys hint is hidden")
	desc, err := messageBox(nojs).GetAttribute("aria-describedby")
	must(t, err, "read aria-describedby")
	if regexp.MustCompile(`\bmessage-keys\b`).MatchString(desc) {
		t.Errorf("without JavaScript the box is described by the keys hint: %q", desc)
	}
}
