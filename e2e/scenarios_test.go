package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// The clinician area's Scenarios section in the browser: a run of a small
// built-in suite from the index through its estimate to its live progress,
// results, an item and the JSON report; two runs compared and a regression
// adjudicated; and a run started and followed without JavaScript.

// smallSuite is the built-in suite the tests run: the smallest file.
const (
	smallSuite     = "builtin/head_mind"
	smallSuiteFile = "head_mind.yaml"
)

var (
	runPathRe  = regexp.MustCompile(`/clinician/scenarios/runs/([A-Za-z0-9_-]+)$`)
	vignetteID = regexp.MustCompile(`(?m)^  - id: (\S+)$`)
)

// startScenarioApp is startClinicApp with scenario runs on a limitless
// sandbox of their own, two items at a time: the holding run (holdRuns)
// plays several at once and still lasts long enough to hold.
func startScenarioApp(t *testing.T) *app {
	t.Helper()
	return startApp(t, appOptions{Clinicians: map[string]string{clinUser: clinPassword}, ScenarioSandbox: true, ScenarioParallel: 2})
}

// suiteYAML is the built-in suite file and its vignette ids, in file order.
func suiteYAML(t *testing.T) (string, []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "bff", "scenarios", "builtin", smallSuiteFile))
	must(t, err, "read the built-in suite file")
	var ids []string
	for _, m := range vignetteID.FindAllStringSubmatch(string(b), -1) {
		ids = append(ids, m[1])
	}
	if len(ids) == 0 {
		t.Fatalf("no vignette ids in %s", smallSuiteFile)
	}
	return string(b), ids
}

// openScenarios reaches the Scenarios link from the top of the page with
// the Tab key alone and follows it with Enter.
func openScenarios(t *testing.T, page playwright.Page, a *app) {
	t.Helper()
	nav := role(page, "navigation", "Main")
	link := nav.GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "Scenarios", Exact: playwright.Bool(true)})
	must(t, expect.Locator(link).ToBeVisible(), "a Scenarios link in the main navigation")
	for i := 0; ; i++ {
		if i == 40 {
			t.Fatalf("the Scenarios link is not reached with 40 presses of Tab")
		}
		must(t, page.Keyboard().Press("Tab"), "press Tab")
		focused, err := link.Evaluate(`(el) => el === document.activeElement`, nil)
		must(t, err, "is the Scenarios link focused")
		if focused == true {
			break
		}
	}
	must(t, page.Keyboard().Press("Enter"), "press Enter on the Scenarios link")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/scenarios"), "the Scenarios link leads to the index")
	must(t, expect.Locator(role(page, "heading", "Scenarios")).ToBeVisible(), "the Scenarios heading")
}

// startForm is the index's form that starts a run of a built-in suite.
func startForm(page playwright.Page) playwright.Locator {
	return role(page, "form", "From a built-in suite")
}

// uploadForm is the index's form that starts a run of a suite file.
func uploadForm(page playwright.Page) playwright.Locator {
	return role(page, "form", "From a suite file")
}

func inForm(form playwright.Locator, label string) playwright.Locator {
	return form.GetByLabel(label, playwright.LocatorGetByLabelOptions{Exact: playwright.Bool(true)})
}

// estimateRun fills the built-in form on the index and asks for the
// estimate; it returns on the estimate page.
func estimateRun(t *testing.T, page playwright.Page, suite string, repeats int, label string) {
	t.Helper()
	f := startForm(page)
	_, err := inForm(f, "Suite").SelectOption(playwright.SelectOptionValues{Values: &[]string{suite}})
	must(t, err, "choose the suite %s", suite)
	must(t, inForm(f, "Repeats").Fill(strconv.Itoa(repeats)), "fill Repeats")
	must(t, inForm(f, "Label (optional)").Fill(label), "fill the label")
	must(t, f.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Estimate the run", Exact: playwright.Bool(true)}).Click(), "click Estimate the run")
	must(t, expect.Locator(role(page, "heading", "Start a run of "+suite)).ToBeVisible(), "the estimate page of %s", suite)
}

// runIDOf is the run id of the run page the browser is on.
func runIDOf(t *testing.T, page playwright.Page) string {
	t.Helper()
	must(t, expect.Page(page).ToHaveURL(runPathRe), "on a run page")
	m := runPathRe.FindStringSubmatch(page.URL())
	if m == nil {
		t.Fatalf("not on a run page: %s", page.URL())
	}
	return m[1]
}

func progressField(page playwright.Page, field string) playwright.Locator {
	return page.Locator(`[data-run-progress] [data-field="` + field + `"]`)
}

// runPlays bounds the wait for a run's items to play: a run of two dozen
// items takes seconds alone, and four times the expectations' bound on CI
// with every package's tests at once (at a load of 20, 22 of 26 had played
// after 15 s). The page's own answers keep expectTimeout.
var runPlays = playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(float64((4 * expectTimeout).Milliseconds()))}

