package postgres_test

import (
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
)

// A signed decision and a version of the hazard log are never changed or
// deleted, even by a statement written past the store's methods.
func TestSafetyRowsAreAppendOnly(t *testing.T) {
	db, _ := openDB(t)
	ctx := t.Context()
	v := &bff.HazardLogVersion{Log: safety.Starter(), By: "system"}
	if err := db.AddHazardLog(ctx, v); err != nil {
		t.Fatal(err)
	}
	ev := safety.Evaluate(v.Log, 1, safety.Subject{Release: "r"}, nil)
	d := &bff.SafetyDecision{Subject: ev.Subject, Verdict: safety.Reject, Reasoning: "r", By: "cso", LogVersion: 1, Hash: ev.Hash, Snapshot: ev}
	if err := db.AddSafetyDecision(ctx, d); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE safety_decisions SET verdict = 'approve'`,
		`UPDATE safety_decisions SET snapshot = '{}'`,
		`DELETE FROM safety_decisions`,
		`UPDATE hazard_log_versions SET note = 'rewritten'`,
		`DELETE FROM hazard_log_versions`,
	} {
		if _, err := db.Pool().Exec(ctx, stmt); err == nil {
			t.Errorf("%s: allowed", stmt)
		}
	}
	got, err := db.SafetyDecisions(ctx, ev.Subject)
	if err != nil || len(got) != 1 || got[0].Verdict != safety.Reject || got[0].Snapshot.Hash != ev.Hash {
		t.Fatalf("the decision changed: %v", err)
	}
}
