// Package pacer keeps one API key of the Clinical Intake Service within its
// limits: a sliding-window gate over the per-minute request budget, a priority
// queue in front of it, a pause on Retry-After, and the daily turn and intake
// quotas. *Pacer implements intakeapi.Gate; package pacer imports intakeapi,
// never the reverse.
package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
)

// Priorities are intakeapi's, re-exported: the client carries them on each
// Call (set with intakeapi.WithPriority).
type Priority = intakeapi.Priority

// Priorities, highest first.
const (
	PatientTurn    = intakeapi.PriorityPatientTurn
	CreateIntake   = intakeapi.PriorityCreateIntake
	Reconciliation = intakeapi.PriorityReconciliation
	ClinicianRead  = intakeapi.PriorityClinicianRead
	Background     = intakeapi.PriorityBackground
)

// Progress is a waiting caller's place in the queue (1 = next) and expected
// wait, reported through Call.Progress (intakeapi.WithProgress).
type Progress = intakeapi.Progress

// Defaults are the spec's limits for one key.
const (
	DefaultPerMinute     = 6
	DefaultTurnsPerDay   = 100
	DefaultIntakesPerDay = 100
	DefaultMargin        = time.Second
)

// Config configures a Pacer. Zero values take the spec's limits.
type Config struct {
	// PerMinute is the number of requests allowed in any rolling Window;
	// 0 means DefaultPerMinute, negative means no limit (a raised key).
	PerMinute int
	// Window is the rolling window; 0 means one minute.
	Window time.Duration
	// Margin keeps each grant in the window this much longer than Window.
	// The pacer stamps a request when it lets it go, the service when it
	// arrives; latency that varies between the two would otherwise let a
	// request reach the service a moment before its window has room.
	// 0 means DefaultMargin; negative means none.
	Margin time.Duration
	// TurnsPerDay and IntakesPerDay are the daily quotas (UTC day); 0 means
	// the default of 100, negative means no quota.
	TurnsPerDay, IntakesPerDay int
	// Clock is the time source; nil means the system clock.
	Clock Clock
	// Logger gets a line when a pause starts or a quota is spent; nil discards.
	Logger *slog.Logger
}

// ErrQuotaSpent is matched (errors.Is) by every *QuotaError.
var ErrQuotaSpent = errors.New("pacer: daily quota spent")

// QuotaError refuses a call because a daily quota is spent; nothing was sent.
type QuotaError struct {
	Quota   string    // "turns" or "intakes"
	Limit   int       // the configured quota, 0 if the service reported it spent
	ResetAt time.Time // next 00:00 UTC
}

func (e *QuotaError) Error() string {
	limit := ""
	if e.Limit > 0 {
		limit = fmt.Sprintf(" (%d)", e.Limit)
	}
	return fmt.Sprintf("pacer: the daily %s quota%s is spent; it resets at %s", e.Quota, limit, e.ResetAt.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrQuotaSpent) true.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaSpent }

// ErrorCode lets intakeapi.IsCode(err, intakeapi.CodeQuotaExceeded) match an
// early refusal the same as the service's own 429.
func (e *QuotaError) ErrorCode() intakeapi.Code { return intakeapi.CodeQuotaExceeded }

// Stats is a snapshot of the pacer's state.
type Stats struct {
	Waiting     int       // callers in the queue
	InWindow    int       // grants within the rolling window
	PausedUntil time.Time // zero when not paused
	TurnsUsed   int       // today's turns, in-flight ones included
	IntakesUsed int
	DayResetAt  time.Time
}

// Pacer is a sliding-window gate with a priority queue. It implements
// intakeapi.Gate. The zero value is not usable; call New.
type Pacer struct {
	cfg  Config
	hold time.Duration // how long a grant occupies the window: Window + Margin
	clk  Clock
	log  *slog.Logger

	mu          sync.Mutex
	window      []time.Time // grant times within the window, ascending
	pausedUntil time.Time
	queue       []*waiter // priority descending, then arrival
	seq         uint64
	changed     chan struct{} // closed and replaced on every state change

	day        time.Time // start of the current UTC day
	used       [2]int    // quota kind -> charged or in-flight today
	spentUntil [2]time.Time
}

type quotaKind int

const (
	kindNone quotaKind = iota - 1
	kindTurns
	kindIntakes
)

func (k quotaKind) String() string { return [...]string{"turns", "intakes"}[k] }