// waitRunDone waits, without touching the page, until its progress says
// every item played and the run is done (scenarios.js follows a run and
// reloads the page when it ends).
func waitRunDone(t *testing.T, page playwright.Page, items int) {
	t.Helper()
	played := strconv.Itoa(items) + " of " + strconv.Itoa(items) + " played"
	must(t, expect.Locator(progressField(page, "played")).ToHaveText(played, runPlays), "the progress says %q", played)
	must(t, expect.Locator(progressField(page, "state")).ToHaveText("Done"), "the run is done")
	must(t, expect.Locator(role(page, "heading", "Confusion matrix")).ToBeVisible(), "the finished run's confusion matrix")
}

// holdRuns starts, in a second tab of the page's browser context, a run of
// the whole built-in suite ten times over (610 items, seconds of play):
// a replica plays one run at a time, so a run started after it stays
// queued until it is cancelled (releaseRuns). The small suite alone plays
// in about 0.1 s, faster than its page renders: without the hold there
// would be no progress to follow.
func holdRuns(t *testing.T, page playwright.Page, a *app) string {
	t.Helper()
	tab, err := page.Context().NewPage()
	must(t, err, "open a second tab")
	defer func() { _ = tab.Close() }()
	_, err = tab.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios in the second tab")
	estimateRun(t, tab, "builtin", 10, "e2e hold")
	must(t, role(tab, "button", "Start the run").Click(), "start the holding run")
	id := runIDOf(t, tab)
	must(t, expect.Locator(progressField(tab, "state")).Not().ToHaveText("Done"), "the holding run is still playing")
	return id
}

// releaseRuns cancels the holding run in a second tab; the runs queued
// behind it play.
func releaseRuns(t *testing.T, page playwright.Page, a *app, hold string) {
	t.Helper()
	tab, err := page.Context().NewPage()
	must(t, err, "open a second tab")
	defer func() { _ = tab.Close() }()
	_, err = tab.Goto(a.URL + "/clinician/scenarios/runs/" + hold)
	must(t, err, "open the holding run")
	must(t, role(tab, "button", "Cancel the run").Click(), "cancel the holding run")
	must(t, expect.Locator(progressField(tab, "state")).ToHaveText("Cancelled"), "the holding run is cancelled")
}

func resultsTable(page playwright.Page) playwright.Locator {
	return role(page, "table", "Results by vignette and repeat, under-triaged first, then simulator-limited; each links to its transcript and handoff")
}

