package intakeapi

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Op names one kind of upstream call.
type Op string

// Operations of the client.
const (
	OpHealth       Op = "health"
	OpCreateIntake Op = "create_intake"
	OpTurn         Op = "turn"        // blocking turn
	OpStreamTurn   Op = "stream_turn" // streaming turn
	OpSummary      Op = "summary"
	OpHandoff      Op = "handoff"
)

// IsTurn reports whether the operation spends the daily turn quota.
func (o Op) IsTurn() bool { return o == OpTurn || o == OpStreamTurn }

// Priority orders callers waiting for the one key's request budget. Higher
// values go first.
type Priority int

// Priorities, lowest first.
const (
	PriorityBackground     Priority = iota + 1 // health probes, housekeeping
	PriorityClinicianRead                      // a clinician opening a summary or handoff
	PriorityReconciliation                     // reading the handoff after a dropped or failed turn
	PriorityCreateIntake                       // a patient starting an intake
	PriorityPatientTurn                        // a patient waiting for a reply
	// PriorityFirstTurn is a patient's first turn right after its intake
	// was created upstream: the two wait in the queue as one, so the turn
	// keeps the place its creation waited for instead of joining the back.
	PriorityFirstTurn
)

func (p Priority) String() string {
	switch p {
	case PriorityBackground:
		return "background"
	case PriorityClinicianRead:
		return "clinician_read"
	case PriorityReconciliation:
		return "reconciliation"
	case PriorityCreateIntake:
		return "create_intake"
	case PriorityPatientTurn:
		return "patient_turn"
	case PriorityFirstTurn:
		return "first_turn"
	}
	return "priority(" + strconv.Itoa(int(p)) + ")"
}

// defaultPriority is used when the context carries none.
func defaultPriority(op Op) Priority {
	switch op {
	case OpTurn, OpStreamTurn:
		return PriorityPatientTurn
	case OpCreateIntake:
		return PriorityCreateIntake
	case OpSummary, OpHandoff:
		return PriorityClinicianRead
	}
	return PriorityBackground
}

// Progress is a waiting caller's place in the Gate's queue.
type Progress struct {
	Position int // 1 = next to go
	// Wait is the expected wait until the call is sent, and with it the
	// follow-ups it announces (Call.FollowUps): a patient whose first
	// message creates the intake waits for the creation and the turn.
	Wait time.Duration
	// Paused: the wait includes a pause the service asked for (a 429's
	// Retry-After, a 503's back-off), so it may be longer than the last
	// one reported.
	Paused bool
}

// Call describes one HTTP attempt that asks the Gate for a slot. Retries ask
// again, with Attempt > 1.
type Call struct {
	Op       Op
	Priority Priority
	Attempt  int
	// Headroom: the call is granted only while at least Headroom further
	// requests would still fit in the rolling window after it, so a
	// patient who arrives next finds a free slot at once (a scenario run's
	// calls set it with WithHeadroom); 0 = none. A call held back by its
	// headroom does not hold back the calls queued behind it.
	Headroom int
	// FollowUps are requests that will follow this one at once (an intake
	// creation's first turn, at PriorityFirstTurn): a Gate counts them in
	// the place it shows the callers behind, so their place never goes up
	// when the follow-up jumps ahead of them.
	FollowUps int
	// Announces, when set, receives the ticket of this call's follow-up
	// when the Gate grants it; Follows presents that ticket on the
	// follow-up's own call, which then takes the place its announcer held
	// among follow-ups (so follow-ups go in the order their announcers were
	// granted, not in the order they arrive).
	Announces *FollowUp
	Follows   *FollowUp
	// Progress, when set, is called by the Gate from the waiting goroutine
	// whenever the caller's position or expected wait changes.
	Progress func(Progress)
}

