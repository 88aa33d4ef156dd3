package sqlite_test

import (
	"context"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

func TestOpeningMessagesAndActiveProtocol(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	mustCreateIntake(t, db, "enc_a")
	mustCreateIntake(t, db, "enc_b")
	mustCreateIntake(t, db, "enc_c") // no turn
	for _, tt := range []struct{ id, sub, msg string }{
		{"enc_a", "s1", "I have a headache"}, {"enc_b", "s2", "Sore throat for 3 days"},
	} {
		if err := db.CreateTurn(ctx, &bff.Turn{IntakeID: tt.id, SubmissionID: tt.sub, Message: tt.msg, Status: bff.TurnCompleted}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateTurn(ctx, &bff.Turn{IntakeID: "enc_a", SubmissionID: "s3", Message: "No"}); err != nil {
		t.Fatal(err)
	}
	got, err := db.OpeningMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["enc_a"] != "I have a headache" || got["enc_b"] != "Sore throat for 3 days" {
		t.Errorf("opening messages: %v", got)
	}

	if err := db.SetActiveProtocol(ctx, "enc_a", "headache.v1"); err != nil {
		t.Fatal(err)
	}
	in, err := db.Intake(ctx, "enc_a")
	if err != nil || in.ActiveProtocol != "headache.v1" {
		t.Errorf("active protocol after SetActiveProtocol: %+v, %v", in, err)
	}
	wantCode(t, db.SetActiveProtocol(ctx, "enc_none", "x"), bff.ENOTFOUND)
}