// TestScenariosRunAndResults: the Scenarios link, the estimate of a small
// built-in suite with the limits off, the run followed live to its end by
// the page's own script, its confusion matrix and one result row per
// vignette, an item's transcript and handoff, and the JSON report.
func TestScenariosRunAndResults(t *testing.T) {
	t.Parallel()
	_, ids := suiteYAML(t)
	a := startScenarioApp(t)
	page := newPage(t)
	clinicianSignIn(t, page, a)
	openScenarios(t, page, a)
	suites := role(page, "table", "Built-in suites")
	suiteRow := suites.GetByRole("row").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("rowheader", playwright.PageGetByRoleOptions{Name: smallSuite, Exact: playwright.Bool(true)}),
	})
	must(t, expect.Locator(suiteRow.Locator("td").Nth(1)).ToHaveText(strconv.Itoa(len(ids))), "the index lists %s with %d vignettes", smallSuite, len(ids))
	must(t, expect.Locator(suiteRow.Locator("td").Nth(2)).ToHaveText("2"), "two of them at once (SCENARIO_PARALLEL=2)")
	shot(t, page, "scenarios-01-index")
	audit(t, page, "scenarios index")

	const label = "e2e head and mind"
	estimateRun(t, page, smallSuite, 1, label)
	est := page.Locator("dl.estimate")
	must(t, expect.Locator(est).ToContainText("Limits off: embedded sandbox"), "the estimate says the limits are off")
	must(t, expect.Locator(est.Locator("dt:text-is('Intakes') + dd")).ToHaveText(strconv.Itoa(len(ids))), "one intake per vignette")
	shot(t, page, "scenarios-02-estimate")
	audit(t, page, "estimate page")

	hold := holdRuns(t, page, a)
	must(t, role(page, "button", "Start the run").Click(), "click Start the run")
	id := runIDOf(t, page)
	must(t, expect.Locator(role(page, "heading", "Run: "+label)).ToBeVisible(), "the run page names the run")
	must(t, expect.Locator(progressField(page, "state")).ToHaveText("Queued"), "the run waits behind the holding run")
	must(t, expect.Locator(progressField(page, "played")).ToHaveText("0 of "+strconv.Itoa(len(ids))+" played"), "nothing played yet")
	releaseRuns(t, page, a, hold)
	start := time.Now()
	waitRunDone(t, page, len(ids))
	t.Logf("the run %s was followed to its end in %s", id, time.Since(start).Round(time.Millisecond))
	shot(t, page, "scenarios-03-run-done")
	audit(t, page, "finished run page")

	matrix := page.GetByRole("img", playwright.PageGetByRoleOptions{Name: regexp.MustCompile(`^Confusion matrix: gold urgency class \(rows\) against the engine's final class \(columns\)`)})
	must(t, expect.Locator(matrix).ToHaveCount(1), "the confusion matrix SVG with its accessible name")
	must(t, expect.Locator(page.Locator("figure.confusion svg")).ToHaveCount(1), "the matrix is an SVG")

	table := resultsTable(page)
	must(t, expect.Locator(table.GetByRole("rowheader")).ToHaveCount(len(ids)), "one result row per vignette")
	for _, v := range ids {
		must(t, expect.Locator(table.GetByRole("rowheader").Filter(playwright.LocatorFilterOptions{HasText: v})).ToHaveCount(1), "a result row of %s", v)
	}

	// The JSON report, with the page's cookies.
	jsonLink := role(page, "link", "Download report (JSON)")
	href, err := jsonLink.GetAttribute("href")
	must(t, err, "read the JSON link")
	res, err := page.Context().Request().Get(a.URL + href)
	must(t, err, "download the JSON report")
	if res.Status() != 200 {
		t.Fatalf("the JSON report answered %d", res.Status())
	}
	body, err := res.Body()
	must(t, err, "read the JSON report")
	var rep struct {
		Summary *struct {
			Vignettes *int `json:"vignettes"`
		} `json:"summary"`
		Results []struct {
			VignetteID string `json:"vignette_id"`
		} `json:"results"`
	}
	must(t, json.Unmarshal(body, &rep), "decode the JSON report")
	if rep.Summary == nil || rep.Summary.Vignettes == nil || *rep.Summary.Vignettes != len(ids) {
		t.Errorf("the report's summary.vignettes is not %d: %.300s", len(ids), body)
	}
	if len(rep.Results) != len(ids) {
		t.Errorf("the report has %d results, want %d", len(rep.Results), len(ids))
	}

	// One result: its transcript and handoff.
	row := table.GetByRole("rowheader").Filter(playwright.LocatorFilterOptions{HasText: ids[0]})
	must(t, row.GetByRole("link").Click(), "open the result of %s", ids[0])
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/clinician/scenarios/runs/`+id+`/items/\d+$`)), "on the item page")
	must(t, expect.Locator(role(page, "heading", "Transcript")).ToBeVisible(), "the Transcript heading")
	must(t, expect.Locator(role(page, "heading", "Handoff")).ToBeVisible(), "the Handoff heading")
	must(t, expect.Locator(role(page, "heading", "Exchange 1")).ToBeVisible(), "the transcript's first exchange")
	// Every patient message says why it was said; the built-in suite's
	// patient understood every question.
	why := page.Locator(".msg__why")
	must(t, expect.Locator(why.First()).ToHaveText("Why: the vignette's opening"), "the opening's reason")
	n, err := why.Count()
	must(t, err, "count the reasons")
	said, err := page.Locator(".scenario-transcript .msg--patient").Count()
	must(t, err, "count the patient's messages")
	if n == 0 || n != said {
		t.Fatalf("%d reasons for %d patient messages on the item page", n, said)
	}
	must(t, expect.Locator(page.Locator(".msg__why--not-understood")).ToHaveCount(0), "no question left not understood")
	shot(t, page, "scenarios-04-item")
	audit(t, page, "scenario item page")
}

// regoldVignette is the emergency vignette the compare test re-tells in an
// uploaded copy of the suite: there the headache built up slowly, not in
// seconds, and the engine answers routine, while its gold stays emergency.
// The engine's answer changed under the same label, so the head run
// under-triages it. (A copy that changed the gold label alone would be a
// change of the suite, not a regression.)
const regoldVignette = "headache-thunderclap"

// regold is the suite file with regoldVignette's thunderclap answers
// turned into a headache that built up slowly.
func regold(t *testing.T, suite string) []byte {
	t.Helper()
	start := strings.Index(suite, "  - id: "+regoldVignette+"\n")
	if start < 0 {
		t.Fatalf("no vignette %s in %s", regoldVignette, smallSuiteFile)
	}
	end := strings.Index(suite[start+1:], "\n  - id: ")
	if end < 0 {
		end = len(suite)
	} else {
		end += start + 1
	}
	const from = `        answer: "yes, it came on in seconds, like being hit with a bat"
      - concept: onset
        answer: "suddenly, in seconds"