// Outcome is what the client learned from one attempt; it is reported to the
// Gate through the release function Wait returned.
type Outcome struct {
	// Status is the HTTP status, or 0 when no answer came (the request may or
	// may not have reached the service).
	Status int
	Code   Code
	// RetryAfter is the response's Retry-After.
	RetryAfter time.Duration
	// Replayed marks an idempotent replay, which spends no quota.
	Replayed bool
	// NotSent marks an attempt that failed before anything was sent.
	NotSent bool
}

// Charged reports whether the attempt should count against a daily quota: an
// answer that was processed (2xx, not a replay), or no answer at all (the
// service may have run it, so count it to stay safe). An error status means
// the request was refused before processing.
func (o Outcome) Charged() bool {
	if o.NotSent {
		return false
	}
	if o.Status == 0 {
		return true
	}
	return o.Status >= 200 && o.Status < 300 && !o.Replayed
}

// Gate paces the calls made with one API key. Every HTTP attempt of the client
// (retries included) waits in Wait before it is sent.
//
// Wait blocks until the call may be sent and returns a release function, or
// returns an error without a release: ctx's error (wrapped) when ctx ends, or
// a refusal (for example a spent daily quota) that the client returns to its
// caller unchanged. The client calls release exactly once per successful Wait,
// with the Outcome of the attempt. After an Outcome with Status 429 and a
// RetryAfter, Wait must not grant any call before RetryAfter has passed: the
// client's rate_limited retry relies on it rather than sleeping itself.
// Implementations are safe for concurrent use.
type Gate interface {
	Wait(ctx context.Context, call Call) (release func(Outcome), err error)
}

// pauseGate is the Gate of a client configured without one: it paces nothing
// but honours Retry-After, so the retry contract holds.
type pauseGate struct {
	mu    sync.Mutex
	until time.Time
}

func (g *pauseGate) Wait(ctx context.Context, _ Call) (func(Outcome), error) {
	g.mu.Lock()
	d := time.Until(g.until)
	g.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	return func(o Outcome) {
		if o.Status == 429 && o.RetryAfter > 0 {
			g.mu.Lock()
			if u := time.Now().Add(o.RetryAfter); u.After(g.until) {
				g.until = u
			}
			g.mu.Unlock()
		}
	}, nil
}

type ctxKey int

const (
	priorityKey ctxKey = iota
	progressKey
	followUpsKey
	followsKey
	headroomKey
	grantKey
)

// WithPriority returns a context whose calls wait in the Gate with priority p.
// Without it each method uses its natural priority: turns PriorityPatientTurn,
// CreateIntake PriorityCreateIntake, Summary and Handoff PriorityClinicianRead,
// Health and OpenAPI PriorityBackground. The relay's reconciliation reads set
// PriorityReconciliation this way.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey, p)
}

// WithHeadroom returns a context whose calls are granted only while at least
// n further requests would still fit in the rolling window after them
// (Call.Headroom): a batch of background calls then never leaves a patient
// waiting for a slot to free. n <= 0 means none.
func WithHeadroom(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, headroomKey, n)
}

// FollowUp ties a call that announces a follow-up to the follow-up's own
// call (Call.Announces, Call.Follows). Safe for concurrent use.
type FollowUp struct{ ticket atomic.Int64 }

// SetTicket is called by a Gate when it grants the announcing call.
func (f *FollowUp) SetTicket(t int64) { f.ticket.Store(t) }

// Ticket is what the Gate gave the announcing call, 0 before.
func (f *FollowUp) Ticket() int64 {
	if f == nil {
		return 0
	}
	return f.ticket.Load()
}

// WithAnnouncedFollowUp returns a context whose calls announce one
// follow-up, tied to f (Call.Announces).
func WithAnnouncedFollowUp(ctx context.Context, f *FollowUp) context.Context {
	return context.WithValue(ctx, followUpsKey, f)
}

// AsFollowUpOf returns a context whose calls are the follow-up f announced
// (Call.Follows).
func AsFollowUpOf(ctx context.Context, f *FollowUp) context.Context {
	return context.WithValue(ctx, followsKey, f)
}

