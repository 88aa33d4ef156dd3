package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// runArgs runs intake-web with args in an empty folder, with the default
// database path (intake-web.db there), and returns its exit status, its
// output and what it left in the folder. The test fails if it is still
// running after timeout (a mistyped command that started the server).
func runArgs(t *testing.T, timeout time.Duration, args ...string) (int, string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envAsMain+"=1", envArgs+"="+strings.Join(args, "\x1f"),
		"LISTEN_ADDR=127.0.0.1:0", "DATABASE_PATH=", "DATABASE_URL=", "INTAKE_BASE_URL=", "INTAKE_API_KEY=", "INTAKE_API_KEY_FILE=", "SHUTDOWN_GRACE=2s")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Errorf("intake-web %s was still running after %s (it started the server?):\n%s", strings.Join(args, " "), timeout, out)
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	return code, string(out), left
}

// TestMistypedCommandsDoNothing: an unknown command, verb, flag or a word
// where none is taken is a usage error (exit 2) that says what was wrong
// and what is taken, and starts nothing: no server, no database file in
// the current folder (the issue: `intake-web frobnicate -h` served the app
// and wrote intake-web.db). -h, on each command, exits 0.
func TestMistypedCommandsDoNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		says []string
	}{
		{[]string{"frobnicate", "-h"}, 2, []string{`unknown command "frobnicate"`, "intake-web clinician VERB", "intake-web scenarios run"}},
		{[]string{"clinican", "list"}, 2, []string{`unknown command "clinican"`}},
		{[]string{"-demo", "scenarios", "run"}, 2, []string{`"scenarios" after flags: the command comes first`}},
		{[]string{"-bogus"}, 2, []string{"flag provided but not defined: -bogus", "environment variables"}},
		{[]string{"clinician", "frobnicate"}, 2, []string{`clinician: unknown verb "frobnicate"`, "intake-web clinician add USERNAME"}},
		{[]string{"clinician", "add"}, 2, []string{"clinician add takes one USERNAME"}},
		{[]string{"clinician", "list", "everyone"}, 2, []string{"clinician list takes no argument"}},
		{[]string{"clinician"}, 2, []string{"clinician: a verb is needed"}},
		{[]string{"clinician", "-bogus", "list"}, 2, []string{"flag provided but not defined: -bogus"}},
		{[]string{"scenarios"}, 2, []string{"usage: intake-web scenarios run"}},
		{[]string{"scenarios", "frobnicate"}, 2, []string{`unknown verb "frobnicate"`, "usage: intake-web scenarios run"}},
		{[]string{"scenarios", "run", "everything"}, 2, []string{`unexpected argument "everything"`}},
		{[]string{"scenarios", "run", "-bogus"}, 2, []string{"flag provided but not defined: -bogus", "-dry-run"}},
		{[]string{"-h"}, 0, []string{"intake-web clinician VERB", "intake-web scenarios run", "-demo", "environment variables", "LISTEN_ADDR [127.0.0.1:8080]"}},
		{[]string{"clinician", "-h"}, 0, []string{"intake-web clinician add USERNAME"}},
		{[]string{"scenarios", "-h"}, 0, []string{"usage: intake-web scenarios run"}},
		{[]string{"scenarios", "run", "-h"}, 0, []string{"-dry-run", "-repeats"}},
	} {
		// Each case is a process of its own, in a folder of its own.
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, left := runArgs(t, 20*time.Second, c.args...)
			if code != c.code || len(left) > 0 {
				t.Errorf("intake-web %s: exit %d, want %d; left %v in the folder:\n%s", strings.Join(c.args, " "), code, c.code, left, out)
			}
			for _, w := range c.says {
				if !strings.Contains(out, w) {
					t.Errorf("intake-web %s does not say %q:\n%s", strings.Join(c.args, " "), w, out)
				}
			}
		})
	}
}

// TestHelpListsEveryVariable: intake-web -h lists every environment
// variable of the configuration's table, from the table.
func TestHelpListsEveryVariable(t *testing.T) {
	t.Parallel()
	_, out, _ := runArgs(t, 20*time.Second, "-h")
	for _, v := range app.Variables() {
		if !strings.Contains(out, "  "+v.Name) || !strings.Contains(out, v.Help) {
			t.Errorf("intake-web -h does not list %s (%s):\n%s", v.Name, v.Help, out)
		}
	}
}
