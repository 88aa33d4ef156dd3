package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/alexedwards/scs/sqlite3store"
	"github.com/alexedwards/scs/v2"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
)

func TestSessionsThroughSCS(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "intake.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}

	sm := scs.New()
	sm.Store = sqlite.NewSessionStore(db)

	sctx, err := sm.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	sm.Put(sctx, "owner", "patient-7")
	sm.Put(sctx, "csrf", []byte{0, 1, 2})
	token, expiry, err := sm.Commit(sctx)
	if err != nil {
		t.Fatal(err)
	}
	if token == "" || !expiry.After(time.Now()) {
		t.Fatalf("token %q expiry %v", token, expiry)
	}

	loaded, err := sm.Load(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if got := sm.GetString(loaded, "owner"); got != "patient-7" {
		t.Fatalf("owner %q", got)
	}

	// Restart: the session is still there.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sm.Store = sqlite.NewSessionStore(db)
	loaded, err = sm.Load(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if got := sm.GetString(loaded, "owner"); got != "patient-7" {
		t.Fatalf("owner after restart %q", got)
	}

	// Renewal: the old token loads an empty session.
	if err := sm.RenewToken(loaded); err != nil {
		t.Fatal(err)
	}
	newToken, _, err := sm.Commit(loaded)
	if err != nil {
		t.Fatal(err)
	}
	if newToken == token {
		t.Fatal("token not renewed")
	}
	old, err := sm.Load(ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Exists(old, "owner") {
		t.Fatal("old token still loads the session")
	}

	// Destroy deletes it.
	renewed, err := sm.Load(ctx, newToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Destroy(renewed); err != nil {
		t.Fatal(err)
	}
	gone, err := sm.Load(ctx, newToken)
	if err != nil {
		t.Fatal(err)
	}
	if sm.Exists(gone, "owner") {
		t.Fatal("destroyed session still loads")
	}
}

// The table is the one sqlite3store uses: each reads what the other wrote.
func TestSessionStoreMatchesSQLite3Store(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	ours := sqlite.NewSessionStoreWithCleanup(db, 0)
	theirs := sqlite3store.NewWithCleanupInterval(db.SQL(), 0)
	exp := time.Now().Add(time.Hour)

	if err := ours.CommitCtx(ctx, "a", []byte("from ours"), exp); err != nil {
		t.Fatal(err)
	}
	if err := theirs.Commit("b", []byte("from theirs"), exp); err != nil {
		t.Fatal(err)
	}
	if b, ok, err := theirs.Find("a"); err != nil || !ok || string(b) != "from ours" {
		t.Fatalf("theirs.Find(a) = %q, %t, %v", b, ok, err)
	}
	if b, ok, err := ours.FindCtx(ctx, "b"); err != nil || !ok || string(b) != "from theirs" {
		t.Fatalf("ours.FindCtx(b) = %q, %t, %v", b, ok, err)
	}
	all, err := ours.AllCtx(ctx)
	if err != nil || len(all) != 2 || string(all["a"]) != "from ours" {
		t.Fatalf("All = %q, %v", all, err)
	}
	if _, ok, err := ours.FindCtx(ctx, "missing"); ok || err != nil {
		t.Fatalf("missing: %t, %v", ok, err)
	}
	if err := ours.DeleteCtx(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := ours.DeleteCtx(ctx, "a"); err != nil {
		t.Fatalf("deleting a missing token: %v", err)
	}
	if _, ok, _ := theirs.Find("a"); ok {
		t.Fatal("a not deleted")
	}
}

func TestSessionExpiry(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	s := sqlite.NewSessionStoreWithCleanup(db, 0)
	if err := s.CommitCtx(ctx, "old", []byte("x"), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCtx(ctx, "new", []byte("y"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.FindCtx(ctx, "old"); ok || err != nil {
		t.Fatalf("expired session found: %t, %v", ok, err)
	}
	all, err := s.AllCtx(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("All = %v, %v", all, err)
	}
	n, err := s.DeleteExpired(ctx)
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v", n, err)
	}
	var rows int
	if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows left, %v", rows, err)
	}
}

// The cleanup goroutine stops on StopCleanup and on Close, in any order,
// any number of times.
func TestSessionCleanupStops(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := sqlite.NewSessionStoreWithCleanup(db, time.Millisecond)
	b := sqlite.NewSessionStore(db)
	a.StopCleanup()
	a.StopCleanup()
	if err := db.Close(); err != nil { // stops b
		t.Fatal(err)
	}
	b.StopCleanup()
	c := sqlite.NewSessionStore(db) // after Close: no goroutine to leak
	c.StopCleanup()
}
