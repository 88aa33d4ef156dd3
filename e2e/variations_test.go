package e2e

import (
	"fmt"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestScenariosVariationsFlips: a clinician chooses a variation on the
// start form, sees its cost on the estimate, and after the run finds the
// flip table and the flipped vignette's plays side by side; every page
// passes the axe audit and fits 390 and 1280 px wide.
func TestScenariosVariationsFlips(t *testing.T) {
	a := startScenarioApp(t)
	page := newPage(t)
	clinicianSignIn(t, page, a)
	openScenarios(t, page, a)
	f := startForm(page)
	_, err := inForm(f, "Suite").SelectOption(playwright.SelectOptionValues{Values: &[]string{"builtin/abdomen_urinary"}})
	must(t, err, "choose the suite")
	must(t, inForm(f, "Typing errors").Check(), "check Typing errors")
	must(t, f.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Estimate the run", Exact: playwright.Bool(true)}).Click(), "click Estimate the run")
	must(t, expect.Locator(role(page, "table", "Cost of each variation")).ToBeVisible(), "the cost of each variation")
	audit(t, page, "estimate with variations")
	must(t, role(page, "button", "Start the run").Click(), "click Start the run")
	runID := runIDOf(t, page)
	waitRunDone(t, page, 26) // 13 vignettes, as written and with typos
	flips := role(page, "table", "Vignettes flipped down (less urgent) and up, of those compared, by gold class")
	must(t, expect.Locator(flips).ToBeVisible(), "the flip table")
	audit(t, page, "run with flips")
	link := role(page, "link", "Toddler got into a packet of tablets under Typing errors")
	must(t, link.Click(), "open the flip")
	must(t, expect.Locator(role(page, "heading", "Toddler got into a packet of tablets: as written and Typing errors")).ToBeVisible(), "the side-by-side page")
	must(t, expect.Locator(page.GetByText("Flipped down: the varied play ended less urgent.")).ToBeVisible(), "says it flipped down")
	audit(t, page, "side by side")
	side := page.URL()
	for _, size := range []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}} {
		must(t, page.SetViewportSize(size.Width, size.Height), "set the viewport")
		for _, u := range []string{a.URL + "/clinician/scenarios/runs/" + runID, side} {
			_, err := page.Goto(u)
			must(t, err, "open %s", u)
			shot(t, page, fmt.Sprintf("variations-%d", size.Width))
			v, err := page.Evaluate(`() => [document.documentElement.scrollWidth, window.innerWidth]`)
			must(t, err, "measure the page's width")
			w := v.([]any)
			if toInt(w[0]) > toInt(w[1]) {
				t.Errorf("%s at %d px scrolls sideways: %v px wide", u, size.Width, w[0])
			}
		}
	}
}
