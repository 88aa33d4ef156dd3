// Package pacer keeps one API key of the Clinical Intake Service within its
// limits: a sliding-window gate over the per-minute request budget, a priority
// queue in front of it, a pause on Retry-After, and the daily turn and intake
// quotas. *Pacer implements intakeapi.Gate; package pacer imports intakeapi,
// never the reverse. With a Journal (Config.Journal, then Restore at start)
// the window, today's counts and a pause survive a restart.
package pacer

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
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

// Config configures a Pacer. Zero values take the spec's limits
// (pacing.Rules).
type Config struct {
	// Rules are the key's limits; zero values take the spec's.
	pacing.Rules
	// Clock is the time source; nil means the system clock.
	Clock Clock
	// Logger gets a line when a pause starts or a quota is spent; nil discards.
	Logger *slog.Logger
	// Journal, when set, is told every grant, refund, pause and spent quota,
	// and Restore reads it back, so a restarted process continues the rolling
	// window and today's counts where the last one left them (without it, the
	// first minute after a restart could send a whole window's worth again
	// and draw a 429). nil keeps everything in memory.
	Journal Journal
	// ProgressEvery is how often a waiting caller with a Call.Progress is
	// told its place and expected wait again even when nothing in the queue
	// changed (the wait shrinks as time passes: a patient watching it should
	// see it move). 0 means pacing.DefaultProgressEvery; negative means only on a
	// change of the queue.
	ProgressEvery time.Duration
	// JournalTimeout bounds each journal write (0 means one second). A write
	// that fails or times out is logged and the call goes ahead: the journal
	// is a memory for the next start, never a gate on this one.
	JournalTimeout time.Duration
}

// Journal keeps what a Pacer must remember across a restart. Entries are
// appended as they happen; Load returns those a restart needs.
//
// Error contract: any error is the journal's own (an unreachable or broken
// store), never a verdict on the call; the pacer logs it and carries on.
// Methods honour ctx. Implementations are safe for concurrent use.
type Journal interface {
	// Record appends e.
	Record(ctx context.Context, e Entry) error
	// Load returns the entries recorded at or after since, and those whose
	// Until is after since, oldest first.
	Load(ctx context.Context, since time.Time) ([]Entry, error)
	// Prune deletes the entries recorded before before whose Until is not
	// after before.
	Prune(ctx context.Context, before time.Time) error
}

// Event is what a journal Entry records.
type Event string

// Journal events.
const (
	// EventGrant: a request was let go at At. It holds a slot of the window
	// and, when Quota is set, a unit of that quota for At's UTC day.
	EventGrant Event = "grant"
	// EventRefund: a unit of Quota reserved by a grant of the same UTC day
	// was given back (the attempt was not charged).
	EventRefund Event = "refund"
	// EventPause: a Retry-After holds every call until Until.
	EventPause Event = "pause"
	// EventSpent: the service reported Quota spent; refused until Until.
	EventSpent Event = "spent"
)

// Entry is one journal record.
type Entry struct {
	At    time.Time
	Event Event
	Quota string    // "turns", "intakes", or "" for calls on no quota
	Until time.Time // EventPause and EventSpent
}

// ErrQuotaSpent is matched (errors.Is) by every *QuotaError.
var ErrQuotaSpent = intakeapi.ErrQuotaSpent

// QuotaError refuses a call because a daily quota is spent; nothing was
// sent. It is intakeapi's, shared with every other Gate.
type QuotaError = intakeapi.QuotaError

// Stats is a snapshot of the pacer's state.
type Stats = pacing.Stats

// Pacer is a sliding-window gate with a priority queue. It implements
// intakeapi.Gate. The zero value is not usable; call New.
type Pacer struct {
	cfg Config
	clk Clock
	log *slog.Logger

	mu          sync.Mutex
	window      []time.Time // grant times within the window, ascending
	pausedUntil time.Time
	queue       []*waiter // priority descending, then arrival
	// followUps are the follow-ups granted callers said would come
	// (Call.FollowUps) that have not arrived yet: each counts in the place
	// shown to lower priorities until it comes (or expires).
	followUps []announced
	seq       uint64
	changed   chan struct{} // closed and replaced on every state change
	// awaiting counts the waiters of Await in the queue; driving says
	// the goroutine that serves them runs (one for all, only while any wait).
	awaiting int
	driving  bool

	day        time.Time            // start of the current UTC day
	used       map[pacing.Quota]int // charged or in-flight today
	spentUntil map[pacing.Quota]time.Time
	pruned     time.Time // the last journal prune
}

