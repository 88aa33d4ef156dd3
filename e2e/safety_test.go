package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	appconfig "github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app/apptest"
)

// safetySuite is a suite file of two emergencies. chest-pain-spreading's
// patient knows the engine's question only by its word "spread": the plain
// voice asks "Does the pain spread to your arm, jaw, neck or back?" and
// hears yes; the conversational voice asks about the pain "moving into"
// the arm, the patient gives its default no, and the engine sends an
// emergency to routine review. The same suite, two voices: the safety
// case's C1.1 (emergency accuracy at least 95%) is met on one release and
// not on the other.
const safetySuite = `suite: safety_show
vignettes:
  - id: chest-pain-spreading
    title: Chest pain spreading down the left arm, said only when asked in the plain voice's words
    age_years: 58
    sex: male
    opening: "I've got a pain in my chest"
    facts:
      - asks: [spread]
        answer: "yes, it spreads down my left arm"
    default: "no"
    gold:
      class: emergency
  - id: dad-face-dropped
    title: Third person, dad's face has dropped
    age_years: 74
    sex: male
    opening: "my dad's face has dropped on one side and he's not making sense"
    facts:
      - concept: neuro_deficit
        answer: "yes, his face has dropped on one side and he's not making sense"
    default: "no"
    gold:
      class: emergency
`

const (
	safetyRunner = "dr.runner" // reviewer and scenario runner: runs the suites, reads the safety case
	safetyCSO    = "dr.cso"    // the clinical safety officer, and nothing else
	safetyReason = "C1.1 not met: chest-pain-spreading, an emergency, ends in routine review in the conversational voice. Not for live use in this voice."
)

// startVoiceApp serves an app whose scenario runs play on a sandbox in
// voice, over the database at dbPath ("" for a fresh one, with the two
// accounts and their roles).
func startVoiceApp(t *testing.T, voice, dbPath string) *apptest.Stack {
	t.Helper()
	o := apptest.Options{FragmentDelay: 5e6}
	if dbPath == "" {
		o.Clinicians = map[string]string{safetyRunner: clinPassword, safetyCSO: clinPassword}
	}
	o.App = func(c *appconfig.Config) {
		c.ScenarioTarget, c.ScenarioVoice, c.ScenarioParallel = "sandbox", voice, 2
		if dbPath != "" {
			c.DatabasePath = dbPath
		}
	}
	st := apptest.Start(t, o)
	if dbPath == "" {
		db, err := sqlite.Open(context.Background(), st.DBPath, nil)
		must(t, err, "open the app's database")
		defer db.Close()
		for user, roles := range map[string][]bff.Role{
			safetyRunner: {bff.RoleReviewer, bff.RoleScenarioRunner},
			safetyCSO:    {bff.RoleSafetyOfficer},
		} {
			must(t, db.SetClinicianRoles(context.Background(), user, roles), "give %s its roles", user)
		}
	}
	return st
}

// signInAs signs user in on a fresh page of the app at base and returns
// the page on the landing page.
func signInAs(t *testing.T, base, user string, opts ...playwright.BrowserNewContextOptions) playwright.Page {
	t.Helper()
	page := newPage(t, opts...)
	_, err := page.Goto(base + "/clinician/signin")
	must(t, err, "open the sign-in page")
	submitSignIn(t, page, user, clinPassword)
	must(t, expect.Page(page).Not().ToHaveURL(signInPath), "%s is signed in", user)
	return page
}

