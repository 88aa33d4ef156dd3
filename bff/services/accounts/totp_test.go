package accounts_test

import (
	"context"
	"encoding/base32"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/clinical-intake/intake-web/bff"
)

// codeAt is the authenticator's code for secret (base32) at t.
func codeAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enrol sets up dr.ada's second factor and returns its secret and the
// recovery codes.
func (f *signInFixture) enrol(t *testing.T) (string, []string) {
	t.Helper()
	ctx := context.Background()
	e, err := f.svc.BeginTOTP(ctx, "dr.ada", nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.svc.BeginTOTP(ctx, "dr.ada", e.Sealed)
	if err != nil || again.Secret != e.Secret {
		t.Fatalf("a set-up shown again has another secret: %v", err)
	}
	if _, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(e.Secret); err != nil || !strings.HasPrefix(e.URI, "otpauth://totp/intake-web:dr.ada?") || len(e.QRPNG) < 100 {
		t.Fatalf("enrolment %q %q, %d bytes of QR code", e.Secret, e.URI, len(e.QRPNG))
	}
	_, err = f.svc.ConfirmTOTP(ctx, "dr.ada", e.Sealed, "000000x")
	if bff.ErrorCode(err) != bff.EINVALID {
		t.Fatalf("a malformed code: %v", err)
	}
	_, err = f.svc.ConfirmTOTP(ctx, "dr.ada", e.Sealed, codeAt(t, e.Secret, f.now.Add(-5*time.Minute)))
	if bff.ErrorCode(err) != bff.EINVALID {
		t.Fatalf("an old code: %v", err)
	}
	if c, _ := f.db.Clinician(ctx, "dr.ada"); c.HasSecondFactor() {
		t.Fatal("a wrong code enrolled the secret")
	}
	codes, err := f.svc.ConfirmTOTP(ctx, "dr.ada", e.Sealed, codeAt(t, e.Secret, f.now))
	if err != nil || len(codes) != 10 {
		t.Fatalf("ConfirmTOTP: %v, %v", codes, err)
	}
	c, _ := f.db.Clinician(ctx, "dr.ada")
	if !c.HasSecondFactor() || strings.Contains(string(c.TOTPSecret), e.Secret) {
		t.Fatal("the secret is not enrolled, or is stored in clear")
	}
	stored, _ := f.db.RecoveryCodes(ctx, "dr.ada")
	for _, rc := range stored {
		for _, code := range codes {
			if strings.Contains(strings.ToLower(string(rc.Hash)), strings.ReplaceAll(code, "-", "")) {
				t.Fatal("a recovery code is stored in clear")
			}
		}
	}
	return e.Secret, codes
}

// TestSecondFactorSignIn: with a second factor the password alone signs in
// no one (it is audited as half way), the code does, once; a recovery code
// does, once.
func TestSecondFactorSignIn(t *testing.T) {
	f := newSignInFixture(t, 4)
	ctx := context.Background()
	secret, codes := f.enrol(t)
	f.advance(time.Minute) // past the step the enrolment's code used

	c, err := f.svc.SignIn(ctx, "dr.ada", signInPassword, "192.0.2.1")
	if err != nil || !c.HasSecondFactor() {
		t.Fatalf("password step: %+v, %v", c, err)
	}
	if a := f.audit(t); !strings.Contains(a, "dr.ada sign_in_password") || strings.Contains(a, "dr.ada sign_in \n") {
		t.Fatalf("the password step is not audited as half way:\n%s", a)
	}
	code := codeAt(t, secret, f.now)
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", code, "192.0.2.1"); err != nil {
		t.Fatalf("the right code: %v", err)
	}
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", code, "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
		t.Fatalf("the same code again (a replay): %v", err)
	}
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", codeAt(t, secret, f.now.Add(-30*time.Second)), "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
		t.Fatalf("an older code after a newer one: %v", err)
	}
	f.advance(30 * time.Second)
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", codeAt(t, secret, f.now), "192.0.2.1"); err != nil {
		t.Fatalf("the next step's code: %v", err)
	}
	up := strings.ToUpper(codes[4])
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", " "+up+" ", "192.0.2.1"); err != nil {
		t.Fatalf("a recovery code, in capitals and spaced: %v", err)
	}
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", codes[4], "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
		t.Fatalf("a recovery code used twice: %v", err)
	}
	if n, _ := f.svc.RecoveryCodesLeft(ctx, "dr.ada"); n != 9 {
		t.Fatalf("%d recovery codes left, want 9", n)
	}
	if a := f.audit(t); !strings.Contains(a, "dr.ada sign_in with recovery code 5 (9 left)") || !strings.Contains(a, "dr.ada sign_in with authenticator code") {
		t.Fatalf("sign-ins with a code are not audited with how:\n%s", a)
	}
}

// TestWrongCodesCountAgainstTheSignInLimits: wrong codes lock the username
// as wrong passwords do (the right code too is refused then), a right
// password does not forgive them, and the lock is the password's.
func TestWrongCodesCountAgainstTheSignInLimits(t *testing.T) {
	f := newSignInFixture(t, 4)
	ctx := context.Background()
	secret, _ := f.enrol(t)
	f.advance(time.Minute)
	if err := f.signIn("dr.ada", "a wrong password!", "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
		t.Fatal(err)
	}
	for i := range 4 {
		if err := f.signIn("dr.ada", signInPassword, "192.0.2.1"); err != nil { // the password again: forgives nothing
			t.Fatalf("password %d: %v", i, err)
		}
		if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", "123456", "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatalf("wrong code %d: %v", i, err)
		}
	}
	_, err := f.svc.SignInSecondFactor(ctx, "dr.ada", codeAt(t, secret, f.now), "192.0.2.1")
	if bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("the right code after 1 wrong password and 4 wrong codes: %v, want locked", err)
	}
	if err := f.signIn("dr.ada", signInPassword, "192.0.2.1"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("the right password while locked: %v", err)
	}
	f.advance(16 * time.Minute)
	if err := f.signIn("dr.ada", signInPassword, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SignInSecondFactor(ctx, "dr.ada", codeAt(t, secret, f.now), "192.0.2.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if lock, _ := f.svc.LockOf(ctx, "dr.ada"); lock.Failures != 0 {
		t.Fatalf("a full sign-in left %d failures", lock.Failures)
	}
}

// TestResetTOTP removes the factor and the codes, audited; the password
// alone signs in again.
func TestResetTOTP(t *testing.T) {
	f := newSignInFixture(t, 4)
	ctx := context.Background()
	f.enrol(t)
	had, err := f.svc.ResetTOTP(ctx, "cli:ops", "DR.ADA")
	if err != nil || !had {
		t.Fatalf("ResetTOTP: %v, %v", had, err)
	}
	c, err := f.svc.SignIn(ctx, "dr.ada", signInPassword, "192.0.2.1")
	if err != nil || c.HasSecondFactor() {
		t.Fatalf("after reset: %+v, %v", c, err)
	}
	if n, _ := f.svc.RecoveryCodesLeft(ctx, "dr.ada"); n != 0 {
		t.Fatalf("%d recovery codes left after reset", n)
	}
	if !strings.Contains(f.audit(t), "cli:ops totp_reset account dr.ada\n") {
		t.Fatalf("reset not audited:\n%s", f.audit(t))
	}
	if _, err := f.svc.ResetTOTP(ctx, "cli:ops", "nobody"); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("reset of nobody: %v", err)
	}
}