// announced is a follow-up to come: its ticket (the announcer's seq) and
// until when it is waited for.
type announced struct {
	ticket uint64
	until  time.Time
}

type waiter struct {
	prio      Priority
	seq       uint64
	followUps int // requests that follow this one at once (Call.FollowUps)
	headroom  int // free slots the window must keep after this grant (Call.Headroom)
	// async is set for a caller of Await: no goroutine of its own waits
	// for it, the pacer's drive does.
	async *awaiting
}

// awaiting is what drive needs of an Await's caller.
type awaiting struct {
	ctx     context.Context
	call    intakeapi.Call
	kind    pacing.Quota
	granted func(func(intakeapi.Outcome), error)
	last    Progress
	stop    func() bool // releases the context.AfterFunc
}

// New returns a Pacer for cfg.
func New(cfg Config) *Pacer {
	cfg.Rules = cfg.Rules.WithDefaults()
	if cfg.JournalTimeout <= 0 {
		cfg.JournalTimeout = time.Second
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = pacing.DefaultProgressEvery
	}
	clk := cfg.Clock
	if clk == nil {
		clk = SystemClock{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pacer{cfg: cfg, clk: clk, log: log, changed: make(chan struct{}),
		used: map[pacing.Quota]int{}, spentUntil: map[pacing.Quota]time.Time{}}
}

var _ intakeapi.Gate = (*Pacer)(nil)

// Wait implements intakeapi.Gate. It returns at once with a *QuotaError when
// the call's daily quota is spent (also if it becomes spent while waiting),
// with ctx's error when ctx ends (the caller leaves the queue; a caller whose
// ctx has ended is never granted, even when its slot comes at the same
// moment), or when the call is at the head of the queue and the window, and
// any Retry-After pause, allow one more request. Higher priorities go first;
// equal priorities in arrival order. A call with Call.Headroom h goes only
// while the window holds at most PerMinute-1-h grants (h is capped at
// PerMinute-1, and moot without a limit); while that holds it back, the
// calls queued behind it are not kept waiting by it. Call.Progress is told the position and
// expected wait each time the queue changes (a caller joins ahead, one ahead
// leaves or is let go, a pause starts, a call settles), and again at least
// every Config.ProgressEvery while the wait counts down.
func (p *Pacer) Wait(ctx context.Context, call intakeapi.Call) (func(intakeapi.Outcome), error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("pacer: not waiting: %w", err)
	}
	kind := pacing.QuotaOf(call.Op)
	p.mu.Lock()
	if err := p.quotaErr(kind, p.clk.Now()); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	w := p.enqueue(call, nil)

	var (
		timer, tick Timer
		last        = Progress{Position: -1}
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if tick != nil {
			tick.Stop()
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
		ahead, aheadFollowUps := p.behind(p.queue[:pos-1])
		var tc <-chan time.Time
		if ahead == 0 {
			next := p.cfg.NextSlot(p.state(), now, w.headroom)
			if !next.After(now) {
				release := p.grant(w, call, kind, now)
				p.mu.Unlock()
				p.journalGrant(ctx, kind, now)
				return release, nil
			}
			timer = p.clk.NewTimerAt(next)
			tc = timer.C()
		}
		prog := p.progress(w, ahead, aheadFollowUps, now)
		ch := p.changed
		p.mu.Unlock()

		var ticks <-chan time.Time
		if call.Progress != nil {
			if prog != last {
				call.Progress(prog)
				last = prog
			}
			if p.cfg.ProgressEvery > 0 {
				tick = p.clk.NewTimerAt(now.Add(p.cfg.ProgressEvery))
				ticks = tick.C()
			}
		}
		select {
		case <-ctx.Done(): // handled at the top of the loop
		case <-ch:
		case <-tc:
		case <-ticks: // re-estimated and re-reported at the top of the loop
		}
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		if tick != nil {
			tick.Stop()
			tick = nil
		}
		p.mu.Lock()
	}
}

// enqueue puts a caller of call in the queue (async set for a caller of
// Await) and wakes the others; caller holds mu.
func (p *Pacer) enqueue(call intakeapi.Call, async *awaiting) *waiter {
	p.seq++
	w := &waiter{prio: call.Priority, seq: p.seq, followUps: call.FollowUps, headroom: p.cfg.Headroom(call), async: async}
	if t := call.Follows.Ticket(); t > 0 {
		// The follow-up has come: it takes its announcer's place among
		// follow-ups (their seq order), whenever it arrives.
		w.seq = uint64(t)
		p.followUps = slices.DeleteFunc(p.followUps, func(a announced) bool { return a.ticket == w.seq })
	}
	i, _ := slices.BinarySearchFunc(p.queue, w, cmpWaiter)
	p.queue = slices.Insert(p.queue, i, w)
	if async != nil {
		p.awaiting++
	}
	p.broadcast()
	return w
}

// behind counts the callers a waiter queued after front waits behind, and
// the follow-ups they announce: those in front, except any whose headroom
// holds them back now (they are skipped, not a barrier: a scenario run's
// call never blocks a probe of its own priority queued after it). Caller
// holds mu.
func (p *Pacer) behind(front []*waiter) (ahead, aheadFollowUps int) {
	for _, o := range front {
		if !p.heldBack(o) {
			ahead++
			aheadFollowUps += o.followUps
		}
	}
	return ahead, aheadFollowUps
}

// progress is what w is told, ahead (and their aheadFollowUps) in front of
// it. The place shown counts the requests ahead, follow-ups included (a
// creation's first turn then never pushes anyone back), the follow-ups to
// come that go first (all of them before a lower priority, those
// announced earlier before a follow-up), and w's own headroom: it goes
// only once that many more could go before it, so it is never shown
// "next" while held. Caller holds mu.
func (p *Pacer) progress(w *waiter, ahead, aheadFollowUps int, now time.Time) Progress {
	first := 0
	for _, a := range p.followUps {
		if pacing.FollowUpFirst(int64(a.ticket), w.prio, int64(w.seq)) {
			first++
		}
	}
	place := pacing.Place(ahead, aheadFollowUps, first, w.headroom)
	return p.cfg.Progress(p.state(), place, w.followUps, now)
}

// grant lets w go now: it leaves the queue, its follow-ups are announced,
// the window and its quota count it. Caller holds mu; journalGrant follows
// once it is released.
func (p *Pacer) grant(w *waiter, call intakeapi.Call, kind pacing.Quota, now time.Time) func(intakeapi.Outcome) {
	p.remove(w)
	for range w.followUps {
		p.followUps = append(p.followUps, announced{ticket: w.seq, until: now.Add(pacing.FollowUpHold)})
	}
	if call.Announces != nil {
		call.Announces.SetTicket(int64(w.seq))
	}
	p.window = append(p.window, now)
	return p.reserve(kind)
}

// journalGrant records a grant of kind made at now, before its request
// goes, so a restart that follows it cannot forget it: one small write,
// bounded. Skipped when it limits nothing (no window, no quota of its
// kind: a raised key under load pays no write per call).
func (p *Pacer) journalGrant(ctx context.Context, kind pacing.Quota, now time.Time) {
	if p.cfg.Limited() || p.cfg.Limit(kind) > 0 {
		p.journal(ctx, Entry{At: now, Event: EventGrant, Quota: string(kind)})
	}
}

// CheckQuota reports, without spending anything, whether a call of op would
// be refused now for a spent daily quota: the *QuotaError Wait would give,
// or nil.
func (p *Pacer) CheckQuota(op intakeapi.Op) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.Now()
	p.rollDay(now)
	return p.quotaErr(pacing.QuotaOf(op), now)
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
		TurnsUsed:   p.used[pacing.QuotaTurns],
		IntakesUsed: p.used[pacing.QuotaIntakes],
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
	e, ok := p.pauseLocked(d)
	p.mu.Unlock()
	if ok {
		p.journal(context.Background(), e)
	}
}

func cmpWaiter(a, b *waiter) int {
	switch {
	case pacing.Ahead(a.prio, int64(a.seq), b.prio, int64(b.seq)):
		return -1
	case pacing.Ahead(b.prio, int64(b.seq), a.prio, int64(a.seq)):
		return 1
	}
	return 0
}

// broadcast wakes every waiter to re-evaluate; callers hold mu.
func (p *Pacer) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Pacer) remove(w *waiter) {
	if i := slices.Index(p.queue, w); i >= 0 {
		p.queue = slices.Delete(p.queue, i, i+1)
		if w.async != nil {
			p.awaiting--
			w.async.stop()
		}
		p.broadcast()
	}
}

