package e2e

import (
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// TestNoJavaScript: with JavaScript off the start form starts an intake, the
// intake page renders the message box, and a message sent with the plain
// form gets its reply (post-redirect-get; reload while it is being written).
func TestNoJavaScript(t *testing.T) {
	t.Parallel()
	a := startApp(t)
	page := newPage(t, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
	startIntake(t, page, a)
	must(t, expect.Locator(sendButton(page)).ToBeVisible(), "the Send button without JavaScript")
	// No axe audit here: axe-core is JavaScript (the other tests audit these pages).

	send(t, page, soreThroatOpening)
	reloadUntilReply(t, page, firstReply)
	must(t, expect.Locator(quickReplies(page)).ToBeVisible(), "quick replies without JavaScript")
	must(t, quickReply(page, "No").Click(), "click the No quick reply")
	reloadUntilReply(t, page, soreThroatNo[1])
	must(t, expect.Locator(patientMessages(page)).ToHaveCount(2), "two exchanges")
}

// reloadUntilReply: without JavaScript nothing streams in, so the user
// reloads (the pending turn says so) until the reply is there.
func reloadUntilReply(t *testing.T, page playwright.Page, want string) {
	t.Helper()
	must(t, expect.Page(page).ToHaveURL(intakePath), "on the intake page after sending")
	for deadline := time.Now().Add(expectTimeout); ; {
		n, err := conversation(page).GetByText(want).Count()
		must(t, err, "look for the reply")
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply %q after reloading for %s", want, expectTimeout)
		}
		must(t, expect.Locator(page.GetByText("Reload this page")).ToBeVisible(), "the pending turn says to reload")
		_, err = page.Reload()
		must(t, err, "reload")
	}
	must(t, expect.Locator(page.Locator("#pending")).ToHaveCount(0), "no pending turn once the reply is there")
}
