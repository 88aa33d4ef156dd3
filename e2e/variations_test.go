package e2e

import (
	"fmt"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/sandbox/enginetest"
)

// TestScenariosVariationsFlips: a clinician chooses a variation on the
// start form and sees its cost on the estimate; a suite file played with
// it finds the flip table and the flipped vignette's plays side by side;
// every page passes the axe audit and fits 390 and 1280 px wide. The runs
// play against an engine that escalates only on the vignette's exact words
// (enginetest.ExactWords), so the flip does not depend on what the rules
// engine of the day misreads.
func TestScenariosVariationsFlips(t *testing.T) {
	const opening = "I have been feeling terrible since yesterday morning and my whole family is worried about me"
	a := startApp(t, appOptions{Clinicians: map[string]string{clinUser: clinPassword}, ScenarioParallel: 2,
		Engine: enginetest.ExactWords{Words: opening}})
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

	_, err = page.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios again")
	suite := []byte(`suite: flip
vignettes:
  - id: words-matter
    title: Escalated only as written
    age_years: 40
    sex: female
    opening: "` + opening + `"
    default: "no"
    gold:
      class: emergency
  - id: home
    title: Sent home whatever its words
    age_years: 40
    sex: female
    opening: "I have a mild cold and a runny nose"
    default: "no"
    gold:
      class: self_care
`)
	u := uploadForm(page)
	must(t, inForm(u, "Suite file").SetInputFiles(playwright.InputFile{Name: "flip.yaml", MimeType: "application/yaml", Buffer: suite}), "choose the suite file")
	must(t, inForm(u, "Typing errors").Check(), "check Typing errors for the file")
	must(t, u.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Upload and start", Exact: playwright.Bool(true)}).Click(), "click Upload and start")
	runID := runIDOf(t, page)
	waitRunDone(t, page, 4) // 2 vignettes, as written and with typos
	flips := role(page, "table", "Vignettes flipped down (less urgent) and up, of those compared, by gold class")
	must(t, expect.Locator(flips).ToBeVisible(), "the flip table")
	audit(t, page, "run with flips")
	link := role(page, "link", "Escalated only as written under Typing errors")
	must(t, link.Click(), "open the flip")
	must(t, expect.Locator(role(page, "heading", "Escalated only as written: as written and Typing errors")).ToBeVisible(), "the side-by-side page")
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