func (p *Pacer) prune(now time.Time) {
	p.followUps = slices.DeleteFunc(p.followUps, func(a announced) bool { return !a.until.After(now) })
	n := 0
	for n < len(p.window) && !p.window[n].Add(p.cfg.Hold()).After(now) {
		n++
	}
	if n > 0 {
		p.window = slices.Delete(p.window, 0, n)
	}
}

func (p *Pacer) heldBack(w *waiter) bool { return p.cfg.HeldBack(len(p.window), w.headroom) }

func (p *Pacer) state() pacing.State {
	return pacing.State{Window: p.window, PausedUntil: p.pausedUntil}
}

// pauseLocked extends the pause to d from now; it returns the journal entry
// when it did.
func (p *Pacer) pauseLocked(d time.Duration) (Entry, bool) {
	now := p.clk.Now()
	until := now.Add(d)
	if until.After(p.pausedUntil) {
		p.pausedUntil = until
		p.log.Info("pacer: paused by Retry-After", slog.Duration("for", d))
		p.broadcast()
		return Entry{At: now, Event: EventPause, Until: until}, true
	}
	return Entry{}, false
}

func (p *Pacer) rollDay(now time.Time) {
	if day := pacing.Day(now); !day.Equal(p.day) {
		p.day = day
		clear(p.used)
	}
}

