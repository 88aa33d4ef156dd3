package sqlite_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

// The clinician area's rows and rules are there after Close and Open, and
// reopening applies migration 0003 once.
func TestClinicianAreaReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "intake.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustCreateIntake(t, db, "enc_r")
	c := &bff.Clinician{Username: "dr_a", PasswordHash: []byte("$2a$10$hash"), CreatedAt: t0}
	if err := db.CreateClinician(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := db.SetClinicianDisabled(ctx, "dr_a", true); err != nil {
		t.Fatal(err)
	}
	r := &bff.Review{IntakeID: "enc_r", Clinician: "dr_a", Note: "ok", ReviewedAt: t0.Add(time.Minute)}
	if err := db.AddReview(ctx, r); err != nil {
		t.Fatal(err)
	}
	e := &bff.AuditEntry{At: t0, Actor: "dr_a", Action: bff.AuditReview, IntakeID: "enc_r", Detail: "d"}
	if err := db.AddAudit(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		db, err = sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := migrationVersions(t, db); !appliedOnceInOrder(got, "3_clinicians") {
			t.Fatalf("versions %v", got)
		}
		got, err := db.Clinician(ctx, "dr_a")
		if err != nil || !got.Disabled || !bytes.Equal(got.PasswordHash, c.PasswordHash) || !got.CreatedAt.Equal(t0) {
			t.Fatalf("clinician after reopen: %+v, %v", got, err)
		}
		rs, err := db.Reviews(ctx, "enc_r")
		if err != nil || len(rs) != 1 || !storetest.EqualReview(rs[0], r) {
			t.Fatalf("reviews after reopen: %v, %v", rs, err)
		}
		if m, err := db.LatestReviews(ctx); err != nil || len(m) != 1 || !storetest.EqualReview(m["enc_r"], r) {
			t.Fatalf("latest after reopen: %v, %v", m, err)
		}
		es, err := db.Audit(ctx, 10, 0)
		if err != nil || len(es) == 0 || !storetest.EqualAudit(es[len(es)-1], e) {
			t.Fatalf("audit after reopen: %v, %v", es, err)
		}
		// The rules still hold.
		storetest.WantCode(t, db.CreateClinician(ctx, &bff.Clinician{Username: "dr_a", CreatedAt: t0}), bff.ECONFLICT)
		storetest.WantCode(t, db.AddReview(ctx, &bff.Review{IntakeID: "enc_none", ReviewedAt: t0}), bff.ENOTFOUND)
		if _, err := db.SQL().ExecContext(ctx, `DELETE FROM audit`); err == nil {
			t.Fatal("audit deletable after reopen")
		}
		next := &bff.AuditEntry{At: t0, Actor: "system", Action: bff.AuditSignOut}
		if err := db.AddAudit(ctx, next); err != nil || next.ID <= es[0].ID {
			t.Fatalf("id after reopen %d (newest was %d), %v", next.ID, es[0].ID, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Migration 0003 creates its schema once, and the schema itself enforces
// the types and flags.
func TestClinicianSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "intake.db")
	for range 3 {
		db, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := migrationVersions(t, db); !appliedOnceInOrder(got, "3_clinicians") {
			t.Fatalf("versions %v", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	rows, err := db.SQL().QueryContext(ctx, `SELECT type || ' ' || name FROM sqlite_schema
		WHERE tbl_name IN ('clinicians', 'reviews', 'audit') AND name NOT LIKE 'sqlite_autoindex%'
		ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	var objects []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		objects = append(objects, s)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"index audit_intake", "index reviews_intake_reviewed",
		"table audit", "table clinicians", "table reviews",
		"trigger audit_no_delete", "trigger audit_no_replace", "trigger audit_no_update",
		"trigger reviews_latest", // 0009: keeps intakes.reviewed_at for the worklist
	}
	if !slices.Equal(objects, want) {
		t.Fatalf("schema objects %v, want %v", objects, want)
	}

	for _, table := range []string{"clinicians", "reviews", "audit"} {
		var strict int
		if err := db.SQL().QueryRowContext(ctx, `SELECT strict FROM pragma_table_list WHERE name = ?`, table).Scan(&strict); err != nil || strict != 1 {
			t.Errorf("%s: strict %d, %v", table, strict, err)
		}
	}
	for _, q := range []string{
		`INSERT INTO clinicians VALUES ('x', x'00', 2, '2026-01-01T00:00:00.000000000Z')`,                 // disabled not 0/1
		`INSERT INTO clinicians VALUES ('y', x'00', 'no', '2026-01-01T00:00:00.000000000Z')`,              // STRICT type
		`INSERT INTO clinicians VALUES ('z', NULL, 0, '2026-01-01T00:00:00.000000000Z')`,                  // NOT NULL
		`INSERT INTO reviews (intake_id, clinician, note, reviewed_at) VALUES ('enc_none', 'a', '', 't')`, // FK
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
}

func migrationVersions(t *testing.T, db *sqlite.DB) []string {
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// appliedOnceInOrder reports whether versions are 1_..N_ each once, in
// order, and include want: later migrations do not break the check.
func appliedOnceInOrder(versions []string, want string) bool {
	for i, v := range versions {
		if !strings.HasPrefix(v, strconv.Itoa(i+1)+"_") {
			return false
		}
	}
	return slices.Contains(versions, want)
}
