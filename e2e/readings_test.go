package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// The rules engine's red-flag question of a sore throat, and how the
// misreading engine words it: the simulated patient reads the new wording,
// confidently, as blisters in the mouth, not as drooling.
const (
	droolingQuestion = "Are you drooling, or unable to swallow your own saliva?"
	droolingReworded = "Does spit pool in your mouth because you can't get it past your throat?"
	droolingMisread  = "concept: blistering"
)

// misreadSuite is a suite file of two vignettes: a sore throat whose
// patient cannot swallow her saliva (an emergency) and a cough that never
// hears the drooling question.
const misreadSuite = `suite: misread
vignettes:
  - id: sore-throat-drooling
    title: Sore throat, cannot swallow her own saliva
    age_years: 30
    sex: female
    opening: "I have had a sore throat for 3 days"
    complaint: "a sore throat"
    facts:
      - concept: drooling
        answer: "yes, it dribbles out because I can't swallow it"
    default: "no"
    gold:
      class: emergency
  - id: cough-untouched
    title: A cough that never hears the question
    age_years: 40
    sex: male
    opening: "I've had a dry cough for a week"
    default: "no"
    gold:
      class: self_care
`

// basisRe reads the reviewed share of a run's "Answers resting on".
var basisRe = regexp.MustCompile(`^([0-9.]+)% on reviewed readings, `)

