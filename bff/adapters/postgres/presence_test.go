package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
)

// A replica's presence lives as long as its connection: while held, its
// turns are not gone and not claimable; a connection killed under a live
// replica is taken again; once the replica stops (its connection closes),
// its turns are gone at once and another replica claims them. A lease
// owner that never held a presence (a replica without one) is never gone.
func TestReplicaPresence(t *testing.T) {
	a, url := openDB(t)
	b := openURL(t, url)
	ctx := context.Background()
	now := time.Now()
	for _, id := range []string{"in_a", "in_legacy"} {
		in := &bff.Intake{ID: id, Owner: "o", CreatedAt: now, ExpiresAt: now.Add(time.Hour), UpdatedAt: now, Status: bff.StatusOpen}
		if err := a.CreateIntake(ctx, in); err != nil {
			t.Fatal(err)
		}
		if err := a.CreateTurn(ctx, &bff.Turn{IntakeID: id, SubmissionID: "s", Message: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, owner := range []string{"replica-a", "legacy"} {
		if ts, err := a.ClaimStaleTurns(ctx, owner, now, now.Add(time.Hour), 1); err != nil || len(ts) != 1 {
			t.Fatalf("lease a turn to %s: %v, %v", owner, ts, err)
		}
	}

	held := make(chan bool, 16)
	hctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.HoldPresence(hctx, "replica-a", func(h bool) { held <- h }) }()
	defer func() {
		stop()
		<-done
	}()
	if !recv(t, held, "presence held") {
		t.Fatal("presence reported lost before it was held")
	}
	gone := func() []string {
		t.Helper()
		names, err := b.GoneReplicas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	if g := gone(); len(g) != 0 {
		t.Fatalf("gone while present: %v", g)
	}
	if ts, err := b.ClaimTurnsOf(ctx, "replica-b", []string{"replica-a", "legacy"}, now.Add(time.Hour), 10); err != nil || len(ts) != 0 {
		t.Fatalf("claimed a present replica's (or a lease-only replica's) turns: %v, %v", ts, err)
	}

	// The connection is killed under a live replica: it takes its presence again.
	if _, err := b.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, postgres.PresenceApplicationName); err != nil {
		t.Fatal(err)
	}
	if recv(t, held, "presence lost") || !recv(t, held, "presence held again") {
		t.Fatal("want lost, then held again")
	}
	if g := gone(); len(g) != 0 {
		t.Fatalf("gone once present again: %v", g)
	}

	// The replica stops: its connection closes and the server frees the lock.
	stop()
	if err := <-done; err != context.Canceled {
		t.Fatalf("HoldPresence returned %v", err)
	}
	done <- nil // for the deferred wait
	// The server ends the closed session, and frees its lock, a moment
	// after the close.
	stopAt := time.Now()
	for g := gone(); !slices.Equal(g, []string{"replica-a"}); g = gone() {
		if time.Since(stopAt) > deadline {
			t.Fatalf("gone after the replica stopped: %v, want [replica-a]", g)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the lock was free %v after the connection closed", time.Since(stopAt))
	ts, err := b.ClaimTurnsOf(ctx, "replica-b", []string{"replica-a", "legacy"}, now.Add(time.Hour), 10)
	if err != nil || len(ts) != 1 || ts[0].IntakeID != "in_a" || ts[0].LeaseOwner != "replica-b" {
		t.Fatalf("claim the gone replica's turns: %+v, %v; want in_a's, leased to replica-b", ts, err)
	}
	if g := gone(); len(g) != 0 {
		t.Fatalf("gone once its turns were claimed: %v", g)
	}
}
