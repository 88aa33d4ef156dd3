package storetest

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

func runSafety(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, bff.SafetyStore)
	}{
		{"HazardLogVersions", testHazardLogVersions},
		{"ConcurrentVersionsNeverShare", testHazardLogConcurrent},
		{"Decisions", testSafetyDecisions},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t, fixedClock())) })
	}
}

// testHazardLogVersions: versions are numbered from 1, kept whole, listed
// newest first; a version saved on a stale one is ECONFLICT.
func testHazardLogVersions(t *testing.T, db bff.SafetyStore) {
	ctx := t.Context()
	_, err := db.HazardLog(ctx, 0)
	WantCode(t, err, bff.ENOTFOUND)
	first := &bff.HazardLogVersion{Log: safety.Starter(), By: "system", At: t0, Note: "the starter log"}
	if err := db.AddHazardLog(ctx, first); err != nil || first.Version != 1 {
		t.Fatalf("first version: %d, %v", first.Version, err)
	}
	edited := safety.Starter()
	edited.Hazards[0].Residual.Likelihood = safety.Low
	second := &bff.HazardLogVersion{Version: 2, Log: edited, By: "dr_a", At: t0.Add(time.Minute), Note: "H1 residual"}
	if err := db.AddHazardLog(ctx, second); err != nil || second.Version != 2 {
		t.Fatalf("second version: %d, %v", second.Version, err)
	}
	stale := &bff.HazardLogVersion{Version: 2, Log: safety.Starter(), By: "dr_b", At: t0.Add(2 * time.Minute)}
	WantCode(t, db.AddHazardLog(ctx, stale), bff.ECONFLICT)

	latest, err := db.HazardLog(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != 2 || latest.By != "dr_a" || !latest.At.Equal(second.At) || latest.Note != "H1 residual" ||
		!reflect.DeepEqual(latest.Log, edited) {
		t.Fatalf("latest: %s", dumpJSON(latest))
	}
	one, err := db.HazardLog(ctx, 1)
	if err != nil || !reflect.DeepEqual(one.Log, safety.Starter()) {
		t.Fatalf("version 1 did not keep its log: %v", err)
	}
	_, err = db.HazardLog(ctx, 3)
	WantCode(t, err, bff.ENOTFOUND)
	list, err := db.HazardLogVersions(ctx)
	if err != nil || len(list) != 2 || list[0].Version != 2 || list[1].Version != 1 || list[1].Note != "the starter log" {
		t.Fatalf("versions: %s, %v", dumpJSON(list), err)
	}
}

// testHazardLogConcurrent: versions saved at once get distinct numbers, or
// ECONFLICT, never the same number twice.
func testHazardLogConcurrent(t *testing.T, db bff.SafetyStore) {
	const n = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		got  = map[int]bool{}
		errs []error
	)
	for range n {
		wg.Go(func() {
			v := &bff.HazardLogVersion{Log: safety.Starter(), By: "system", At: t0}
			err := db.AddHazardLog(t.Context(), v)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if got[v.Version] {
				errs = append(errs, bff.Errorf(bff.EINTERNAL, "version %d given twice", v.Version))
			}
			got[v.Version] = true
		})
	}
	wg.Wait()
	for _, err := range errs {
		if bff.ErrorCode(err) != bff.ECONFLICT {
			t.Fatalf("a concurrent save: %v", err)
		}
	}
	if len(got) == 0 {
		t.Fatal("no concurrent save succeeded")
	}
}

