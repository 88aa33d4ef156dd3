package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
)

// Flags work before the verb, after it and after its argument.
func TestClinicianCommandFlagsAnywhere(t *testing.T) {
	t.Parallel()
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

// passwd sets a new password, read from stdin or made up (-generate, then
// printed once): the new one signs in, the old one no longer does.
func TestClinicianPasswd(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "app.db")
	env := func(string) string { return "" }
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		var out, errb bytes.Buffer
		err := clinicianCommand(append(args, "-db", db), strings.NewReader(stdin), &out, &errb, env)
		return out.String(), err
	}
	signIn := func(user, password string) error {
		t.Helper()
		cfg := app.Defaults()
		cfg.DatabasePath = db
		store, err := app.OpenDatabase(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		// At bcrypt's least cost: a wrong username's dummy hash is made at
		// the service's cost, and the stored hash carries its own.
		_, err = accounts.New(accounts.Deps{Clinicians: store, Audit: store, BcryptCost: bcrypt.MinCost}).SignIn(context.Background(), user, password, "127.0.0.1")
		return err
	}
	if _, err := run("the first password\n", "add", "dr.lost"); err != nil {
		t.Fatal(err)
	}
	out, err := run("the second password\n", "passwd", "Dr.Lost")
	if err != nil || !strings.Contains(out, "clinician dr.lost has a new password") || strings.Contains(out, "second") {
		t.Fatalf("passwd from stdin: %v %q", err, out)
	}
	if err := signIn("dr.lost", "the second password"); err != nil {
		t.Errorf("the new password does not sign in: %v", err)
	}
	if err := signIn("dr.lost", "the first password"); err == nil {
		t.Error("the old password still signs in")
	}

	out, err = run("", "passwd", "-generate", "dr.lost")
	m := regexp.MustCompile(`(?m)^password \(shown only now\): (\S+)$`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("passwd -generate: %v %q", err, out)
	}
	if err := signIn("dr.lost", m[1]); err != nil {
		t.Errorf("the generated password does not sign in: %v", err)
	}

	if _, err := run("the third password\n", "passwd", "dr.nobody"); err == nil || !strings.Contains(err.Error(), "No clinician is named dr.nobody.") {
		t.Errorf("passwd of an unknown clinician: %v", err)
	}
	if _, err := run("short\n", "passwd", "dr.lost"); err == nil || !strings.Contains(err.Error(), "password: A password is 12 to 72 characters long") {
		t.Errorf("a short password: %v", err)
	}
	if err := signIn("dr.lost", m[1]); err != nil {
		t.Errorf("a refused passwd changed the password: %v", err)
	}
	if _, err := run("", "disable", "dr.lost"); err != nil {
		t.Fatal(err)
	}
	if out, err := run("a password for a disabled account\n", "passwd", "dr.lost"); err != nil || !strings.Contains(out, "the account is disabled: it still cannot sign in") {
		t.Errorf("passwd of a disabled account: %v %q", err, out)
	}
}