func (p *Pacer) quotaErr(k pacing.Quota, now time.Time) error {
	p.rollDay(now)
	if err := p.cfg.QuotaErr(k, now, p.spentUntil[k], p.used[k]); err != nil {
		return err
	}
	return nil
}

// reserve counts a granted call against its quota now, so concurrent calls
// cannot overshoot, and returns the release that settles it: refunded when
// the outcome was not charged (an idempotent replay, a refusal before
// processing, nothing sent).
func (p *Pacer) reserve(k pacing.Quota) func(intakeapi.Outcome) {
	day := p.day
	if k != pacing.QuotaNone {
		p.used[k]++
	}
	var once sync.Once
	return func(o intakeapi.Outcome) {
		once.Do(func() { p.settle(k, day, o) })
	}
}

func (p *Pacer) settle(k pacing.Quota, day time.Time, o intakeapi.Outcome) {
	var entries []Entry
	p.mu.Lock()
	now := p.clk.Now()
	p.rollDay(now)
	if k != pacing.QuotaNone && !o.Charged() && p.day.Equal(day) && p.used[k] > 0 {
		p.used[k]--
		entries = append(entries, Entry{At: now, Event: EventRefund, Quota: string(k)})
	}
	if o.Status == 429 {
		switch {
		case o.Code == intakeapi.CodeQuotaExceeded && k != pacing.QuotaNone:
			// The service knows better than our count (other clients, a reset
			// we did not see): refuse this kind until the next UTC reset.
			p.spentUntil[k] = pacing.SpentUntil(now)
			p.log.Warn("pacer: the service reports the daily quota spent", slog.String("quota", string(k)))
			entries = append(entries, Entry{At: now, Event: EventSpent, Quota: string(k), Until: p.spentUntil[k]})
		case o.RetryAfter > 0:
			if e, ok := p.pauseLocked(o.RetryAfter); ok {
				entries = append(entries, e)
			}
		}
	}
	p.broadcast()
	p.mu.Unlock()
	for _, e := range entries {
		p.journal(context.Background(), e)
	}
}

