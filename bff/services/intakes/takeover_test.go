package intakes_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/sandboxtest"
)

// replica is one app replica's core on a shared database file.
func replica(t *testing.T, name, path string, sb *sandboxtest.Server) (core, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	client, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, HTTPClient: sb.Client})
	if err != nil {
		t.Fatal(err)
	}
	return newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: relay.NewHub(time.Minute, nil),
		Replica: name, Lease: 30 * time.Second, Shared: true}), db
}

// TestADeadReplicasTurnIsTakenOverAfterItsLease: replica A sends a turn and
// dies mid-call (its runner abandoned, its lease no longer renewed).
// Replica B, sweeping, leaves the turn alone while A's lease lasts, then
// takes it over and settles it from the service's record: landed once,
// with the service's reply, and the engine ran once.
func TestADeadReplicasTurnIsTakenOverAfterItsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := sandbox.DefaultConfig()
		cfg.Keys, cfg.Engine = []string{key}, enginetest.Scripted{}
		cfg.RPM, cfg.FragmentDelay, cfg.Faults, cfg.SlowStart = 0, time.Millisecond, true, 5*time.Second
		sb := sandboxtest.Start(t, cfg)
		path := filepath.Join(t.TempDir(), "shared.db")
		ctx := context.Background()

		a, dbA := replica(t, "replica-a", path, sb)
		b, dbB := replica(t, "replica-b", path, sb)
		in, err := a.StartIntake(ctx, "owner", bff.StartForm{Synthetic: true, SubmissionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{t: t, sb: sb, db: dbA}
		f.arm(in.ID, "slow_start")
		turn, err := a.SendTurn(ctx, "owner", in.ID, "a message in flight", "sub-1")
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the call has reached the sandbox and waits in its slow start
		stop, cancel := context.WithTimeout(ctx, time.Millisecond)
		_ = a.Shutdown(stop) // A dies: its turn stays pending, leased to it
		cancel()

		serve, stopServe := context.WithCancel(ctx)
		defer stopServe()
		go b.Serve(serve)
		time.Sleep(20 * time.Second) // within A's lease (fake clock)
		synctest.Wait()
		if n := b.TakenOver(); n != 0 {
			t.Fatalf("B took over %d turns while A's lease was live", n)
		}
		time.Sleep(30 * time.Second) // A's lease ran out; B's next sweep takes the turn
		synctest.Wait()
		if n := b.TakenOver(); n != 1 {
			t.Fatalf("B took over %d turns after A's lease ran out, want 1", n)
		}
		wctx, wcancel := context.WithTimeout(ctx, time.Minute)
		defer wcancel()
		b.WaitSettled(wctx, in.ID, turn.Index)
		got, err := dbB.Turn(ctx, in.ID, turn.Index)
		if err != nil {
			t.Fatal(err)
		}
		f.db = dbB
		conv, _ := f.upstream(in.ID)
		if len(conv) != 2 || conv[0].Text != "a message in flight" {
			t.Fatalf("the sandbox's record: %+v (want the message exactly once)", conv)
		}
		if got.Status != bff.TurnCompleted || got.Reply != conv[1].Text || got.LeaseOwner != "" {
			t.Fatalf("after the takeover the turn is %s %q (%s), lease %q; the sandbox says %q", got.Status, got.Reply, got.ErrorMessage, got.LeaseOwner, conv[1].Text)
		}
		if n := sb.Service.Stats().EngineRuns; n != 1 {
			t.Fatalf("the engine ran %d times for one message", n)
		}
		stopServe()
		_ = b.Shutdown(ctx)
	})
}

// failingStart is a store whose record of a turn's start fails.
type failingStart struct{ *sqlite.DB }

func (failingStart) MarkTurnStreaming(context.Context, *bff.Turn) error {
	return errors.New("disk full")
}

// A turn whose start could not be recorded is not sent: a replica taking it
// over later would send it again. The patient is told nothing was sent.
func TestATurnWhoseStartIsNotRecordedIsNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := sandbox.DefaultConfig()
		cfg.Keys, cfg.Engine, cfg.RPM, cfg.FragmentDelay = []string{key}, enginetest.Scripted{}, 0, time.Millisecond
		sb := sandboxtest.Start(t, cfg)
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "app.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		client, _ := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, HTTPClient: sb.Client})
		svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Queue: failingStart{db}, Hub: relay.NewHub(time.Minute, nil)})
		defer func() { _ = svc.Shutdown(context.Background()) }()
		ctx := context.Background()
		in, _ := svc.StartIntake(ctx, "owner", bff.StartForm{Synthetic: true, SubmissionID: "s"})
		turn, err := svc.SendTurn(ctx, "owner", in.ID, "hello", "sub-1")
		if err != nil {
			t.Fatal(err)
		}
		svc.WaitSettled(ctx, in.ID, turn.Index)
		got, _ := db.Turn(ctx, in.ID, turn.Index)
		if got.Status != bff.TurnFailed || got.ErrorCode != bff.CodeNotStarted || !got.Retryable() {
			t.Fatalf("the turn is %s/%q (%s)", got.Status, got.ErrorCode, got.ErrorMessage)
		}
		if n := sb.Service.Stats().Requests["turn"]; n != 0 {
			t.Fatalf("%d turns reached the service", n)
		}
	})
}
