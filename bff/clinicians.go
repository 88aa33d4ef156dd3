package bff

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

var usernameShape = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{2,31}$`)

// MinPasswordChars is the shortest password an account may have.
const MinPasswordChars = 12

// AddClinician creates an account. Usernames are lower-cased.
func (s *Service) AddClinician(ctx context.Context, username, password string) (*Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	if !usernameShape.MatchString(username) {
		return nil, Invalid("username", "A username is 3 to 32 lower-case letters, digits, dots, dashes or underscores, starting with a letter or digit.")
	}
	if n := utf8.RuneCountInString(password); n < MinPasswordChars || len(password) > 72 {
		return nil, Invalid("password", "A password is %d to 72 characters long (bcrypt's limit).", MinPasswordChars)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.bcryptCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	c := &Clinician{Username: username, PasswordHash: hash, CreatedAt: s.now()}
	if err := s.clinicians.CreateClinician(ctx, c); err != nil {
		if ErrorCode(err) == ECONFLICT {
			return nil, Invalid("username", "A clinician named %s already exists.", username)
		}
		return nil, err
	}
	return c, nil
}

// Clinicians lists the accounts.
func (s *Service) Clinicians(ctx context.Context) ([]*Clinician, error) {
	return s.clinicians.Clinicians(ctx)
}

// DisableClinician stops an account from signing in; its open sessions lose
// their rights at their next request.
func (s *Service) DisableClinician(ctx context.Context, username string) error {
	return s.clinicians.SetClinicianDisabled(ctx, strings.ToLower(strings.TrimSpace(username)), true)
}

// HasClinicians reports whether any account exists.
func (s *Service) HasClinicians(ctx context.Context) (bool, error) {
	cs, err := s.clinicians.Clinicians(ctx)
	return len(cs) > 0, err
}

// ActiveClinician returns the account of a signed-in session, ENOTFOUND if
// it no longer exists or is disabled.
func (s *Service) ActiveClinician(ctx context.Context, username string) (*Clinician, error) {
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil {
		return nil, err
	}
	if c.Disabled {
		return nil, Errorf(ENOTFOUND, "This account is disabled.")
	}
	return c, nil
}

// dummyHash is compared against when the username is unknown, so a wrong
// username costs as long as a wrong password (no account enumeration): same
// cost as real hashes, made once.
func (s *Service) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		s.dummy, _ = bcrypt.GenerateFromPassword([]byte("not a real password, ever"), s.bcryptCost)
	})
	return s.dummy
}

// SignIn checks a username and password. Failures are limited per username
// and per client address; every attempt is audited.
func (s *Service) SignIn(ctx context.Context, username, password, address string) (*Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	userKey, addrKey := "u:"+username, "a:"+address
	wait := max(s.attempts.blocked(userKey, maxFailsPerAccount), s.attempts.blocked(addrKey, maxFailsPerAddress))
	if wait > 0 {
		s.record(ctx, username, AuditSignInFailed, "", "refused: too many failed attempts")
		return nil, &Error{Code: ERATELIMIT, Message: fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", int(math.Ceil(wait.Minutes())))}
	}
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil && ErrorCode(err) != ENOTFOUND {
		return nil, err
	}
	hash := s.dummyHash()
	if c != nil {
		hash = c.PasswordHash
	}
	ok := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil && c != nil && !c.Disabled
	if !ok {
		s.attempts.fail(userKey, addrKey)
		s.record(ctx, username, AuditSignInFailed, "", "wrong username or password, or disabled")
		return nil, Errorf(EUNAUTHORIZED, "The username or password is wrong, or the account is disabled.")
	}
	s.attempts.clear(userKey)
	s.record(ctx, username, AuditSignIn, "", "")
	return c, nil
}

// SignOut records a sign-out.
func (s *Service) SignOut(ctx context.Context, username string) {
	s.record(ctx, username, AuditSignOut, "", "")
}

// record appends to the audit log; a failure is logged, not returned: the
// action itself has happened.
func (s *Service) record(ctx context.Context, actor, action, intakeID, detail string) {
	e := &AuditEntry{At: s.now(), Actor: actor, Action: action, IntakeID: intakeID, Detail: detail}
	if err := s.audit.AddAudit(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("audit write failed", "action", action, "actor", actor, "err", err)
	}
}

// AuditLog returns audit entries newest first, 100 a page, before an id.
func (s *Service) AuditLog(ctx context.Context, before int64) ([]*AuditEntry, error) {
	return s.audit.Audit(ctx, 100, before)
}
