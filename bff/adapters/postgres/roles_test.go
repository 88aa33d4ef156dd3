package postgres

import (
	"context"
	"io/fs"
	"log/slog"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
)

// TestSafetyOfficerMigrationKeepsEveryRole applies 0017, which widens
// clinician_roles' CHECK for the clinical safety officer's role, to a
// database that holds accounts and their roles: every row is kept, nobody
// gains the new role, it can be granted, and an unknown role is still
// refused.
func TestSafetyOfficerMigrationKeepsEveryRole(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m migration) bool { return m.name == "safety_officer_role" })
	if i < 0 {
		t.Fatal("no safety_officer_role migration")
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := applyMigrations(ctx, conn, slog.New(slog.DiscardHandler), ms[:i]); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO clinicians (username, password_hash, disabled, created_at)
		VALUES ('dr.a', '\x00', false, now()), ('dr.b', '\x00', true, now()), ('dr.c', '\x00', false, now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO clinician_roles (username, role)
		VALUES ('dr.a', 'reviewer'), ('dr.a', 'administrator'), ('dr.b', 'scenario_runner')`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO clinician_roles (username, role) VALUES ('dr.c', 'safety_officer')`); err == nil {
		t.Fatal("the table before 0017 took safety_officer: the test's premise is wrong")
	}
	db := openTestDB(t, dbURL) // applies the rest
	for name, want := range map[string][]bff.Role{
		"dr.a": {bff.RoleReviewer, bff.RoleAdministrator},
		"dr.b": {bff.RoleScenarioRunner},
		"dr.c": {},
	} {
		c, err := db.Clinician(ctx, name)
		if err != nil || !slices.Equal(c.Roles, want) {
			t.Fatalf("%s after 0017: %+v, %v; want roles %v", name, c, err, want)
		}
	}
	if err := db.SetClinicianRoles(ctx, "dr.c", []bff.Role{bff.RoleReviewer, bff.RoleSafetyOfficer}); err != nil {
		t.Fatalf("granting the safety officer's role: %v", err)
	}
	if c, _ := db.Clinician(ctx, "dr.c"); !slices.Equal(c.Roles, []bff.Role{bff.RoleReviewer, bff.RoleSafetyOfficer}) {
		t.Fatalf("dr.c's roles: %v", c.Roles)
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO clinician_roles (username, role) VALUES ('dr.a', 'superuser')`); err == nil {
		t.Fatal("an unknown role was stored")
	}
}