// testSafetyDecisions: decisions round-trip with their frozen evaluation,
// per subject (release and voice), oldest first; a decision on a version
// of the log that does not exist is ENOTFOUND.
func testSafetyDecisions(t *testing.T, db bff.SafetyStore) {
	ctx := t.Context()
	v := &bff.HazardLogVersion{Log: safety.Starter(), By: "system", At: t0}
	if err := db.AddHazardLog(ctx, v); err != nil {
		t.Fatal(err)
	}
	plain := safety.Subject{Release: "sandbox-2026.08", Voice: "plain-short-en/1"}
	chatty := safety.Subject{Release: "sandbox-2026.08", Voice: "conversational-en/1"}
	run := safety.Run{ID: "sr_1", Finished: t0, Items: []safety.Item{{Seq: 0, Result: scenarios.Result{VignetteID: "v1",
		Gold: scenarios.Gold{Class: scenarios.Emergency}, Final: scenarios.Routine}}}}
	ev := safety.Evaluate(v.Log, v.Version, chatty, []safety.Run{run})
	d1 := &bff.SafetyDecision{Subject: chatty, Verdict: safety.Reject, Reasoning: "C1.1 not met", By: "dr_cso",
		At: t0.Add(time.Hour), LogVersion: 1, Hash: ev.Hash, Snapshot: ev}
	if err := db.AddSafetyDecision(ctx, d1); err != nil || d1.ID == 0 {
		t.Fatalf("add: %d, %v", d1.ID, err)
	}
	d2 := &bff.SafetyDecision{Subject: chatty, Verdict: safety.ApproveWithConditions, Conditions: "only with plain", Reasoning: "r",
		By: "dr_cso", At: t0.Add(2 * time.Hour), LogVersion: 1, Hash: ev.Hash, Snapshot: ev}
	if err := db.AddSafetyDecision(ctx, d2); err != nil || d2.ID <= d1.ID {
		t.Fatalf("second: %d, %v", d2.ID, err)
	}
	WantCode(t, db.AddSafetyDecision(ctx, &bff.SafetyDecision{Subject: plain, Verdict: safety.Approve, Reasoning: "r", By: "x",
		At: t0, LogVersion: 9, Hash: "h", Snapshot: ev}), bff.ENOTFOUND)

	got, err := db.SafetyDecisions(ctx, chatty)
	if err != nil || len(got) != 2 {
		t.Fatalf("decisions: %d, %v", len(got), err)
	}
	if !reflect.DeepEqual(got[0], d1) || !reflect.DeepEqual(got[1], d2) {
		t.Fatalf("decisions did not round-trip:\n%s\nwant\n%s", dumpJSON(got), dumpJSON([]any{d1, d2}))
	}
	if none, err := db.SafetyDecisions(ctx, plain); err != nil || len(none) != 0 {
		t.Fatalf("another voice's decisions: %d, %v", len(none), err)
	}
}

// MustFinishRun stores r as a finished run whose items played results (in
// order, item Seq i for results[i]), with its Release and Summary: what a
// safety case reads. r.FinishedAt is when it finished.
func MustFinishRun(t testing.TB, db bff.ScenarioRunStore, r *bff.ScenarioRun, results []scenarios.Result) {
	t.Helper()
	ctx := context.Background()
	at := r.FinishedAt
	var items []*bff.ScenarioItem
	for i, res := range results {
		items = append(items, &bff.ScenarioItem{RunID: r.ID, Seq: i, VignetteID: res.VignetteID, Title: res.Title, Repeat: res.Repeat,
			Variation: res.Variation, State: bff.ItemPending})
	}
	r.State, r.Items, r.CreatedAt, r.UpdatedAt = bff.RunQueued, len(items), at, at
	if err := db.CreateScenarioRun(ctx, r, items); err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimScenarioRun(ctx, "seed", at, at, at.Add(time.Hour))
	if err != nil || claimed.ID != r.ID {
		t.Fatalf("claim %s: %v", r.ID, err)
	}
	for i, it := range items {
		it.State, it.Result = bff.ItemDone, &results[i]
		if err := db.SaveScenarioItem(ctx, it, 1, "seed"); err != nil {
			t.Fatal(err)
		}
	}
	sum := scenarios.Score(results)
	claimed.State, claimed.FinishedAt, claimed.UpdatedAt, claimed.Summary = bff.RunDone, at, at, &sum
	if len(results) > 0 {
		claimed.Release = results[0].Provenance.Release
	}
	if err := db.UpdateScenarioRun(ctx, claimed, "seed"); err != nil {
		t.Fatal(err)
	}
}