// WithProgress returns a context whose calls report their queue position and
// expected wait to fn while they wait in the Gate (so a page can say "you are
// 3rd, about 40 s"). fn runs on the waiting goroutine; keep it short.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey, fn)
}

func callFor(ctx context.Context, op Op, attempt int) Call {
	c := Call{Op: op, Priority: defaultPriority(op), Attempt: attempt}
	if p, ok := ctx.Value(priorityKey).(Priority); ok && p > 0 {
		c.Priority = p
	}
	if n, ok := ctx.Value(headroomKey).(int); ok && n > 0 {
		c.Headroom = n
	}
	if f, ok := ctx.Value(followUpsKey).(*FollowUp); ok && f != nil {
		c.Announces, c.FollowUps = f, 1
	}
	if f, ok := ctx.Value(followsKey).(*FollowUp); ok && f != nil {
		c.Follows = f
	}
	if fn, ok := ctx.Value(progressKey).(func(Progress)); ok {
		c.Progress = fn
	}
	return c
}

// AsyncGate is a Gate that can also keep a caller's place without a
// goroutine waiting for it (pacer.Pacer is one). Await returns at once and
// calls granted exactly once, on a goroutine of its own (never before Await
// returns), with what Wait would have returned; Call.Progress is told the
// caller's place as Wait tells it.
type AsyncGate interface {
	Gate
	Await(ctx context.Context, call Call, granted func(release func(Outcome), err error))
}

// Await waits in g for call as AsyncGate.Await does: without a goroutine
// when g is an AsyncGate, on a goroutine of its own otherwise.
func Await(g Gate, ctx context.Context, call Call, granted func(release func(Outcome), err error)) {
	if a, ok := g.(AsyncGate); ok {
		a.Await(ctx, call, granted)
		return
	}
	go func() { granted(g.Wait(ctx, call)) }()
}

// Queue waits in the client's Gate for the first attempt of a call of op
// made with ctx (its priority, progress and follow-ups as that call will
// carry them), without holding a goroutine when the Gate is an AsyncGate,
// then calls then on a goroutine of its own with the Grant. WithGrant puts
// it in the context of that call, whose first attempt is then sent without
// waiting again; Drop gives it back if the call is not made. When the wait
// failed (ctx ended, a quota spent) the Grant is nil and the call's own
// wait gives the error.
func (c *Client) Queue(ctx context.Context, op Op, then func(*Grant)) {
	Await(c.gate, ctx, callFor(ctx, op, 1), func(release func(Outcome), err error) {
		if err != nil {
			then(nil)
			return
		}
		then(&Grant{op: op, release: release})
	})
}

// Grant is a slot a Gate gave ahead of the call that uses it
// (Client.Queue). Safe for concurrent use; nil is no grant.
type Grant struct {
	op      Op
	mu      sync.Mutex
	release func(Outcome) // nil once taken
}

// WithGrant returns a context whose first call of g's op sends its first
// attempt on g, without waiting in the Gate. g may be nil.
func WithGrant(ctx context.Context, g *Grant) context.Context {
	if g == nil {
		return ctx
	}
	return context.WithValue(ctx, grantKey, g)
}

// take returns g's release, once; nil after.
func (g *Grant) take() func(Outcome) {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	release := g.release
	g.release = nil
	return release
}

// takeGrant returns the release of the grant ctx carries for op, once; nil
// when there is none (or it was taken).
func takeGrant(ctx context.Context, op Op) func(Outcome) {
	if g, ok := ctx.Value(grantKey).(*Grant); ok && g.op == op {
		return g.take()
	}
	return nil
}

// Drop gives g back if no call used it: nothing was sent, so its quota is
// refunded. Safe on nil and after use.
func (g *Grant) Drop() {
	if release := g.take(); release != nil {
		release(Outcome{NotSent: true})
	}
}
