// Package accounts manages clinician accounts and their sign-in
// (bff.AccountService): bcrypt hashes, failed sign-ins limited per username
// and per client address, no account enumeration, every attempt audited.
package accounts

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinical-intake/intake-web/bff"
)

// Deps are what the account service needs.
type Deps struct {
	Clinicians bff.ClinicianStore
	Audit      bff.AuditStore
	// SignInFailures keeps failed sign-ins; nil = this process's memory
	// (lost on restart: the app passes its database).
	SignInFailures bff.SignInFailureStore
	Now            func() time.Time
	Logger         *slog.Logger
	BcryptCost     int // 0 = bcrypt.DefaultCost+2 (12); tests use bcrypt.MinCost
	// TOTPKey (32 bytes) seals the accounts' TOTP secrets (totp.go); the
	// app keeps it in its database's secrets. nil: second factors can be
	// reset but not enrolled or checked (the command line).
	TOTPKey []byte
	// Sessions is the index of signed-in sessions (sessions.go); nil: the
	// service keeps none (the command line).
	Sessions bff.ClinicianSessionStore
}

var _ bff.AccountService = (*Service)(nil)

// Service is bff.AccountService.
type Service struct {
	clinicians bff.ClinicianStore
	audit      bff.AuditStore
	now        func() time.Time
	log        *slog.Logger
	bcryptCost int
	failures   bff.SignInFailureStore
	pruned     atomic.Int64 // unix nanos of the last prune of failures
	refusals   refusals     // when each blocked key's refusal was last audited
	// compare is bcrypt.CompareHashAndPassword; a test counts the calls.
	compare   func(hash, password []byte) error
	dummyOnce sync.Once
	dummy     []byte
	totpKey   []byte
	sessions  bff.ClinicianSessionStore
}

// New returns the account service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if d.BcryptCost == 0 {
		d.BcryptCost = 12
	}
	if d.SignInFailures == nil {
		d.SignInFailures = newMemFailures()
	}
	return &Service{clinicians: d.Clinicians, audit: d.Audit, now: d.Now, log: d.Logger, bcryptCost: d.BcryptCost, failures: d.SignInFailures,
		compare: bcrypt.CompareHashAndPassword, totpKey: d.TOTPKey, sessions: d.Sessions}
}

