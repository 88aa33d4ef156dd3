package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

const readingsFile = `release: rel-1
reviews:
  - question: have you been vomiting?
    decision: corrected
    concept: vomiting
    note: reviewed by the team
    by: dr.ada
    at: 2026-11-28T09:30:00Z
`

func runReadings(t *testing.T, db string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errw bytes.Buffer
	code = scenariosCommand(append([]string{"readings"}, args...), &out, &errw, func(k string) string {
		return map[string]string{"DATABASE_PATH": db}[k]
	})
	return code, out.String(), errw.String()
}

// import then export through the command: the same decisions, audited
// under cli: and the login; a bad file is refused with its line and field
// and adds nothing; -h prints the usage.
func TestScenariosReadingsExportImport(t *testing.T) {
	dir := t.TempDir()
	db, in, out := filepath.Join(dir, "app.db"), filepath.Join(dir, "in.yaml"), filepath.Join(dir, "out.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(in, []byte(readingsFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(readingsFile, "decision: corrected", "decision: perhaps", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runReadings(t, db, "-h"); code != 0 || !strings.Contains(errs, "readings export -release R") {
		t.Fatalf("-h: %d %s", code, errs)
	}
	code, stdout, errs := runReadings(t, db, "import", bad)
	if code != 1 || !strings.Contains(errs, "line 4: decision:") || !strings.Contains(errs, "Nothing was imported") {
		t.Fatalf("import of a bad file: %d %q %q", code, stdout, errs)
	}
	if code, _, errs := runReadings(t, db, "export", "-release", "rel-1"); code != 1 || !strings.Contains(errs, "no reviewed readings") {
		t.Fatalf("export after a bad import: %d %q; want nothing to export", code, errs)
	}
	if code, stdout, errs := runReadings(t, db, "import", in); code != 0 || !strings.Contains(stdout, "1 reviewed readings of release rel-1") {
		t.Fatalf("import: %d %q %q", code, stdout, errs)
	}
	if code, _, errs := runReadings(t, db, "export", "-release", "rel-1", "-o", out); code != 0 {
		t.Fatalf("export: %d %q", code, errs)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"release: rel-1", "question: have you been vomiting?", "decision: corrected", "concept: vomiting",
		"note: reviewed by the team", "by: dr.ada", "at: 2026-11-28T09:30:00Z"} {
		if !strings.Contains(string(got), want) {
			t.Fatalf("export lacks %q:\n%s", want, got)
		}
	}
	if code, _, errs := runReadings(t, db, "export"); code != 2 || !strings.Contains(errs, "-release is needed") {
		t.Fatalf("export without -release: %d %q", code, errs)
	}
	s, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.Audit(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Actor != cliActor(os.Getenv) || !strings.Contains(es[0].Detail, "imported: release rel-1") {
		t.Fatalf("audit after one good import: %+v; want one entry under %s", es, cliActor(os.Getenv))
	}
}
