package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestWaitTheServiceAskedForIsSaid: the first message's turn draws a 429
// with a Retry-After (a sandbox fault). The page does not count to zero and
// jump: it says in words that the service asked for more time, with the
// time, and the reply then comes.
func TestWaitTheServiceAskedForIsSaid(t *testing.T) {
	t.Parallel()
	for _, vp := range []struct {
		name string
		size *playwright.Size
	}{{"phone", phone}, {"laptop", laptop}} {
		t.Run(vp.name, func(t *testing.T) {
			t.Parallel()
			a := startApp(t)
			page := newPage(t, playwright.BrowserNewContextOptions{Viewport: vp.size})
			must(t, page.AddInitScript(playwright.Script{Content: playwright.String(statusLog)}), "add the status log")
			startIntake(t, page, a)
			armFault(t, a, intakeIDOf(t, page), "rate_limited")
			send(t, page, soreThroatOpening)
			status := statusRegion(page)
			must(t, expect.Locator(status).ToContainText("The service asked us to wait longer: about"), "the growth said in words")
			must(t, expect.Locator(page.Locator("#pending .typing__text")).ToContainText("the service asked for more time"), "the pending reply says why it waits")
			shot(t, page, "countdown-service-asked-"+vp.name)
			waitReply(t, page, firstReply)
		})
	}
}
