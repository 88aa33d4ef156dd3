package intakes_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"github.com/clinical-intake/intake-web/sandbox/sandboxtest"
)

// statements counts what a PostgreSQL pool sends while on: each statement
// by its first words, each preparation, and each preparation of a statement
// its connection had prepared before (again: what a statement cache that
// works never does).
type statements struct {
	mu       sync.Mutex
	on       bool
	sent     map[string]int
	prepared int
	again    int
	seen     map[prepKey]bool // every preparation, on or not
}

type prepKey struct {
	conn *pgx.Conn
	sql  string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		f := strings.Fields(d.SQL)
		s.sent[strings.Join(f[:min(3, len(f))], " ")]++
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) TracePrepareStart(ctx context.Context, conn *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := prepKey{conn, d.SQL}
	if s.on {
		s.prepared++
		if s.seen[k] {
			s.again++
		}
	}
	s.seen[k] = true
	return ctx
}

func (s *statements) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

func (s *statements) count(on bool) (total, prepared int, by map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on = on
	for _, n := range s.sent {
		total += n
	}
	by, prepared = s.sent, s.prepared
	s.sent, s.prepared = map[string]int{}, 0
	return total, prepared, by
}

// TestATurnIsFourStatementsOnPostgreSQL counts what the hot path sends to
// PostgreSQL for a turn, from the patient's Send to the settled event: the
// intake read (ownership), the turn's insert, "streaming", and the
// settlement (turn and intake in one statement) — at most four, each
// prepared once per connection (pgx's statement cache), not per turn. The
// events a shared deployment logs for other replicas are counted apart:
// one statement per turn per flush.
func TestATurnIsFourStatementsOnPostgreSQL(t *testing.T) {
	cfg := sandbox.DefaultConfig()
	cfg.Keys, cfg.Engine, cfg.RPM, cfg.FragmentDelay = []string{key}, enginetest.Scripted{}, 0, time.Millisecond
	sb := sandboxtest.Start(t, cfg)
	client, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key, HTTPClient: sb.Client})
	if err != nil {
		t.Fatal(err)
	}
	tr := &statements{sent: map[string]int{}, seen: map[prepKey]bool{}}
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.URL(t), nil, postgres.WithTracer(tr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	hub := relay.NewReplicated(relay.NewHub(time.Minute, nil), db, nil, 50*time.Millisecond)
	go hub.Run(rctx)
	svc := newCore(intakes.Deps{Client: client, Intakes: db, Turns: db, Handoffs: db, Hub: hub, Replica: "r1", Shared: true})
	defer func() { _ = svc.Shutdown(ctx) }()
	in, err := svc.StartIntake(ctx, "owner", bff.StartForm{Synthetic: true, SubmissionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	send := func(i int) {
		t.Helper()
		turn, err := svc.SendTurn(ctx, "owner", in.ID, fmt.Sprintf("message %d", i), fmt.Sprintf("sub-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		svc.WaitSettled(wctx, in.ID, turn.Index)
	}
	for i := range 5 { // the first also creates the intake upstream; the pool's connections warm up
		send(i)
	}
	const turns = 20
	tr.count(true)
	for i := 5; i < 5+turns; i++ {
		send(i)
	}
	total, prepared, by := tr.count(false)
	logged := by["WITH ins AS"]
	path := total - logged
	t.Logf("PostgreSQL, %d turns: %d statements (%.1f a turn on the turn's path, %.1f logging events), %d preparations; %v",
		turns, total, float64(path)/turns, float64(logged)/turns, prepared, by)
	if path > 4*turns {
		t.Fatalf("a turn costs %.1f statements on its path, want at most 4: %v", float64(path)/turns, by)
	}
	// Preparations themselves are once per connection and statement: a
	// connection the pool opens or first lends during the measured turns
	// (under load it may) prepares what it sends, once. A statement
	// prepared again on the same connection is what must never happen.
	tr.mu.Lock()
	again := tr.again
	tr.mu.Unlock()
	if again > 0 {
		t.Fatalf("%d of %d preparations for %d turns prepared a statement its connection had prepared already: statements are prepared per turn, not once", again, prepared, turns)
	}
}