// journal records e, if there is a journal, within JournalTimeout and never
// cut short by the caller's context (the grant has happened either way). A
// failure is logged: the call goes ahead, only a restart would forget it.
// About once an hour it also starts a prune of old entries in the
// background, off the caller's path.
func (p *Pacer) journal(ctx context.Context, e Entry) {
	j := p.cfg.Journal
	if j == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.JournalTimeout)
	defer cancel()
	if err := j.Record(ctx, e); err != nil {
		p.log.Warn("pacer: journal write failed; a restart now would forget this", slog.String("event", string(e.Event)), slog.Any("err", err))
	}
	p.mu.Lock()
	prune := e.At.Sub(p.pruned) >= time.Hour
	if prune {
		p.pruned = e.At
	}
	p.mu.Unlock()
	if prune {
		go p.pruneJournal(e.At)
	}
}

// journalKeep is how far back the journal is kept: today's counts need the
// current UTC day, the window a minute; a day more is kept to look at.
const journalKeep = 48 * time.Hour

func (p *Pacer) pruneJournal(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*p.cfg.JournalTimeout)
	defer cancel()
	if err := p.cfg.Journal.Prune(ctx, now.Add(-journalKeep)); err != nil {
		p.log.Warn("pacer: journal prune failed", slog.Any("err", err))
	}
}

// Restore reads the journal back: the grants still in the rolling window,
// today's quota counts (grants less refunds; a call in flight when the last
// process stopped stays counted, as it may have been processed), a pause in
// force and a quota the service reported spent. Call it once, before the
// first Wait. Without a journal it does nothing.
func (p *Pacer) Restore(ctx context.Context) error {
	j := p.cfg.Journal
	if j == nil {
		return nil
	}
	p.mu.Lock()
	now := p.clk.Now()
	p.rollDay(now)
	since := p.day // today's counts; and the window, when it reaches into yesterday
	if w := now.Add(-p.cfg.Hold()); w.Before(since) {
		since = w
	}
	p.mu.Unlock()

	// At start, not on any call's path: the prune runs here, then hourly
	// in the background.
	if err := j.Prune(ctx, now.Add(-journalKeep)); err != nil {
		return fmt.Errorf("pacer: prune the journal: %w", err)
	}
	entries, err := j.Load(ctx, since)
	if err != nil {
		return fmt.Errorf("pacer: restore from the journal: %w", err)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.rollDay(now)
	used := map[pacing.Quota]int{}
	window := 0
	for _, e := range entries {
		k := pacing.Quota(e.Quota)
		today := !e.At.Before(p.day) && e.At.Before(p.day.Add(24*time.Hour))
		switch e.Event {
		case EventGrant:
			if e.At.Add(p.cfg.Hold()).After(now) {
				p.window = append(p.window, e.At)
				window++
			}
			if k != pacing.QuotaNone && today {
				used[k]++
			}
		case EventRefund:
			if k != pacing.QuotaNone && today {
				used[k]--
			}
		case EventPause:
			if e.Until.After(p.pausedUntil) && e.Until.After(now) {
				p.pausedUntil = e.Until
			}
		case EventSpent:
			if k != pacing.QuotaNone && e.Until.After(p.spentUntil[k]) && e.Until.After(now) {
				p.spentUntil[k] = e.Until
			}
		}
	}
	slices.SortFunc(p.window, time.Time.Compare)
	for k := range used {
		p.used[k] += max(used[k], 0)
	}
	p.pruned = now
	p.broadcast()
	p.log.Info("pacer: restored from the journal", slog.Int("in_window", window),
		slog.Int("turns_used", p.used[pacing.QuotaTurns]), slog.Int("intakes_used", p.used[pacing.QuotaIntakes]),
		slog.Time("paused_until", p.pausedUntil))
	return nil
}