// TestReadingsCorrectedReplayed: a run against an engine that words the
// sore throat's drooling question so that the simulated patient misreads
// it under-triages the drooling vignette, its answers resting on no
// reviewed reading; the reviewer corrects the reading to drooling on the
// readings page and replays the items that asked it; the replay, a new run
// of that item alone, answers it from the reviewed reading ("reviewed by
// dr.e2e") and ends in the gold class, and its "Answers resting on" says
// how much rests on reviewed readings.
func TestReadingsCorrectedReplayed(t *testing.T) {
	t.Parallel()
	eng, err := rules.New()
	must(t, err, "build the rules engine")
	a := startApp(t, appOptions{Clinicians: map[string]string{clinUser: clinPassword}, ScenarioParallel: 2,
		Engine: enginetest.Reworded{Engine: eng, Rewrites: map[string]string{droolingQuestion: droolingReworded}}})
	page := newPage(t)
	clinicianSignIn(t, page, a)

	// The run: the drooling vignette under-triaged.
	_, err = page.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios")
	u := uploadForm(page)
	must(t, inForm(u, "Suite file").SetInputFiles(playwright.InputFile{Name: "misread.yaml", MimeType: "application/yaml", Buffer: []byte(misreadSuite)}), "choose the suite file")
	must(t, inForm(u, "Label (optional)").Fill("e2e misread"), "fill the label")
	must(t, u.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Upload and start", Exact: playwright.Bool(true)}).Click(), "click Upload and start")
	first := runIDOf(t, page)
	waitRunDone(t, page, 2)
	drooling := resultRow(page, "sore-throat-drooling")
	must(t, expect.Locator(drooling.Locator(`td[data-label="Gold"]`)).ToHaveText("Emergency"), "the drooling vignette's gold")
	must(t, expect.Locator(drooling.Locator(`td[data-label="Final"]`)).Not().ToHaveText("Emergency"), "the misread drooling question under-triages it")
	before := reviewedShare(t, page)
	if before != 0 {
		t.Fatalf("the first run rests %.1f%% on reviewed readings before any review", before)
	}

	// The readings page: the question as the engine worded it, misread.
	must(t, role(page, "link", "Back to Scenarios").Click(), "back to Scenarios")
	must(t, role(page, "link", "Review how the patient read the engine's questions").Click(), "open the readings review")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/clinician/scenarios/readings$`)), "on the readings page")
	entry := readingEntry(page, droolingReworded)
	must(t, expect.Locator(entry).ToHaveCount(1), "the reworded question is on the readings page")
	must(t, expect.Locator(entry).ToContainText("Read as"+droolingMisread), "the patient read it as blisters")
	must(t, expect.Locator(entry).ToContainText("Not reviewed"), "nobody reviewed it yet")
	shot(t, page, "readings-01-before")
	audit(t, page, "readings page")

	// The correction (behind a disclosure, opened with the keyboard), then
	// the replay it offers.
	other := entry.Locator("summary")
	must(t, expect.Locator(other).ToHaveText("Read otherwise: another concept, or not answerable"), "the disclosure of another reading")
	must(t, expect.Locator(inForm(entry, "Concept")).Not().ToBeVisible(), "the concepts are behind the disclosure")
	must(t, other.Focus(), "focus the disclosure")
	must(t, page.Keyboard().Press("Enter"), "open it with Enter")
	must(t, expect.Locator(inForm(entry, "Concept")).ToBeVisible(), "the concepts are shown")
	_, err = inForm(entry, "Concept").SelectOption(playwright.SelectOptionValues{Values: &[]string{"drooling"}})
	must(t, err, "choose the concept drooling")
	must(t, inForm(entry, "Note (optional)").Fill("Spit pooling because it will not go down is drooling."), "type the note")
	must(t, entry.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Use this concept", Exact: playwright.Bool(true)}).Click(), "click Use this concept")
	must(t, expect.Locator(page.GetByText("Decision recorded.")).ToBeVisible(), "the decision is recorded")
	entry = readingEntry(page, droolingReworded)
	must(t, expect.Locator(entry).ToContainText("corrected to drooling by "+clinUser), "the decision in force, by dr.e2e")
	replay := entry.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Replay the items that asked it", Exact: playwright.Bool(true)})
	must(t, expect.Locator(replay).ToBeVisible(), "the replay is offered")
	must(t, expect.Locator(entry.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: first, Exact: playwright.Bool(true)})).ToBeVisible(), "the offer names the run it replays")
	shot(t, page, "readings-02-replay-offer")
	audit(t, page, "readings page with a replay offer")
	must(t, replay.Click(), "click Replay the items that asked it")

	// The replay: that item alone, answered from the reviewed reading.
	second := runIDOf(t, page)
	if second == first {
		t.Fatalf("the replay did not start a new run")
	}
	must(t, expect.Locator(page.Locator(".scenario-run__replay")).ToContainText("This run is a replay of run "+first), "the replay names its run")
	waitRunDone(t, page, 1)
	drooling = resultRow(page, "sore-throat-drooling")
	must(t, expect.Locator(drooling.Locator(`td[data-label="Final"]`)).ToHaveText("Emergency"), "the replay ends in the gold class")
	must(t, expect.Locator(resultRow(page, "cough-untouched")).ToHaveCount(0), "the item that never asked the question is not replayed")
	if after := reviewedShare(t, page); after <= before {
		t.Errorf("the replay rests %.1f%% on reviewed readings, no more than the first run's %.1f%%", after, before)
	}
	shot(t, page, "readings-03-replay-run")
	audit(t, page, "replay run page")
	must(t, drooling.GetByRole("link").Click(), "open the replayed item")
	must(t, expect.Locator(page.Locator(".msg__why").Filter(playwright.LocatorFilterOptions{HasText: "reviewed by " + clinUser + " on "})).ToHaveCount(1), "the answer's why says who reviewed the reading")

	// The comparison: the vignette improved.
	_, err = page.Goto(a.URL + "/clinician/scenarios/runs/" + second)
	must(t, err, "open the replay again")
	must(t, role(page, "link", "Compare with run "+first).Click(), "open the comparison")
	improvements := role(page, "region", "Improvements (1)")
	must(t, expect.Locator(improvements).ToContainText("sore-throat-drooling"), "the drooling vignette improved")

	// The readings page with its replay offer, and the replay's page, at
	// 1280 and 390 px: nothing scrolls sideways; each saved whole and the
	// corrected question's entry on its own.
	for _, size := range []playwright.Size{{Width: 1280, Height: 800}, {Width: 390, Height: 844}} {
		must(t, page.SetViewportSize(size.Width, size.Height), "set the viewport to %dx%d", size.Width, size.Height)
		_, err := page.Goto(a.URL + "/clinician/scenarios/readings")
		must(t, err, "open the readings page")
		name := fmt.Sprintf("readings-%d", size.Width)
		shot(t, page, name)
		fitsWidth(t, page, name)
		part := filepath.Join(artifactsDir, name+"-corrected.png")
		_, err = readingEntry(page, droolingReworded).Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(part)})
		must(t, err, "screenshot the corrected question")
		t.Logf("screenshot: %s", part)
		_, err = page.Goto(a.URL + "/clinician/scenarios/runs/" + second)
		must(t, err, "open the replay")
		name = fmt.Sprintf("readings-replay-run-%d", size.Width)
		shot(t, page, name)
		fitsWidth(t, page, name)
	}
}

// fitsWidth fails the test when the page scrolls sideways.
func fitsWidth(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	v, err := page.Evaluate(`() => [document.documentElement.scrollWidth, window.innerWidth]`)
	must(t, err, "measure the page's width")
	w := v.([]any)
	if toInt(w[0]) > toInt(w[1]) {
		t.Errorf("%s scrolls sideways: the page is %v px wide in a %v px window", name, w[0], w[1])
	}
}

// resultRow is the results table's row of vignette id.
func resultRow(page playwright.Page, id string) playwright.Locator {
	return resultsTable(page).GetByRole("row").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("rowheader").Filter(playwright.LocatorFilterOptions{HasText: id}),
	})
}

// readingEntry is the readings page's entry of the question worded words.
func readingEntry(page playwright.Page, words string) playwright.Locator {
	return page.GetByRole("listitem").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("heading").Filter(playwright.LocatorFilterOptions{HasText: words}),
	})
}

// reviewedShare is the percentage of the run's answers resting on
// reviewed readings, as its page says.
func reviewedShare(t *testing.T, page playwright.Page) float64 {
	t.Helper()
	basis := page.Locator("#basis dd")
	must(t, expect.Locator(basis).ToHaveText(basisRe), "the run says what its answers rest on")
	text, err := basis.TextContent()
	must(t, err, "read what the answers rest on")
	m := basisRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("answers resting on %q", text)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	must(t, err, "read the reviewed share")
	return f
}
