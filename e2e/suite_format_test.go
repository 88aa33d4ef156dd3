package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// A suite file with several problems, among them an unknown field and a
// concept the vocabulary lacks.
const brokenSuite = `vignettes:
  - id: chest-pain
    opening: "I have a pain in my chest"
    urgency: high
    facts:
      - {concept: chest_pian, answer: "yes"}
    gold: {class: ambulance}
`

// A refused suite file on a laptop and a phone: the field says how many
// problems, each is an item of a list the field's description reads, and
// the one naming an unknown concept leads to the vocabulary on the suite
// format page, which fits the screen (no sideways scrolling; the example
// scrolls in its own region, reached with the keyboard) and passes axe.
// Screenshots: e2e/artifacts/suite-*.png.
func TestSuiteProblemsAndTheFormatPage(t *testing.T) {
	t.Parallel()
	a := startScenarioApp(t)
	page := newPage(t)
	clinicianSignIn(t, page, a)
	for _, size := range []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}} {
		must(t, page.SetViewportSize(size.Width, size.Height), "set the viewport to %dx%d", size.Width, size.Height)
		_, err := page.Goto(a.URL + "/clinician/scenarios")
		must(t, err, "open Scenarios")
		f := uploadForm(page)
		must(t, inForm(f, "Suite file").SetInputFiles(playwright.InputFile{Name: "broken.yaml", MimeType: "application/yaml", Buffer: []byte(brokenSuite)}), "choose the file")
		must(t, f.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Upload and start", Exact: playwright.Bool(true)}).Click(), "click Upload and start")
		f = uploadForm(page)
		input := inForm(f, "Suite file")
		must(t, expect.Locator(input).ToHaveAttribute("aria-invalid", "true"), "the file field is marked invalid")
		must(t, expect.Locator(f.Locator("#upload-problems").GetByRole("listitem")).ToHaveCount(3), "three problems, one an item")
		must(t, expect.Locator(input).ToHaveAccessibleDescription(regexp.MustCompile(`broken\.yaml does not load: 3 problems\..*line 4: vignette "chest-pain" \(1\): urgency: not a field of a vignette`)),
			"the field's description reads the problems")
		name := fmt.Sprintf("suite-problems-%d", size.Width)
		shot(t, page, name)
		shotOf(t, f, name+"-form")
		audit(t, page, name)
		fits(t, page, name)

		must(t, role(page, "link", "See the concept vocabulary").Click(), "follow the vocabulary link")
		must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/scenarios/format#concepts"), "on the vocabulary")
		must(t, expect.Locator(role(page, "heading", "The concept vocabulary")).ToBeInViewport(), "the vocabulary's heading in view")
		must(t, expect.Locator(role(page, "heading", "About the person")).ToBeVisible(), "a group's heading")
		must(t, expect.Locator(page.Locator("#concept-spread + dd")).ToHaveText("Kind: yes or no"), "a concept's kind")
		name = fmt.Sprintf("suite-format-%d", size.Width)
		// The page is tens of thousands of pixels tall with the vocabulary:
		// capturing it whole took over 15 s on a loaded CI machine. The
		// viewport and the three parts below show every kind of block.
		viewShot(t, page, name)
		for i, part := range []string{".suite-example", "#fields + p + .suite-fields", ".concept-group >> nth=1"} {
			shotOf(t, page.Locator(part), fmt.Sprintf("%s-part%d", name, i+1))
		}
		audit(t, page, name)
		fits(t, page, name)
		// The example scrolls in its own region, which the keyboard reaches.
		example := role(page, "region", "An example suite file")
		must(t, example.Focus(), "focus the example")
		must(t, expect.Locator(example).ToBeFocused(), "the example takes the focus")
	}
}

// shotOf is a screenshot of the element l: e2e/artifacts/NAME.png.
func shotOf(t *testing.T, l playwright.Locator, name string) {
	t.Helper()
	path := filepath.Join(artifactsDir, name+".png")
	if _, err := l.Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(path)}); err != nil {
		t.Errorf("screenshot %s: %v", path, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// viewShot is a screenshot of what the viewport shows: e2e/artifacts/NAME.png.
func viewShot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	path := filepath.Join(artifactsDir, name+".png")
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path)}); err != nil {
		t.Errorf("screenshot %s: %v", path, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// fits fails the test when the page scrolls sideways.
func fits(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	v, err := page.Evaluate(`() => [document.documentElement.scrollWidth, window.innerWidth]`)
	must(t, err, "measure the page's width")
	w := v.([]any)
	if toInt(w[0]) > toInt(w[1]) {
		t.Errorf("%s scrolls sideways: the page is %v px wide in a %v px window", name, w[0], w[1])
	}
}