`
	const to = `        answer: "no, it built up slowly"
      - concept: onset
        answer: "it built up slowly"
`
	block := suite[start:end]
	if strings.Count(block, from) != 1 || !strings.Contains(block, "      class: emergency\n") {
		t.Fatalf("%s is not a thunderclap with an emergency gold: %s", regoldVignette, block)
	}
	return []byte(suite[:start] + strings.Replace(block, from, to, 1) + suite[end:])
}

// TestScenariosCompareAndAdjudicate: the small suite run from the built-in
// file (base) and from an upload whose copy of one vignette tells another
// story under the same gold class (head); the comparison lists that
// vignette as a regression, newly under-triaged; the verdict "the gold
// label is wrong" sets it aside (PRG) and the audit log has the
// adjudication under dr.e2e.
func TestScenariosCompareAndAdjudicate(t *testing.T) {
	t.Parallel()
	suite, ids := suiteYAML(t)
	upload := regold(t, suite)
	a := startScenarioApp(t)
	page := newPage(t)
	clinicianSignIn(t, page, a)

	_, err := page.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios")
	estimateRun(t, page, smallSuite, 1, "e2e base")
	must(t, role(page, "button", "Start the run").Click(), "start the base run")
	base := runIDOf(t, page)

	_, err = page.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios again")
	f := uploadForm(page)
	must(t, inForm(f, "Suite file").SetInputFiles(playwright.InputFile{Name: "head_mind_regold.yaml", MimeType: "application/yaml", Buffer: upload}), "choose the suite file")
	must(t, inForm(f, "Label (optional)").Fill("e2e head"), "fill the upload's label")
	must(t, f.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Upload and start", Exact: playwright.Bool(true)}).Click(), "click Upload and start")
	head := runIDOf(t, page)
	if head == base {
		t.Fatalf("the upload did not start a second run")
	}
	must(t, expect.Locator(role(page, "heading", "Run: e2e head")).ToBeVisible(), "the head run's page")
	waitRunDone(t, page, len(ids))
	_, err = page.Goto(a.URL + "/clinician/scenarios/runs/" + base)
	must(t, err, "open the base run")
	waitRunDone(t, page, len(ids))

	_, err = page.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios for the comparison")
	_, err = byLabel(page, "Base run (before)").SelectOption(playwright.SelectOptionValues{Values: &[]string{base}})
	must(t, err, "choose the base run")
	_, err = byLabel(page, "Head run (after)").SelectOption(playwright.SelectOptionValues{Values: &[]string{head}})
	must(t, err, "choose the head run")
	must(t, role(page, "button", "Compare").Click(), "click Compare")
	must(t, expect.Locator(role(page, "heading", "Compare runs")).ToBeVisible(), "the comparison page")

	regressions := role(page, "region", "Regressions (1)")
	must(t, expect.Locator(regressions).ToBeVisible(), "one regression")
	must(t, expect.Locator(regressions).ToContainText("1 vignette regressed, 1 newly under-triaged (listed first)."), "the regression summary")
	change := regressions.GetByRole("listitem").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: regoldVignette}),
	})
	must(t, expect.Locator(change).ToHaveCount(1), "%s is the regression", regoldVignette)
	must(t, expect.Locator(change).ToContainText("Newly under-triaged"), "flagged newly under-triaged")
	must(t, expect.Locator(change).ToContainText("Gold: Emergency."), "against the uploaded gold")
	must(t, expect.Locator(role(page, "region", "Improvements (0)")).ToBeVisible(), "no improvement")
	shot(t, page, "scenarios-05-compare")
	audit(t, page, "comparison with a regression")

	// Adjudicate from the keyboard: the radio with Space, the note typed,
	// Enter on the button.
	const note = "The upload's headache built up slowly: emergency is the wrong gold for it."
	gold := change.GetByRole("radio", playwright.LocatorGetByRoleOptions{Name: "The gold label is wrong", Exact: playwright.Bool(true)})
	must(t, gold.Focus(), "focus The gold label is wrong")
	must(t, page.Keyboard().Press("Space"), "choose it with Space")
	must(t, expect.Locator(gold).ToBeChecked(), "The gold label is wrong is chosen")
	must(t, change.GetByLabel("Note", playwright.LocatorGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(note), "type the note")
	record := change.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Record the verdict", Exact: playwright.Bool(true)})
	must(t, record.Focus(), "focus Record the verdict")
	must(t, page.Keyboard().Press("Enter"), "press Enter on Record the verdict")

	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/clinician/scenarios/compare\?base=`+base+`&head=`+head+`#chg-`+regoldVignette+`$`)), "back on the comparison (post-redirect-get)")
	must(t, expect.Locator(page.GetByText("Verdict recorded.")).ToBeVisible(), "the verdict is confirmed")
	must(t, expect.Locator(role(page, "region", "Regressions (0)")).ToContainText("No vignette regressed."), "no regression left")
	aside := role(page, "region", "Set aside: the gold label is wrong (1)")
	must(t, expect.Locator(aside).ToBeVisible(), "the vignette is set aside")
	setAside := aside.GetByRole("listitem").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: regoldVignette}),
	})
	must(t, expect.Locator(setAside).ToContainText("In force: The gold label is wrong, by "+clinUser), "the verdict in force, by dr.e2e")
	must(t, expect.Locator(setAside).ToContainText(note), "the verdict's note")
	shot(t, page, "scenarios-06-adjudicated")
	audit(t, page, "comparison after the verdict")

	must(t, role(page, "link", "Audit log").First().Click(), "open the audit log")
	must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/audit"), "on the audit log")
	entry := page.GetByRole("row").Filter(playwright.LocatorFilterOptions{
		Has: page.GetByRole("cell", playwright.PageGetByRoleOptions{Name: "scenario_adjudicate", Exact: playwright.Bool(true)}),
	})
	must(t, expect.Locator(entry).ToHaveCount(1), "one adjudication in the audit log")
	must(t, expect.Locator(entry).ToContainText(clinUser), "the adjudication is under dr.e2e")
	must(t, expect.Locator(entry).ToContainText(base+" vs "+head+": "+regoldVignette+" gold_wrong"), "the adjudication's runs, vignette and verdict")
	shot(t, page, "scenarios-07-audit")
}

