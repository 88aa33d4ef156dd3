package accounts_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
)

const goodPassword = "correct horse battery"

// clinicianRun is one run of the clinician side on a database file that
// outlives it, as the app wires it: failed sign-ins in the database.
type clinicianRun struct {
	svc *accounts.Service
	db  *sqlite.DB
}

func openClinicianRun(t *testing.T, path string, now func() time.Time) *clinicianRun {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, SignInFailures: db, BcryptCost: bcrypt.MinCost, Now: now})
	return &clinicianRun{svc: svc, db: db}
}

// manualNow is a clock tests move by hand.
type manualNow struct{ ns atomic.Int64 }

func newManualNow(t time.Time) *manualNow { m := &manualNow{}; m.ns.Store(t.UnixNano()); return m }
func (m *manualNow) now() time.Time       { return time.Unix(0, m.ns.Load()).UTC() }
func (m *manualNow) add(d time.Duration)  { m.ns.Add(int64(d)) }

var signInT0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// A locked account stays locked across a restart: the failures are in the
// database, not in the process that counted them.
func TestSignInLockSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	clock := newManualNow(signInT0)
	first := openClinicianRun(t, path, clock.now)
	if _, err := first.svc.AddClinician(ctx, "system", "dr.ada", goodPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := first.svc.SignIn(ctx, "dr.ada", "wrong password", "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatalf("failure %d: %v", i+1, err)
		}
		clock.add(time.Second)
	}
	if _, err := first.svc.SignIn(ctx, "dr.ada", goodPassword, "192.0.2.2"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("locked, before the restart: %v", err)
	}
	first.db.Close()

	second := openClinicianRun(t, path, clock.now)
	// From another address too: the account is locked, not the address.
	if _, err := second.svc.SignIn(ctx, "dr.ada", goodPassword, "198.51.100.7"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("after the restart the right password: %v, want the account still locked", err)
	}
	// The window passes: the right password works again and clears the count.
	clock.add(15 * time.Minute)
	if _, err := second.svc.SignIn(ctx, "dr.ada", goodPassword, "198.51.100.7"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if f, _ := second.db.SignInFailures(ctx, "u:dr.ada", signInT0); len(f) != 0 {
		t.Fatalf("the account's failures after a sign-in: %v", f)
	}
	// A successful attempt does not count against its address.
	if f, _ := second.db.SignInFailures(ctx, "a:198.51.100.7", signInT0); len(f) != 0 {
		t.Fatalf("the address's failures after a sign-in: %v", f)
	}
}

