package accounts_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// lockOut fails five sign-ins of username, each from another address (so
// no address reaches its own limit), and checks the right password is
// then refused as locked.
func (f *signInFixture) lockOut(t *testing.T, username, password string) {
	t.Helper()
	for i := range 5 {
		if err := f.signIn(username, "wrong password!!", fmt.Sprintf("10.9.%d.%d", len(username), i)); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	if err := f.signIn(username, password, "10.9.9.9"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("the right password after 5 failures: %v, want locked", err)
	}
}

// TestUnlockLiftsTheAccountsLock: Unlock lets a locked account sign in at
// once with its right password, and audits who did it and what it lifted;
// an unknown username is ENOTFOUND; a client address's own lock stays.
func TestUnlockLiftsTheAccountsLock(t *testing.T) {
	ctx := context.Background()
	f := newSignInFixture(t, 4)
	f.lockOut(t, "dr.ada", signInPassword)
	lock, err := f.svc.LockOf(ctx, "Dr.Ada")
	if err != nil || !lock.Locked() || lock.Failures != 5 {
		t.Fatalf("LockOf a locked account: %+v, %v", lock, err)
	}
	lock, err = f.svc.Unlock(ctx, "cli:ops", "Dr.Ada")
	if err != nil || !lock.Locked() || lock.Failures != 5 || lock.Wait > 15*time.Minute {
		t.Fatalf("Unlock: %+v, %v: want the lock it lifted (5 failures, at most 15 minutes)", lock, err)
	}
	if err := f.signIn("dr.ada", signInPassword, "10.9.9.9"); err != nil {
		t.Fatalf("the right password after Unlock: %v", err)
	}
	if a := f.audit(t); !strings.Contains(a, "cli:ops clinician_unlock account dr.ada: 5 failed sign-ins, locked for 15 minutes more") {
		t.Errorf("the unlock is not audited with who and what:\n%s", a)
	}
	if _, err := f.svc.Unlock(ctx, "cli:ops", "dr.nobody"); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Errorf("Unlock of an unknown username: %v, want ENOTFOUND", err)
	}

	// An address locked by failures under many usernames stays locked.
	for i := range 20 {
		_ = f.signIn(fmt.Sprintf("guess%d", i), "wrong password!!", "192.0.2.7")
	}
	if _, err := f.svc.Unlock(ctx, "cli:ops", "dr.ada"); err != nil {
		t.Fatal(err)
	}
	if err := f.signIn("dr.ada", signInPassword, "192.0.2.7"); bff.ErrorCode(err) != bff.ERATELIMIT ||
		!strings.Contains(bff.ErrorMessage(err), "from your network address") {
		t.Errorf("an address's lock after an account's Unlock: %v, want still locked", err)
	}
}

// TestNewPasswordLiftsTheLock: a password set with SetPassword signs in at
// once though the account was locked (the failures were guesses at the old
// one), is audited with the lock it lifted, and the old password is gone.
func TestNewPasswordLiftsTheLock(t *testing.T) {
	ctx := context.Background()
	f := newSignInFixture(t, 4)
	f.lockOut(t, "dr.ada", signInPassword)
	const fresh = "a fresh password for ada"
	c, lock, err := f.svc.SetPassword(ctx, "cli:ops", "dr.ada", fresh)
	if err != nil || c.Username != "dr.ada" || !lock.Locked() {
		t.Fatalf("SetPassword of a locked account: %+v %+v %v", c, lock, err)
	}
	if err := f.signIn("dr.ada", fresh, "10.9.9.9"); err != nil {
		t.Fatalf("the new password of a locked account: %v", err)
	}
	if err := f.signIn("dr.ada", signInPassword, "10.9.9.9"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
		t.Errorf("the old password: %v", err)
	}
	if a := f.audit(t); !strings.Contains(a, "cli:ops clinician_password account dr.ada; sign-in lock lifted (5 failed sign-ins") {
		t.Errorf("the new password is not audited with the lock it lifted:\n%s", a)
	}
}

// TestLockIsSaid: the refusal of a locked username says what locked it,
// how long the lock lasts and how to lift it; a wrong password says when a
// username is locked before it is. Both say the same of a username that
// does not exist (no enumeration).
func TestLockIsSaid(t *testing.T) {
	f := newSignInFixture(t, 4)
	err := f.signIn("dr.ada", "wrong password!!", "10.0.0.1")
	if m := bff.ErrorMessage(err); !strings.Contains(m, "After 5 failed sign-ins within 15 minutes a username is locked for up to 15 minutes.") {
		t.Errorf("a wrong password does not say the rule: %q", m)
	}
	f.advance(16 * time.Minute) // that failure leaves the window
	f.lockOut(t, "dr.ada", signInPassword)
	f.advance(4 * time.Minute)
	err = f.signIn("dr.ada", signInPassword, "10.9.9.9")
	for _, w := range []string{"(5 within 15 minutes)", "locked for 11 minutes more", "intake-web clinician unlock dr.ada", "intake-web clinician passwd"} {
		if !strings.Contains(bff.ErrorMessage(err), w) {
			t.Errorf("the refusal of a locked username does not say %q: %q", w, bff.ErrorMessage(err))
		}
	}
	f.lockOut(t, "ghost", "any password at all")
	err = f.signIn("ghost", "any password at all", "10.9.9.8")
	if m := bff.ErrorMessage(err); !strings.Contains(m, "locked for 15 minutes more") || !strings.Contains(m, "intake-web clinician unlock ghost") {
		t.Errorf("an unknown username's lock is said otherwise: %q", m)
	}
}

// TestAccountChangesAreAudited: adding (with its roles), a new password,
// a change of roles and disabling are in the audit log under who made them.
func TestAccountChangesAreAudited(t *testing.T) {
	ctx := context.Background()
	f := newSignInFixture(t, 4)
	if _, err := f.svc.AddClinician(ctx, "cli:ops", "dr.bo", signInPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.svc.SetPassword(ctx, "cli:ops", "dr.bo", "another long password"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.RevokeRoles(ctx, "cli:ops", "dr.bo", []bff.Role{bff.RoleAdministrator, bff.RoleReviewer}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.GrantRoles(ctx, "cli:ops", "dr.bo", []bff.Role{bff.RoleScenarioRunner}); err != nil { // held already: no change, no line
		t.Fatal(err)
	}
	if err := f.svc.DisableClinician(ctx, "cli:ops", "dr.bo"); err != nil {
		t.Fatal(err)
	}
	a := f.audit(t)
	if n := strings.Count(a, "clinician_roles"); n != 1 {
		t.Errorf("%d role changes audited, want 1 (a grant of a role held changes nothing):\n%s", n, a)
	}
	for _, w := range []string{"cli:ops clinician_add account dr.bo; roles: reviewer, scenario_runner, administrator, safety_officer\n",
		"cli:ops clinician_password account dr.bo\n",
		"cli:ops clinician_roles account dr.bo; roles: scenario_runner, safety_officer, were reviewer, scenario_runner, administrator, safety_officer\n",
		"cli:ops clinician_disable account dr.bo\n"} {
		if !strings.Contains(a, w) {
			t.Errorf("the audit log lacks %q:\n%s", w, a)
		}
	}
	if err := f.svc.DisableClinician(ctx, "cli:ops", "dr.nobody"); bff.ErrorCode(err) != bff.ENOTFOUND || strings.Contains(f.audit(t), "dr.nobody") {
		t.Errorf("disabling an unknown username: %v, audited: %v", err, strings.Contains(f.audit(t), "dr.nobody"))
	}
}
