package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// pendingTurn creates an intake id and a queued turn of it, leased to owner
// until until (none when owner is "").
func pendingTurn(t *testing.T, db Stores, id, owner string, until time.Time) *bff.Turn {
	t.Helper()
	MustCreateIntake(t, db, id)
	tn := &bff.Turn{IntakeID: id, SubmissionID: "s-" + id, Message: "hi " + id, LeaseOwner: owner, LeaseUntil: until}
	if err := db.CreateTurn(context.Background(), tn); err != nil {
		t.Fatalf("CreateTurn(%s): %v", id, err)
	}
	return tn
}

func claimedKeys(ts []*bff.Turn) []string {
	var keys []string
	for _, tn := range ts {
		keys = append(keys, bff.TurnKey(tn.IntakeID, tn.Index))
	}
	return keys
}

func testEncounterID(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	a := NewIntake("in_a", "alice", t0)
	a.EncounterID = "enc_1"
	b := NewIntake("in_b", "alice", t0) // not created upstream yet
	c := NewIntake("in_c", "alice", t0)
	for _, in := range []*bff.Intake{a, b, c} {
		if err := db.CreateIntake(ctx, in); err != nil {
			t.Fatalf("CreateIntake(%s): %v", in.ID, err)
		}
	}
	for _, want := range []*bff.Intake{a, b} {
		if got, err := db.Intake(ctx, want.ID); err != nil || got.EncounterID != want.EncounterID {
			t.Fatalf("Intake(%s): encounter %q, %v; want %q", want.ID, got.EncounterID, err, want.EncounterID)
		}
	}
	b.EncounterID = "enc_2"
	if err := db.UpdateIntake(ctx, b); err != nil {
		t.Fatal(err)
	}
	a.EncounterID = "enc_9" // replaced, not kept
	if err := db.UpdateIntake(ctx, a); err != nil {
		t.Fatal(err)
	}
	ins, err := db.IntakesByOwner(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var encs []string
	for _, in := range ins {
		encs = append(encs, in.EncounterID)
	}
	slices.Sort(encs)
	if !slices.Equal(encs, []string{"", "enc_2", "enc_9"}) {
		t.Fatalf("encounters %q", encs)
	}
	// An encounter belongs to one intake.
	c.EncounterID = "enc_9"
	WantCode(t, db.UpdateIntake(ctx, c), bff.ECONFLICT)
	d := NewIntake("in_d", "bob", t0)
	d.EncounterID = "enc_2"
	WantCode(t, db.CreateIntake(ctx, d), bff.ECONFLICT)
}

func testCreateTurnKeepsLease(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	until := t0.Add(30 * time.Second)
	tn := pendingTurn(t, db, "in_l", "replica-a", until)
	got, err := db.Turn(ctx, "in_l", tn.Index)
	if err != nil || got.LeaseOwner != "replica-a" || !got.LeaseUntil.Equal(until) {
		t.Fatalf("lease %q until %v (%v), want replica-a until %v", got.LeaseOwner, got.LeaseUntil, err, until)
	}
	// UpdateTurn writes the lease too.
	got.LeaseOwner, got.LeaseUntil = "", time.Time{}
	if err := db.UpdateTurn(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Turn(ctx, "in_l", tn.Index); err != nil || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
		t.Fatalf("after UpdateTurn lease %q until %v (%v)", got.LeaseOwner, got.LeaseUntil, err)
	}
}

// An expired lease (to the instant) and no lease are claimable, oldest
// first; a live lease and settled turns are not.
func testClaimStaleTurns(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	now := t0.Add(time.Minute)
	pendingTurn(t, db, "in_1", "", time.Time{})                    // never leased
	pendingTurn(t, db, "in_2", "dead", now)                        // ran out just now
	pendingTurn(t, db, "in_3", "alive", now.Add(time.Microsecond)) // still held
	pendingTurn(t, db, "in_4", "alive", now.Add(time.Second))
	settled := pendingTurn(t, db, "in_5", "", time.Time{})
	settled.Status = bff.TurnCompleted
	if err := db.SettleTurn(ctx, settled, nil); err != nil {
		t.Fatal(err)
	}
	until := now.Add(30 * time.Second)
	got, err := db.ClaimStaleTurns(ctx, "me", now, until, 10)
	if err != nil {
		t.Fatal(err)
	}
	if keys := claimedKeys(got); !slices.Equal(keys, []string{"in_1/1", "in_2/1"}) {
		t.Fatalf("claimed %v, want [in_1/1 in_2/1]", keys)
	}
	for _, tn := range got {
		if tn.LeaseOwner != "me" || !tn.LeaseUntil.Equal(until) || tn.Status != bff.TurnQueued {
			t.Fatalf("claimed turn %s: lease %q until %v, status %s", tn.IntakeID, tn.LeaseOwner, tn.LeaseUntil, tn.Status)
		}
		if stored, err := db.Turn(ctx, tn.IntakeID, tn.Index); err != nil || stored.LeaseOwner != "me" || !stored.LeaseUntil.Equal(until) {
			t.Fatalf("stored lease of %s: %q until %v (%v)", tn.IntakeID, stored.LeaseOwner, stored.LeaseUntil, err)
		}
	}
	// Now held by me: nobody else gets them before until.
	if again, err := db.ClaimStaleTurns(ctx, "other", now, until, 10); err != nil || len(again) != 0 {
		t.Fatalf("second claim got %v, %v", claimedKeys(again), err)
	}
	// n bounds the claim, oldest first.
	later := now.Add(time.Hour)
	if got, err := db.ClaimStaleTurns(ctx, "other", later, later.Add(time.Minute), 1); err != nil || !slices.Equal(claimedKeys(got), []string{"in_1/1"}) {
		t.Fatalf("claim 1 got %v, %v", claimedKeys(got), err)
	}
	if got, err := db.ClaimStaleTurns(ctx, "other", later, later.Add(time.Minute), 0); err != nil || len(got) != 0 {
		t.Fatalf("claim 0 got %v, %v", claimedKeys(got), err)
	}
}

// Claimers running at once on many stale turns: every turn is claimed by
// exactly one of them.
func testConcurrentClaimsNeverShare(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	const turns, claimers = 60, 8
	for i := range turns {
		pendingTurn(t, db, fmt.Sprintf("in_%02d", i), "", time.Time{})
	}
	now := t0.Add(time.Minute)
	got := make([][]string, claimers)
	errs := make([]error, claimers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Go(func() {
			<-start
			for {
				ts, err := db.ClaimStaleTurns(ctx, fmt.Sprint("replica-", c), now, now.Add(time.Minute), 3)
				if err != nil {
					errs[c] = err
					return
				}
				if len(ts) == 0 {
					return
				}
				for _, tn := range ts {
					if tn.LeaseOwner != fmt.Sprint("replica-", c) {
						errs[c] = fmt.Errorf("turn %s came back leased to %q", tn.IntakeID, tn.LeaseOwner)
						return
					}
				}
				got[c] = append(got[c], claimedKeys(ts)...)
			}
		})
	}
	close(start)
	wg.Wait()
	seen := map[string]int{}
	for c := range claimers {
		if errs[c] != nil {
			t.Fatalf("claimer %d: %v", c, errs[c])
		}
		for _, k := range got[c] {
			if prev, ok := seen[k]; ok {
				t.Fatalf("turn %s claimed by %d and %d", k, prev, c)
			}
			seen[k] = c
		}
	}
	if len(seen) != turns {
		t.Fatalf("%d turns claimed, want %d", len(seen), turns)
	}
}

func testRenewLeases(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	until := t0.Add(time.Minute)
	pendingTurn(t, db, "in_1", "a", until)
	pendingTurn(t, db, "in_2", "a", until)
	pendingTurn(t, db, "in_3", "b", until)
	done := pendingTurn(t, db, "in_4", "a", until)
	done.Status = bff.TurnFailed
	if err := db.SettleTurn(ctx, done, nil); err != nil {
		t.Fatal(err)
	}
	// A settled turn whose lease was left in place (UpdateTurn writes it as
	// given) is not renewed: only pending turns are.
	kept := pendingTurn(t, db, "in_5", "a", until)
	kept.Status = bff.TurnCompleted
	if err := db.UpdateTurn(ctx, kept); err != nil {
		t.Fatal(err)
	}
	later := until.Add(time.Minute)
	if n, err := db.RenewLeases(ctx, "a", later); err != nil || n != 2 {
		t.Fatalf("RenewLeases(a) = %d, %v; want 2", n, err)
	}
	if n, err := db.RenewLeases(ctx, "nobody", later); err != nil || n != 0 {
		t.Fatalf("RenewLeases(nobody) = %d, %v; want 0", n, err)
	}
	for id, want := range map[string]time.Time{"in_1": later, "in_2": later, "in_3": until} {
		if got, err := db.Turn(ctx, id, 1); err != nil || !got.LeaseUntil.Equal(want) {
			t.Fatalf("%s lease until %v (%v), want %v", id, got.LeaseUntil, err, want)
		}
	}
	if got, err := db.Turn(ctx, "in_4", 1); err != nil || !got.LeaseUntil.IsZero() || got.LeaseOwner != "" {
		t.Fatalf("settled turn's lease %q until %v (%v)", got.LeaseOwner, got.LeaseUntil, err)
	}
}

// A replica whose lease was taken over can neither start nor settle the
// turn, and writes nothing trying.
func testLostLease(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	mine := pendingTurn(t, db, "in_x", "old", t0.Add(time.Second))
	now := t0.Add(time.Minute)
	if got, err := db.ClaimStaleTurns(ctx, "new", now, now.Add(time.Minute), 5); err != nil || len(got) != 1 {
		t.Fatalf("takeover claimed %v, %v", claimedKeys(got), err)
	}
	before, err := db.Intake(ctx, "in_x")
	if err != nil {
		t.Fatal(err)
	}

	stale := *mine
	stale.Release = "r-old"
	WantCode(t, db.MarkTurnStreaming(ctx, &stale), bff.ECONFLICT)

	stale.Status, stale.Reply = bff.TurnCompleted, "old reply"
	now2 := now.Add(time.Second)
	stale.CompletedAt = &now2
	in := *before
	in.TurnCount, in.Status, in.Terminal = 1, bff.StatusClosed, true
	WantCode(t, db.SettleTurn(ctx, &stale, &in), bff.ECONFLICT)

	got, err := db.Turn(ctx, "in_x", mine.Index)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != bff.TurnQueued || got.Reply != "" || got.Release != "" || got.LeaseOwner != "new" {
		t.Fatalf("after lost-lease writes: status %s reply %q release %q lease %q", got.Status, got.Reply, got.Release, got.LeaseOwner)
	}
	if after, err := db.Intake(ctx, "in_x"); err != nil || !equalIntake(after, before) {
		t.Fatalf("intake changed by a lost lease: %+v (%v)", after, err)
	}
	WantCode(t, db.MarkTurnStreaming(ctx, &bff.Turn{IntakeID: "in_x", Index: 9, LeaseOwner: "new"}), bff.ENOTFOUND)
}

// The lease holder starts and settles its turn: streaming with the release,
// then settled with the intake in one go, lease cleared.
func testSettleTurn(t *testing.T, open Opener) {
	db := open(t, fixedClock())
	ctx := context.Background()
	tn := pendingTurn(t, db, "in_s", "me", t0.Add(time.Minute))
	tn.Release = "r1"
	if err := db.MarkTurnStreaming(ctx, tn); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Turn(ctx, "in_s", tn.Index); err != nil || got.Status != bff.TurnStreaming || got.Release != "r1" || got.LeaseOwner != "me" {
		t.Fatalf("after MarkTurnStreaming: %s (%v)", DumpTurn(got), err)
	}
	in, err := db.Intake(ctx, "in_s")
	if err != nil {
		t.Fatal(err)
	}
	done := t0.Add(2 * time.Second)
	tn.Status, tn.Reply, tn.Choices, tn.CompletedAt = bff.TurnCompleted, "Hello", []string{"Yes"}, &done
	in.TurnCount, in.EncounterID, in.Urgent, in.UpdatedAt = 1, "enc_s", true, done
	if err := db.SettleTurn(ctx, tn, in); err != nil {
		t.Fatal(err)
	}
	if tn.LeaseOwner != "" || !tn.LeaseUntil.IsZero() {
		t.Fatalf("SettleTurn left t's lease %q until %v", tn.LeaseOwner, tn.LeaseUntil)
	}
	got, err := db.Turn(ctx, "in_s", tn.Index)
	if err != nil || !EqualTurn(got, tn) {
		t.Fatalf("settled turn\ngot  %s\nwant %s (%v)", DumpTurn(got), DumpTurn(tn), err)
	}
	if gotIn, err := db.Intake(ctx, "in_s"); err != nil || !equalIntake(gotIn, in) {
		t.Fatalf("settled intake %+v, want %+v (%v)", gotIn, in, err)
	}
	// Settled: the old holder can no longer start it; a turn without a lease
	// owner settles unconditionally (as a restart without leases does).
	tn.LeaseOwner = "me"
	WantCode(t, db.MarkTurnStreaming(ctx, tn), bff.ECONFLICT)
	free := pendingTurn(t, db, "in_f", "", time.Time{})
	free.Status = bff.TurnFailed
	if err := db.SettleTurn(ctx, free, nil); err != nil {
		t.Fatal(err)
	}
	// SettleTurn of an intake that does not exist writes nothing.
	ghost := pendingTurn(t, db, "in_g", "", time.Time{})
	ghost.Status = bff.TurnFailed
	WantCode(t, db.SettleTurn(ctx, ghost, NewIntake("in_missing", "x", t0)), bff.ENOTFOUND)
	if got, err := db.Turn(ctx, "in_g", ghost.Index); err != nil || got.Status != bff.TurnQueued {
		t.Fatalf("turn of a failed settlement: %s (%v)", DumpTurn(got), err)
	}
}
