package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/clinical-intake/intake-web/bff"
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
	sub, _ := fs.Sub(migrationFS, "migrations")
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, fmt.Sprintf("%d_%s", m.version, m.name))
	}
	all := strings.Join(names, ",")
	if !strings.HasPrefix(all, "1_core,2_sessions,3_clinicians,4_blocking_turns,5_signin_failures") {
		t.Fatalf("embedded migrations %s", all)
	}
	for range 3 {
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(versions(t, db), ","); got != all {
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
	if got := strings.Join(versions(t, db), ","); got != all+fmt.Sprintf(",%d_later", len(ms)+1) {
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

// TestRolesMigrationGivesExistingAccountsEveryRole applies 0015 to a
// database that already holds accounts: each gets every role there was
// then (not the safety officer's, which 0019 adds and nobody is given), so
// an upgrade takes nothing away; an account made afterwards has only what
// it is given.
func TestRolesMigrationGivesExistingAccountsEveryRole(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	sub, _ := fs.Sub(migrationFS, "migrations")
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m migration) bool { return m.name == "clinician_roles" })
	if i < 0 {
		t.Fatal("no clinician_roles migration")
	}
	// The database as it was before roles: the migrations before 0015.
	old, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyMigrations(ctx, old, slog.New(slog.DiscardHandler), ms[:i]); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO clinicians (username, password_hash, disabled, created_at)
		VALUES ('dr.a', x'00', 0, '2026-01-01T00:00:00.000000000Z'), ('dr.b', x'00', 1, '2026-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := Open(ctx, path, nil) // applies the rest
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"dr.a", "dr.b"} {
		c, err := db.Clinician(ctx, name)
		if err != nil || !slices.Equal(c.Roles, []bff.Role{bff.RoleReviewer, bff.RoleScenarioRunner, bff.RoleAdministrator}) {
			t.Fatalf("%s after the migration: %+v, %v", name, c, err)
		}
	}
	if err := db.CreateClinician(ctx, &bff.Clinician{Username: "dr.c", Roles: []bff.Role{bff.RoleReviewer}}); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.Clinician(ctx, "dr.c"); !slices.Equal(c.Roles, []bff.Role{bff.RoleReviewer}) {
		t.Fatalf("a new account's roles: %v", c.Roles)
	}
}

// TestSafetyOfficerMigrationKeepsEveryRole applies 0019, which rebuilds
// clinician_roles to widen its CHECK, to a database that holds accounts
// and their roles: every row is kept, nobody gains the new role, the new
// role can be granted, an unknown one is still refused, and the table
// still belongs to its accounts (a row for no account is refused).
func TestSafetyOfficerMigrationKeepsEveryRole(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	sub, _ := fs.Sub(migrationFS, "migrations")
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m migration) bool { return m.name == "safety_officer_role" })
	if i < 0 {
		t.Fatal("no safety_officer_role migration")
	}
	old, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyMigrations(ctx, old, slog.New(slog.DiscardHandler), ms[:i]); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO clinicians (username, password_hash, disabled, created_at)
		VALUES ('dr.a', x'00', 0, '2026-01-01T00:00:00.000000000Z'), ('dr.b', x'00', 1, '2026-01-01T00:00:00.000000000Z'),
			('dr.c', x'00', 0, '2026-01-01T00:00:00.000000000Z')`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO clinician_roles (username, role)
		VALUES ('dr.a', 'reviewer'), ('dr.a', 'administrator'), ('dr.b', 'scenario_runner')`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO clinician_roles (username, role) VALUES ('dr.c', 'safety_officer')`); err == nil {
		t.Fatal("the table before 0019 took safety_officer: the test's premise is wrong")
	}
	old.Close()
	db, err := Open(ctx, path, nil) // applies the rest
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, want := range map[string][]bff.Role{
		"dr.a": {bff.RoleReviewer, bff.RoleAdministrator},
		"dr.b": {bff.RoleScenarioRunner},
		"dr.c": {},
	} {
		c, err := db.Clinician(ctx, name)
		if err != nil || !slices.Equal(c.Roles, want) {
			t.Fatalf("%s after 0019: %+v, %v; want roles %v", name, c, err, want)
		}
	}
	if err := db.SetClinicianRoles(ctx, "dr.c", []bff.Role{bff.RoleReviewer, bff.RoleSafetyOfficer}); err != nil {
		t.Fatalf("granting the safety officer's role: %v", err)
	}
	if c, _ := db.Clinician(ctx, "dr.c"); !slices.Equal(c.Roles, []bff.Role{bff.RoleReviewer, bff.RoleSafetyOfficer}) {
		t.Fatalf("dr.c's roles: %v", c.Roles)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO clinician_roles (username, role) VALUES ('dr.a', 'superuser')`); err == nil {
		t.Fatal("an unknown role was stored")
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO clinician_roles (username, role) VALUES ('nobody', 'reviewer')`); err == nil {
		t.Fatal("a role of no account was stored")
	}
}
