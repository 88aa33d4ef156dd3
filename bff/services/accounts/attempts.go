package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff"
)

// Failed sign-ins allowed per window, per username and per client address.
const (
	attemptWindow      = 15 * time.Minute
	maxFailsPerAccount = 5
	maxFailsPerAddress = 20
	// pruneEvery bounds how often a failure also deletes the failures that
	// have left the window: one small DELETE a minute at most, so the table
	// holds about one window of failures whatever the traffic.
	pruneEvery = time.Minute
)

// Sign-in keys in the bff.SignInFailureStore.
func userKey(username string) string { return "u:" + username }
func addrKey(address string) string  { return "a:" + boundedAddress(address) }

func limitOf(key string) int {
	if strings.HasPrefix(key, "u:") {
		return maxFailsPerAccount
	}
	return maxFailsPerAddress
}

// boundedAddress is the client address as a key of known size. The web
// layer gives the connection's address, or behind a trusted proxy the one
// the proxy saw (web/client_address.go), both parsed; should anything else
// ever feed it, a key must not grow with what a client sends: an address
// that does not parse is kept as a hash.
func boundedAddress(address string) string {
	if a, err := netip.ParseAddr(address); err == nil {
		return a.WithZone("").String() // at most 39 characters
	}
	sum := sha256.Sum256([]byte(address))
	return "h:" + hex.EncodeToString(sum[:16])
}

// signInWait is how long until every key may try again (0: all may now),
// and the key that waits longest. extra raises the limits: 1 after this
// attempt's own failure is recorded.
func (s *Service) signInWait(ctx context.Context, now time.Time, keys []string, extra int) (time.Duration, string, error) {
	var (
		wait    time.Duration
		blocked string
	)
	for _, k := range keys {
		f, err := s.failures.SignInFailures(ctx, k, now.Add(-attemptWindow))
		if err != nil {
			return 0, "", fmt.Errorf("read failed sign-ins: %w", err)
		}
		if limit := limitOf(k) + extra; len(f) >= limit {
			if w := f[len(f)-limit].Add(attemptWindow).Sub(now); w > wait {
				wait, blocked = w, k
			}
		}
	}
	return wait, blocked, nil
}

// refusalAuditEvery is how often a refusal of one blocked key is audited.
// A refused attempt stores no failure (it is not checked), but each was an
// audit line: a client hammering a blocked form grew the log by a line per
// request, without end. Now a blocked key gets a line a minute at most, so
// the log grows with the number of blocked keys, each of which took real
// failures to block.
const refusalAuditEvery = time.Minute

// refusals remembers when a refusal of each blocked key was last audited.
// In memory: after a restart, at most one line more per key.
type refusals struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether a refusal of key at now is to be audited, and if so
// notes it. Entries older than refusalAuditEvery are dropped as it goes, so
// the map holds only keys refused in the last minute.
func (r *refusals) due(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	for k, t := range r.last {
		if now.Sub(t) >= refusalAuditEvery {
			delete(r.last, k)
		}
	}
	if _, ok := r.last[key]; ok {
		return false
	}
	r.last[key] = now
	return true
}

// pruneFailures deletes the failures that have left the window, at most once
// per pruneEvery. A failure is logged: the rows are only kept longer.
func (s *Service) pruneFailures(ctx context.Context, now time.Time) {
	last := s.pruned.Load()
	if now.UnixNano()-last < int64(pruneEvery) || !s.pruned.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	if err := s.failures.PruneSignInFailures(ctx, now.Add(-attemptWindow)); err != nil {
		s.log.Error("prune failed sign-ins", "err", err)
	}
}

// Field limits of the sign-in form, checked before anything is looked up,
// counted or audited. A username has the shape `clinician add` accepts
// (usernameShape): no account can have another, so refusing any other at
// once reveals nothing about which accounts exist. A password is at most 72
// bytes, the longest AddClinician accepts (bcrypt reads no further).
const (
	usernameRule      = "A username is 3 to 32 letters, digits, dots, dashes or underscores, starting with a letter or digit."
	passwordRuleBytes = "A password is at most 72 bytes long (bcrypt's limit): no account has a longer one."
)

// checkSignIn applies the form's field rules to a lower-cased username.
func checkSignIn(username, password string) *bff.Error {
	// The length first: valid names are ASCII, and a 200 KB one is refused
	// without being scanned.
	if len(username) > bff.MaxUsernameChars || !usernameShape.MatchString(username) {
		return bff.Invalid("username", usernameRule)
	}
	if len(password) > bff.MaxPasswordBytes {
		return bff.Invalid("password", passwordRuleBytes)
	}
	return nil
}

// auditName is a username as the audit log may hold it: a malformed one is
// cut to bff.MaxUsernameChars valid characters and marked with "…", so no
// sign-in attempt can make the log (or its page) grow by more than a line.
func auditName(username string) string {
	if utf8.RuneCountInString(username) <= bff.MaxUsernameChars && utf8.ValidString(username) {
		return username
	}
	r := []rune(strings.ToValidUTF8(username, "\uFFFD"))
	return string(r[:min(len(r), bff.MaxUsernameChars)]) + "…"
}

// memFailures is the bff.SignInFailureStore of a Service built without one
// (tests, the clinician CLI): one process's memory, lost on restart.
type memFailures struct {
	mu    sync.Mutex
	fails map[string][]time.Time // key -> failure times, ascending
}

var _ bff.SignInFailureStore = (*memFailures)(nil)

func newMemFailures() *memFailures { return &memFailures{fails: map[string][]time.Time{}} }

func (m *memFailures) AddSignInFailure(_ context.Context, at time.Time, keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		f := m.fails[k]
		i, _ := slices.BinarySearchFunc(f, at, time.Time.Compare)
		m.fails[k] = slices.Insert(f, i, at)
	}
	return nil
}

func (m *memFailures) SignInFailures(_ context.Context, key string, since time.Time) ([]time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.fails[key]
	i := 0
	for i < len(f) && !f[i].After(since) {
		i++
	}
	return slices.Clone(f[i:]), nil
}

func (m *memFailures) RemoveSignInFailure(_ context.Context, key string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.fails[key]
	if i := slices.IndexFunc(f, at.Equal); i >= 0 {
		m.fails[key] = slices.Delete(f, i, i+1)
	}
	return nil
}

func (m *memFailures) ClearSignInFailures(_ context.Context, key string) error {
	m.mu.Lock()
	delete(m.fails, key)
	m.mu.Unlock()
	return nil
}

func (m *memFailures) PruneSignInFailures(_ context.Context, before time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, f := range m.fails {
		f = slices.DeleteFunc(f, func(t time.Time) bool { return !t.After(before) })
		if len(f) == 0 {
			delete(m.fails, k)
		} else {
			m.fails[k] = f
		}
	}
	return nil
}
