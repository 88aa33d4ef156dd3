package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

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
