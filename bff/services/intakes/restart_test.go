package intakes_test

import (
	"context"
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

// appRun is one run of the app's core on a database file that outlives it.
func appRun(t *testing.T, path string, upstream *sandboxtest.Server) (core, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := intakeapi.New(intakeapi.Config{BaseURL: upstream.URL, APIKey: key, HTTPClient: upstream.Client})
	if err != nil {
		t.Fatal(err)
	}
	svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: relay.NewHub(time.Minute, nil)})
	return svc, db
}

// TestRestartMidTurnSettlesOnce stops the app while a turn is running
// upstream (the sandbox is slow to start it), starts it again on the same
// database, and checks the turn is settled from the service's record: landed
// exactly once, reply as the service gave it.
func TestRestartMidTurnSettlesOnce(t *testing.T) {
	for _, blocking := range []bool{true, false} {
		name := map[bool]string{true: "blocking", false: "streaming"}[blocking]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := sandbox.DefaultConfig()
				cfg.Keys, cfg.Engine = []string{key}, enginetest.Scripted{}
				cfg.RPM, cfg.FragmentDelay, cfg.Faults, cfg.SlowStart = 0, time.Millisecond, true, 800*time.Millisecond
				sb := sandboxtest.Start(t, cfg)
				path := filepath.Join(t.TempDir(), "app.db")
				ctx := context.Background()

				first, db1 := appRun(t, path, sb)
				in, err := first.StartIntake(ctx, "owner", bff.StartForm{Synthetic: true, SubmissionID: "s"})
				if err != nil {
					t.Fatal(err)
				}
				f := &fixture{t: t, sb: sb, db: db1}
				f.arm(in.ID, "slow_start")
				send := first.SendTurn
				if blocking {
					send = first.SendTurnBlocking
				}
				turn, err := send(ctx, "owner", in.ID, "a message in flight", "sub-1")
				if err != nil {
					t.Fatal(err)
				}
				// Stop at once: the running turn is abandoned mid-call.
				// Once every goroutine is blocked, the call has reached the
				// sandbox and waits in its slow start.
				synctest.Wait()
				if n := sb.Service.Stats().Requests["turn"]; n != 1 {
					t.Fatalf("%d turns reached the sandbox before the stop, want 1", n)
				}
				stop, cancel := context.WithTimeout(ctx, time.Millisecond)
				_ = first.Shutdown(stop)
				cancel()
				db1.Close()

				second, db2 := appRun(t, path, sb)
				defer db2.Close()
				f.db = db2
				defer func() { _ = second.Shutdown(ctx) }()
				pending, _ := db2.PendingTurns(ctx)
				if len(pending) != 1 {
					t.Fatalf("%d turns pending after the stop, want the one in flight", len(pending))
				}
				if n, err := second.Recover(ctx); err != nil || n != 1 {
					t.Fatalf("recover: %d, %v", n, err)
				}
				wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
				defer wcancel()
				second.WaitSettled(wctx, in.ID, turn.Index)
				_, got, err := second.Turn(ctx, "owner", in.ID, turn.Index)
				if err != nil {
					t.Fatal(err)
				}
				conv, _ := f.upstream(in.ID)
				if len(conv) != 2 || conv[0].Text != "a message in flight" {
					t.Fatalf("the sandbox's record: %+v (want the message exactly once)", conv)
				}
				if got.Status != bff.TurnCompleted || got.Reply != conv[1].Text {
					t.Fatalf("after restart the turn is %s %q (%s), the sandbox says %q", got.Status, got.Reply, got.ErrorMessage, conv[1].Text)
				}
				if n := sb.Service.Stats().EngineRuns; n != 1 {
					t.Fatalf("the engine ran %d times for one message", n)
				}
			})
		})
	}
}

func TestBlockingResubmissionReplays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t)
		id := f.start()
		ctx := context.Background()
		// The first answer is lost on the way back (the connection is cut after
		// the turn landed); the runner sends it again with the same key.
		f.arm(id, "stream_drop")
		t1, err := f.svc.SendTurnBlocking(ctx, "owner-1", id, "hello", "form-1")
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		f.svc.WaitSettled(wctx, id, t1.Index)
		_, got, _ := f.svc.Turn(ctx, "owner-1", id, t1.Index)
		if got.Status != bff.TurnCompleted || got.Reply != "Reply 1: You said \"hello\".\n  Anything else?" {
			t.Fatalf("turn = %s %q %s", got.Status, got.Reply, got.ErrorMessage)
		}
		// The browser resubmits the same form: the same turn, nothing sent.
		before := f.sb.Service.Stats().Requests["turn"]
		again, err := f.svc.SendTurnBlocking(ctx, "owner-1", id, "hello", "form-1")
		if err != nil || again.Index != t1.Index || f.sb.Service.Stats().Requests["turn"] != before {
			t.Fatalf("resubmission: %v index %d, upstream turns %d -> %d", err, again.Index, before, f.sb.Service.Stats().Requests["turn"])
		}
		if runs := f.sb.Service.Stats().EngineRuns; runs != 1 {
			t.Fatalf("the engine ran %d times", runs)
		}
	})
}

// TestRestartSendsABlockingTurnThatNeverLeft: the app stopped after
// recording a blocking turn and before sending it (it waited for the
// pacer). At the next start the turn is sent with its Idempotency-Key, not
// written off as not landed: it lands exactly once.
func TestRestartSendsABlockingTurnThatNeverLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := sandbox.DefaultConfig()
		cfg.Keys, cfg.Engine = []string{key}, enginetest.Scripted{}
		cfg.RPM, cfg.FragmentDelay = 0, time.Millisecond
		sb := sandboxtest.Start(t, cfg)
		path := filepath.Join(t.TempDir(), "app.db")
		ctx := context.Background()

		first, db1 := appRun(t, path, sb)
		in, err := first.StartIntake(ctx, "owner", bff.StartForm{Synthetic: true, SubmissionID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		// Recorded, never sent: as SendTurnBlocking leaves it before its call.
		pending := &bff.Turn{IntakeID: in.ID, SubmissionID: "form-1", Message: "a message never sent", Status: bff.TurnQueued, Blocking: true}
		if err := db1.CreateTurn(ctx, pending); err != nil {
			t.Fatal(err)
		}
		_ = first.Shutdown(ctx)
		db1.Close()

		second, db2 := appRun(t, path, sb)
		defer db2.Close()
		defer func() { _ = second.Shutdown(ctx) }()
		if n, err := second.Recover(ctx); err != nil || n != 1 {
			t.Fatalf("recover: %d, %v", n, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		second.WaitSettled(wctx, in.ID, pending.Index)
		_, got, err := second.Turn(ctx, "owner", in.ID, pending.Index)
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{t: t, sb: sb, db: db2}
		conv, _ := f.upstream(in.ID)
		if len(conv) != 2 || conv[0].Text != "a message never sent" {
			t.Fatalf("the sandbox's record: %+v (want the message exactly once)", conv)
		}
		if got.Status != bff.TurnCompleted || got.Reply != conv[1].Text {
			t.Fatalf("after restart the turn is %s/%q %q (%s), the sandbox says %q", got.Status, got.ErrorCode, got.Reply, got.ErrorMessage, conv[1].Text)
		}
	})
}
