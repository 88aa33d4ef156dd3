package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedMigrationsLoad(t *testing.T) {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 3 || ms[0].name != "core" || ms[1].name != "sessions" || ms[2].name != "clinicians" {
		t.Fatalf("migrations %+v", ms)
	}
}

func TestLoadMigrationsRejects(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"gap":       {"0001_a.sql": {}, "0003_c.sql": {}},
		"duplicate": {"0001_a.sql": {}, "0001_b.sql": {}},
		"bad name":  {"0001_a.sql": {}, "2_b.sql": {}},
		"no zero":   {"0000_a.sql": {}},
	} {
		if _, err := loadMigrations(fsys); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// embeddedVersions is "1_core,2_sessions,…" for the embedded migrations.
func embeddedVersions(t *testing.T) string {
	t.Helper()
	sub, _ := fs.Sub(migrationFS, "migrations")
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, m := range ms {
		vs = append(vs, strconv.Itoa(m.version)+"_"+m.name)
	}
	return strings.Join(vs, ",")
}

func versions(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.SQL().QueryContext(context.Background(), `SELECT version || '_' || name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	return vs
}

// Opening again applies nothing twice; a later migration applies once; a
// failing one leaves neither its changes nor its record.
func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	for range 3 {
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(versions(t, db), ","); got != embeddedVersions(t) {
			t.Fatalf("versions %s", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}

	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sub, _ := fs.Sub(migrationFS, "migrations")
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	later := append(ms, migration{version: len(ms) + 1, name: "later",
		sql: `CREATE TABLE later (name TEXT PRIMARY KEY); INSERT INTO later VALUES ('dr_a');`})
	for range 2 {
		if err := applyMigrations(ctx, db.w, db.logger, later); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM later`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("later rows %d, %v", n, err)
	}

	broken := append(later, migration{version: len(later) + 1, name: "broken",
		sql: `CREATE TABLE half (id INTEGER PRIMARY KEY); INSERT INTO nowhere VALUES (1);`})
	if err := applyMigrations(ctx, db.w, db.logger, broken); err == nil {
		t.Fatal("broken migration applied")
	}
	if got, want := strings.Join(versions(t, db), ","), embeddedVersions(t)+","+strconv.Itoa(len(ms)+1)+"_later"; got != want {
		t.Fatalf("versions after a failure %s", got)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'half'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("half-applied migration left half: %d, %v", n, err)
	}

	// An older binary opening the newer file starts (with a warning).
	db2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("open a newer schema: %v", err)
	}
	db2.Close()
}
