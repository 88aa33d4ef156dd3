package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/bff/services/play"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// A small suite: one vignette the engine gets right, one whose gold label
// is deliberately wrong (a heart attack labelled self-care).
const smallSuite = `suite: small
vignettes:
  - id: chest-arm
    title: Chest pain going down the arm
    age_years: 58
    sex: male
    opening: "I've got chest pain going down my left arm"
    default: "no"
    gold:
      class: emergency
  - id: mislabelled
    title: The same patient, gold label wrong on purpose
    age_years: 58
    sex: male
    opening: "I've got chest pain going down my left arm"
    default: "no"
    gold:
      class: self_care
`

func runScenarios(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	code = scenariosCommand(args, &out, &errw, func(string) string { return "" })
	return code, out.String(), errw.String()
}

// The command plays a suite against an embedded sandbox, prints the summary
// table and writes the JSON report with the keys.
func TestScenariosRunWritesTheReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite, report := filepath.Join(dir, "small.yaml"), filepath.Join(dir, "report.json")
	if err := os.WriteFile(suite, []byte(smallSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runScenarios(t, "run", "-suite", suite, "-json", report)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "emergency") || !strings.Contains(out, "all") || !strings.Contains(errs, "[2/2]") {
		t.Fatalf("summary:\n%s\nprogress:\n%s", out, errs)
	}
	// No vignette is urgent: its rates are "-", not 0.0% (every one
	// wrong), and a line says why. The plays are counted as they are: no
	// variations, and "one vignette at a time" against a sandbox playing
	// two at once is not said.
	if !regexp.MustCompile(`(?m)^urgent +0 +- +- +- +0$`).MatchString(out) || !strings.Contains(out, "-: nothing scored") {
		t.Errorf("a class with nothing scored:\n%s", out)
	}
	if w := "small: 2 vignettes, x 1 repeat = 2 plays against"; !strings.Contains(errs, w) || strings.Contains(errs, "variations") ||
		!strings.Contains(errs, "playing up to 2 vignettes at once") {
		t.Errorf("the run's header does not say %q and %q:\n%s", w, "playing up to 2 vignettes at once", errs)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Summary map[string]json.RawMessage `json:"summary"`
		Results []map[string]any           `json:"results"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"vignettes", "accuracy", "under_triage", "over_triage", "per_class"} {
		if _, ok := r.Summary[k]; !ok {
			t.Fatalf("summary has no %q: %s", k, b)
		}
	}
	var accuracy float64
	_ = json.Unmarshal(r.Summary["accuracy"], &accuracy)
	if len(r.Results) != 2 || accuracy != 0.5 {
		t.Fatalf("%d results, accuracy %v, want 2 and 0.5 (the mislabelled one is wrong)", len(r.Results), accuracy)
	}
}

// Against a baseline in which the mislabelled vignette was right, the run
// reports it regressed and exits 1; against itself it exits 0.
func TestScenariosRunExitsOneOnARegression(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite, head := filepath.Join(dir, "small.yaml"), filepath.Join(dir, "head.json")
	if err := os.WriteFile(suite, []byte(smallSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runScenarios(t, "run", "-suite", suite, "-json", head); code != 0 {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, _ := runScenarios(t, "run", "-suite", suite, "-baseline", head); code != 0 || !strings.Contains(out, "no vignette regressed") {
		t.Fatalf("the same run against itself: exit %d\n%s", code, out)
	}
	// The baseline says the mislabelled vignette was decided as its gold.
	b, _ := os.ReadFile(head)
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep["results"].([]any) {
		res := r.(map[string]any)
		if res["VignetteID"] == "mislabelled" || res["vignette_id"] == "mislabelled" {
			setFinal(res, "self_care")
		}
	}
	b, _ = json.Marshal(rep)
	base := filepath.Join(dir, "base.json")
	if err := os.WriteFile(base, b, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runScenarios(t, "run", "-suite", suite, "-baseline", base)
	if code != 1 || !strings.Contains(out, "REGRESSED") || !strings.Contains(out, "mislabelled") {
		t.Fatalf("against a baseline where it was right: exit %d\n%s\n%s", code, out, errs)
	}
}

// setFinal sets a result's final class, whatever its JSON key, and drops
// the recorded outcome so it is assessed again.
func setFinal(res map[string]any, class string) {
	for _, k := range []string{"Final", "final"} {
		if _, ok := res[k]; ok {
			res[k] = class
		}
	}
	delete(res, "Outcome")
	delete(res, "outcome")
}

// A suite with mistakes is refused before anything is played, naming the
// file, then each problem on a line of its own with its line, vignette and
// field (an unknown field among them, hiding none of the others).
func TestScenariosRunRefusesABadSuite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := filepath.Join(dir, "bad.yaml")
	bad := strings.Replace(smallSuite, "class: self_care", "class: soon", 1)
	bad = strings.Replace(bad, "    default: \"no\"\n", "    default: \"no\"\n    colour: red\n", 1)
	if err := os.WriteFile(suite, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runScenarios(t, "run", "-suite", suite)
	want := "intake-web scenarios: " + suite + " does not load: 2 problems\n" +
		"  line 9: vignette \"chest-arm\" (1): colour: not a field of a vignette; its fields are id, title, age_years, sex, history, neutral, opening, complaint, facts, default, unknown, max_turns, gold\n" +
		"  line 19: vignette \"mislabelled\" (2): gold.class: must be one of emergency, urgent, routine, self_care\n"
	if code != 2 || errs != want {
		t.Fatalf("a bad suite: exit %d:\n%s\nwant\n%s", code, errs, want)
	}
}

// -voice chooses the embedded sandbox engine's wording: the report's
// provenance says which, the summary prints the simulator coverage; an
// unknown voice, or a voice with a real service, is a usage error.
func TestScenariosRunVoice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite, report := filepath.Join(dir, "small.yaml"), filepath.Join(dir, "report.json")
	if err := os.WriteFile(suite, []byte(smallSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runScenarios(t, "run", "-suite", suite, "-voice", "conversational", "-json", report)
	if code != 0 || !strings.Contains(out, "simulator coverage: 100.0%") || !strings.Contains(out, "engine voice conversational-en/1") ||
		!strings.Contains(errs, "voice conversational") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"voice_profile": "conversational-en/1"`) {
		t.Fatalf("the report's provenance does not name the voice: %.400s", b)
	}
	if code, _, errs := runScenarios(t, "run", "-suite", suite, "-voice", "chatty"); code != 2 || !strings.Contains(errs, `-voice must be one of plain, conversational, `) || !strings.Contains(errs, `got "chatty"`) {
		t.Fatalf("an unknown voice: exit %d: %s", code, errs)
	}
	var errw bytes.Buffer
	env := func(k string) string {
		return map[string]string{"INTAKE_BASE_URL": "https://svc.example", "INTAKE_API_KEY": "k"}[k]
	}
	if code := scenariosCommand([]string{"run", "-suite", suite, "-voice", "plain"}, io.Discard, &errw, env); code != 2 ||
		!strings.Contains(errw.String(), "words its own") {
		t.Fatalf("a voice with a real service: exit %d: %s", code, errw.String())
	}
}

