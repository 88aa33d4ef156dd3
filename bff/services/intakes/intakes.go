// Package intakes runs patient intakes and their turns: Patients is what a
// patient's browser session may do (bff.PatientService), Runner drives each
// turn upstream, detached from the request that sent it, and settles it,
// reconciling from the handoff whenever the answer is missing, failed or
// incomplete. Nothing is guessed: a turn is completed or failed only on the
// service's word.
package intakes

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/services/handoffs"
)

// DefaultLease is a turn's lease when Deps.Lease is 0 (TURN_LEASE unset).
const DefaultLease = 30 * time.Second

// Deps are what the intake services need.
type Deps struct {
	Client   *intakeapi.Client
	Intakes  bff.IntakeStore
	Turns    bff.TurnStore
	Handoffs bff.HandoffStore
	Hub      Streams       // the turns' event streams (a *relay.Hub, or a *relay.Replicated)
	Feed     bff.Announcer // the clinicians' live worklist; nil = none
	// Queue leases pending turns to the replica running them (bff.TurnQueue).
	Queue  bff.TurnQueue
	Now    func() time.Time
	Logger *slog.Logger
	// Replica names this process among the app's replicas: the owner of
	// the turns it runs. Empty: a random name.
	Replica string
	// Lease is how long a turn stays with this replica without a renewal
	// (0 = DefaultLease): after a replica dies, its turns are taken over within
	// about a lease and a sweep.
	Lease time.Duration
	// IntakeQuota, when set, refuses a start when today's quota of new
	// intakes is already spent (its error says when it resets), spending
	// nothing: starting is refused only by a real quota, and at once.
	IntakeQuota func(ctx context.Context) error
	// Shared says other replicas use the same database: a start then takes
	// over only turns whose lease ran out, instead of all pending ones.
	Shared bool
	// Presence, with Shared, takes a dead replica's turns over within
	// seconds instead of a lease (nil: the store's, when it keeps one).
	Presence bff.ReplicaPresence
	// PresencePoll is how often the presence of the other replicas is
	// read (0 = 500 ms); PresenceGrace how long a replica must stay gone,
	// and this one present, before its turns are taken (0 = 2 s): a
	// replica whose connection broke takes its presence again well within
	// it, and after a database restart every replica has time to.
	PresencePoll, PresenceGrace time.Duration
}

// Streams are the turns' event streams: a relay.Hub in one process, a
// relay.Replicated across replicas. One goroutine publishes to a key.
type Streams interface {
	Open(key string)
	// Resume opens key's stream to continue a turn taken over from another
	// replica (or a previous run): its events continue after the last one
	// the others saw.
	Resume(ctx context.Context, key string) error
	Publish(key, name string, data any)
	Close(key string)
	Follow(ctx context.Context, key string, after int64) (<-chan relay.Event, bool)
}

// New returns the patients' service and the runner that settles its turns.
func New(d Deps) (*Patients, *Runner) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if d.Feed == nil {
		d.Feed = discard{}
	}
	if d.Queue == nil { // the stores implement it beside TurnStore
		d.Queue, _ = d.Turns.(bff.TurnQueue)
	}
	if d.Lease == 0 {
		d.Lease = DefaultLease
	}
	if d.Presence == nil && d.Shared {
		d.Presence, _ = d.Turns.(bff.ReplicaPresence)
	}
	if d.PresencePoll == 0 {
		d.PresencePoll = 500 * time.Millisecond
	}
	if d.PresenceGrace == 0 {
		d.PresenceGrace = 2 * time.Second
	}
	if d.Replica == "" {
		d.Replica = "replica-" + randomID()
	}
	r := &Runner{
		client: d.Client, intakes: d.Intakes, turns: d.Turns, queue: d.Queue, hub: d.Hub, feed: d.Feed, now: d.Now, log: d.Logger,
		replica: d.Replica, lease: d.Lease, shared: d.Shared,
		presence: d.Presence, presencePoll: d.PresencePoll, presenceGrace: d.PresenceGrace,
		handoffs: &handoffs.Reader{Client: d.Client, Store: d.Handoffs, Now: d.Now, Log: d.Logger},
	}
	r.base, r.abandon = context.WithCancel(context.Background())
	p := &Patients{
		client: d.Client, intakes: d.Intakes, turns: d.Turns, hub: d.Hub, feed: d.Feed, runner: r,
		now: d.Now, log: d.Logger, intakeQuota: d.IntakeQuota,
	}
	return p, r
}

type discard struct{}

func (discard) Publish(string, any) {}

var _ bff.PatientService = (*Patients)(nil)

// Patients is bff.PatientService.
type Patients struct {
	client  *intakeapi.Client
	intakes bff.IntakeStore
	turns   bff.TurnStore
	hub     Streams
	feed    bff.Announcer
	runner  *Runner
	now     func() time.Time
	log     *slog.Logger
	// intakeQuota refuses a start when today's intakes are spent; nil: never.
	intakeQuota func(ctx context.Context) error
}

// Runner runs turns detached from the requests that sent them and settles
// them; Recover settles those a previous run left pending, Shutdown lets
// the running ones finish.
type Runner struct {
	client   *intakeapi.Client
	intakes  bff.IntakeStore
	turns    bff.TurnStore
	queue    bff.TurnQueue
	handoffs *handoffs.Reader
	hub      Streams
	feed     bff.Announcer
	now      func() time.Time
	log      *slog.Logger
	replica  string        // the lease owner of the turns this replica runs
	lease    time.Duration // how long a lease lasts without renewal
	shared   bool          // other replicas share the database

	presence      bff.ReplicaPresence // nil: leases alone
	presencePoll  time.Duration
	presenceGrace time.Duration
	presentSince  atomic.Pointer[time.Time] // since this replica's presence is held; nil: not held

	// base is the context of detached turns: cancelled only when Shutdown's
	// grace period runs out.
	base     context.Context
	abandon  context.CancelFunc
	running  sync.WaitGroup
	closing  atomic.Bool  // set by Shutdown: no new turns
	inflight atomic.Int64 // running turns (the WaitGroup cannot be read)

	outcomes   sync.Map     // bff.TurnStatus -> *atomic.Int64, for metrics
	reconciled atomic.Int64 // reconciliations from the handoff
	taken      atomic.Int64 // turns taken over (Recover and the sweep)
}

// Shutdown waits for running turns to finish until ctx ends, then abandons
// the rest (they are settled by reconciliation at the next start).
func (r *Runner) Shutdown(ctx context.Context) error {
	r.closing.Store(true)
	done := make(chan struct{})
	go func() { r.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		if r.inflight.Load() == 0 { // finished as the grace ran out: nothing abandoned
			<-done
			return nil
		}
		r.abandon()
		<-done
		return fmt.Errorf("shutdown: running turns abandoned: %w", ctx.Err())
	}
}

// Reconciliations counts turns settled from the handoff.
func (r *Runner) Reconciliations() int64 { return r.reconciled.Load() }

// Outcomes counts settled turns by status since start.
func (r *Runner) Outcomes() map[bff.TurnStatus]int64 {
	out := map[bff.TurnStatus]int64{}
	r.outcomes.Range(func(k, v any) bool {
		out[k.(bff.TurnStatus)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func (r *Runner) count(status bff.TurnStatus) {
	v, _ := r.outcomes.LoadOrStore(status, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// track and untrack bracket a running turn.
func (r *Runner) track() {
	r.inflight.Add(1)
	r.running.Add(1)
}

func (r *Runner) untrack() {
	r.inflight.Add(-1)
	r.running.Done()
}