// runSafetySuite uploads the suite file as a scenario run and waits until
// it is done.
func runSafetySuite(t *testing.T, page playwright.Page, base, label string) {
	t.Helper()
	_, err := page.Goto(base + "/clinician/scenarios")
	must(t, err, "open Scenarios")
	f := uploadForm(page)
	must(t, inForm(f, "Suite file").SetInputFiles(playwright.InputFile{Name: "safety_show.yaml", MimeType: "application/yaml", Buffer: []byte(safetySuite)}), "choose the suite file")
	must(t, inForm(f, "Label (optional)").Fill(label), "fill the label")
	must(t, f.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Upload and start", Exact: playwright.Bool(true)}).Click(), "click Upload and start")
	runIDOf(t, page)
	waitRunDone(t, page, 2)
}

// control is a control of the hazard log on a release or report page.
func control(page playwright.Page, id string) playwright.Locator {
	return page.Locator(`[id="control-` + id + `"]`)
}

// fitsAndPasses takes the page's screenshot at 1280 and 390 px, audits it
// with axe at each, and fails when it scrolls sideways.
func fitsAndPasses(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	for _, w := range []int{1280, 390} {
		start := time.Now()
		must(t, page.SetViewportSize(w, 800), "set the viewport to %d px", w)
		n := fmt.Sprintf("%s-%d", name, w)
		longShot(t, page, n)
		audit(t, page, n)
		v, err := page.Evaluate(`() => [document.documentElement.scrollWidth, window.innerWidth]`)
		must(t, err, "measure the page's width")
		if ws := v.([]any); toInt(ws[0]) > toInt(ws[1]) {
			t.Errorf("%s scrolls sideways: %v px of content in a %v px window", n, ws[0], ws[1])
		}
		t.Logf("%s: screenshot, axe and width in %v", n, time.Since(start).Round(time.Millisecond))
	}
	must(t, page.SetViewportSize(1280, 800), "set the viewport back")
}

// longShot is shot with a minute to take it: these pages are 6,000 to
// 11,000 px tall, and on a loaded 2-core machine (load average 18) a
// full-page capture took up to 9.5 s, close to the 15 s every other
// action is given.
func longShot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	path := filepath.Join(artifactsDir, name+".png")
	_, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(path), FullPage: playwright.Bool(true),
		Timeout: playwright.Float(60_000)})
	must(t, err, "screenshot %s", path)
	t.Logf("screenshot: %s", path)
}