// -vary plays the variations, -junit writes a case per vignette and
// variation with the downward flip as a failure, and -fail-on chooses
// what makes the exit status 1.
func TestScenariosRunVariationsJUnitAndFailOn(t *testing.T) {
	t.Parallel()
	// Under typos the engine no longer hears the words it escalates on: a
	// downward flip, and an under-triage (docs/scenarios.md, Variations).
	// Lay words leave this opening as it is.
	suite, getenv := flipSuite(t)
	run := func(args ...string) (int, string, string) {
		var out, errw bytes.Buffer
		code := scenariosCommand(args, &out, &errw, getenv)
		return code, out.String(), errw.String()
	}
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out, errs := run("run", "-suite", suite, "-vary", "typos,lay", "-junit", junit, "-fail-on", "flip")
	if code != 1 || !strings.Contains(out, "FLIP DOWN words-matter under typos: emergency -> self_care") ||
		!strings.Contains(errs, "failing: 1 downward flip\n") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("junit: %v\n%s", err, b)
	}
	failed := map[string]string{}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failed[c.Classname+"/"+c.Name] = c.Failure.Type
			if !strings.Contains(c.Failure.Text, "patient: ") {
				t.Errorf("failure of %s has no transcript: %q", c.Name, c.Failure.Text)
			}
		}
	}
	if len(doc.Suites[0].Cases) != 6 || failed["flip.words-matter/typos"] != "downward_flip" || len(failed) != 1 {
		t.Errorf("%d cases, failures %v", len(doc.Suites[0].Cases), failed)
	}

	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"-vary", "lay", "-fail-on", "flip"}, 0, ""},
		{[]string{"-vary", "typos", "-fail-on", "under-triage"}, 1, "failing: 1 play under-triaged"},
		{[]string{"-fail-on", "under-triage"}, 0, ""},
		{[]string{"-fail-on", "flip"}, 2, "-fail-on flip needs -vary"},
		{[]string{"-fail-on", "regression"}, 2, "-fail-on regression needs -baseline"},
		{[]string{"-fail-on", "sometimes"}, 2, `unknown condition "sometimes"`},
		{[]string{"-vary", "shouting"}, 2, `unknown variation "shouting"`},
	} {
		code, _, errs := run(append([]string{"run", "-suite", suite}, c.args...)...)
		if code != c.code || !strings.Contains(errs, c.says) {
			t.Errorf("%v: exit %d, want %d saying %q\n%s", c.args, code, c.code, c.says, errs)
		}
	}
}

