package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

const safetyRelease = "sandbox-2026.08"

// oneControlLog is a hazard log whose one evaluated control asks every
// emergency escalated.
const oneControlLog = `system: the test
hazards:
  - id: H1
    title: An emergency is not escalated
    causes: [a missed red flag]
    effects: [delayed treatment]
    initial: {severity: catastrophic, likelihood: medium}
    controls:
      - id: C1.1
        title: Emergency vignettes escalated
        evidence:
          - {kind: accuracy, class: emergency, min: 1}
          - {kind: test, test: TestEmergencyPageLeadsWithTheInstruction, package: ./e2e}
    residual: {severity: catastrophic, likelihood: very low}
    owner: clinical safety officer
    status: open
`

func runSafety(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	code = safetyCommand(args, &out, &errw, func(k string) string { return env[k] })
	return code, out.String(), errw.String()
}

// seedSafety stores two finished runs of one release: every emergency
// escalated in the plain voice, two of four missed in the conversational.
func seedSafety(t *testing.T, path string) {
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, voice := range []string{"plain-short-en/1", "conversational-en/1"} {
		var results []scenarios.Result
		for j := range 4 {
			r := scenarios.Result{VignetteID: "emergency-" + string(rune('a'+j)), Title: "An emergency", Repeat: 1, Terminal: true,
				Gold: scenarios.Gold{Class: scenarios.Emergency}, Final: scenarios.Emergency,
				Provenance: scenarios.Provenance{Release: safetyRelease, VoiceProfile: voice}}
			if i == 1 && j < 2 {
				r.Final = scenarios.Routine
			}
			results = append(results, r)
		}
		storetest.MustFinishRun(t, db, &bff.ScenarioRun{ID: "sr_" + string(rune('a'+i)), SuiteName: "small", Suite: &scenarios.Suite{Name: "small"},
			Repeats: 1, Target: "sandbox", StartedBy: "dr.ada", FinishedAt: time.Now().UTC().Add(time.Duration(i-2) * time.Hour)}, results)
	}
}

// The report command: -fail-on unmet-controls exits 1 naming the unmet
// control and its failing items, 0 when every control is met or rests on
// a recorded test; the log's import and export go through the service; a
// Chromium that is not there is a clear error, not a crash.
func TestSafetyReportCommand(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DATABASE_PATH": filepath.Join(dir, "app.db")}
	seedSafety(t, env["DATABASE_PATH"])
	logFile := filepath.Join(dir, "log.yaml")
	if err := os.WriteFile(logFile, []byte(oneControlLog), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runSafety(t, env, "import", logFile, "-note", "one control"); code != 0 || !strings.Contains(out, "version 2") {
		t.Fatalf("import: %d %q %q", code, out, errs)
	}
	html := filepath.Join(dir, "report.html")
	code, out, errs := runSafety(t, env, "report", "-release", safetyRelease, "-voice", "plain-short-en/1", "-o", html, "-fail-on", "unmet-controls")
	if code != 0 || !strings.Contains(out, "1 met, 0 not met") {
		t.Fatalf("the plain voice: %d %q %q", code, out, errs)
	}
	code, out, errs = runSafety(t, env, "report", "-release", safetyRelease, "-voice", "conversational-en/1", "-o", html, "-fail-on", "unmet-controls")
	if code != 1 || !strings.Contains(errs, "unmet control C1.1 Emergency vignettes escalated (not met)") ||
		!strings.Contains(errs, "run sr_b item 0 (emergency-a): under-triaged") || !strings.Contains(out, "a draft") {
		t.Fatalf("the conversational voice: %d %q %q", code, out, errs)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), "Clinical safety case report") || !strings.Contains(string(page), "2 of 4 correct (50%)") {
		t.Fatalf("the HTML report: %v %.500s", err, page)
	}
	if code, _, errs := runSafety(t, env, "report", "-release", safetyRelease, "-voice", "conversational-en/1", "-o", filepath.Join(dir, "r.pdf"),
		"-chromium", filepath.Join(dir, "no-such-chromium")); code != 1 || !strings.Contains(errs, "no Chromium at") {
		t.Fatalf("a missing Chromium: %d %q", code, errs)
	}
	if code, _, errs := runSafety(t, env, "report", "-release", safetyRelease, "-o", html, "-fail-on", "everything"); code != 2 || !strings.Contains(errs, "unmet-controls") {
		t.Fatalf("a bad -fail-on: %d %q", code, errs)
	}
	if code, out, _ := runSafety(t, env, "export", "-version", "1"); code != 0 || !strings.Contains(out, "id: H6") {
		t.Fatalf("export of the starter version: %d %.200s", code, out)
	}
}

// Printed by Chromium, the PDF is a PDF. Without a Chromium the test fails
// (setupHint), as the Caddy test does: a skip here would hide a CI without
// the browser.
func TestSafetyReportPDF(t *testing.T) {
	chromium := os.Getenv("E2E_CHROMIUM")
	if chromium == "" {
		if p, err := exec.LookPath("chromium"); err == nil {
			chromium = p
		}
	}
	if chromium == "" {
		t.Fatalf("no Chromium here (E2E_CHROMIUM unset, none named chromium on PATH): %s", setupHint)
	}
	dir := t.TempDir()
	env := map[string]string{"DATABASE_PATH": filepath.Join(dir, "app.db"), "CHROMIUM": chromium}
	seedSafety(t, env["DATABASE_PATH"])
	pdf := filepath.Join(dir, "report.pdf")
	code, out, errs := runSafety(t, env, "report", "-release", safetyRelease, "-voice", "conversational-en/1", "-o", pdf)
	if code != 0 {
		t.Fatalf("report: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(pdf)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || len(b) < 10_000 {
		t.Fatalf("not a PDF: %v, %d bytes", err, len(b))
	}
}
