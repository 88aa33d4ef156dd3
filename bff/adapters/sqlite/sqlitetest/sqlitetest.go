// Package sqlitetest opens fresh SQLite stores for tests of any package.
package sqlitetest

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

// MustOpenDB opens a fresh, migrated store in tb.TempDir() and closes it
// when the test ends. Extra options (sqlite.WithClock, ...) pass to Open.
func MustOpenDB(tb testing.TB, opts ...sqlite.Option) *sqlite.DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "intake.db")
	Seed(tb, path)
	db, err := sqlite.Open(context.Background(), path, slog.New(slog.DiscardHandler), opts...)
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

// Seed writes at path (a new file) an empty database with every migration
// applied, as sqlite.Open leaves a new file: a copy of one migrated once
// per test process. Opening it then applies nothing, as the app's every
// start but its first does; applying the migrations again for each test
// took most of a fresh store's opening (a third of a second under the
// race detector, more on a loaded machine). The migrations themselves are
// tested in bff/adapters/sqlite (migrate_test.go).
func Seed(tb testing.TB, path string) {
	tb.Helper()
	migrated.once.Do(makeMigrated)
	if migrated.err != nil {
		tb.Fatalf("sqlitetest: a migrated database to copy: %v", migrated.err)
	}
	if err := os.WriteFile(path, migrated.data, 0o600); err != nil {
		tb.Fatalf("sqlitetest: %v", err)
	}
}

// migrated is the file of a freshly migrated database, made once.
var migrated struct {
	once sync.Once
	data []byte
	err  error
}

func makeMigrated() {
	migrated.data, migrated.err = migratedFile()
}

// migratedFile opens a new database (sqlite.Open applies every migration),
// closes it and returns its file. Closing the last connection checkpoints
// the write-ahead log into the file and removes it.
func migratedFile() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlitetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "migrated.db")
	db, err := sqlite.Open(context.Background(), path, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	for _, extra := range []string{"-wal", "-journal"} {
		if fi, err := os.Stat(path + extra); err == nil && fi.Size() > 0 {
			return nil, errors.New("the closed database left " + filepath.Base(path+extra) + " behind: its file alone is not the database")
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return os.ReadFile(path)
}