// The address limit (20) survives a restart too, for every username.
func TestSignInAddressLimitSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	clock := newManualNow(signInT0)
	first := openClinicianRun(t, path, clock.now)
	if _, err := first.svc.AddClinician(ctx, "system", "dr.ada", goodPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		name := []string{"ann", "bob", "cy", "dee"}[i%4] + "x"
		if _, err := first.svc.SignIn(ctx, name, "guess", "192.0.2.9"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatalf("failure %d: %v", i+1, err)
		}
	}
	first.db.Close()
	second := openClinicianRun(t, path, clock.now)
	if _, err := second.svc.SignIn(ctx, "dr.ada", goodPassword, "192.0.2.9"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("after the restart, from the same address: %v", err)
	}
	if _, err := second.svc.SignIn(ctx, "dr.ada", goodPassword, "192.0.2.10"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// Concurrent guesses cannot all pass the limit while their bcrypt checks
// run: at most 5 passwords of one account are ever compared per window.
func TestConcurrentSignInsStayWithinTheLimit(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, SignInFailures: db, BcryptCost: bcrypt.MinCost})
	if _, err := svc.AddClinician(ctx, "system", "dr.ada", goodPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		checked atomic.Int32
	)
	for i := range 40 {
		wg.Go(func() {
			_, err := svc.SignIn(ctx, "dr.ada", "guess", "192.0.2."+string(rune('0'+i%10)))
			switch bff.ErrorCode(err) {
			case bff.EUNAUTHORIZED:
				checked.Add(1)
			case bff.ERATELIMIT:
			default:
				t.Errorf("attempt %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if n := checked.Load(); n > 5 {
		t.Fatalf("%d passwords compared for one account, the limit is 5", n)
	}
}

// Field limits hold before anything is stored: a 200 KB username is refused
// with a message naming the field and its rule, audited cut short, never a
// key; so is an over-long password and an over-long submission id.
func TestSignInFieldLimits(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, SignInFailures: db, BcryptCost: bcrypt.MinCost})
	if _, err := svc.AddClinician(ctx, "system", "dr.ada", goodPassword, bff.AllRoles()); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("é", 100_000) // 200 KB
	for i := range 19 {
		_, err := svc.SignIn(ctx, huge, "whatever", "192.0.2.1")
		e, ok := err.(*bff.Error)
		if !ok || e.Code != bff.EINVALID || e.Field != "username" || !strings.Contains(e.Message, "3 to 32") {
			t.Fatalf("attempt %d with a 200 KB username: %v", i+1, err)
		}
	}
	_, err := svc.SignIn(ctx, "dr.ada", strings.Repeat("p", 73), "192.0.2.1")
	if e, ok := err.(*bff.Error); !ok || e.Code != bff.EINVALID || e.Field != "password" || !strings.Contains(e.Message, "72 bytes") {
		t.Fatalf("a 73-byte password: %v", err)
	}
	// Malformed attempts count against the address like any failure.
	if _, err := svc.SignIn(ctx, "dr.ada", goodPassword, "192.0.2.1"); bff.ErrorCode(err) != bff.ERATELIMIT {
		t.Fatalf("the 21st attempt from the address: %v", err)
	}
	all, err := db.Audit(ctx, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var es []*bff.AuditEntry // the sign-ins' (not the account's creation)
	for _, e := range all {
		if e.Action != bff.AuditClinicianAdd {
			es = append(es, e)
		}
	}
	size := 0
	for _, e := range es {
		size += len(e.Actor) + len(e.Detail)
		if utf8.RuneCountInString(e.Actor) > bff.MaxUsernameChars+1 {
			t.Fatalf("audited actor of %d characters", utf8.RuneCountInString(e.Actor))
		}
	}
	if len(es) != 21 || size > 21*200 {
		t.Fatalf("%d audit entries of %d bytes for 21 refused sign-ins", len(es), size)
	}
	if a := es[len(es)-1].Actor; !strings.HasSuffix(a, "…") || !strings.HasPrefix(a, "éé") {
		t.Fatalf("a malformed username is audited as %q, want it cut and marked", a)
	}
	var keyBytes int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COALESCE(MAX(LENGTH(key)), 0) FROM signin_failures`).Scan(&keyBytes); err != nil || keyBytes > 64 {
		t.Fatalf("longest failure key %d bytes, %v", keyBytes, err)
	}
}

// A client hammering a blocked form adds an audit line a minute per blocked
// key, not a line per request.
func TestRefusalsAreAuditedOnceAMinute(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	clock := newManualNow(signInT0)
	svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, SignInFailures: db, BcryptCost: bcrypt.MinCost, Now: clock.now})
	for range 5 {
		if _, err := svc.SignIn(ctx, "dr.ada", "guess", "192.0.2.1"); bff.ErrorCode(err) != bff.EUNAUTHORIZED {
			t.Fatal(err)
		}
	}
	refusedLines := func() int {
		es, err := db.Audit(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range es {
			if strings.HasPrefix(e.Detail, "refused: too many") {
				n++
			}
		}
		return n
	}
	for range 100 {
		if _, err := svc.SignIn(ctx, "dr.ada", "guess", "192.0.2.1"); bff.ErrorCode(err) != bff.ERATELIMIT {
			t.Fatal(err)
		}
		clock.add(100 * time.Millisecond)
	}
	if n := refusedLines(); n != 1 {
		t.Fatalf("%d audit lines for 100 refusals within 10 s, want 1", n)
	}
	clock.add(time.Minute)
	for range 10 {
		_, _ = svc.SignIn(ctx, "dr.ada", "guess", "192.0.2.1")
	}
	if n := refusedLines(); n != 2 {
		t.Fatalf("%d audit lines a minute later, want 2", n)
	}
}