// TestScenariosWithoutJavaScript: with JavaScript off a run starts (the
// estimate form is GET, the start form POST) and its page offers Refresh
// while it plays; following Refresh, each a real navigation, it shows the
// run done with its results.
func TestScenariosWithoutJavaScript(t *testing.T) {
	t.Parallel()
	_, ids := suiteYAML(t)
	a := startScenarioApp(t)
	page := newPage(t, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
	clinicianSignIn(t, page, a)
	_, err := page.Goto(a.URL + "/clinician/scenarios")
	must(t, err, "open Scenarios")
	// No axe audit here: axe-core is JavaScript (the other tests audit these pages).
	hold := holdRuns(t, page, a)
	estimateRun(t, page, smallSuite, 1, "e2e no script")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/clinician/scenarios/new\?`)), "the estimate is a GET")
	must(t, role(page, "button", "Start the run").Click(), "click Start the run")
	id := runIDOf(t, page)
	refresh := role(page, "link", "Refresh")
	must(t, expect.Locator(refresh).ToBeVisible(), "a Refresh link while the run waits")
	must(t, expect.Locator(progressField(page, "state")).ToHaveText("Queued"), "the run waits behind the holding run")
	releaseRuns(t, page, a, hold)

	clicks := 0
	for deadline := time.Now().Add(expectTimeout); ; clicks++ {
		state, err := progressField(page, "state").TextContent()
		must(t, err, "read the run's state")
		if state == "Done" {
			break
		}
		if clicks == 2000 || time.Now().After(deadline) {
			t.Fatalf("the run is %q after %d clicks of Refresh", state, clicks)
		}
		must(t, expect.Locator(refresh).ToBeVisible(), "Refresh while the run is %q", state)
		// A navigation: the marker set on this document is gone after it.
		_, err = page.Evaluate(`() => { document.documentElement.dataset.before = '1'; }`)
		must(t, err, "mark the document")
		must(t, refresh.Click(), "click Refresh")
		must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/scenarios/runs/"+id), "Refresh stays on the run page")
		must(t, expect.Locator(page.Locator("html[data-before]")).ToHaveCount(0), "Refresh loaded the page again")
	}
	t.Logf("done after %d clicks of Refresh", clicks)
	must(t, expect.Locator(progressField(page, "played")).ToHaveText(strconv.Itoa(len(ids))+" of "+strconv.Itoa(len(ids))+" played", runPlays), "every item played")
	must(t, expect.Locator(refresh).ToHaveCount(0), "no Refresh once the run is done")
	must(t, expect.Locator(role(page, "heading", "Confusion matrix")).ToBeVisible(), "the confusion matrix")
	must(t, expect.Locator(resultsTable(page).GetByRole("rowheader")).ToHaveCount(len(ids)), "one result row per vignette")
	shot(t, page, "scenarios-08-nojs-done")
}

// A 2 MB suite file on the Scenarios page. With JavaScript the page
// refuses it before sending: the field says the limit and takes the focus,
// and nothing reaches the server. Without JavaScript the server's own 413
// arrives whole (no connection reset), says the limit and leads back to
// Scenarios.
func TestScenarioUploadTooLarge(t *testing.T) {
	t.Parallel()
	a := startScenarioApp(t)
	big := playwright.InputFile{Name: "big.yaml", MimeType: "application/yaml", Buffer: []byte(strings.Repeat("# padding\n", 200_000))}
	chooseAndSend := func(page playwright.Page) {
		t.Helper()
		_, err := page.Goto(a.URL + "/clinician/scenarios")
		must(t, err, "open Scenarios")
		f := uploadForm(page)
		must(t, expect.Locator(f).ToContainText("at most 200 KiB"), "the form says the limit before a file is chosen")
		must(t, inForm(f, "Suite file").SetInputFiles(big), "choose a 2 MB file")
		must(t, f.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Upload and start", Exact: playwright.Bool(true)}).Click(), "click Upload and start")
	}

	t.Run("with JavaScript", func(t *testing.T) {
		page := newPage(t)
		clinicianSignIn(t, page, a)
		var posts atomic.Int32 // counted on playwright's event goroutine
		page.OnRequest(func(r playwright.Request) {
			if r.Method() == "POST" && strings.HasSuffix(r.URL(), "/clinician/scenarios/runs") {
				posts.Add(1)
			}
		})
		chooseAndSend(page)
		input := inForm(uploadForm(page), "Suite file")
		must(t, expect.Locator(input).ToHaveAttribute("aria-invalid", "true"), "the file field is marked invalid")
		must(t, expect.Locator(input).ToHaveAccessibleDescription(regexp.MustCompile(`at most 200 KiB is accepted`)), "the field's description says the limit")
		must(t, expect.Locator(input).ToBeFocused(), "the file field has the focus")
		must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/scenarios"), "still on Scenarios")
		shot(t, page, "scenarios-upload-too-large")
		audit(t, page, "a file over the limit")
		if n := posts.Load(); n != 0 {
			t.Fatalf("the 2 MB file was sent (%d POSTs)", n)
		}
	})

	t.Run("without JavaScript", func(t *testing.T) {
		page := newPage(t, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
		clinicianSignIn(t, page, a)
		chooseAndSend(page)
		must(t, expect.Locator(page.GetByText("The suite file is too large: at most 200 KiB is accepted.")).ToBeVisible(), "the server's 413 page says the suite file's limit")
		shot(t, page, "scenarios-upload-too-large-nojs")
		must(t, role(page, "link", "Back to Scenarios").Click(), "follow Back to Scenarios")
		must(t, expect.Page(page).ToHaveURL(a.URL+"/clinician/scenarios"), "back on Scenarios")
	})
}