var usernameShape = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{2,31}$`)

// MinPasswordChars is the shortest password an account may have.
const MinPasswordChars = 12

// AddClinician creates an account with roles, audited under actor.
// Usernames are lower-cased.
func (s *Service) AddClinician(ctx context.Context, actor, username, password string, roles []bff.Role) (*bff.Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	if !usernameShape.MatchString(username) {
		return nil, bff.Invalid("username", "A username is 3 to 32 lower-case letters, digits, dots, dashes or underscores, starting with a letter or digit.")
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return nil, err
	}
	c := &bff.Clinician{Username: username, PasswordHash: hash, CreatedAt: s.now(), Roles: bff.NormalRoles(roles)}
	if err := s.clinicians.CreateClinician(ctx, c); err != nil {
		if bff.ErrorCode(err) == bff.ECONFLICT {
			return nil, bff.Invalid("username", "A clinician named %s already exists.", username)
		}
		return nil, err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditClinicianAdd, "", "account "+username+"; roles: "+bff.RoleNames(c.Roles))
	return c, nil
}

// GrantRoles gives an account roles (those it holds already stay),
// audited under actor with its roles before and after, and returns the
// account. ENOTFOUND for an unknown username.
func (s *Service) GrantRoles(ctx context.Context, actor, username string, roles []bff.Role) (*bff.Clinician, error) {
	return s.changeRoles(ctx, actor, username, func(held []bff.Role) []bff.Role { return append(held, roles...) })
}

// RevokeRoles takes roles from an account (those it does not hold are no
// error), audited under actor with its roles before and after, and returns
// the account. Its open sessions lose the rights at their next request.
// ENOTFOUND for an unknown username.
func (s *Service) RevokeRoles(ctx context.Context, actor, username string, roles []bff.Role) (*bff.Clinician, error) {
	return s.changeRoles(ctx, actor, username, func(held []bff.Role) []bff.Role {
		return slices.DeleteFunc(held, func(r bff.Role) bool { return slices.Contains(roles, r) })
	})
}

// SetRoles replaces an account's roles, audited under actor with its roles
// before and after (single sign-on sets them from the identity provider's
// claim at each sign-in). ENOTFOUND for an unknown username.
func (s *Service) SetRoles(ctx context.Context, actor, username string, roles []bff.Role) (*bff.Clinician, error) {
	return s.changeRoles(ctx, actor, username, func([]bff.Role) []bff.Role { return slices.Clone(roles) })
}

// changeRoles reads an account's roles, sets change(roles) and audits
// the change (nothing is written or audited when they stay the same). Two
// changes of one account at the same moment (two commands run at once)
// are read-modify-write: the last one's result stands, and the audit log
// has both.
func (s *Service) changeRoles(ctx context.Context, actor, username string, change func([]bff.Role) []bff.Role) (*bff.Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil {
		if bff.ErrorCode(err) == bff.ENOTFOUND {
			return nil, bff.Errorf(bff.ENOTFOUND, "No clinician is named %s.", username)
		}
		return nil, err
	}
	before := bff.NormalRoles(c.Roles)
	after := bff.NormalRoles(change(slices.Clone(before)))
	if slices.Equal(before, after) {
		return c, nil
	}
	if err := s.clinicians.SetClinicianRoles(ctx, username, after); err != nil {
		return nil, err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditClinicianRoles, "", fmt.Sprintf("account %s; roles: %s, were %s", username, bff.RoleNames(after), bff.RoleNames(before)))
	c.Roles = after
	return c, nil
}

// SetPassword replaces a clinician's password, under the same rule as a new
// account's, audited under actor. It returns the account, whose Disabled a
// new password does not change, and does not end sessions already signed
// in. It lifts the account's sign-in lock, and returns the lock it lifted:
// the failures counted were guesses at the old password, which no longer
// signs in, and whoever sets a new one (the person who runs the app) could
// unlock the account anyway; a clinician locked out after forgetting their
// password gets a new one and signs in at once. The lock of a client
// address is not the account's, and stays. ENOTFOUND for an unknown
// username; EINVALID (field "password") for a password the rule refuses.
func (s *Service) SetPassword(ctx context.Context, actor, username, password string) (*bff.Clinician, Lock, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	hash, err := s.hashPassword(password)
	if err != nil {
		return nil, Lock{}, err
	}
	if err := s.clinicians.SetClinicianPassword(ctx, username, hash); err != nil {
		if bff.ErrorCode(err) == bff.ENOTFOUND {
			return nil, Lock{}, bff.Errorf(bff.ENOTFOUND, "No clinician is named %s.", username)
		}
		return nil, Lock{}, err
	}
	lock, err := s.clearLock(ctx, username)
	detail := "account " + username
	if err != nil {
		detail += "; its sign-in lock could not be lifted"
	} else if lock.Failures > 0 {
		detail += "; sign-in lock lifted (" + lock.String() + ")"
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditClinicianPassword, "", detail)
	if err != nil {
		return nil, Lock{}, fmt.Errorf("the password is set; lift its sign-in lock: %w", err)
	}
	c, err := s.clinicians.Clinician(ctx, username)
	return c, lock, err
}

// Lock is the sign-in lock of an account: the failed sign-ins counted
// against its username in the window, and how long until it may sign in
// again (0: it may now).
type Lock struct {
	Failures int
	Wait     time.Duration
}

// Locked reports whether the account is locked.
func (l Lock) Locked() bool { return l.Wait > 0 }

// String says the lock in words: "5 failed sign-ins, locked for 12
// minutes more", or "2 failed sign-ins" when it is not locked.
func (l Lock) String() string {
	s := plural(l.Failures, "failed sign-in", "failed sign-ins")
	if !l.Locked() {
		return s
	}
	return s + ", locked for " + minutes(l.Wait) + " more"
}

// LockOf is username's sign-in lock now.
func (s *Service) LockOf(ctx context.Context, username string) (Lock, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	now := s.now()
	key := userKey(username)
	f, err := s.failures.SignInFailures(ctx, key, now.Add(-attemptWindow))
	if err != nil {
		return Lock{}, fmt.Errorf("read failed sign-ins: %w", err)
	}
	wait, _, err := s.signInWait(ctx, now, []string{key}, 0)
	return Lock{Failures: len(f), Wait: wait}, err
}

// clearLock forgets username's failed sign-ins and returns the lock they
// made.
func (s *Service) clearLock(ctx context.Context, username string) (Lock, error) {
	lock, err := s.LockOf(ctx, username)
	if err != nil {
		return Lock{}, err
	}
	if err := s.failures.ClearSignInFailures(ctx, userKey(username)); err != nil {
		return Lock{}, fmt.Errorf("clear failed sign-ins: %w", err)
	}
	return lock, nil
}

// Unlock lifts an account's sign-in lock at once (intake-web clinician
// unlock), audited under actor, and returns the lock it lifted: the
// account's failed sign-ins are forgotten, so it has its five tries again.
// A client address's lock (maxFailsPerAddress) is not the account's and
// stays: it ends with its window. ENOTFOUND for an unknown username.
func (s *Service) Unlock(ctx context.Context, actor, username string) (Lock, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	if _, err := s.clinicians.Clinician(ctx, username); err != nil {
		if bff.ErrorCode(err) == bff.ENOTFOUND {
			return Lock{}, bff.Errorf(bff.ENOTFOUND, "No clinician is named %s.", username)
		}
		return Lock{}, err
	}
	lock, err := s.clearLock(ctx, username)
	if err != nil {
		return Lock{}, err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditClinicianUnlock, "", "account "+username+": "+lock.String())
	return lock, nil
}

// hashPassword applies the password rule (MinPasswordChars to 72 bytes,
// bcrypt's limit) and hashes at the service's cost.
func (s *Service) hashPassword(password string) ([]byte, error) {
	if n := utf8.RuneCountInString(password); n < MinPasswordChars || len(password) > 72 {
		return nil, bff.Invalid("password", "A password is %d to 72 characters long (bcrypt's limit).", MinPasswordChars)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.bcryptCost)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	return hash, nil
}

// Clinicians lists the accounts.
func (s *Service) Clinicians(ctx context.Context) ([]*bff.Clinician, error) {
	return s.clinicians.Clinicians(ctx)
}

// DisableClinician stops an account from signing in, audited under actor;
// its open sessions lose their rights at their next request.
func (s *Service) DisableClinician(ctx context.Context, actor, username string) error {
	username = strings.ToLower(strings.TrimSpace(username))
	if err := s.clinicians.SetClinicianDisabled(ctx, username, true); err != nil {
		return err
	}
	bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditClinicianDisable, "", "account "+username)
	return nil
}

// HasClinicians reports whether any account exists.
func (s *Service) HasClinicians(ctx context.Context) (bool, error) {
	cs, err := s.clinicians.Clinicians(ctx)
	return len(cs) > 0, err
}

// ActiveClinician returns the account of a signed-in session, bff.ENOTFOUND if
// it no longer exists or is disabled.
func (s *Service) ActiveClinician(ctx context.Context, username string) (*bff.Clinician, error) {
	c, err := s.clinicians.Clinician(ctx, username)
	if err != nil {
		return nil, err
	}
	if c.Disabled {
		return nil, bff.Errorf(bff.ENOTFOUND, "This account is disabled.")
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
// and per client address (bff.SignInFailureStore, so a restart keeps them); every
// attempt is audited, a malformed username cut short.
//
// An attempt is counted as a failure before its password is checked, and
// re-counted: concurrent attempts cannot all pass the limit check while their
// bcrypt comparisons run (with the check after the comparison, a burst of
// parallel guesses all got through). A sign-in that succeeds takes its own
// count back. When the failures cannot be read or written the attempt is
// refused: the limit is never skipped.
func (s *Service) SignIn(ctx context.Context, username, password, address string) (*bff.Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	now := s.now()
	bad := checkSignIn(username, password)
	actor, keys := username, []string{addrKey(address), userKey(username)}
	badDetail := ""
	if bad != nil {
		badDetail = fmt.Sprintf("refused: %s too long or malformed (%d bytes)", bad.Field, map[string]int{"username": len(username), "password": len(password)}[bad.Field])
		if bad.Field == "username" {
			// A malformed username names no account, and must not become a key
			// or an audit line of its own size: count it against the address.
			actor, keys = auditName(username), keys[:1]
		}
	}
	c, err := s.attempt(ctx, now, actor, username, keys, bad, badDetail, func() (*bff.Clinician, error) {
		c, err := s.clinicians.Clinician(ctx, username)
		if err != nil && bff.ErrorCode(err) != bff.ENOTFOUND {
			return nil, err
		}
		hash := s.dummyHash()
		if c != nil {
			hash = c.PasswordHash
		}
		if s.compare(hash, []byte(password)) != nil || c == nil || c.Disabled {
			bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditSignInFailed, "", "wrong username or password, or disabled")
			return nil, bff.Errorf(bff.EUNAUTHORIZED, "The username or password is wrong, or the account is disabled. %s", lockRule())
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	if c.HasSecondFactor() {
		// Half way: this attempt's own count is taken back, and the
		// account's other failures stay until the code is right too (a
		// known password must not buy fresh guesses at the code).
		dctx := context.WithoutCancel(ctx)
		for _, k := range keys {
			if err := s.failures.RemoveSignInFailure(dctx, k, now); err != nil {
				s.log.Error("take back a sign-in attempt", "err", err)
			}
		}
		bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditSignInPassword, "", "the second factor is asked next")
		return c, nil
	}
	s.signedIn(ctx, now, keys, username, "")
	return c, nil
}

// SignInSecondFactor is the second step of signing in to an account with
// a second factor, after SignIn accepted its password: code is the
// authenticator's six digits or an unused recovery code. Its failures
// count against the same limits as passwords (the username's and the
// client address's), and it is audited the same way. EUNAUTHORIZED for a
// wrong code, one used already, or an account that is disabled or has no
// second factor any more; ERATELIMIT after too many failures.
func (s *Service) SignInSecondFactor(ctx context.Context, username, code, address string) (*bff.Clinician, error) {
	username = strings.ToLower(strings.TrimSpace(username))
	now := s.now()
	keys := []string{addrKey(address), userKey(username)}
	var bad *bff.Error
	if len(code) > 64 {
		bad = bff.Invalid("code", "A code is 6 digits, or a recovery code of 16 letters and digits.")
	}
	var used string
	c, err := s.attempt(ctx, now, username, username, keys, bad, fmt.Sprintf("refused: code too long (%d bytes)", len(code)), func() (*bff.Clinician, error) {
		c, err := s.clinicians.Clinician(ctx, username)
		if err != nil && bff.ErrorCode(err) != bff.ENOTFOUND {
			return nil, err
		}
		if c == nil || c.Disabled || !c.HasSecondFactor() {
			bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditSignInFailed, "", "second factor: the account is disabled or has none")
			return nil, bff.Errorf(bff.EUNAUTHORIZED, "This sign-in cannot go on: sign in again.")
		}
		var ok bool
		if used, ok, err = s.checkSecondFactor(ctx, c, code); err != nil {
			return nil, err
		} else if !ok {
			bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditSignInFailed, "", "wrong second-factor code, or one used already")
			return nil, bff.Errorf(bff.EUNAUTHORIZED, "The code is wrong, or was used already: type the code your app shows now, or an unused recovery code. %s", lockRule())
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	s.signedIn(ctx, now, keys, username, "with "+used)
	return c, nil
}

// attempt is one step of signing in under the limits on failures: a key
// already at its limit is refused (ERATELIMIT) without trying; otherwise the
// attempt is counted as a failure of each key before try runs, and counted
// again, so that concurrent attempts cannot all pass the limit check while
// their checks run (with the check after the comparison, a burst of
// parallel guesses all got through). bad (with badDetail for the audit
// log) refuses a malformed attempt after it is counted. The caller takes
// the count back when the attempt succeeds (signedIn). When the failures
// cannot be read or written the attempt is refused: the limit is never
// skipped.
func (s *Service) attempt(ctx context.Context, now time.Time, actor, username string, keys []string, bad *bff.Error, badDetail string,
	try func() (*bff.Clinician, error)) (*bff.Clinician, error) {
	refused := func(wait time.Duration, key string) error {
		account := strings.HasPrefix(key, "u:")
		if s.refusals.due(key, now) {
			bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditSignInFailed, "", "refused: too many failed attempts (further refusals of this "+
				map[bool]string{true: "account", false: "address"}[account]+" in the next minute are not audited)")
		}
		return &bff.Error{Code: bff.ERATELIMIT, RetryAfter: wait, Message: lockedMessage(account, username, wait)}
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
		bff.Record(ctx, s.audit, s.log, s.now(), actor, bff.AuditSignInFailed, "", badDetail)
		return nil, bad
	}
	// Concurrent attempts recorded beside this one may have used the last
	// tries: this one counts, but goes no further.
	if wait, key, err := s.signInWait(ctx, now, keys, 1); err != nil {
		return nil, err
	} else if wait > 0 {
		return nil, refused(wait, key)
	}
	return try()
}

// signedIn ends a successful sign-in: the account's failures are forgiven,
// the address keeps its others but this attempt's own, and it is audited
// (detail says how, "" for a password alone). A failure here only leaves a
// count behind.
func (s *Service) signedIn(ctx context.Context, now time.Time, keys []string, username, detail string) {
	dctx := context.WithoutCancel(ctx)
	if err := s.failures.ClearSignInFailures(dctx, keys[1]); err != nil {
		s.log.Error("clear failed sign-ins", "err", err)
	}
	if err := s.failures.RemoveSignInFailure(dctx, keys[0], now); err != nil {
		s.log.Error("take back a sign-in attempt", "err", err)
	}
	bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditSignIn, "", detail)
}

// SignOut records a sign-out.
func (s *Service) SignOut(ctx context.Context, username string) {
	bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditSignOut, "", "")
}

// AccessRefused records a signed-in clinician refused a page their roles
// do not open.
func (s *Service) AccessRefused(ctx context.Context, username, detail string) {
	bff.Record(ctx, s.audit, s.log, s.now(), username, bff.AuditAccessRefused, "", detail)
}

// lockRule says when a username is locked, and for how long.
func lockRule() string {
	return fmt.Sprintf("After %d failed sign-ins within %s a username is locked for up to %s.",
		maxFailsPerAccount, minutes(attemptWindow), minutes(attemptWindow))
}

// lockedMessage is the sign-in page's refusal of a locked username
// (account) or client address, for wait more: what locked it, how long it
// lasts, and how to lift it. It says the same for any username, existing
// or not (a username's failures are counted either way): nothing about
// which accounts exist.
func lockedMessage(account bool, username string, wait time.Duration) string {
	if account {
		return fmt.Sprintf("Too many failed sign-ins for this username (%d within %s): it is locked for %s more. "+
			"Whoever runs this app can unlock it at once with: intake-web clinician unlock %s (a new password, set with intake-web clinician passwd, unlocks it too).",
			maxFailsPerAccount, minutes(attemptWindow), minutes(wait), username)
	}
	return fmt.Sprintf("Too many failed sign-ins from your network address (%d within %s): signing in from it is paused for %s more. "+
		"This ends by itself; unlocking a username does not lift it.", maxFailsPerAddress, minutes(attemptWindow), minutes(wait))
}

// minutes is d rounded up to whole minutes, in words ("1 minute", "15
// minutes").
func minutes(d time.Duration) string {
	return plural(max(int(math.Ceil(d.Minutes())), 1), "minute", "minutes")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
