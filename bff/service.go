package bff

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/pacer"
	"github.com/clinical-intake/intake-web/bff/relay"
)

// Service runs intakes and turns: it is what the web handlers call. Turns run
// detached from the request that sent them (DESIGN.md, decision 2).
type Service struct {
	client   *intakeapi.Client
	intakes  IntakeStore
	turns    TurnStore
	handoffs HandoffStore
	hub      *relay.Hub
	now      func() time.Time
	log      *slog.Logger

	clinicians ClinicianStore
	reviews    ReviewStore
	audit      AuditStore
	feed       *relay.Feed // worklist updates for signed-in clinicians
	bcryptCost int
	createWait time.Duration
	failures   SignInFailureStore
	pruned     atomic.Int64 // unix nanos of the last prune of failures
	refusals   refusals     // when each blocked key's refusal was last audited
	dummyOnce  sync.Once
	dummy      []byte
	fetching   [64]sync.Mutex // striped by intake: one upstream handoff read per intake at a time

	// base is the context of detached turns: cancelled only when Shutdown's
	// grace period runs out.
	base     context.Context
	abandon  context.CancelFunc
	running  sync.WaitGroup
	closing  atomic.Bool  // set by Shutdown: no new turns
	inflight atomic.Int64 // running turns (the WaitGroup cannot be read)

	outcomes   sync.Map     // TurnStatus -> *atomic.Int64, for metrics
	reconciled atomic.Int64 // reconciliations from the handoff

	mu       sync.Mutex
	creating map[string]*creation // double-submit guard for new intakes
}

// Deps are the Service's collaborators.
type Deps struct {
	Client   *intakeapi.Client
	Intakes  IntakeStore
	Turns    TurnStore
	Handoffs HandoffStore
	Hub      *relay.Hub
	Now      func() time.Time // nil = time.Now
	Logger   *slog.Logger     // nil = discard

	// The clinician area's stores; the patient side works without them.
	Clinicians ClinicianStore
	Reviews    ReviewStore
	Audit      AuditStore
	// SignInFailures keeps failed sign-ins; nil = this process's memory
	// (lost on restart: the app passes its database).
	SignInFailures SignInFailureStore
	Feed           *relay.Feed // nil = a new one
	BcryptCost     int         // 0 = bcrypt.DefaultCost+2 (12); tests use bcrypt.MinCost
	// CreateWait bounds how long starting an intake waits for a request
	// slot (0 = 45 s): patient turns go first, so at the key's limit a
	// start could otherwise hold the browser for minutes with nothing shown.
	CreateWait time.Duration
}

// NewService returns a Service.
func NewService(d Deps) *Service {
	s := &Service{
		client: d.Client, intakes: d.Intakes, turns: d.Turns, handoffs: d.Handoffs, hub: d.Hub,
		now: d.Now, log: d.Logger, creating: map[string]*creation{},
		clinicians: d.Clinicians, reviews: d.Reviews, audit: d.Audit, feed: d.Feed,
		bcryptCost: d.BcryptCost,
	}
	if s.feed == nil {
		s.feed = relay.NewFeed(200)
	}
	if s.bcryptCost == 0 {
		s.bcryptCost = 12
	}
	if s.createWait = d.CreateWait; s.createWait == 0 {
		s.createWait = 45 * time.Second
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.base, s.abandon = context.WithCancel(context.Background())
	if s.failures = d.SignInFailures; s.failures == nil {
		s.failures = newMemFailures()
	}
	return s
}

// Feed is the worklist's live feed: an event each time an intake changes.
func (s *Service) Feed() *relay.Feed { return s.feed }

// IntakeChanged is the data of a worklist feed event.
type IntakeChanged struct {
	IntakeID string `json:"intake_id"`
	Status   string `json:"status"`
	Urgent   bool   `json:"urgent"`
}

func (s *Service) changed(in *Intake) {
	s.feed.Publish("intake", IntakeChanged{IntakeID: in.ID, Status: in.Status, Urgent: in.Urgent})
}

// Hub is the relay the turns publish to.
func (s *Service) Hub() *relay.Hub { return s.hub }

// Shutdown waits for running turns to finish until ctx ends, then abandons
// the rest (they are settled by reconciliation at the next start).
func (s *Service) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	done := make(chan struct{})
	go func() { s.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		if s.inflight.Load() == 0 { // finished as the grace ran out: nothing abandoned
			<-done
			return nil
		}
		s.abandon()
		<-done
		return fmt.Errorf("shutdown: running turns abandoned: %w", ctx.Err())
	}
}

// TurnKey names a turn's stream in the relay.
func TurnKey(intakeID string, index int) string { return fmt.Sprintf("%s/%d", intakeID, index) }

// upstreamError maps what the client or the pacer reported to an error the
// patient can be shown. The original is logged by the caller.
func upstreamError(err error, now time.Time) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Errorf(EUNAVAILABLE, "The intake service did not answer in time. Please try again.")
	}
	var qe *pacer.QuotaError
	if errors.As(err, &qe) {
		return quotaMessage(qe.Quota, qe.ResetAt, now)
	}
	ae, ok := intakeapi.AsError(err)
	if !ok {
		return Errorf(EUNAVAILABLE, "The intake service could not be reached. Please try again in a moment.")
	}
	switch ae.Code {
	case intakeapi.CodeRateLimited:
		return &Error{Code: ERATELIMIT, Message: fmt.Sprintf("The intake service is busy; please try again in %d seconds.", int(math.Ceil(max(ae.RetryAfter, time.Second).Seconds())))}
	case intakeapi.CodeQuotaExceeded:
		return quotaMessage("turns or intakes", time.Time{}, now)
	case intakeapi.CodeIntakeClosed:
		return Errorf(ECONFLICT, "This intake has ended; no more messages can be sent.")
	case intakeapi.CodeIntakeExpired:
		return Errorf(EGONE, "This intake passed its two-hour limit. Start a new intake; this one stays readable.")
	case intakeapi.CodeNotFound:
		return Errorf(ENOTFOUND, "The intake service no longer knows this intake.")
	case intakeapi.CodeTurnInProgress:
		return Errorf(ECONFLICT, "The previous reply is still being written; please wait for it.")
	case intakeapi.CodeInvalidRequest:
		return Errorf(EINVALID, "The intake service refused the request: %s", ae.Message)
	}
	return Errorf(EUNAVAILABLE, "The intake service is having trouble. Please try again in a moment.")
}

func quotaMessage(what string, reset, now time.Time) *Error {
	if reset.IsZero() {
		y, m, d := now.UTC().Date()
		reset = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	}
	left := reset.Sub(now).Round(time.Minute)
	return &Error{Code: EQUOTA, Message: fmt.Sprintf("Today's %s for this service key are used up. They reset at 00:00 UTC (in %d h %02d min).",
		what, int(left.Hours()), int(left.Minutes())%60)}
}

// randomID is 16 random hex digits.
func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Reconciliations counts turns settled from the handoff.
func (s *Service) Reconciliations() int64 { return s.reconciled.Load() }

// Outcomes counts settled turns by status since start.
func (s *Service) Outcomes() map[TurnStatus]int64 {
	out := map[TurnStatus]int64{}
	s.outcomes.Range(func(k, v any) bool {
		out[k.(TurnStatus)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func (s *Service) count(status TurnStatus) {
	v, _ := s.outcomes.LoadOrStore(status, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// track and untrack bracket a running turn.
func (s *Service) track() {
	s.inflight.Add(1)
	s.running.Add(1)
}

func (s *Service) untrack() {
	s.inflight.Add(-1)
	s.running.Done()
}
