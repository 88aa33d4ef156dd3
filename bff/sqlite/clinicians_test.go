package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

func TestClinicians(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()

	if cs, err := db.Clinicians(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("fresh store: %v, %v", cs, err)
	}

	hash := []byte("$2a$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\x00\xff")
	carol := &bff.Clinician{Username: "carol", PasswordHash: hash,
		CreatedAt: t0.In(time.FixedZone("CET", 3600))} // stored as UTC
	alice := &bff.Clinician{Username: "alice", PasswordHash: []byte("h-alice"), Disabled: true, CreatedAt: t0.Add(time.Second)}
	upper := &bff.Clinician{Username: "Alice", PasswordHash: []byte("h-upper"), CreatedAt: t0.Add(2 * time.Second)}
	bob := &bff.Clinician{Username: "bob", PasswordHash: nil, CreatedAt: t0.Add(3 * time.Second)}
	for _, c := range []*bff.Clinician{carol, alice, upper, bob} {
		if err := db.CreateClinician(ctx, c); err != nil {
			t.Fatalf("CreateClinician(%s): %v", c.Username, err)
		}
	}

	t.Run("get round-trips every field", func(t *testing.T) {
		got, err := db.Clinician(ctx, "carol")
		if err != nil {
			t.Fatal(err)
		}
		if !equalClinician(got, carol) || got.CreatedAt.Location() != time.UTC {
			t.Fatalf("got %+v\nwant %+v", got, carol)
		}
		got, err = db.Clinician(ctx, "alice")
		if err != nil || !equalClinician(got, alice) || !got.Disabled {
			t.Fatalf("alice: %+v, %v", got, err)
		}
		got, err = db.Clinician(ctx, "bob")
		if err != nil || len(got.PasswordHash) != 0 {
			t.Fatalf("nil hash stored as empty: %+v, %v", got, err)
		}
	})
	t.Run("lookup is exact", func(t *testing.T) {
		got, err := db.Clinician(ctx, "Alice")
		if err != nil || !equalClinician(got, upper) {
			t.Fatalf("Alice: %+v, %v", got, err)
		}
		for _, name := range []string{"CAROL", "carol ", " carol", "caro", "", "nobody"} {
			_, err := db.Clinician(ctx, name)
			wantCode(t, err, bff.ENOTFOUND)
		}
	})
	t.Run("duplicate username", func(t *testing.T) {
		dup := &bff.Clinician{Username: "carol", PasswordHash: []byte("other"), Disabled: true, CreatedAt: t0.Add(time.Hour)}
		err := db.CreateClinician(ctx, dup)
		wantCode(t, err, bff.ECONFLICT)
		if bff.ErrorMessage(err) == "" {
			t.Error("no message")
		}
		got, err := db.Clinician(ctx, "carol")
		if err != nil || !equalClinician(got, carol) {
			t.Fatalf("after conflict: %+v, %v", got, err)
		}
	})
	t.Run("list ordered by username", func(t *testing.T) {
		cs, err := db.Clinicians(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if names := clinicianNames(cs); !slices.Equal(names, []string{"Alice", "alice", "bob", "carol"}) {
			t.Fatalf("names %v", names)
		}
		if !equalClinician(cs[3], carol) || !equalClinician(cs[1], alice) {
			t.Fatalf("listed fields: %+v %+v", cs[3], cs[1])
		}
	})
	t.Run("disable and enable", func(t *testing.T) {
		for _, disabled := range []bool{true, true, false, false, true} { // repeats are fine
			if err := db.SetClinicianDisabled(ctx, "carol", disabled); err != nil {
				t.Fatalf("SetClinicianDisabled(%v): %v", disabled, err)
			}
			got, err := db.Clinician(ctx, "carol")
			if err != nil || got.Disabled != disabled {
				t.Fatalf("after SetClinicianDisabled(%v): %+v, %v", disabled, got, err)
			}
			if !bytes.Equal(got.PasswordHash, hash) || !got.CreatedAt.Equal(t0) {
				t.Fatalf("other fields changed: %+v", got)
			}
		}
		// Only carol changed.
		if got, _ := db.Clinician(ctx, "Alice"); got.Disabled {
			t.Fatal("Alice disabled too")
		}
		if got, _ := db.Clinician(ctx, "alice"); !got.Disabled {
			t.Fatal("alice enabled")
		}
	})
	t.Run("disable unknown", func(t *testing.T) {
		wantCode(t, db.SetClinicianDisabled(ctx, "nobody", true), bff.ENOTFOUND)
		wantCode(t, db.SetClinicianDisabled(ctx, "CAROL", false), bff.ENOTFOUND)
		if cs, _ := db.Clinicians(ctx); len(cs) != 4 {
			t.Fatalf("accounts %v", clinicianNames(cs))
		}
	})
}

func TestClinicianContextHonoured(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	mustCreateIntake(t, db, "enc_ctx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, err := range map[string]error{
		"CreateClinician":      db.CreateClinician(ctx, &bff.Clinician{Username: "x", CreatedAt: t0}),
		"SetClinicianDisabled": db.SetClinicianDisabled(ctx, "x", true),
		"AddReview":            db.AddReview(ctx, &bff.Review{IntakeID: "enc_ctx", ReviewedAt: t0}),
		"AddAudit":             db.AddAudit(ctx, &bff.AuditEntry{At: t0, Actor: "x", Action: bff.AuditSignIn}),
	} {
		if !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := db.Clinician(ctx, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Clinician: %v", err)
	}
	if _, err := db.LatestReviews(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("LatestReviews: %v", err)
	}
	if _, err := db.Audit(ctx, 10, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Audit: %v", err)
	}
	// Nothing was written.
	bg := context.Background()
	if cs, err := db.Clinicians(bg); err != nil || len(cs) != 0 {
		t.Errorf("clinicians %v, %v", clinicianNames(cs), err)
	}
	if rs, err := db.Reviews(bg, "enc_ctx"); err != nil || len(rs) != 0 {
		t.Errorf("reviews %v, %v", rs, err)
	}
	if es, err := db.Audit(bg, 10, 0); err != nil || len(es) != 0 {
		t.Errorf("audit %v, %v", es, err)
	}
}

func clinicianNames(cs []*bff.Clinician) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Username)
	}
	return names
}

func equalClinician(a, b *bff.Clinician) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Username == b.Username && bytes.Equal(a.PasswordHash, b.PasswordHash) &&
		a.Disabled == b.Disabled && a.CreatedAt.Equal(b.CreatedAt)
}
