package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// runScenarios is the scenario runs part of the suite
// (bff.ScenarioRunStore: runs, their leases and items, adjudications), each
// test on a store of its own.
func runScenarios(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, bff.ScenarioRunStore)
	}{
		{"RoundTrip", testScenarioRoundTrip},
		{"RunsNewestFirst", testScenarioRunsNewestFirst},
		{"ClaimOrderAndNotBefore", testScenarioClaimOrder},
		{"ConcurrentClaimsNeverShare", testScenarioConcurrentClaims},
		{"RenewLeases", testScenarioRenewLeases},
		{"UpdateConflicts", testScenarioUpdateConflicts},
		{"SaveItem", testScenarioSaveItem},
		{"Cancel", testScenarioCancel},
		{"Adjudications", testScenarioAdjudications},
		{"Readings", testScenarioReadings},
		{"ReadingReviews", testReadingReviews},
		{"ReplayLink", testScenarioReplayLink},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t, fixedClock())) })
	}
}

// sampleSuite has every kind of field a suite holds.
func sampleSuite() *scenarios.Suite {
	return &scenarios.Suite{Name: "heart_lungs", Vignettes: []scenarios.Vignette{
		{
			ID: "chest_pain", Title: "Chest pain at rest", AgeYears: ptr(58), Sex: "male",
			History: "hypertension", Opening: "My chest hurts.",
			Facts: []scenarios.Fact{
				{Asks: []string{"how long", "start*"}, Answer: "Twenty minutes."},
				{Asks: []string{"breath"}, Choose: "yes", Answer: "Yes, a bit."},
			},
			Default: "I don't know.", MaxTurns: 12,
			Gold: scenarios.Gold{Class: scenarios.Emergency, Dispositions: []string{"call_999"},
				RedFlagsPositive: []string{"chest pain"}, RedFlagsNegative: []string{"trauma"},
				Protocol: "chest_pain", Scores: map[string]string{"heart": "high"}},
		},
		{ID: "cold", Title: "Common cold", Opening: "I have a runny nose.",
			Gold: scenarios.Gold{Class: scenarios.SelfCare}},
	}}
}

// newRun is a queued run of sampleSuite created at created.
// sampleSummary is a run's scores so far, with every kind of field set.
func sampleSummary() *scenarios.Summary {
	sum := scenarios.Summary{Vignettes: 2, Runs: 3, Scored: 2, Errors: 1, Accuracy: 0.5, UnderTriage: 0.5,
		PerClass:  map[scenarios.Class]scenarios.ClassSummary{scenarios.Emergency: {N: 2, Correct: 1, Under: 1, Accuracy: 0.5, UnderTriage: 0.5}},
		MeanTurns: 4.5, Provenance: scenarios.Provenance{Release: "2.4.0"}}
	sum.Confusion[0][0], sum.Confusion[0][2] = 1, 1
	return &sum
}

func newRun(id string, created time.Time) *bff.ScenarioRun {
	return &bff.ScenarioRun{
		ID: id, Suite: sampleSuite(), SuiteName: "heart_lungs", Repeats: 1, Label: "label " + id, Target: "sandbox",
		StartedBy: "dr_who", State: bff.RunQueued, Items: 2, Estimate: 20,
		CreatedAt: created, UpdatedAt: created,
	}
}

func mustCreateRun(t *testing.T, db bff.ScenarioRunStore, r *bff.ScenarioRun, items ...*bff.ScenarioItem) {
	t.Helper()
	if err := db.CreateScenarioRun(context.Background(), r, items); err != nil {
		t.Fatalf("CreateScenarioRun(%s): %v", r.ID, err)
	}
}

func mustRun(t *testing.T, db bff.ScenarioRunStore, id string) *bff.ScenarioRun {
	t.Helper()
	r, err := db.ScenarioRun(context.Background(), id)
	if err != nil {
		t.Fatalf("ScenarioRun(%s): %v", id, err)
	}
	return r
}

