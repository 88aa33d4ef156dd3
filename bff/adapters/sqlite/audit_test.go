package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

// The log is append-only in the database itself, whoever writes to it.
func TestAuditAppendOnly(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	storetest.MustCreateIntake(t, db, "enc_1")
	es := storetest.AddAudits(t, db, 3)
	want := storetest.AuditIDs(es)
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
	if err != nil || !slices.Equal(storetest.AuditIDs(got), want) {
		t.Fatalf("after attempts: %v, %v", storetest.AuditIDs(got), err)
	}
	for i, e := range got {
		if !storetest.EqualAudit(e, es[len(es)-1-i]) {
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
	if err != nil || len(got) != 1 || !storetest.EqualAudit(got[0], e) {
		t.Fatalf("after deleting the intake: %v, %v", got, err)
	}
	// Appending still works.
	if err := db.AddAudit(ctx, &bff.AuditEntry{At: t0, Actor: "system", Action: bff.AuditSignOut}); err != nil {
		t.Fatal(err)
	}
}
