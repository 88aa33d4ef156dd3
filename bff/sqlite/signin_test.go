package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

func TestSignInFailures(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	failures := func(key string, since time.Time) []time.Time {
		t.Helper()
		f, err := db.SignInFailures(ctx, key, since)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	equal := func(a, b []time.Time) bool { return slices.EqualFunc(a, b, time.Time.Equal) }

	if f := failures("u:ada", t0.Add(-time.Hour)); len(f) != 0 {
		t.Fatalf("fresh store: %v", f)
	}
	// Recorded out of order, in another zone: returned oldest first, UTC.
	for _, s := range []int{30, 10, 20, 20} {
		if err := db.AddSignInFailure(ctx, at(s).In(time.FixedZone("CET", 3600)), "u:ada", "a:192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddSignInFailure(ctx, at(15), "u:bob"); err != nil {
		t.Fatal(err)
	}
	if f := failures("u:ada", t0); !equal(f, []time.Time{at(10), at(20), at(20), at(30)}) || f[0].Location() != time.UTC {
		t.Fatalf("u:ada %v", f)
	}
	// since is exclusive.
	if f := failures("a:192.0.2.1", at(10)); !equal(f, []time.Time{at(20), at(20), at(30)}) {
		t.Fatalf("a: after 10 s %v", f)
	}
	// Keys are exact.
	if f := failures("u:ad", t0); len(f) != 0 {
		t.Fatalf("u:ad %v", f)
	}

	// Remove takes back exactly one failure at exactly that time.
	if err := db.RemoveSignInFailure(ctx, "u:ada", at(20)); err != nil {
		t.Fatal(err)
	}
	if err := db.RemoveSignInFailure(ctx, "u:ada", at(21)); err != nil {
		t.Fatal(err)
	}
	if f := failures("u:ada", t0); !equal(f, []time.Time{at(10), at(20), at(30)}) {
		t.Fatalf("after remove %v", f)
	}

	// Clear is per key.
	if err := db.ClearSignInFailures(ctx, "u:ada"); err != nil {
		t.Fatal(err)
	}
	if f := failures("u:ada", t0); len(f) != 0 {
		t.Fatalf("after clear %v", f)
	}
	if f := failures("a:192.0.2.1", t0); len(f) != 4 {
		t.Fatalf("clear of u:ada took the address's too: %v", f)
	}

	// Prune drops every key's failures at or before the cut, and the rows
	// themselves (the table does not grow with old failures).
	if err := db.PruneSignInFailures(ctx, at(20)); err != nil {
		t.Fatal(err)
	}
	if f := failures("a:192.0.2.1", t0); !equal(f, []time.Time{at(30)}) {
		t.Fatalf("after prune %v", f)
	}
	if f := failures("u:bob", t0); len(f) != 0 {
		t.Fatalf("u:bob after prune %v", f)
	}
	var rows int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM signin_failures`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows left, %v", rows, err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for name, err := range map[string]error{
		"AddSignInFailure":    db.AddSignInFailure(cctx, at(1), "u:x"),
		"RemoveSignInFailure": db.RemoveSignInFailure(cctx, "u:x", at(1)),
		"ClearSignInFailures": db.ClearSignInFailures(cctx, "u:x"),
		"PruneSignInFailures": db.PruneSignInFailures(cctx, at(1)),
	} {
		if !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := db.SignInFailures(cctx, "u:x", t0); !errors.Is(err, context.Canceled) {
		t.Errorf("SignInFailures: %v", err)
	}
}

// Failures are on disk: a store opened again on the file has them.
func TestSignInFailuresSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "intake.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddSignInFailure(ctx, t0, "u:ada", "a:192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"u:ada", "a:192.0.2.1"} {
		if f, err := db.SignInFailures(ctx, k, t0.Add(-time.Second)); err != nil || len(f) != 1 || !f[0].Equal(t0) {
			t.Fatalf("%s after reopen: %v, %v", k, f, err)
		}
	}
}
