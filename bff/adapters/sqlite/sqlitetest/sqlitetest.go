// Package sqlitetest opens fresh SQLite stores for tests of any package.
package sqlitetest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

// MustOpenDB opens a fresh, migrated store in tb.TempDir() and closes it
// when the test ends. Extra options (sqlite.WithClock, ...) pass to Open.
func MustOpenDB(tb testing.TB, opts ...sqlite.Option) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "intake.db"), slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		tb.Fatalf("storetest: open: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("storetest: close: %v", err)
		}
	})
	return db
}
