package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

// addAudits appends n entries, a second apart, and returns them in order.
func addAudits(t *testing.T, db *sqlite.DB, n int) []*bff.AuditEntry {
	t.Helper()
	var es []*bff.AuditEntry
	for i := range n {
		e := &bff.AuditEntry{
			At:     t0.Add(time.Duration(i) * time.Second),
			Actor:  fmt.Sprintf("dr_%d", i%3),
			Action: bff.AuditViewHandoff,
			// Every third entry is on no intake.
			IntakeID: map[bool]string{true: "", false: fmt.Sprintf("enc_%d", i)}[i%3 == 0],
			Detail:   fmt.Sprintf("detail %d", i),
		}
		if err := db.AddAudit(context.Background(), e); err != nil {
			t.Fatalf("AddAudit %d: %v", i, err)
		}
		es = append(es, e)
	}
	return es
}

func TestAudit(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()

	if es, err := db.Audit(ctx, 10, 0); err != nil || len(es) != 0 {
		t.Fatalf("fresh store: %v, %v", es, err)
	}

	es := addAudits(t, db, 7)
	for i := 1; i < len(es); i++ {
		if es[i].ID <= es[i-1].ID || es[0].ID <= 0 {
			t.Fatalf("ids not increasing: %v", auditIDs(es))
		}
	}
	// The id orders the log, not At: an entry stamped earlier, appended later.
	late := &bff.AuditEntry{At: t0.Add(-time.Hour).In(time.FixedZone("CET", 3600)), Actor: "system",
		Action: bff.AuditRefresh, IntakeID: "enc_x", Detail: "clock stepped back"}
	if err := db.AddAudit(ctx, late); err != nil {
		t.Fatal(err)
	}
	es = append(es, late)
	newestFirst := slices.Clone(es)
	slices.Reverse(newestFirst)

	t.Run("round trip", func(t *testing.T) {
		got, err := db.Audit(ctx, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(es) {
			t.Fatalf("%d entries, want %d", len(got), len(es))
		}
		for i := range got {
			if !equalAudit(got[i], newestFirst[i]) {
				t.Errorf("entry %d: got %+v, want %+v", i, got[i], newestFirst[i])
			}
		}
		if got[0].At.Location() != time.UTC || got[0].IntakeID != "enc_x" || got[len(got)-1].IntakeID != "" {
			t.Errorf("first %+v, last %+v", got[0], got[len(got)-1])
		}
	})
	t.Run("limit", func(t *testing.T) {
		got, err := db.Audit(ctx, 3, 0)
		if err != nil || !slices.Equal(auditIDs(got), auditIDs(newestFirst[:3])) {
			t.Fatalf("limit 3: %v, %v", auditIDs(got), err)
		}
		for _, limit := range []int{0, -1} {
			if got, err := db.Audit(ctx, limit, 0); err != nil || len(got) != 0 {
				t.Fatalf("limit %d: %v, %v", limit, auditIDs(got), err)
			}
		}
		if got, err := db.Audit(ctx, 1, -5); err != nil || !slices.Equal(auditIDs(got), []int64{late.ID}) {
			t.Fatalf("negative before: %v, %v", auditIDs(got), err)
		}
	})
	t.Run("paging by before", func(t *testing.T) {
		var pages [][]int64
		var all []int64
		before := int64(0)
		for {
			got, err := db.Audit(ctx, 3, before)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				break
			}
			pages = append(pages, auditIDs(got))
			all = append(all, auditIDs(got)...)
			before = got[len(got)-1].ID
			if len(pages) > 10 {
				t.Fatal("paging does not end")
			}
		}
		if len(pages) != 3 || len(pages[2]) != 2 || !slices.Equal(all, auditIDs(newestFirst)) {
			t.Fatalf("pages %v, want %v", pages, auditIDs(newestFirst))
		}
		// before is exclusive.
		got, err := db.Audit(ctx, 10, es[3].ID)
		if err != nil || !slices.Equal(auditIDs(got), []int64{es[2].ID, es[1].ID, es[0].ID}) {
			t.Fatalf("before %d: %v, %v", es[3].ID, auditIDs(got), err)
		}
		if got, err := db.Audit(ctx, 10, es[0].ID); err != nil || len(got) != 0 {
			t.Fatalf("before the oldest: %v, %v", auditIDs(got), err)
		}
	})
}

// The log is append-only in the database itself, whoever writes to it.
func TestAuditAppendOnly(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	mustCreateIntake(t, db, "enc_1")
	es := addAudits(t, db, 3)
	want := auditIDs(es)
	slices.Reverse(want)

	for _, q := range []string{
		`UPDATE audit SET detail = 'forged' WHERE id = ` + fmt.Sprint(es[1].ID),
		`UPDATE audit SET actor = 'someone else'`,
		`DELETE FROM audit WHERE id = ` + fmt.Sprint(es[0].ID),
		`DELETE FROM audit`, // no truncate shortcut around the trigger
		`INSERT OR REPLACE INTO audit (id, at, actor, action, intake_id, detail)
			VALUES (` + fmt.Sprint(es[2].ID) + `, 'x', 'x', 'x', 'x', 'x')`, // REPLACE deletes without DELETE triggers
		`INSERT INTO audit (id, at, actor, action, intake_id, detail)
			VALUES (` + fmt.Sprint(es[2].ID) + `, 'x', 'x', 'x', 'x', 'x')
			ON CONFLICT (id) DO UPDATE SET detail = 'forged'`,
	} {
		if _, err := db.SQL().ExecContext(ctx, q); err == nil {
			t.Errorf("%s: no error", q)
		}
	}
	// A transaction on the writer cannot either.
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM audit`); err == nil {
		t.Error("DELETE in a transaction: no error")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	got, err := db.Audit(ctx, 10, 0)
	if err != nil || !slices.Equal(auditIDs(got), want) {
		t.Fatalf("after attempts: %v, %v", auditIDs(got), err)
	}
	for i, e := range got {
		if !equalAudit(e, es[len(es)-1-i]) {
			t.Errorf("entry changed: %+v, want %+v", e, es[len(es)-1-i])
		}
	}

	// The log outlives what it names: deleting an intake keeps its entries.
	e := &bff.AuditEntry{At: t0, Actor: "dr_a", Action: bff.AuditReview, IntakeID: "enc_1", Detail: "reviewed"}
	if err := db.AddAudit(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().ExecContext(ctx, `DELETE FROM intakes WHERE id = 'enc_1'`); err != nil {
		t.Fatal(err)
	}
	got, err = db.Audit(ctx, 1, 0)
	if err != nil || len(got) != 1 || !equalAudit(got[0], e) {
		t.Fatalf("after deleting the intake: %v, %v", got, err)
	}
	// Appending still works.
	if err := db.AddAudit(ctx, &bff.AuditEntry{At: t0, Actor: "system", Action: bff.AuditSignOut}); err != nil {
		t.Fatal(err)
	}
}

func auditIDs(es []*bff.AuditEntry) []int64 {
	var ids []int64
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

func equalAudit(a, b *bff.AuditEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	if !x.At.Equal(y.At) {
		return false
	}
	x.At, y.At = time.Time{}, time.Time{}
	return x == y
}
