package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Against a baseline whose only difference is a gold label (the engine
// answered emergency both times), -baseline prints the label change and
// no regression, and exits 0; against a baseline with variations it says
// what it left out and the baseline's downward flips.
func TestScenariosBaselineTellsALabelFromTheEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	relabelled := write("relabelled.yaml", strings.Replace(smallSuite, "class: self_care", "class: emergency", 1))
	suite, base := write("small.yaml", smallSuite), filepath.Join(dir, "base.json")
	if code, out, errs := runScenarios(t, "run", "-suite", relabelled, "-json", base); code != 0 {
		t.Fatalf("the baseline's run: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := runScenarios(t, "run", "-suite", suite, "-baseline", base)
	if code != 0 || strings.Contains(out, "REGRESSED") {
		t.Fatalf("a gold label's change was taken for a regression: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"GOLD CHANGED mislabelled: emergency -> self_care; the engine answered emergency -> emergency",
		"against the baseline: 2 vignettes paired", "no vignette regressed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, out)
		}
	}

	varied := filepath.Join(dir, "varied.json")
	if code, out, errs := runScenarios(t, "run", "-suite", suite, "-vary", "typos,terse", "-json", varied); code != 0 {
		t.Fatalf("the varied run: exit %d\n%s\n%s", code, out, errs)
	}
	_, out, _ = runScenarios(t, "run", "-suite", suite, "-baseline", varied)
	if !strings.Contains(out, "  baseline: 2 plays as written, 2 scored; 4 varied plays (typos, terse) left out") || !strings.Contains(out, "  this run: 2 plays as written, 2 scored\n") {
		t.Errorf("the comparison does not say what it left out:\n%s", out)
	}
}
