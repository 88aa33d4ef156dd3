package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

func TestOpenPragmas(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	ctx := context.Background()
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"synchronous":  "1", // NORMAL
		"busy_timeout": "10000",
	} {
		var got string
		if err := db.SQL().QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %q, want %q", pragma, got, want)
		}
	}
}

func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, ":memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.MustCreateIntake(t, db, "enc_mem")
	if _, err := db.Intake(ctx, "enc_mem"); err != nil {
		t.Fatal(err)
	}
	tr := &bff.Turn{IntakeID: "enc_mem", SubmissionID: "s1", Message: "hi"}
	if err := db.CreateTurn(ctx, tr); err != nil || tr.Index != 1 {
		t.Fatalf("CreateTurn: %v, index %d", err, tr.Index)
	}
}

// Everything written is there after Close and Open: restart safety.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "intake.db")
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := storetest.MustCreateIntake(t, db, "enc_r")
	in.AgeYears = ptr(31)
	turn := &bff.Turn{IntakeID: "enc_r", SubmissionID: "s1", Message: "m1", SafetyStatus: ptr("")}
	if err := db.CreateTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	pending := &bff.Turn{IntakeID: "enc_r", SubmissionID: "s0", Message: "m0"}
	turn.Status = bff.TurnCompleted
	if err := db.UpdateTurn(ctx, turn); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTurn(ctx, pending); err != nil {
		t.Fatal(err)
	}
	raw := []byte(` {"a": 1} `)
	if err := db.PutHandoff(ctx, &bff.StoredHandoff{IntakeID: "enc_r", JSON: raw, FetchedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	gotIn, err := db.Intake(ctx, "enc_r")
	if err != nil || gotIn.ID != "enc_r" {
		t.Fatalf("intake after reopen: %+v, %v", gotIn, err)
	}
	gotTurn, err := db.Turn(ctx, "enc_r", 1)
	if err != nil || !storetest.EqualTurn(gotTurn, turn) {
		t.Fatalf("turn after reopen: %s, %v", storetest.DumpTurn(gotTurn), err)
	}
	ps, err := db.PendingTurns(ctx)
	if err != nil || len(ps) != 1 || ps[0].Index != 2 || ps[0].SubmissionID != "s0" {
		t.Fatalf("pending after reopen: %v, %v", storetest.TurnKeys(ps), err)
	}
	h, err := db.Handoff(ctx, "enc_r")
	if err != nil || string(h.JSON) != string(raw) {
		t.Fatalf("handoff after reopen: %v, %v", h, err)
	}
	// The constraints still hold.
	storetest.WantCode(t, db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_r", SubmissionID: "s9", Message: "m"}), bff.ECONFLICT)
}
