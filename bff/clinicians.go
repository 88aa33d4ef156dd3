package bff

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
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
// and per client address (SignInFailureStore, so a restart keeps them); every
// attempt is audited, a malformed username cut short.
//
// An attempt is counted as a failure before its password is checked, and
// re-counted: concurrent attempts cannot all pass the limit check while their
// bcrypt comparisons run (with the check after the comparison, a burst of
// parallel guesses all got through). A sign-in that succeeds takes its own
// count back. When the failures cannot be read or written the attempt is
// refused: the limit is never skipped.
func (s *Service) SignIn(ctx context.Context, username, password, address string) (*Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	now := s.now()
	bad := checkSignIn(username, password)
	actor, keys := username, []string{addrKey(address), userKey(username)}
	if bad != nil && bad.Field == "username" {
		// A malformed username names no account, and must not become a key
		// or an audit line of its own size: count it against the address.
		actor, keys = auditName(username), keys[:1]
	}
	refused := func(wait time.Duration, key string) error {
		if s.refusals.due(key, now) {
			s.record(ctx, actor, AuditSignInFailed, "", "refused: too many failed attempts (further refusals of this "+
				map[bool]string{true: "account", false: "address"}[strings.HasPrefix(key, "u:")]+" in the next minute are not audited)")
		}
		return &Error{Code: ERATELIMIT, Message: fmt.Sprintf("Too many failed sign-ins. Try again in %d minutes.", int(math.Ceil(wait.Minutes())))}
	}
	if wait, key, err := s.signInWait(ctx, now, keys, 0); err != nil {
		return nil, err
	} else if wait > 0 {
		return nil, refused(wait, key)
	}
	s.pruneFailures(ctx, now)
	if err := s.failures.AddSignInFailure(ctx, now, keys...); err != nil {
		return nil, fmt.Errorf("record sign-in attempt: %w", err)
	}
	if bad != nil {
		s.record(ctx, actor, AuditSignInFailed, "", fmt.Sprintf("refused: %s too long or malformed (%d bytes)", bad.Field, map[string]int{"username": len(username), "password": len(password)}[bad.Field]))
		return nil, bad
	}
	// Concurrent attempts recorded beside this one may have used the last
	// tries: this one counts, but goes no further.
	if wait, key, err := s.signInWait(ctx, now, keys, 1); err != nil {
		return nil, err
	} else if wait > 0 {
		return nil, refused(wait, key)
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
		s.record(ctx, username, AuditSignInFailed, "", "wrong username or password, or disabled")
		return nil, Errorf(EUNAUTHORIZED, "The username or password is wrong, or the account is disabled.")
	}
	// Signed in: the account's failures are forgiven (as before), the
	// address keeps its others. A failure here only leaves a count behind.
	dctx := context.WithoutCancel(ctx)
	if err := s.failures.ClearSignInFailures(dctx, keys[1]); err != nil {
		s.log.Error("clear failed sign-ins", "err", err)
	}
	if err := s.failures.RemoveSignInFailure(dctx, keys[0], now); err != nil {
		s.log.Error("take back a sign-in attempt", "err", err)
	}
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