// TestSafetyCaseShow is issue 39's Show in a browser: the same suite run on
// the sandbox's two voices, as two releases; on the conversational one
// the emergency control is not met, with its failing play linked; the
// clinical safety officer rejects that release with a reason; the report,
// printed to PDF by Chromium, lists the unmet control with its failing
// play and the signed rejection; a reviewer sees the release read-only
// and a decision forged with their session is refused with 403.
func TestSafetyCaseShow(t *testing.T) {
	t.Parallel()
	// Release 1: the plain voice. Its app stops before the second starts
	// on the same database, so no run plays in the wrong voice.
	plain := startVoiceApp(t, "plain", "")
	runner := signInAs(t, plain.URL, safetyRunner)
	runSafetySuite(t, runner, plain.URL, "plain voice")
	plain.App.Close()

	// Release 2: the conversational voice.
	chatty := startVoiceApp(t, "conversational", plain.DBPath)
	runner = signInAs(t, chatty.URL, safetyRunner)
	runSafetySuite(t, runner, chatty.URL, "conversational voice")

	// The officer lands on the safety case, the only part of the area the
	// role opens, and finds both releases.
	cso := signInAs(t, chatty.URL, safetyCSO)
	must(t, expect.Page(cso).ToHaveURL(chatty.URL+"/clinician/safety"), "the officer lands on the safety case")
	releases := cso.Locator(".safety__releases li")
	must(t, expect.Locator(releases).ToHaveCount(2), "two releases")
	must(t, expect.Locator(releases.Filter(playwright.LocatorFilterOptions{HasText: "plain-short-en/1"})).ToContainText("no decision yet"), "the plain release")
	longShot(t, cso, "safety-01-home")
	audit(t, cso, "the safety case's home")

	// The plain release meets C1.1.
	must(t, releases.Filter(playwright.LocatorFilterOptions{HasText: "plain-short-en/1"}).GetByRole("link").Click(), "open the plain release")
	must(t, expect.Locator(control(cso, "C1.1").Locator(".safety__state").First()).ToHaveText("met"), "C1.1 is met in the plain voice")
	must(t, expect.Locator(control(cso, "C1.1")).ToContainText("2 of 2 correct (100%)"), "both emergencies escalated in the plain voice")

	// The conversational release does not, and links the failing play.
	_, err := cso.Goto(chatty.URL + "/clinician/safety")
	must(t, err, "back to the safety case")
	must(t, releases.Filter(playwright.LocatorFilterOptions{HasText: "conversational-en/1"}).GetByRole("link").Click(), "open the conversational release")
	c11 := control(cso, "C1.1")
	must(t, expect.Locator(c11.Locator(".safety__state").First()).ToHaveText("not met"), "C1.1 is not met in the conversational voice")
	must(t, expect.Locator(c11).ToContainText("1 of 2 correct (50%)"), "one emergency of two escalated")
	failing := c11.Locator(".safety__failing a").Filter(playwright.LocatorFilterOptions{HasText: "chest-pain-spreading"})
	must(t, expect.Locator(failing.First()).ToBeVisible(), "the failing play is listed")
	href, err := failing.First().GetAttribute("href")
	must(t, err, "read the failing play's link")
	if !regexp.MustCompile(`^/clinician/scenarios/runs/[^/]+/items/\d+`).MatchString(href) {
		t.Errorf("the failing play links to %q, not its transcript", href)
	}
	must(t, expect.Locator(cso.Locator(".safety__decide")).ToBeVisible(), "the officer has the decision form")
	releaseURL := cso.URL()
	release, err := cso.Locator(`.safety__decide input[name="release"]`).InputValue()
	must(t, err, "read the release's name")
	fitsAndPasses(t, cso, "safety-02-release")

	// The officer rejects it; the reason is required first.
	must(t, cso.GetByLabel("Reject", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Check(), "choose Reject")
	must(t, role(cso, "button", "Record the decision").Click(), "record without a reason")
	must(t, expect.Locator(cso.Locator(".field--error").Filter(playwright.LocatorFilterOptions{HasText: "Give your reasoning"})).ToBeVisible(), "the reasoning is named")
	must(t, expect.Locator(cso.GetByLabel("Reject", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeChecked(), "the choice is kept")
	must(t, cso.GetByLabel("Reasoning", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(safetyReason), "give the reason")
	must(t, role(cso, "button", "Record the decision").Click(), "record the rejection")
	must(t, expect.Page(cso).ToHaveURL(releaseURL), "back on the release (post-redirect-get)")
	decision := role(cso, "region", "Decision in force")
	must(t, expect.Locator(decision).ToContainText("rejected"), "the rejection is in force")
	must(t, expect.Locator(decision).ToContainText(safetyReason), "with its reason")
	must(t, expect.Locator(decision).ToContainText(safetyCSO+", clinical safety officer"), "signed by the officer")
	longShot(t, cso, "safety-03-release-rejected")
	audit(t, cso, "the release after the decision")

	// The report, on screen and printed.
	must(t, role(cso, "link", "Safety case report").Click(), "open the report")
	must(t, expect.Locator(role(cso, "heading", "Clinical safety case report")).ToBeVisible(), "the report")
	must(t, expect.Locator(cso.GetByText("Draft:")).ToHaveCount(0), "the signed report is no draft")
	must(t, expect.Locator(control(cso, "C1.1")).ToContainText("chest-pain-spreading"), "the report lists the failing play")
	fitsAndPasses(t, cso, "safety-04-report")
	pdf := filepath.Join(artifactsDir, "safety-report.pdf")
	_, err = cso.PDF(playwright.PagePdfOptions{Path: playwright.String(pdf), PreferCSSPageSize: playwright.Bool(true), PrintBackground: playwright.Bool(true)})
	must(t, err, "print the report to PDF")
	text := pdfText(t, pdf)
	for _, want := range []string{"Clinical safety case report", "conversational-en/1", "C1.1", "Emergency vignettes escalated",
		"not met", "1 of 2 correct (50%)", "chest-pain-spreading", "5. Open risks", "rejected", safetyCSO + ", clinical safety officer",
		"Not for live use in this voice."} {
		if !strings.Contains(text, want) {
			t.Errorf("the report's PDF lacks %q", want)
		}
	}
	pages := pdfPages(t, pdf, "safety-report")
	t.Logf("the report's PDF: %d bytes of text, first pages as PNG: %s", len(text), strings.Join(pages, ", "))

	// A reviewer reads the release but cannot decide: no form, a sentence
	// saying who decides, and a forged post refused.
	_, err = runner.Goto(releaseURL)
	must(t, err, "the reviewer opens the release")
	must(t, expect.Locator(role(runner, "region", "Decision in force")).ToContainText("rejected"), "the reviewer sees the decision")
	must(t, expect.Locator(runner.Locator(".safety__decide")).ToHaveCount(0), "no decision form for a reviewer")
	must(t, expect.Locator(runner.Locator(".safety__readonly")).ToContainText("only an account with the clinical safety officer role records its decision"), "who decides")
	longShot(t, runner, "safety-05-release-reviewer")
	audit(t, runner, "the release as a reviewer sees it")
	token, err := runner.Locator(`meta[name="csrf-token"]`).GetAttribute("content")
	must(t, err, "read the reviewer's CSRF token")
	// The evidence's hash as the page shows it: the forged post is
	// otherwise a valid decision, so only the role check refuses it.
	hash, err := runner.Locator(`[aria-labelledby="evidence-title"] .safety__hash`).TextContent()
	must(t, err, "read the evidence's hash")
	resp, err := runner.Request().Post(chatty.URL+"/clinician/safety/decisions", playwright.APIRequestContextPostOptions{
		Form: map[string]any{"_csrf": token, "release": release, "voice": "conversational-en/1", "verdict": "approve",
			"reasoning": "forged", "hash": hash},
		MaxRedirects: playwright.Int(0)})
	must(t, err, "post a forged decision")
	if resp.Status() != http.StatusForbidden {
		t.Errorf("a reviewer's forged decision: %d, want 403", resp.Status())
	}
	_, err = cso.Goto(releaseURL)
	must(t, err, "the officer reads the release again")
	must(t, expect.Locator(role(cso, "region", "Decision in force")).ToContainText(safetyReason), "the forged post changed nothing")
	must(t, expect.Locator(cso.Locator("#history-title")).ToHaveCount(0), "no second decision")
}

// pdfText is the text of the PDF at path (poppler's pdftotext, in reading
// order), with its lines joined by spaces.
func pdfText(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("pdftotext", path, "-").Output()
	must(t, err, "pdftotext %s (scripts/e2e-setup installs poppler-utils)", path)
	return strings.Join(strings.Fields(string(out)), " ")
}

// pdfPages renders the PDF's first three pages as PNG at 60 dpi under the
// artifacts directory, named prefix-N.png, and returns their paths.
func pdfPages(t *testing.T, path, prefix string) []string {
	t.Helper()
	root := filepath.Join(artifactsDir, prefix)
	old, _ := filepath.Glob(root + "-*.png")
	for _, f := range old {
		_ = os.Remove(f)
	}
	out, err := exec.Command("pdftoppm", "-r", "60", "-l", "3", "-png", path, root).CombinedOutput()
	must(t, err, "pdftoppm %s: %s", path, out)
	files, err := filepath.Glob(root + "-*.png")
	must(t, err, "list the pages")
	if len(files) == 0 {
		t.Fatalf("pdftoppm wrote no page of %s", path)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Errorf("page %s: %v", f, err)
		}
	}
	return files
}

// TestHazardFormInABrowser: the officer edits H1 on its form from the
// keyboard's reach: a control with a threshold out of range comes back
// with the rule beside the controls and every field as typed, axe-clean
// and without sideways scrolling at 1280 and 390 px; fixed, it saves as
// version 2 and the page lands on the hazard.
func TestHazardFormInABrowser(t *testing.T) {
	t.Parallel()
	st := startVoiceApp(t, "plain", "")
	cso := signInAs(t, st.URL, safetyCSO)
	must(t, cso.Locator(`a[href="/clinician/safety/hazard?id=H1"]`).Click(), "open H1's form")
	must(t, expect.Locator(role(cso, "heading", "Edit hazard H1")).ToBeVisible(), "H1's form")
	fitsAndPasses(t, cso, "safety-06-hazard-form")
	controls := byLabel(cso, "Controls (YAML)")
	text, err := controls.InputValue()
	must(t, err, "read the controls")
	must(t, controls.Fill(strings.Replace(text, "min: 0.95", "min: 95", 1)), "type a threshold out of range")
	must(t, byLabel(cso, "Title").Fill("An emergency is not escalated at once"), "change the title")
	must(t, byLabel(cso, "Why it changed").Fill("the conversational voice's finding"), "say why")
	must(t, role(cso, "button", "Save as a new version").Click(), "save")
	summary := cso.Locator("#error-summary")
	must(t, expect.Locator(summary).ToContainText("controls[0].evidence[0].min: accuracy needs min"), "the error summary names the rule")
	must(t, expect.Locator(cso.Locator("#controls-error")).ToBeVisible(), "the rule beside the controls")
	must(t, expect.Locator(byLabel(cso, "Title")).ToHaveValue("An emergency is not escalated at once"), "the title as typed")
	must(t, expect.Locator(byLabel(cso, "Why it changed")).ToHaveValue("the conversational voice's finding"), "the reason as typed")
	fitsAndPasses(t, cso, "safety-07-hazard-form-error")
	text, err = controls.InputValue()
	must(t, err, "read the controls as typed")
	if !strings.Contains(text, "min: 95") {
		t.Fatalf("the controls were not kept as typed: %s", text)
	}
	must(t, controls.Fill(strings.Replace(text, "min: 95", "min: 0.99", 1)), "fix the threshold")
	must(t, role(cso, "button", "Save as a new version").Click(), "save again")
	must(t, expect.Page(cso).ToHaveURL(st.URL+"/clinician/safety#hazard-H1"), "back on the log, at H1 (post-redirect-get)")
	must(t, expect.Locator(cso.GetByText("Hazard H1 saved: version 2 of the hazard log.")).ToBeVisible(), "the save is confirmed")
	must(t, expect.Locator(role(cso, "heading", "Hazard log, version 2")).ToBeVisible(), "version 2")
	must(t, expect.Locator(cso.Locator(`[id="hazard-H1"]`)).ToContainText("at least 99%"), "the new threshold")
}
