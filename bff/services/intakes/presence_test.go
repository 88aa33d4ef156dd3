package intakes_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
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

// presence is a bff.ReplicaPresence the test sets: the replicas it says
// are gone, and whether this replica holds its own.
type presence struct {
	db *sqlite.DB

	mu   sync.Mutex
	gone []string
	held func(bool)
}

func (p *presence) HoldPresence(ctx context.Context, name string, held func(bool)) error {
	p.mu.Lock()
	p.held = held
	p.mu.Unlock()
	held(true)
	<-ctx.Done()
	return ctx.Err()
}

func (p *presence) GoneReplicas(context.Context) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.gone), nil
}

// ClaimTurnsOf claims every pending turn (the test has one, A's) when a
// replica in gone is still gone, as the statement re-checks.
func (p *presence) ClaimTurnsOf(ctx context.Context, owner string, gone []string, until time.Time, n int) ([]*bff.Turn, error) {
	p.mu.Lock()
	still := slices.ContainsFunc(gone, func(g string) bool { return slices.Contains(p.gone, g) })
	p.mu.Unlock()
	if !still {
		return nil, nil
	}
	return p.db.ClaimStaleTurns(ctx, owner, time.Now().Add(time.Hour), until, n)
}

func (p *presence) set(gone ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = gone
}

// A replica's turns are taken over within seconds once its presence is
// gone for the grace period (2 s), long before its 30 s lease; not while
// it is present, not when it comes back within the grace, and not while
// the taking replica's own presence is lost.
func TestAGoneReplicasTurnIsTakenOverWithinSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := sandbox.DefaultConfig()
		cfg.Keys, cfg.Engine = []string{key}, enginetest.Scripted{}
		cfg.RPM, cfg.FragmentDelay, cfg.Faults, cfg.SlowStart = 0, time.Millisecond, true, 5*time.Second
		sb := sandboxtest.Start(t, cfg)
		path := filepath.Join(t.TempDir(), "shared.db")
		ctx := context.Background()

		a, dbA := replica(t, "replica-a", path, sb)
		dbB, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dbB.Close()
		client, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, HTTPClient: sb.Client})
		if err != nil {
			t.Fatal(err)
		}
		pres := &presence{db: dbB}
		b := newCore(intakes.Deps{Client: client, Intakes: dbB, Turns: dbB, Handoffs: dbB, Hub: relay.NewHub(time.Minute, nil),
			Replica: "replica-b", Lease: 30 * time.Second, Shared: true, Presence: pres})

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
		synctest.Wait() // the call waits in the sandbox's slow start
		stop, cancel := context.WithTimeout(ctx, time.Millisecond)
		_ = a.Shutdown(stop) // A dies: its turn stays pending, leased to it
		cancel()

		serve, stopServe := context.WithCancel(ctx)
		defer stopServe()
		go b.Serve(serve)
		taken := func(when string, want int64) {
			t.Helper()
			synctest.Wait()
			if n := b.TakenOver(); n != want {
				t.Fatalf("%s: B took over %d turns, want %d", when, n, want)
			}
		}
		time.Sleep(5 * time.Second)
		taken("while A is present", 0)

		pres.set("replica-a") // A's connection broke...
		time.Sleep(1500 * time.Millisecond)
		pres.set() // ...and it took its presence again within the grace
		time.Sleep(5 * time.Second)
		taken("after A came back within the grace", 0)

		pres.mu.Lock()
		held := pres.held
		pres.mu.Unlock()
		held(false) // B itself is cut off: it takes nothing
		pres.set("replica-a")
		time.Sleep(5 * time.Second)
		taken("while B's own presence is lost", 0)
		held(true)
		time.Sleep(1900 * time.Millisecond)
		taken("before B held its presence for the grace", 0)

		time.Sleep(2500 * time.Millisecond) // B present 2 s, A gone 2 s: taken
		taken("once A was gone for the grace", 1)
		wctx, wcancel := context.WithTimeout(ctx, time.Minute)
		defer wcancel()
		b.WaitSettled(wctx, in.ID, turn.Index)
		got, err := dbB.Turn(ctx, in.ID, turn.Index)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != bff.TurnCompleted || got.LeaseOwner != "" {
			t.Fatalf("after the takeover the turn is %s (%s), lease %q", got.Status, got.ErrorMessage, got.LeaseOwner)
		}
		if n := sb.Service.Stats().EngineRuns; n != 1 {
			t.Fatalf("the engine ran %d times for one message", n)
		}
		stopServe()
		_ = b.Shutdown(ctx)
	})
}
