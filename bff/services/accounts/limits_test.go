package accounts_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
)

const signInPassword = "correct horse battery"

type signInFixture struct {
	svc     *accounts.Service
	db      *sqlite.DB
	mu      sync.Mutex
	now     time.Time
	advance func(time.Duration)
}

func newSignInFixture(t *testing.T, cost int) *signInFixture {
	t.Helper()
	f := &signInFixture{db: sqlitetest.MustOpenDB(t), now: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	f.advance = func(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }
	clock := func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
	f.svc = accounts.New(accounts.Deps{Clinicians: f.db, Audit: f.db, SignInFailures: f.db, BcryptCost: cost, Now: clock,
		TOTPKey: []byte("0123456789abcdef0123456789abcdef"), Sessions: f.db})
	if _, err := f.svc.AddClinician(context.Background(), "system", "dr.ada", signInPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *signInFixture) signIn(user, password, addr string) error {
	_, err := f.svc.SignIn(context.Background(), user, password, addr)
	return err
}

func (f *signInFixture) audit(t *testing.T) string {
	t.Helper()
	es, err := f.db.Audit(context.Background(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		fmt.Fprintf(&b, "%s %s %s\n", e.Actor, e.Action, e.Detail)
	}
	return b.String()
}

// Five failures for one username, each from another address, lock that
// username (the right password too) and no other; the window ends it.
func TestSignInIsLimitedPerUsername(t *testing.T) {
	f := newSignInFixture(t, 4)
	for i := range 5 {
		if err := f.signIn("dr.ada", "wrong password!!", fmt.Sprintf("10.0.0.%d", i)); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	err := f.signIn("Dr.Ada", signInPassword, "10.0.1.1")
	if bff.ErrorCode(err) != bff.ERATELIMIT || !strings.Contains(bff.ErrorMessage(err), "Too many failed sign-ins") {
		t.Fatalf("the right password after 5 failures: %v", err)
	}
	if !strings.Contains(f.audit(t), "dr.ada sign_in_failed refused: too many failed attempts") {
		t.Fatalf("the refusal is not audited:\n%s", f.audit(t))
	}
	f.advance(15*time.Minute + time.Second)
	if err := f.signIn("dr.ada", signInPassword, "10.0.1.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// Twenty failures from one address, spread over usernames so that no
// username reaches its own limit, lock that address (even for a right
// password) and no other address.
func TestSignInIsLimitedPerAddress(t *testing.T) {
	f := newSignInFixture(t, 4)
	for i := range 20 {
		if err := f.signIn(fmt.Sprintf("guess%d", i), "wrong password!!", "192.0.2.7"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	if err := f.signIn("dr.ada", signInPassword, "192.0.2.7"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("the right password from an address with 20 failures: %v", err)
	}
	if err := f.signIn("dr.ada", signInPassword, "192.0.2.8"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// An unknown username, a wrong password and a disabled account give the
// same answer, are limited alike, and an unknown username costs a bcrypt
// comparison too, so neither the answer nor its time says which names exist.
func TestSignInDoesNotRevealWhichUsernamesExist(t *testing.T) {
	f := newSignInFixture(t, 4)
	if _, err := f.svc.AddClinician(context.Background(), "system", "dr.off", signInPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.DisableClinician(context.Background(), "system", "dr.off"); err != nil {
		t.Fatal(err)
	}
	// The cost is the same too: an unknown username is compared against a
	// dummy hash of the same bcrypt cost (TestUnknownUsernamesCostABcryptCompare).
	var answers []string
	for i := range 3 {
		errK := f.signIn("dr.ada", "wrong password!!", fmt.Sprintf("10.1.0.%d", i))
		errU := f.signIn(fmt.Sprintf("nobody%d", i), "wrong password!!", fmt.Sprintf("10.2.0.%d", i))
		errD := f.signIn("dr.off", signInPassword, fmt.Sprintf("10.3.0.%d", i))
		for _, err := range []error{errK, errU, errD} {
			answers = append(answers, string(bff.ErrorCode(err))+": "+bff.ErrorMessage(err))
		}
	}
	for _, a := range answers {
		if a != answers[0] || !strings.HasPrefix(a, string(bff.EUNAUTHORIZED)) {
			t.Fatalf("sign-in answers differ: %q", answers)
		}
	}
	// An unknown username is limited like a known one.
	for i := range 5 {
		_ = f.signIn("ghost", "wrong password!!", fmt.Sprintf("10.4.0.%d", i))
	}
	if err := f.signIn("ghost", "wrong password!!", "10.4.1.1"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("an unknown username after 5 failures: %v", err)
	}
}

// Every sign-in, failure and sign-out is in the audit log.
func TestSignInsAndSignOutsAreAudited(t *testing.T) {
	f := newSignInFixture(t, 4)
	_ = f.signIn("dr.ada", "wrong password!!", "10.0.0.1")
	if err := f.signIn("dr.ada", signInPassword, "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	f.svc.SignOut(context.Background(), "dr.ada")
	got := f.audit(t)
	for _, want := range []string{"dr.ada sign_in_failed wrong username or password", "dr.ada sign_in \n", "dr.ada sign_out \n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, got)
		}
	}
}
