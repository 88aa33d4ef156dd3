package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// Flags work before the verb, after it and after its argument.
func TestClinicianCommandFlagsAnywhere(t *testing.T) {
	db := filepath.Join(t.TempDir(), "app.db")
	env := func(string) string { return "" }
	run := func(stdin string, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := clinicianCommand(args, strings.NewReader(stdin), &out, &errb, env); err != nil {
			t.Fatalf("intake-web clinician %s: %v (%s)", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	run("a long enough password\n", "add", "dr.after", "-db", db)
	run("a long enough password\n", "add", "-db="+db, "dr.middle")
	run("a long enough password\n", "-db", db, "add", "dr.before")
	run("", "disable", "dr.middle", "-db", db)
	list := run("", "list", "-db", db)
	for _, want := range []string{"dr.after", "dr.before", "dr.middle"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %s:\n%s", want, list)
		}
	}
	if !strings.Contains(list, "disabled") {
		t.Errorf("dr.middle is not disabled:\n%s", list)
	}
	var out, errb bytes.Buffer
	if err := clinicianCommand([]string{"add", "dr.x", "extra", "-db", db}, strings.NewReader("pw\n"), &out, &errb, env); err == nil {
		t.Error("add with two names was accepted")
	}
}