// TestScenariosCLIEstimateIsTheApps: the command's estimate is the app's
// (scenarioruns.Estimate): with -vary all it counts every varied play
// (the issue: 61 intakes and about 4 days' quota printed for a run of 533
// plays and about 3,000 turns), the same intakes, turns, days and split by
// variation as the app's Scenarios page for the same run and key, and
// -dry-run stops there.
func TestScenariosCLIEstimateIsTheApps(t *testing.T) {
	t.Parallel()
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	names := variations.Names()
	plays := len(play.Plays(all, names, scenarioruns.VariationSeed))
	if plays <= len(all.Vignettes) {
		t.Fatalf("-vary all plays %d of %d vignettes: nothing varied", plays, len(all.Vignettes))
	}
	// The app's estimate of the run, for a key of 6 requests a minute and
	// 100 turns a day with nothing spent and nothing kept for patients.
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "app.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, err := scenarioruns.New(scenarioruns.Deps{Store: db, Audit: db, Target: scenarioruns.TargetService, PerMinute: 6, Parallel: app.DefaultScenarioParallel,
		TurnsToday: func(context.Context) (int, int, error) { return 0, 100, nil }})
	if err != nil {
		t.Fatal(err)
	}
	want, err := svc.Estimate(t.Context(), bff.ScenarioRunForm{Suite: scenarios.BuiltinName, Repeats: 2, Variations: names})
	if err != nil {
		t.Fatal(err)
	}
	if want.Intakes != 2*plays || want.Days < 2 {
		t.Fatalf("the app's estimate %+v: want %d intakes over days", want, 2*plays)
	}
	service := func(k string) string {
		return map[string]string{"INTAKE_BASE_URL": "https://svc.example", "INTAKE_API_KEY": "k"}[k]
	}
	var out, errw bytes.Buffer
	code := scenariosCommand([]string{"run", "-vary", "all", "-repeats", "2", "-dry-run"}, &out, &errw, service)
	got := errw.String()
	for _, w := range []string{
		fmt.Sprintf("%d vignettes as written and %d varied plays under %s, x 2 repeats = %d plays against https://svc.example",
			len(all.Vignettes), plays-len(all.Vignettes), strings.Join(names, ", "), 2*plays),
		fmt.Sprintf("estimate: %d intakes and about %d turns (at most %d): more than a day's 100 turns", want.Intakes, want.Turns, want.MaxTurns),
		fmt.Sprintf("about %d days' quota in all", want.Days),
		fmt.Sprintf("per variation (intakes/about turns): unvaried %d/%d; %s %d/%d", want.PerVariation[0].Intakes, want.PerVariation[0].Turns,
			want.PerVariation[1].Variation, want.PerVariation[1].Intakes, want.PerVariation[1].Turns),
	} {
		if !strings.Contains(got, w) {
			t.Errorf("the command does not say %q:\n%s", w, got)
		}
	}
	if code != 0 || out.Len() != 0 || strings.Contains(got, "playing") {
		t.Errorf("-dry-run: exit %d, played or printed a summary:\n%s\n%s", code, out.String(), got)
	}

	// Against the embedded sandbox: every play counted, no quota.
	code, _, errs := runScenarios(t, "run", "-vary", "all", "-dry-run")
	if w := fmt.Sprintf("estimate: %d intakes", plays); code != 0 || !strings.Contains(errs, w) || !strings.Contains(errs, "the embedded sandbox has no quota") {
		t.Errorf("against the embedded sandbox: exit %d, want %q:\n%s", code, w, errs)
	}
	// No quota: the key's pace alone.
	noQuota := func(k string) string {
		return map[string]string{"INTAKE_BASE_URL": "https://svc.example", "INTAKE_API_KEY": "k", "PACER_TURNS_PER_DAY": "-1"}[k]
	}
	errw.Reset()
	if code := scenariosCommand([]string{"run", "-dry-run"}, io.Discard, &errw, noQuota); code != 0 ||
		!strings.Contains(errw.String(), "no daily quota") || !strings.Contains(errw.String(), "at the key's pace") || strings.Contains(errw.String(), "-1 ") {
		t.Errorf("without a daily quota: exit %d\n%s", code, errw.String())
	}
}

// TestScenariosRunRepeatsLimit: -repeats has the app's limit
// (scenarioruns.MaxRepeats), and says it.
func TestScenariosRunRepeatsLimit(t *testing.T) {
	t.Parallel()
	over := strconv.Itoa(scenarioruns.MaxRepeats + 1)
	code, _, errs := runScenarios(t, "run", "-repeats", over, "-dry-run")
	if w := fmt.Sprintf("-repeats must be from 1 to %d", scenarioruns.MaxRepeats); code != 2 || !strings.Contains(errs, w) {
		t.Errorf("-repeats %s: exit %d, want 2 saying %q: %s", over, code, w, errs)
	}
	if code, _, errs := runScenarios(t, "run", "-repeats", strconv.Itoa(scenarioruns.MaxRepeats), "-dry-run"); code != 0 {
		t.Errorf("-repeats %d: exit %d: %s", scenarioruns.MaxRepeats, code, errs)
	}
}