type waiter struct {
	prio Priority
	seq  uint64
}

// New returns a Pacer for cfg.
func New(cfg Config) *Pacer {
	if cfg.PerMinute == 0 {
		cfg.PerMinute = DefaultPerMinute
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	switch {
	case cfg.Margin == 0:
		cfg.Margin = DefaultMargin
	case cfg.Margin < 0:
		cfg.Margin = 0
	}
	if cfg.TurnsPerDay == 0 {
		cfg.TurnsPerDay = DefaultTurnsPerDay
	}
	if cfg.IntakesPerDay == 0 {
		cfg.IntakesPerDay = DefaultIntakesPerDay
	}
	clk := cfg.Clock
	if clk == nil {
		clk = SystemClock{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pacer{cfg: cfg, hold: cfg.Window + cfg.Margin, clk: clk, log: log, changed: make(chan struct{})}
}

var _ intakeapi.Gate = (*Pacer)(nil)

// Wait implements intakeapi.Gate. It returns at once with a *QuotaError when
// the call's daily quota is spent (also if it becomes spent while waiting),
// with ctx's error when ctx ends (the caller leaves the queue; a caller whose
// ctx has ended is never granted, even when its slot comes at the same
// moment), or when the call is at the head of the queue and the window, and
// any Retry-After pause, allow one more request. Higher priorities go first;
// equal priorities in arrival order. Call.Progress is told the position and
// expected wait each time they change.
func (p *Pacer) Wait(ctx context.Context, call intakeapi.Call) (func(intakeapi.Outcome), error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("pacer: not waiting: %w", err)
	}
	kind := quotaOf(call.Op)
	p.mu.Lock()
	if err := p.quotaErr(kind, p.clk.Now()); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	p.seq++
	w := &waiter{prio: call.Priority, seq: p.seq}
	i, _ := slices.BinarySearchFunc(p.queue, w, cmpWaiter)
	p.queue = slices.Insert(p.queue, i, w)
	p.broadcast()

	var (
		timer Timer
		last  = Progress{Position: -1}
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		// A wake-up can race with the end of ctx (select picks at random
		// among ready cases): never grant a caller that has already gone,
		// or the slot and the quota would be spent on a request the
		// client will not send.
		if err := context.Cause(ctx); err != nil {
			pos := slices.Index(p.queue, w) + 1
			p.remove(w)
			p.mu.Unlock()
			return nil, fmt.Errorf("pacer: stopped waiting at position %d: %w", pos, err)
		}
		now := p.clk.Now()
		p.prune(now)
		if err := p.quotaErr(kind, now); err != nil {
			p.remove(w)
			p.mu.Unlock()
			return nil, err
		}
		pos := slices.Index(p.queue, w) + 1
		var tc <-chan time.Time
		if pos == 1 {
			next := p.nextSlot(now)
			if !next.After(now) {
				p.remove(w)
				p.window = append(p.window, now)
				release := p.reserve(kind)
				p.mu.Unlock()
				return release, nil
			}
			timer = p.clk.NewTimerAt(next)
			tc = timer.C()
		}
		prog := Progress{Position: pos, Wait: p.estimate(pos, now)}
		ch := p.changed
		p.mu.Unlock()

		if call.Progress != nil && prog != last {
			call.Progress(prog)
			last = prog
		}
		select {
		case <-ctx.Done(): // handled at the top of the loop
		case <-ch:
		case <-tc:
		}
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		p.mu.Lock()
	}
}

// Stats returns a snapshot of the pacer's state.
func (p *Pacer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	p.prune(now)
	p.rollDay(now)
	s := Stats{
		Waiting:     len(p.queue),
		InWindow:    len(p.window),
		TurnsUsed:   p.used[kindTurns],
		IntakesUsed: p.used[kindIntakes],
		DayResetAt:  p.day.Add(24 * time.Hour),
	}
	if p.pausedUntil.After(now) {
		s.PausedUntil = p.pausedUntil
	}
	return s
}

// Pause holds every call until d from now (as a 429 Retry-After does).
func (p *Pacer) Pause(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pauseLocked(d)
}

func cmpWaiter(a, b *waiter) int {
	if a.prio != b.prio {
		return int(b.prio) - int(a.prio) // higher priority first
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

func quotaOf(op intakeapi.Op) quotaKind {
	switch {
	case op.IsTurn():
		return kindTurns
	case op == intakeapi.OpCreateIntake:
		return kindIntakes
	}
	return kindNone
}

func (p *Pacer) limit(k quotaKind) int {
	if k == kindTurns {
		return p.cfg.TurnsPerDay
	}
	return p.cfg.IntakesPerDay
}

// broadcast wakes every waiter to re-evaluate; callers hold mu.
func (p *Pacer) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Pacer) remove(w *waiter) {
	if i := slices.Index(p.queue, w); i >= 0 {
		p.queue = slices.Delete(p.queue, i, i+1)
		p.broadcast()
	}
}

func (p *Pacer) prune(now time.Time) {
	n := 0
	for n < len(p.window) && !p.window[n].Add(p.hold).After(now) {
		n++
	}
	if n > 0 {
		p.window = slices.Delete(p.window, 0, n)
	}
}

// nextSlot is the earliest time one more request fits: after any pause, and
// once the window holds fewer than PerMinute grants.
func (p *Pacer) nextSlot(now time.Time) time.Time {
	t := now
	if p.pausedUntil.After(t) {
		t = p.pausedUntil
	}
	if n := p.cfg.PerMinute; n > 0 && len(p.window) >= n {
		if free := p.window[len(p.window)-n].Add(p.hold); free.After(t) {
			t = free
		}
	}
	return t
}

// estimate is the expected wait of the caller at position pos: it replays the
// window forward, granting each caller ahead at its earliest slot. Calls that
// arrive later with a higher priority can still overtake.
func (p *Pacer) estimate(pos int, now time.Time) time.Duration {
	start := now
	if p.pausedUntil.After(start) {
		start = p.pausedUntil
	}
	n := p.cfg.PerMinute
	if n <= 0 {
		return start.Sub(now)
	}
	grants := slices.Clone(p.window)
	var t time.Time
	for range pos {
		t = start
		if len(grants) >= n {
			if free := grants[len(grants)-n].Add(p.hold); free.After(t) {
				t = free
			}
		}
		grants = append(grants, t)
	}
	return t.Sub(now)
}

func (p *Pacer) pauseLocked(d time.Duration) {
	until := p.clk.Now().Add(d)
	if until.After(p.pausedUntil) {
		p.pausedUntil = until
		p.log.Info("pacer: paused by Retry-After", slog.Duration("for", d))
		p.broadcast()
	}
}

func (p *Pacer) rollDay(now time.Time) {
	y, m, d := now.UTC().Date()
	if day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC); !day.Equal(p.day) {
		p.day = day
		p.used = [2]int{}
	}
}

func (p *Pacer) quotaErr(k quotaKind, now time.Time) error {
	if k == kindNone {
		return nil
	}
	p.rollDay(now)
	reset := p.day.Add(24 * time.Hour)
	if p.spentUntil[k].After(now) {
		return &QuotaError{Quota: k.String(), ResetAt: p.spentUntil[k]}
	}
	if l := p.limit(k); l > 0 && p.used[k] >= l {
		return &QuotaError{Quota: k.String(), Limit: l, ResetAt: reset}
	}
	return nil
}

// reserve counts a granted call against its quota now, so concurrent calls
// cannot overshoot, and returns the release that settles it: refunded when
// the outcome was not charged (an idempotent replay, a refusal before
// processing, nothing sent).
func (p *Pacer) reserve(k quotaKind) func(intakeapi.Outcome) {
	day := p.day
	if k != kindNone {
		p.used[k]++
	}
	var once sync.Once
	return func(o intakeapi.Outcome) {
		once.Do(func() { p.settle(k, day, o) })
	}
}

func (p *Pacer) settle(k quotaKind, day time.Time, o intakeapi.Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	p.rollDay(now)
	if k != kindNone && !o.Charged() && p.day.Equal(day) && p.used[k] > 0 {
		p.used[k]--
	}
	if o.Status == 429 {
		switch {
		case o.Code == intakeapi.CodeQuotaExceeded && k != kindNone:
			// The service knows better than our count (other clients, a reset
			// we did not see): refuse this kind until the next UTC reset.
			p.spentUntil[k] = p.day.Add(24 * time.Hour)
			p.log.Warn("pacer: the service reports the daily quota spent", slog.String("quota", k.String()))
		case o.RetryAfter > 0:
			p.pauseLocked(o.RetryAfter)
		}
	}
	p.broadcast()
}