func mustItem(t *testing.T, db bff.ScenarioRunStore, id string, seq int) *bff.ScenarioItem {
	t.Helper()
	it, err := db.ScenarioItem(context.Background(), id, seq)
	if err != nil {
		t.Fatalf("ScenarioItem(%s, %d): %v", id, seq, err)
	}
	return it
}

// sameTimes reports whether the times are pairwise equal (and sets them
// apart from DeepEqual, which would compare their representation).
func sameTimes(a, b []*time.Time) bool {
	for i := range a {
		if !a[i].Equal(*b[i]) {
			return false
		}
		*a[i], *b[i] = time.Time{}, time.Time{}
	}
	return true
}

// checkRun fails t unless got is want, field by field.
func checkRun(t *testing.T, got, want *bff.ScenarioRun) {
	t.Helper()
	g, w := *got, *want
	if !sameTimes([]*time.Time{&g.NotBefore, &g.CreatedAt, &g.UpdatedAt, &g.FinishedAt, &g.LeaseUntil},
		[]*time.Time{&w.NotBefore, &w.CreatedAt, &w.UpdatedAt, &w.FinishedAt, &w.LeaseUntil}) ||
		!reflect.DeepEqual(g, w) {
		t.Fatalf("run\n got %s\nwant %s", dumpJSON(got), dumpJSON(want))
	}
}

// checkScenarioItem fails t unless got is want, field by field.
func checkScenarioItem(t *testing.T, got, want *bff.ScenarioItem) {
	t.Helper()
	g, w := *got, *want
	if !sameTimes([]*time.Time{&g.UpdatedAt}, []*time.Time{&w.UpdatedAt}) || !reflect.DeepEqual(g, w) {
		t.Fatalf("item\n got %s\nwant %s", dumpJSON(got), dumpJSON(want))
	}
}

func dumpJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(err)
	}
	return string(b)
}

func runIDs(rs []*bff.ScenarioRun) []string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