// TestClinicianUnlock: after five wrong passwords the right one is refused
// (the app's lock, kept in the database); `clinician list` shows the lock,
// `clinician unlock` lifts it at once and `clinician passwd` does too, each
// in the audit log under the command line's user.
func TestClinicianUnlock(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "app.db")
	env := func(k string) string { return map[string]string{"USER": "ops"}[k] }
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		var out, errb bytes.Buffer
		err := clinicianCommand(append(args, "-db", db), strings.NewReader(stdin), &out, &errb, env)
		return out.String(), err
	}
	// store opens the database as the running app does, its account
	// service keeping failed sign-ins there.
	store := func() (app.AccountsDB, *accounts.Service) {
		t.Helper()
		cfg := app.Defaults()
		cfg.DatabasePath = db
		s, err := app.OpenDatabase(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s, accounts.New(accounts.Deps{Clinicians: s, Audit: s, SignInFailures: s, BcryptCost: bcrypt.MinCost})
	}
	s, svc := store()
	signIn := func(password string) error {
		t.Helper()
		_, err := svc.SignIn(context.Background(), "dr.lock", password, "127.0.0.1")
		return err
	}
	lockOut := func() {
		t.Helper()
		for range 5 {
			_ = signIn("not the password at all")
		}
		if err := signIn("the right password"); bff.ErrorCode(err) != bff.ERATELIMIT {
			t.Fatalf("the right password after five wrong ones: %v, want locked", err)
		}
	}
	// Added here at bcrypt's least cost, so that the sign-ins are quick.
	if _, err := svc.AddClinician(context.Background(), "system", "dr.lock", "the right password", bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	lockOut()
	if out, err := run("", "list"); err != nil || !regexp.MustCompile(`dr\.lock +active .*; 5 failed sign-ins, locked for 1[45] minutes more \(intake-web clinician unlock dr\.lock\)`).MatchString(out) {
		t.Errorf("list does not show the lock: %v\n%s", err, out)
	}
	out, err := run("", "unlock", "Dr.Lock")
	if err != nil || !strings.Contains(out, "clinician dr.lock unlocked (it had 5 failed sign-ins, locked for") {
		t.Fatalf("unlock: %v %q", err, out)
	}
	if err := signIn("the right password"); err != nil {
		t.Fatalf("the right password after unlock: %v", err)
	}
	if out, err := run("", "unlock", "dr.lock"); err != nil || !strings.Contains(out, "clinician dr.lock was not locked") {
		t.Errorf("unlock of an account not locked: %v %q", err, out)
	}
	if _, err := run("", "unlock", "dr.nobody"); err == nil || !strings.Contains(err.Error(), "No clinician is named dr.nobody.") {
		t.Errorf("unlock of an unknown username: %v", err)
	}

	// A new password lifts the lock too: the failures were guesses at the
	// old one.
	lockOut()
	out, err = run("", "passwd", "-generate", "dr.lock")
	m := regexp.MustCompile(`(?m)^password \(shown only now\): (\S+)$`).FindStringSubmatch(out)
	if err != nil || m == nil || !strings.Contains(out, "its sign-in lock is lifted (it had 5 failed sign-ins") {
		t.Fatalf("passwd of a locked account: %v %q", err, out)
	}
	if err := signIn(m[1]); err != nil {
		t.Fatalf("the new password of an account that was locked: %v", err)
	}

	es, err := s.Audit(context.Background(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range es {
		if strings.HasPrefix(e.Action, "clinician_") && e.Actor != "system" {
			changes = append(changes, e.Actor+" "+e.Action)
		}
	}
	if want := "cli:" + cliUser(t) + " clinician_"; len(changes) != 3 || !strings.HasPrefix(changes[0], want) || !strings.HasPrefix(changes[2], want) {
		t.Errorf("account changes audited: %q, want 3 (unlock twice, passwd; not the unknown username) under %q", changes, want)
	}
}

// cliUser is the login the command audits changes under here.
func cliUser(t *testing.T) string {
	t.Helper()
	a := cliActor(func(k string) string { return map[string]string{"USER": "ops"}[k] })
	return strings.TrimPrefix(a, "cli:")
}

// add gives reviewer unless -roles says otherwise; grant and revoke change
// an account's roles, audited; list shows them; an unknown role is a usage
// error naming it, before the database is touched.
func TestClinicianRoles(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "app.db")
	env := func(string) string { return "" }
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		var out, errb bytes.Buffer
		err := clinicianCommand(append(args, "-db", db), strings.NewReader(stdin), &out, &errb, env)
		return out.String(), err
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(stdin, args...)
		if err != nil {
			t.Fatalf("clinician %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	if out := must("a long enough password\n", "add", "dr.rev"); !strings.Contains(out, "roles: reviewer\n") {
		t.Fatalf("add without -roles: %q", out)
	}
	if out := must("a long enough password\n", "add", "dr.ops", "-roles", "admin, scenario_runner"); !strings.Contains(out, "roles: scenario_runner, administrator") {
		t.Fatalf("add -roles: %q", out)
	}
	if out := must("", "grant", "dr.rev", "runner"); !strings.Contains(out, "dr.rev now has roles: reviewer, scenario_runner") {
		t.Fatalf("grant: %q", out)
	}
	if out := must("", "revoke", "dr.ops", "administrator,reviewer"); !strings.Contains(out, "dr.ops now has roles: scenario_runner") {
		t.Fatalf("revoke: %q", out)
	}
	// The clinical safety officer's role, by its name and its short form.
	if out := must("a long enough password\n", "add", "dr.cso", "-roles", "safety_officer"); !strings.Contains(out, "roles: safety_officer\n") {
		t.Fatalf("add -roles safety_officer: %q", out)
	}
	if out := must("", "grant", "dr.rev", "officer"); !strings.Contains(out, "dr.rev now has roles: reviewer, scenario_runner, safety_officer") {
		t.Fatalf("grant officer: %q", out)
	}
	if out := must("", "revoke", "dr.rev", "safety_officer"); !strings.Contains(out, "dr.rev now has roles: reviewer, scenario_runner\n") {
		t.Fatalf("revoke safety_officer: %q", out)
	}
	list := must("", "list")
	if !regexp.MustCompile(`dr\.ops .*roles: scenario_runner\n`).MatchString(list) || !regexp.MustCompile(`dr\.rev .*roles: reviewer, scenario_runner\n`).MatchString(list) {
		t.Fatalf("list:\n%s", list)
	}
	for _, args := range [][]string{{"grant", "dr.rev", "superuser"}, {"revoke", "dr.rev", ""}, {"add", "dr.new", "-roles", "root"}} {
		_, err := run("a long enough password\n", args...)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "roles") {
			t.Errorf("clinician %v: %v, want a usage error about roles", args, err)
		}
	}
	if _, err := run("", "grant", "nobody", "reviewer"); err == nil || !strings.Contains(err.Error(), "No clinician is named nobody") {
		t.Errorf("grant to nobody: %v", err)
	}
	cfg := app.Defaults()
	cfg.DatabasePath = db
	store, err := app.OpenDatabase(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	log, _ := store.Audit(context.Background(), 100, 0)
	changes := 0
	for _, e := range log {
		if e.Action == bff.AuditClinicianRoles && strings.HasPrefix(e.Actor, "cli:") {
			changes++
		}
	}
	if changes != 4 {
		t.Fatalf("%d role changes audited, want 4", changes)
	}
}

// reset-totp removes a second factor, audited; the account signs in with
// its password alone after.
func TestClinicianResetTOTP(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "app.db")
	env := func(string) string { return "" }
	run := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := clinicianCommand(append(args, "-db", db), strings.NewReader("a long enough password\n"), &out, &errb, env)
		return out.String(), err
	}
	if _, err := run("add", "dr.phone"); err != nil {
		t.Fatal(err)
	}
	cfg := app.Defaults()
	cfg.DatabasePath = db
	store, err := app.OpenDatabase(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.SetClinicianTOTP(context.Background(), "dr.phone", []byte("sealed"), []bff.RecoveryCode{{ID: 1, Salt: []byte("s"), Hash: []byte("h")}}); err != nil {
		t.Fatal(err)
	}
	if out, _ := run("list"); !strings.Contains(out, "second factor on") {
		t.Fatalf("list does not say the factor is on: %q", out)
	}
	out, err := run("reset-totp", "DR.PHONE")
	if err != nil || !strings.Contains(out, "dr.phone's second factor and recovery codes are removed") {
		t.Fatalf("reset-totp: %q, %v", out, err)
	}
	if c, _ := store.Clinician(context.Background(), "dr.phone"); c.HasSecondFactor() {
		t.Fatal("the factor is still there")
	}
	if out, _ := run("reset-totp", "dr.phone"); !strings.Contains(out, "had no second factor") {
		t.Fatalf("a second reset: %q", out)
	}
	if _, err := run("reset-totp", "nobody"); err == nil {
		t.Fatal("reset-totp of nobody succeeded")
	}
	log, _ := store.Audit(context.Background(), 100, 0)
	n := 0
	for _, e := range log {
		if e.Action == bff.AuditTOTPReset && strings.HasPrefix(e.Actor, "cli:") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d resets audited, want 2", n)
	}
}