func testScenarioRoundTrip(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	r := newRun("sr_1", t0)
	r.Repeats, r.Items, r.Played, r.TurnsUsed, r.Note, r.Release = 2, 3, 1, 7, "a note", "2.4.0"
	r.Summary = sampleSummary()
	full := &bff.ScenarioItem{
		Seq: 2, VignetteID: "chest_pain", Title: "Chest pain at rest", Repeat: 2, Variation: "typos",
		State: bff.ItemDone, EncounterID: "enc_9",
		Turns: []scenarios.Exchange{
			{Message: "My chest hurts.", Reply: "Since when?", Choices: []string{"Today", "Yesterday"}},
			{Message: "Today", Reply: "Call 999.", Terminal: true, Urgent: true, Disposition: "call_999",
				SafetyStatus: "red_flag", Replayed: true},
		},
		Result: &scenarios.Result{
			VignetteID: "chest_pain", Title: "Chest pain at rest", Repeat: 2, Variation: "typos",
			Gold: scenarios.Gold{Class: scenarios.Emergency, Dispositions: []string{"call_999"},
				RedFlagsPositive: []string{"chest pain"}, Scores: map[string]string{"heart": "high"}},
			Final: scenarios.Emergency, Disposition: "call_999", Urgent: true, SafetyStatus: "red_flag",
			Protocol: "chest_pain", Scores: map[string]string{"heart": "high"},
			RedFlagsFound: []string{"Chest pain at rest"}, RedFlagsNegative: []string{"no trauma"},
			Turns: 2, Terminal: true,
			Provenance: scenarios.Provenance{Release: "2.4.0", PromptHash: "p1", DirectoryHash: "d1", ServerModel: "m"},
			Transcript: []scenarios.Message{{Role: "patient", Text: "My chest hurts."}, {Role: "assistant", Text: "Since when?"}},
			Outcome: &scenarios.Outcome{Triage: scenarios.TriageCorrect, RedFlagsHit: []string{"chest pain"},
				RedFlagsMissed: []string{}, FalseAlarms: []string{"x"}, ProtocolMatch: ptr(true),
				BandsExpected: 1, BandsAgreed: 1},
		},
		Handoff:   []byte(`{"encounter_id":"enc_9","terminal":true}`),
		UpdatedAt: t0.Add(time.Minute),
	}
	empty := &bff.ScenarioItem{Seq: 0, VignetteID: "chest_pain", Title: "Chest pain at rest", Repeat: 1} // State "" is pending; zero time
	failed := &bff.ScenarioItem{Seq: 1, VignetteID: "cold", Title: "Common cold", Repeat: 1, State: bff.ItemFailed,
		Result: &scenarios.Result{VignetteID: "cold", Error: "transport failed"}, UpdatedAt: t0}
	mustCreateRun(t, db, r, full, empty, failed) // not in Seq order
	if empty.State != bff.ItemPending || empty.RunID != "sr_1" || full.RunID != "sr_1" {
		t.Fatalf("items after create: %+v %+v", empty, full)
	}
	checkRun(t, mustRun(t, db, "sr_1"), r)

	its, err := db.ScenarioItems(ctx, "sr_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 3 {
		t.Fatalf("%d items, want 3", len(its))
	}
	for i, want := range []*bff.ScenarioItem{empty, failed, full} {
		checkScenarioItem(t, its[i], want)
	}
	checkScenarioItem(t, mustItem(t, db, "sr_1", 2), full)

	// The items in flight: only those playing, in Seq order, at most limit.
	if p, err := db.PlayingScenarioItems(ctx, "sr_1", 10); err != nil || p == nil || len(p) != 0 {
		t.Fatalf("playing items of a run with none: %v, %v; want an empty slice", p, err)
	}
	mustCreateRun(t, db, newRun("sr_p", t0),
		&bff.ScenarioItem{Seq: 0, VignetteID: "a", Repeat: 1, State: bff.ItemDone, UpdatedAt: t0},
		&bff.ScenarioItem{Seq: 3, VignetteID: "d", Repeat: 1, State: bff.ItemPlaying, EncounterID: "enc_d", UpdatedAt: t0},
		&bff.ScenarioItem{Seq: 1, VignetteID: "b", Repeat: 1, State: bff.ItemPlaying, EncounterID: "enc_b",
			Turns: []scenarios.Exchange{{Message: "hi", Reply: "Why?"}}, UpdatedAt: t0},
		&bff.ScenarioItem{Seq: 2, VignetteID: "c", Repeat: 1, UpdatedAt: t0},
		&bff.ScenarioItem{Seq: 4, VignetteID: "e", Repeat: 1, State: bff.ItemPlaying, EncounterID: "enc_e", UpdatedAt: t0})
	p, err := db.PlayingScenarioItems(ctx, "sr_p", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 2 || p[0].Seq != 1 || p[1].Seq != 3 || p[0].EncounterID != "enc_b" || len(p[0].Turns) != 1 {
		t.Fatalf("playing items (limit 2): %s; want seq 1 (with its exchange) and 3", dumpJSON(p))
	}

	// A run with every optional time and a lease.
	r2 := newRun("sr_2", t0.Add(time.Second))
	r2.State, r2.NotBefore, r2.FinishedAt = bff.RunWaiting, t0.Add(time.Hour), t0.Add(2*time.Hour)
	r2.LeaseOwner, r2.LeaseUntil, r2.Suite = "replica-1", t0.Add(3*time.Hour), nil
	mustCreateRun(t, db, r2)
	checkRun(t, mustRun(t, db, "sr_2"), r2)

	WantCode(t, db.CreateScenarioRun(ctx, newRun("sr_1", t0), nil), bff.ECONFLICT)
	checkRun(t, mustRun(t, db, "sr_1"), r)
	_, err = db.ScenarioRun(ctx, "sr_none")
	WantCode(t, err, bff.ENOTFOUND)
	_, err = db.ScenarioItem(ctx, "sr_1", 3)
	WantCode(t, err, bff.ENOTFOUND)
	if its, err := db.ScenarioItems(ctx, "sr_none"); err != nil || len(its) != 0 {
		t.Fatalf("items of no run: %v, %v", its, err)
	}
}

func testScenarioRunsNewestFirst(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	// Created out of order, with a tie (the id decides: descending).
	for _, c := range []struct {
		id  string
		min int
	}{{"sr_c", 3}, {"sr_a", 1}, {"sr_e", 5}, {"sr_b", 3}, {"sr_d", 4}} {
		mustCreateRun(t, db, newRun(c.id, t0.Add(time.Duration(c.min)*time.Minute)))
	}
	all := []string{"sr_e", "sr_d", "sr_c", "sr_b", "sr_a"}
	for _, c := range []struct {
		limit int
		want  []string
	}{{0, all}, {2, all[:2]}, {5, all}, {9, all}} {
		rs, err := db.ScenarioRuns(ctx, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got := runIDs(rs); !slices.Equal(got, c.want) {
			t.Fatalf("limit %d: %v, want %v", c.limit, got, c.want)
		}
	}
	// A list leaves the suites out (they are the bulk of a run), not
	// their names.
	rs, _ := db.ScenarioRuns(ctx, 1)
	want := newRun("sr_e", t0.Add(5*time.Minute))
	want.Suite = nil
	checkRun(t, rs[0], want)
}

func testScenarioClaimOrder(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	now := t0.Add(time.Hour)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	runs := []*bff.ScenarioRun{
		newRun("sr_a", at(1)), // ended
		newRun("sr_b", at(2)), // waits past now
		newRun("sr_c", at(3)), // leased past now
		newRun("sr_d", at(4)), // its lease ran out at now
		newRun("sr_e", at(5)), // waits until now
		newRun("sr_f", at(6)), // queued
		newRun("sr_g", at(7)), // cancelled, with a lease that ran out
	}
	runs[0].State, runs[0].FinishedAt = bff.RunDone, at(30)
	runs[1].State, runs[1].NotBefore = bff.RunWaiting, now.Add(30*time.Minute)
	runs[2].State, runs[2].LeaseOwner, runs[2].LeaseUntil = bff.RunActive, "x", now.Add(time.Minute)
	runs[3].State, runs[3].LeaseOwner, runs[3].LeaseUntil = bff.RunActive, "x", now
	runs[4].State, runs[4].NotBefore = bff.RunWaiting, now
	runs[6].State, runs[6].LeaseOwner, runs[6].LeaseUntil = bff.RunCancelled, "x", at(8)
	for _, r := range slices.Backward(runs) { // inserted newest first
		mustCreateRun(t, db, r)
	}
	var claimStale func(owner string, now, stale, until time.Time, want string)
	claim := func(owner string, now, until time.Time, want string) {
		t.Helper()
		claimStale(owner, now, now, until, want)
	}
	claimStale = func(owner string, now, stale, until time.Time, want string) {
		t.Helper()
		r, err := db.ClaimScenarioRun(ctx, owner, now, stale, until)
		if want == "" {
			WantCode(t, err, bff.ENOTFOUND)
			return
		}
		if err != nil {
			t.Fatalf("claim, want %s: %v", want, err)
		}
		if r.ID != want || r.LeaseOwner != owner || !r.LeaseUntil.Equal(until) {
			t.Fatalf("claimed %s for %s until %v, want %s for %s until %v", r.ID, r.LeaseOwner, r.LeaseUntil, want, owner, until)
		}
		if got := mustRun(t, db, want); got.LeaseOwner != owner || !got.LeaseUntil.Equal(until) {
			t.Fatalf("%s stored leased to %s until %v", want, got.LeaseOwner, got.LeaseUntil)
		}
	}
	until := now.Add(2 * time.Hour)
	claim("me", now, until, "sr_d")
	claim("me", now, until, "sr_e")
	claim("me", now, until, "sr_f")
	claim("me", now, until, "")
	// Half an hour later sr_b may go on and sr_c's lease ran out; the
	// runs leased to me are still mine.
	later := now.Add(30 * time.Minute)
	claim("you", later, until, "sr_b")
	claim("you", later, until, "sr_c")
	claim("you", later, until, "")
	// A lone replica takes back its previous process's leases at once
	// (stale later than now), still not before a run's NotBefore.
	far := until.Add(time.Hour)
	for _, id := range []string{"sr_c", "sr_d", "sr_e", "sr_f", ""} { // sr_b waits still
		claimStale("again", now, far, far.Add(time.Hour), id)
	}
	// A claim writes nothing else.
	want := newRun("sr_f", at(6))
	want.LeaseOwner, want.LeaseUntil = "again", far.Add(time.Hour)
	checkRun(t, mustRun(t, db, "sr_f"), want)
}

func testScenarioConcurrentClaims(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	const runs, claimers = 40, 8
	for i := range runs {
		mustCreateRun(t, db, newRun(fmt.Sprintf("sr_%02d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	now := t0.Add(time.Hour)
	got := make([][]string, claimers)
	errs := make([]error, claimers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Go(func() {
			<-start
			owner := fmt.Sprint("replica-", c)
			// Bounded: a store that hands out a leased run again must
			// fail the test, not loop forever.
			for range runs + 1 {
				r, err := db.ClaimScenarioRun(ctx, owner, now, now, now.Add(time.Hour))
				if bff.ErrorCode(err) == bff.ENOTFOUND {
					return
				} else if err != nil {
					errs[c] = err
					return
				}
				if r.LeaseOwner != owner {
					errs[c] = fmt.Errorf("run %s came back leased to %q", r.ID, r.LeaseOwner)
					return
				}
				got[c] = append(got[c], r.ID)
			}
			errs[c] = fmt.Errorf("more than %d claims of %d runs", runs, runs)
		})
	}
	close(start)
	wg.Wait()
	seen := map[string]int{}
	for c := range claimers {
		if errs[c] != nil {
			t.Fatalf("claimer %d: %v", c, errs[c])
		}
		for _, id := range got[c] {
			if prev, ok := seen[id]; ok {
				t.Fatalf("run %s claimed by %d and %d", id, prev, c)
			}
			seen[id] = c
		}
	}
	if len(seen) != runs {
		t.Fatalf("%d runs claimed, want %d", len(seen), runs)
	}
	for id, c := range seen {
		if r := mustRun(t, db, id); r.LeaseOwner != fmt.Sprint("replica-", c) {
			t.Fatalf("run %s leased to %s, claimed by %d", id, r.LeaseOwner, c)
		}
	}
}

func testScenarioRenewLeases(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	until := t0.Add(time.Minute)
	lease := func(id, owner string, state bff.ScenarioRunState) {
		r := newRun(id, t0)
		r.State, r.LeaseOwner, r.LeaseUntil = state, owner, until
		mustCreateRun(t, db, r)
	}
	lease("sr_1", "a", bff.RunActive)
	lease("sr_2", "a", bff.RunWaiting)
	lease("sr_3", "a", bff.RunDone)
	lease("sr_4", "b", bff.RunActive)
	later := until.Add(time.Minute)
	n, err := db.RenewScenarioLeases(ctx, "a", later)
	if err != nil || n != 2 {
		t.Fatalf("renew: %d, %v; want 2", n, err)
	}
	for id, want := range map[string]time.Time{"sr_1": later, "sr_2": later, "sr_3": until, "sr_4": until} {
		if r := mustRun(t, db, id); !r.LeaseUntil.Equal(want) {
			t.Fatalf("%s leased until %v, want %v", id, r.LeaseUntil, want)
		}
	}
	if n, err := db.RenewScenarioLeases(ctx, "c", later); err != nil || n != 0 {
		t.Fatalf("renew of none: %d, %v", n, err)
	}
}

// claimed creates run id (two pending items) and leases it to owner.
func claimed(t *testing.T, db bff.ScenarioRunStore, id, owner string) *bff.ScenarioRun {
	t.Helper()
	mustCreateRun(t, db, newRun(id, t0),
		&bff.ScenarioItem{Seq: 0, VignetteID: "chest_pain", Repeat: 1, UpdatedAt: t0},
		&bff.ScenarioItem{Seq: 1, VignetteID: "cold", Repeat: 1, UpdatedAt: t0})
	r, err := db.ClaimScenarioRun(context.Background(), owner, t0, t0, t0.Add(time.Hour))
	if err != nil || r.ID != id {
		t.Fatalf("claim %s: %v, %v", id, r, err)
	}
	return r
}

func testScenarioUpdateConflicts(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	r := claimed(t, db, "sr_1", "me")
	before := mustRun(t, db, "sr_1")

	// Another owner: nothing written.
	up := *r
	up.State, up.Note = bff.RunActive, "other's"
	WantCode(t, db.UpdateScenarioRun(ctx, &up, "other"), bff.ECONFLICT)
	WantCode(t, db.UpdateScenarioRun(ctx, &up, ""), bff.ECONFLICT)
	checkRun(t, mustRun(t, db, "sr_1"), before)

	// The owner writes every field it may, and not Played or TurnsUsed.
	up = *r
	up.State, up.NotBefore, up.Note, up.UpdatedAt = bff.RunWaiting, t0.Add(24*time.Hour), "quota spent", t0.Add(time.Minute)
	up.FinishedAt, up.Release, up.LeaseUntil = t0.Add(2*time.Minute), "2.5.0", t0.Add(3*time.Hour)
	up.Played, up.TurnsUsed, up.Label, up.Estimate = 9, 99, "relabelled", 1
	up.Summary = sampleSummary()
	if err := db.UpdateScenarioRun(ctx, &up, "me"); err != nil {
		t.Fatal(err)
	}
	want := stored(up, *before)
	checkRun(t, mustRun(t, db, "sr_1"), &want)

	// Ended with the lease still held: the owner may write no more.
	r2 := claimed(t, db, "sr_2", "me")
	done := *r2
	done.State, done.FinishedAt, done.Note = bff.RunDone, t0.Add(time.Hour), "finished"
	if err := db.UpdateScenarioRun(ctx, &done, "me"); err != nil {
		t.Fatal(err)
	}
	again := done
	again.State, again.Note = bff.RunActive, "revived"
	WantCode(t, db.UpdateScenarioRun(ctx, &again, "me"), bff.ECONFLICT)
	if got := mustRun(t, db, "sr_2"); got.State != bff.RunDone || got.Note != "finished" || got.LeaseOwner != "me" {
		t.Fatalf("ended run rewritten: %s", dumpJSON(got))
	}

	// Releasing the lease: the owner holds it no more.
	up.State, up.NotBefore, up.FinishedAt, up.LeaseOwner, up.LeaseUntil = bff.RunActive, time.Time{}, time.Time{}, "", time.Time{}
	if err := db.UpdateScenarioRun(ctx, &up, "me"); err != nil {
		t.Fatal(err)
	}
	want = stored(up, *before)
	checkRun(t, mustRun(t, db, "sr_1"), &want)
	WantCode(t, db.UpdateScenarioRun(ctx, &up, "me"), bff.ECONFLICT)
	WantCode(t, db.UpdateScenarioRun(ctx, &up, ""), bff.ECONFLICT)

	none := *r
	none.ID = "sr_none"
	WantCode(t, db.UpdateScenarioRun(ctx, &none, "me"), bff.ENOTFOUND)
}

// stored is up as UpdateScenarioRun stores it: Played, TurnsUsed, Label
// and Estimate as before.
func stored(up, before bff.ScenarioRun) bff.ScenarioRun {
	up.Played, up.TurnsUsed, up.Label, up.Estimate = before.Played, before.TurnsUsed, before.Label, before.Estimate
	return up
}

func testScenarioSaveItem(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	r := claimed(t, db, "sr_1", "me")
	check := func(played, turns int) {
		t.Helper()
		if got := mustRun(t, db, "sr_1"); got.Played != played || got.TurnsUsed != turns {
			t.Fatalf("played %d, turns used %d; want %d, %d", got.Played, got.TurnsUsed, played, turns)
		}
	}
	it := mustItem(t, db, "sr_1", 0)
	it.State, it.EncounterID, it.UpdatedAt = bff.ItemPlaying, "enc_1", t0.Add(time.Minute)
	it.Turns = []scenarios.Exchange{{Message: "hi", Reply: "Since when?", Choices: []string{"Today"}}}
	if err := db.SaveScenarioItem(ctx, it, 2, "me"); err != nil {
		t.Fatal(err)
	}
	checkScenarioItem(t, mustItem(t, db, "sr_1", 0), it)
	check(0, 2)

	// playing -> done: one more played.
	it.State, it.UpdatedAt = bff.ItemDone, t0.Add(2*time.Minute)
	it.Turns = append(it.Turns, scenarios.Exchange{Message: "Today", Reply: "Rest.", Terminal: true, Disposition: "self_care"})
	it.Result = &scenarios.Result{VignetteID: "chest_pain", Repeat: 1, Final: scenarios.SelfCare,
		Outcome: &scenarios.Outcome{Triage: scenarios.TriageUnder}}
	it.Handoff = []byte(`{"a":1}`)
	if err := db.SaveScenarioItem(ctx, it, 3, "me"); err != nil {
		t.Fatal(err)
	}
	checkScenarioItem(t, mustItem(t, db, "sr_1", 0), it)
	check(1, 5)

	// done -> done: no more played.
	if err := db.SaveScenarioItem(ctx, it, 0, "me"); err != nil {
		t.Fatal(err)
	}
	check(1, 5)

	// pending -> failed: one more played.
	it1 := mustItem(t, db, "sr_1", 1)
	it1.State, it1.Result = bff.ItemFailed, &scenarios.Result{VignetteID: "cold", Error: "boom"}
	if err := db.SaveScenarioItem(ctx, it1, 1, "me"); err != nil {
		t.Fatal(err)
	}
	check(2, 6)

	// Another owner, or none: nothing written.
	other := *it1
	other.State, other.EncounterID = bff.ItemPlaying, "enc_other"
	WantCode(t, db.SaveScenarioItem(ctx, &other, 4, "other"), bff.ECONFLICT)
	WantCode(t, db.SaveScenarioItem(ctx, &other, 4, ""), bff.ECONFLICT)
	checkScenarioItem(t, mustItem(t, db, "sr_1", 1), it1)
	check(2, 6)

	// No such item or run: nothing written.
	missing := *it1
	missing.Seq = 9
	WantCode(t, db.SaveScenarioItem(ctx, &missing, 4, "me"), bff.ENOTFOUND)
	check(2, 6)
	missing.RunID = "sr_none"
	WantCode(t, db.SaveScenarioItem(ctx, &missing, 4, "me"), bff.ENOTFOUND)

	// Ended, the lease still held: nothing written.
	r2 := claimed(t, db, "sr_2", "me")
	done := *r2
	done.State = bff.RunDone
	if err := db.UpdateScenarioRun(ctx, &done, "me"); err != nil {
		t.Fatal(err)
	}
	late := mustItem(t, db, "sr_2", 0)
	late.State, late.EncounterID = bff.ItemDone, "enc_late"
	WantCode(t, db.SaveScenarioItem(ctx, late, 4, "me"), bff.ECONFLICT)
	if got := mustItem(t, db, "sr_2", 0); got.State != bff.ItemPending || got.EncounterID != "" {
		t.Fatalf("item of an ended run written: %s", dumpJSON(got))
	}
	if got := mustRun(t, db, "sr_2"); got.Played != 0 || got.TurnsUsed != 0 {
		t.Fatalf("ended run counted: played %d, turns used %d", got.Played, got.TurnsUsed)
	}

	// Cancelled under the player: it must stop.
	if err := db.CancelScenarioRun(ctx, r.ID, "stop", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	WantCode(t, db.SaveScenarioItem(ctx, it, 1, "me"), bff.ECONFLICT)
	check(2, 6)
}

func testScenarioCancel(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	WantCode(t, db.CancelScenarioRun(ctx, "sr_none", "stop", t0), bff.ENOTFOUND)

	r := claimed(t, db, "sr_1", "me")
	at := t0.Add(time.Hour)
	if err := db.CancelScenarioRun(ctx, "sr_1", "stopped by dr_who", at); err != nil {
		t.Fatal(err)
	}
	want := *r
	want.State, want.Note, want.FinishedAt, want.UpdatedAt = bff.RunCancelled, "stopped by dr_who", at, at
	want.LeaseOwner, want.LeaseUntil = "", time.Time{}
	checkRun(t, mustRun(t, db, "sr_1"), &want)
	WantCode(t, db.CancelScenarioRun(ctx, "sr_1", "again", at.Add(time.Hour)), bff.ECONFLICT)
	checkRun(t, mustRun(t, db, "sr_1"), &want)

	d := newRun("sr_2", t0)
	d.State = bff.RunDone
	mustCreateRun(t, db, d)
	WantCode(t, db.CancelScenarioRun(ctx, "sr_2", "late", at), bff.ECONFLICT)
	checkRun(t, mustRun(t, db, "sr_2"), d)

	// A waiting run without a lease is cancelled too.
	w := newRun("sr_3", t0)
	w.State, w.NotBefore = bff.RunWaiting, at.Add(time.Hour)
	mustCreateRun(t, db, w)
	if err := db.CancelScenarioRun(ctx, "sr_3", "stop", at); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, db, "sr_3"); got.State != bff.RunCancelled {
		t.Fatalf("waiting run %s after cancel", got.State)
	}
}

func testScenarioAdjudications(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	if as, err := db.ScenarioAdjudications(ctx); err != nil || len(as) != 0 {
		t.Fatalf("adjudications of a fresh store: %v, %v", as, err)
	}
	var want []*bff.ScenarioAdjudication
	for i, a := range []scenarios.Adjudication{
		{VignetteID: "chest_pain", Verdict: scenarios.GoldWrong, Gold: scenarios.Emergency, Note: "gold too high", By: "dr_a", At: t0.Add(time.Hour)},
		{VignetteID: "cold", Verdict: scenarios.EngineWrong, Note: "missed", By: "dr_b", At: t0}, // earlier time, added later
		{VignetteID: "chest_pain", Verdict: scenarios.EngineWrong, Gold: scenarios.Urgent, Note: "on reflection", By: "dr_a", At: t0.Add(2 * time.Hour)},
	} {
		ra := &bff.ScenarioAdjudication{Adjudication: a, BaseRun: fmt.Sprint("sr_base", i), HeadRun: "sr_head"}
		if err := db.AddScenarioAdjudication(ctx, ra); err != nil {
			t.Fatal(err)
		}
		if len(want) > 0 && ra.ID <= want[len(want)-1].ID {
			t.Fatalf("adjudication %d got id %d after %d", i, ra.ID, want[len(want)-1].ID)
		}
		want = append(want, ra)
	}
	got, err := db.ScenarioAdjudications(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d adjudications, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := *got[i], *want[i]
		if !g.At.Equal(w.At) {
			t.Fatalf("adjudication %d at %v, want %v", i, g.At, w.At)
		}
		g.At, w.At = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("adjudication %d\n got %+v\nwant %+v", i, g, w)
		}
	}
}
