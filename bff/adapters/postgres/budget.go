package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
)

// DefaultBudgetStaleAfter is BudgetConfig.StaleAfter's default. The
// limits' defaults are package pacing's.
const DefaultBudgetStaleAfter = 15 * time.Second

// budgetLock is the key of the transaction-scoped advisory lock every
// decision of every replica's Budget is taken under.
const budgetLock int64 = 0x1b_0d_6e_7a_11

// budgetChannel is the NOTIFY channel told of every change of the shared
// queue, window, pause or quotas.
const budgetChannel = "intake_budget"

// BudgetConfig configures a Budget. Zero values take the service's limits.
// Every replica sharing a key must use the same limits.
type BudgetConfig struct {
	// Rules are the key's limits, for all replicas together; zero values
	// take the spec's.
	pacing.Rules
	// Replica names this process in the tables (for operators); "" means
	// host name and process id.
	Replica string
	// Now is the time source; nil means time.Now. Replicas stamp grants with
	// their own clocks, so those must agree within Margin.
	Now func() time.Time
	// Logger gets a line when a pause starts, a quota is spent, dead waiters
	// are dropped or the notification connection is lost; nil discards.
	Logger *slog.Logger
	// ProgressEvery is how often a waiting caller with a Call.Progress is told
	// its place and expected wait again when nothing else changed; 0 means
	// two seconds, negative means only on a change.
	ProgressEvery time.Duration
	// StaleAfter drops a waiter whose replica has not renewed its heartbeat
	// for this long (the replica died or lost the database), so it blocks no
	// one; waiters renew every third of it. 0 means 15 s.
	StaleAfter time.Duration
}

// BudgetStats is a snapshot of the shared budget, as pacer.Stats is of one
// process's pacer.
type BudgetStats = pacing.Stats

// Budget is the upstream key's request budget shared by every replica on one
// PostgreSQL database: the rolling window, the priority queue, the
// Retry-After pause and the daily quotas of bff/adapters/pacer.Pacer, kept in the
// tables of migration 0002_budget.sql. It implements intakeapi.Gate with the
// pacer's semantics. Each decision is one short transaction under a
// transaction-scoped advisory lock; changes are announced with NOTIFY on a
// connection the Budget holds while any of its callers waits. Safe for
// concurrent use; the zero value is not usable, call NewBudget.
type Budget struct {
	pool       *pgxpool.Pool
	cfg        BudgetConfig
	heartbeat  time.Duration // how often a waiter renews its row
	log        *slog.Logger
	now        func() time.Time
	notifyWait time.Duration // retry delay of the notification connection

	mu         sync.Mutex
	changed    chan struct{} // closed and replaced on every change seen
	waiting    int           // this process's callers queued in Wait
	stopListen context.CancelFunc
	idle       *time.Timer // stops the listener after listenLinger without waiters
	pruned     time.Time
}

// listenLinger keeps the notification connection this long after the last
// waiter of this process left, so a steady trickle of waiters does not open
// a connection each.
const listenLinger = 30 * time.Second

var _ intakeapi.Gate = (*Budget)(nil)

// NewBudget returns a Budget on pool, whose database has the budget's
// migrations applied (0002_budget.sql and later, as Open applies them). It starts nothing until the first Wait.
func NewBudget(pool *pgxpool.Pool, cfg BudgetConfig) *Budget {
	cfg.Rules = cfg.Rules.WithDefaults()
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = pacing.DefaultProgressEvery
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultBudgetStaleAfter
	}
	if cfg.Replica == "" {
		host, _ := os.Hostname()
		cfg.Replica = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Budget{
		pool: pool, cfg: cfg, heartbeat: cfg.StaleAfter / 3,
		log: log, now: now, notifyWait: time.Second, changed: make(chan struct{}),
	}
}

type quota = pacing.Quota

// Wait implements intakeapi.Gate with bff/adapters/pacer.Pacer's semantics, over every
// replica sharing the database. It returns at once with an
// *intakeapi.QuotaError when the call's daily quota is spent (also if it
// becomes spent while waiting), with ctx's error (wrapped) when ctx ends
// (the caller leaves the queue and is never granted), with a wrapped
// database error when the budget cannot be read (nothing was granted), or
// when the call is first among the live waiters of all replicas (higher
// priority first, then arrival) and the window and any Retry-After pause
// allow one more request. As with the pacer, a call with Call.Headroom h
// goes only while the window holds at most PerMinute-1-h grants (h capped
// at PerMinute-1, moot without a limit), and while that holds it back the
// waiters behind it do not wait for it. Call.Progress is told the caller's position in the
// shared queue and its expected wait on every change and at least every
// ProgressEvery.
func (b *Budget) Wait(ctx context.Context, call intakeapi.Call) (func(intakeapi.Outcome), error) {
	if err := context.Cause(ctx); err != nil {
		return nil, fmt.Errorf("budget: not waiting: %w", err)
	}
	q := pacing.QuotaOf(call.Op)
	joined := false // the listener is started only for a caller that must wait
	defer func() {
		if joined {
			b.leave()
		}
	}()

	var (
		w    = waiterRow{prio: int(call.Priority), followUps: call.FollowUps, ord: call.Follows.Ticket(), headroom: b.cfg.Headroom(call)}
		last = intakeapi.Progress{Position: -1}
		pos  int
	)
	for {
		if err := context.Cause(ctx); err != nil {
			b.dequeue(ctx, w.id)
			return nil, fmt.Errorf("budget: stopped waiting at position %d: %w", pos, err)
		}
		ch := b.changes() // before reading, so a change during the read wakes the loop
		ev, err := b.evaluate(ctx, &w, q)
		if err != nil {
			if cerr := context.Cause(ctx); cerr != nil {
				b.dequeue(ctx, w.id)
				return nil, fmt.Errorf("budget: stopped waiting at position %d: %w", pos, cerr)
			}
			b.dequeue(ctx, w.id)
			return nil, err
		}
		if ev.grant != 0 {
			if call.Announces != nil && ev.ticket != 0 {
				call.Announces.SetTicket(ev.ticket)
			}
			return b.release(ev.grant, q), nil
		}
		pos = ev.place
		if !joined {
			// The listener looks again once it hears, so a change since ch
			// was taken is not lost.
			b.join()
			joined = true
		}
		// Sleep until whichever comes first: a change announced by any
		// replica, the slot when first in line, the next heartbeat, the next
		// progress report.
		sleep := b.heartbeat
		if ev.pos == 1 { // first in line (the place shown may count follow-ups to come)
			sleep = min(sleep, ev.next.Sub(ev.now))
		}
		if call.Progress != nil {
			prog := ev.progress
			if prog != last {
				call.Progress(prog)
				last = prog
			}
			if b.cfg.ProgressEvery > 0 {
				sleep = min(sleep, b.cfg.ProgressEvery)
			}
		}
		t := time.NewTimer(max(sleep, 0))
		select {
		case <-ctx.Done(): // handled at the top of the loop
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

type waiterRow struct {
	id        int64 // 0 until queued
	prio      int
	followUps int   // requests that follow this one at once (Call.FollowUps)
	ord       int64 // a follow-up's place among follow-ups: its announcement's id (0: the waiter's id)
	arrived   bool  // a follow-up has taken its announcement
	headroom  int   // free slots the window must keep after this grant (Call.Headroom)
}

// evaluation is one look at the shared state for one caller.
type evaluation struct {
	grant    int64 // the grant's id when the caller was let go
	ticket   int64 // the announcement of its follow-up, when it announced one
	pos      int   // 1 = next
	place    int   // the place shown: pos counting the follow-ups of those ahead
	now      time.Time
	next     time.Time          // the earliest time one more request fits
	progress intakeapi.Progress // what the caller is told
}

// evaluate takes one decision for w under the lock: refuse (spent quota),
// grant (first in line and the window has room), or queue w and tell its
// place. A caller granted on its first look is never queued.
func (b *Budget) evaluate(ctx context.Context, w *waiterRow, q quota) (ev evaluation, err error) {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return ev, fmt.Errorf("budget: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, budgetLock); err != nil {
		return ev, fmt.Errorf("budget: lock: %w", err)
	}
	now := ceilMicro(b.now())
	ev.now = now
	notify := false

	// Everything the decision reads, in one round trip.
	var (
		dropped       int64
		paused, spent *time.Time
		used, ahead   int
		following     int // follow-ups of the waiters ahead, and those granted callers announced
		announced     int
		st            pacing.State
	)
	aheadOf := w.id
	switch {
	case w.ord != 0:
		aheadOf = w.ord // a follow-up: in its announcer's order
	case aheadOf == 0:
		aheadOf = math.MaxInt64 // a newcomer is behind every waiter of its priority or higher
	}
	batch := &pgx.Batch{}
	if w.ord != 0 && !w.arrived {
		// The follow-up its announcer announced has come.
		batch.Queue(`DELETE FROM budget_follow_ups WHERE id = $1`, w.ord)
		w.arrived = true
	}
	batch.Queue(`DELETE FROM budget_waiters WHERE heartbeat < $1`, now.Add(-b.cfg.StaleAfter)).
		Exec(func(tag pgconn.CommandTag) error { dropped = tag.RowsAffected(); return nil })
	if w.id != 0 {
		// Renew the heartbeat; a row dropped as dead while this process
		// stalled comes back in its old place.
		batch.Queue(`INSERT INTO budget_waiters (id, priority, enqueued_at, replica, heartbeat, follow_ups, ord, headroom)
			VALUES ($1, $2, $3, $4, $3, $5, NULLIF($6, 0), $7) ON CONFLICT (id) DO UPDATE SET heartbeat = EXCLUDED.heartbeat`,
			w.id, w.prio, now, b.cfg.Replica, w.followUps, w.ord, w.headroom)
	}
	// The rules of package pacing, in SQL: a waiter is ahead as
	// pacing.Ahead says, a follow-up goes first as pacing.FollowUpFirst
	// says. The waiters ahead leave out those whose headroom the window
	// holds back now (pacing.Rules.HeldBack): they are skipped, not waited behind, so a
	// scenario run's call never blocks a probe of its priority behind it.
	batch.Queue(`WITH win AS (SELECT count(*) AS n FROM budget_grants WHERE sent_at > $9),
	ahead AS (SELECT count(*) AS n, COALESCE(sum(follow_ups), 0) AS follow_ups FROM budget_waiters, win
		WHERE (priority > $6 OR (priority = $6 AND COALESCE(ord, id) < $7))
			AND NOT (headroom > 0 AND win.n > $10 - 1 - headroom))
	SELECT
		(SELECT until_at FROM budget_holds WHERE name = 'pause' AND until_at > $1),
		(SELECT until_at FROM budget_holds WHERE name = $2 AND until_at > $1),
		CASE WHEN $4 = '' OR $5 <= 0 THEN 0
			ELSE (SELECT count(*) FROM budget_grants WHERE day = $3 AND quota = $4 AND NOT refunded) END,
		ahead.n, ahead.follow_ups,
		(SELECT count(*) FROM budget_follow_ups WHERE until_at > $1 AND ($6 < $8 OR id < $7))
	FROM ahead`,
		now, "spent:"+string(q), pacing.Day(now), string(q), b.cfg.Limit(q), w.prio, aheadOf, int(intakeapi.PriorityFirstTurn),
		now.Add(-b.cfg.Hold()), b.cfg.PerMinute).
		QueryRow(func(r pgx.Row) error { return r.Scan(&paused, &spent, &used, &ahead, &following, &announced) })
	if n := b.cfg.PerMinute; n > 0 {
		batch.Queue(`SELECT sent_at FROM budget_grants WHERE sent_at > $1 ORDER BY sent_at DESC LIMIT $2`,
			now.Add(-b.cfg.Hold()), n).
			Query(func(rows pgx.Rows) (err error) {
				st.Window, err = pgx.CollectRows(rows, pgx.RowTo[time.Time])
				return err
			})
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return ev, fmt.Errorf("budget: read the shared state: %w", err)
	}
	slices.Reverse(st.Window) // ascending
	if paused != nil {
		st.PausedUntil = *paused
	}
	if dropped > 0 {
		b.log.Warn("budget: dropped waiters whose replica stopped renewing them", slog.Int64("waiters", dropped))
		notify = true
	}

	if qerr := b.quotaErr(q, now, spent, used); qerr != nil {
		if w.id != 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM budget_waiters WHERE id = $1`, w.id); err != nil {
				return ev, fmt.Errorf("budget: leave the queue: %w", err)
			}
			w.id = 0
			notify = true
		}
		if err := b.commit(ctx, tx, notify); err != nil {
			return ev, err
		}
		return ev, qerr
	}
	ev.pos = ahead + 1
	// Follow-ups to come go before this caller: all of them before a lower
	// priority, those announced earlier before a follow-up.
	// w's own headroom counts in its place: it goes only once that many
	// more could go before it, so it is never shown next while held.
	ev.place = pacing.Place(ahead, following, announced, w.headroom)
	ev.next = b.cfg.NextSlot(st, now, w.headroom)

	if ev.pos == 1 && !ev.next.After(now) {
		if err := tx.QueryRow(ctx, `INSERT INTO budget_grants (sent_at, quota, day, replica)
			VALUES ($1, $2, $3, $4) RETURNING id`, now, string(q), pacing.Day(now), b.cfg.Replica).Scan(&ev.grant); err != nil {
			return ev, fmt.Errorf("budget: grant: %w", err)
		}
		if w.id != 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM budget_waiters WHERE id = $1`, w.id); err != nil {
				return ev, fmt.Errorf("budget: leave the queue: %w", err)
			}
		}
		if w.followUps > 0 {
			if err := tx.QueryRow(ctx, `INSERT INTO budget_follow_ups (until_at) SELECT $1 FROM generate_series(1, $2) RETURNING id`,
				now.Add(pacing.FollowUpHold), w.followUps).Scan(&ev.ticket); err != nil {
				return ev, fmt.Errorf("budget: announce follow-ups: %w", err)
			}
		}
		if err := b.prune(ctx, tx, now); err != nil {
			return ev, err
		}
		// Always announced: the window changed for everyone waiting.
		if err := b.commit(ctx, tx, true); err != nil {
			// The commit may have landed (ctx ended on the way back): the
			// slot stays taken, but the quota is given back, as nothing
			// will be sent.
			b.settle(ev.grant, q, intakeapi.Outcome{NotSent: true})
			ev.grant = 0
			return ev, err
		}
		w.id = 0
		return ev, nil
	}
	if w.id == 0 {
		if err := tx.QueryRow(ctx, `INSERT INTO budget_waiters (priority, enqueued_at, replica, heartbeat, follow_ups, ord, headroom)
			VALUES ($1, $2, $3, $2, $4, NULLIF($5, 0), $6) RETURNING id`, w.prio, now, b.cfg.Replica, w.followUps, w.ord, w.headroom).Scan(&w.id); err != nil {
			return ev, fmt.Errorf("budget: join the queue: %w", err)
		}
		notify = true
	}
	if err := b.commit(ctx, tx, notify); err != nil {
		// w.id is kept even for a row inserted here: the commit may have
		// landed, and the caller's dequeue of a row that is not there is
		// harmless, while an orphan would block everyone until it is stale.
		return ev, err
	}
	ev.progress = b.cfg.Progress(st, ev.place, w.followUps, now)
	ev.progress.Wait = roundUp(ev.progress.Wait)
	return ev, nil
}

// roundUp rounds an expected wait up to a tenth of a second, so a caller is
// told again when the figure moves, not on every wake-up.
func roundUp(d time.Duration) time.Duration {
	const step = 100 * time.Millisecond
	return (d + step - 1) / step * step
}

// commit commits tx, announcing a change first when notify is set.
func (b *Budget) commit(ctx context.Context, tx pgx.Tx, notify bool) error {
	if notify {
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, budgetChannel); err != nil {
			return fmt.Errorf("budget: notify: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("budget: commit: %w", err)
	}
	if notify {
		b.broadcast() // this process's waiters need not wait for the round trip
	}
	return nil
}

// ceilMicro rounds t up to PostgreSQL's precision, so a stored grant or
// hold never ends earlier than the instant it was computed for.
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}

// quotaErr is the refusal of a call on quota q at now, or nil, given the
// quota's spent hold (nil when none) and today's count.
func (b *Budget) quotaErr(q quota, now time.Time, spent *time.Time, used int) error {
	var until time.Time
	if spent != nil {
		until = *spent
	}
	if qe := b.cfg.QuotaErr(q, now, until, used); qe != nil {
		return qe
	}
	return nil
}

// budgetKeep is how long grants are kept: today's counts need the UTC day,
// the window a minute; a day more is kept to look at.
const budgetKeep = 48 * time.Hour

// prune deletes old grants and ended holds, at most hourly per process, in
// the transaction of a grant.
func (b *Budget) prune(ctx context.Context, tx pgx.Tx, now time.Time) error {
	b.mu.Lock()
	due := now.Sub(b.pruned) >= time.Hour
	if due {
		b.pruned = now
	}
	b.mu.Unlock()
	if !due {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM budget_grants WHERE sent_at < $1 AND day < $2`,
		now.Add(-max(b.cfg.Hold(), budgetKeep)), pacing.Day(now).Add(-24*time.Hour)); err != nil {
		return fmt.Errorf("budget: prune grants: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM budget_follow_ups WHERE until_at < $1`, now); err != nil {
		return fmt.Errorf("budget: prune: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM budget_holds WHERE until_at < $1`, now); err != nil {
		return fmt.Errorf("budget: prune holds: %w", err)
	}
	return nil
}

// dequeue takes waiter id out of the queue, whatever ctx's state: a row left
// behind would block every replica until it goes stale.
func (b *Budget) dequeue(ctx context.Context, id int64) {
	if id == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := b.changeTx(ctx, func(tx pgx.Tx) (bool, error) {
		_, err := tx.Exec(ctx, `DELETE FROM budget_waiters WHERE id = $1`, id)
		return true, err
	}); err != nil {
		b.log.Warn("budget: could not leave the queue; the row goes stale", slog.Int64("waiter", id), slog.Any("err", err))
	}
}

// changeTx runs f under the lock and commits, announcing a change when f
// says there was one.
func (b *Budget) changeTx(ctx context.Context, f func(tx pgx.Tx) (bool, error)) error {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("budget: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, budgetLock); err != nil {
		return fmt.Errorf("budget: lock: %w", err)
	}
	changed, err := f(tx)
	if err != nil {
		return err
	}
	return b.commit(ctx, tx, changed)
}

// release returns the settle function of grant id: exactly once, it gives
// the quota back when the outcome was not charged (a replay, a refusal
// before processing, nothing sent), pauses every replica on a 429's
// Retry-After, and marks the quota spent on the service's quota_exceeded.
func (b *Budget) release(id int64, q quota) func(intakeapi.Outcome) {
	var once sync.Once
	return func(o intakeapi.Outcome) {
		once.Do(func() { b.settle(id, q, o) })
	}
}

func (b *Budget) settle(id int64, q quota, o intakeapi.Outcome) {
	refund := q != pacing.QuotaNone && !o.Charged()
	var hold string
	var until time.Time
	now := b.now()
	if o.Status == 429 {
		switch {
		case o.Code == intakeapi.CodeQuotaExceeded && q != pacing.QuotaNone:
			// The service knows better than our count: refuse this kind on
			// every replica until the next UTC reset.
			hold, until = "spent:"+string(q), pacing.SpentUntil(now)
			b.log.Warn("budget: the service reports the daily quota spent", slog.String("quota", string(q)))
		case o.RetryAfter > 0:
			hold, until = "pause", ceilMicro(now.Add(o.RetryAfter))
		}
	}
	if !refund && hold == "" {
		return // the grant stands as counted: nothing to write
	}
	// Not the caller's context: the attempt has happened either way.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := b.changeTx(ctx, func(tx pgx.Tx) (bool, error) {
		if refund {
			if _, err := tx.Exec(ctx, `UPDATE budget_grants SET refunded = true WHERE id = $1`, id); err != nil {
				return false, fmt.Errorf("budget: refund: %w", err)
			}
		}
		if hold != "" {
			tag, err := tx.Exec(ctx, `INSERT INTO budget_holds (name, until_at) VALUES ($1, $2)
				ON CONFLICT (name) DO UPDATE SET until_at = EXCLUDED.until_at
				WHERE budget_holds.until_at < EXCLUDED.until_at`, hold, until)
			if err != nil {
				return false, fmt.Errorf("budget: hold %s: %w", hold, err)
			}
			if hold == "pause" && tag.RowsAffected() > 0 {
				b.log.Info("budget: every replica paused by Retry-After", slog.Duration("for", o.RetryAfter))
			}
		}
		return true, nil
	})
	if err != nil {
		b.log.Error("budget: could not settle a call", slog.Int64("grant", id), slog.Any("err", err))
	}
}

// Pause holds every replica's calls until d from now (as a 429's
// Retry-After does). The error is the database's.
func (b *Budget) Pause(ctx context.Context, d time.Duration) error {
	until := ceilMicro(b.now().Add(d))
	return b.changeTx(ctx, func(tx pgx.Tx) (bool, error) {
		_, err := tx.Exec(ctx, `INSERT INTO budget_holds (name, until_at) VALUES ('pause', $1)
			ON CONFLICT (name) DO UPDATE SET until_at = GREATEST(budget_holds.until_at, EXCLUDED.until_at)`, until)
		if err != nil {
			return false, fmt.Errorf("budget: pause: %w", err)
		}
		return true, nil
	})
}

// CheckQuota reports, without spending anything, whether a call of op
// would be refused now for a spent daily quota, counted across every
// replica: the *intakeapi.QuotaError Wait would give, or nil.
func (b *Budget) CheckQuota(ctx context.Context, op intakeapi.Op) error {
	q := pacing.QuotaOf(op)
	if q == pacing.QuotaNone {
		return nil
	}
	now := b.now()
	var spent *time.Time
	var used int
	err := b.pool.QueryRow(ctx, `SELECT
		(SELECT until_at FROM budget_holds WHERE name = $1 AND until_at > $2),
		(SELECT count(*) FROM budget_grants WHERE day = $3 AND quota = $4 AND NOT refunded)`,
		"spent:"+string(q), now, pacing.Day(now), string(q)).Scan(&spent, &used)
	if err != nil {
		return fmt.Errorf("budget: check quota: %w", err)
	}
	if qe := b.quotaErr(q, now, spent, used); qe != nil {
		return qe
	}
	return nil
}

// Stats returns a snapshot of the shared budget. The error is the
// database's.
func (b *Budget) Stats(ctx context.Context) (BudgetStats, error) {
	now := b.now()
	day := pacing.Day(now)
	s := BudgetStats{DayResetAt: day.Add(24 * time.Hour)}
	var paused *time.Time
	err := b.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM budget_waiters WHERE heartbeat >= $1),
		(SELECT count(*) FROM budget_grants WHERE sent_at > $2),
		(SELECT until_at FROM budget_holds WHERE name = 'pause' AND until_at > $3),
		(SELECT count(*) FROM budget_grants WHERE day = $4 AND quota = 'turns' AND NOT refunded),
		(SELECT count(*) FROM budget_grants WHERE day = $4 AND quota = 'intakes' AND NOT refunded)`,
		now.Add(-b.cfg.StaleAfter), now.Add(-b.cfg.Hold()), now, day).
		Scan(&s.Waiting, &s.InWindow, &paused, &s.TurnsUsed, &s.IntakesUsed)
	if err != nil {
		return BudgetStats{}, fmt.Errorf("budget: stats: %w", err)
	}
	if paused != nil {
		s.PausedUntil = *paused
	}
	return s, nil
}

// changes returns the channel closed at the next change this process sees.
func (b *Budget) changes() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

func (b *Budget) broadcast() {
	b.mu.Lock()
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// join counts a queued caller in; the first starts the listener (or keeps
// the lingering one). The listener runs only while callers of this process
// wait and listenLinger after, so a Budget needs no Close.
func (b *Budget) join() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting++
	if b.idle != nil {
		b.idle.Stop()
		b.idle = nil
	}
	if b.stopListen == nil {
		ctx, cancel := context.WithCancel(context.Background())
		b.stopListen = cancel
		go b.listen(ctx)
	}
}

func (b *Budget) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting--
	if b.waiting > 0 {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(listenLinger, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.idle == t && b.waiting == 0 && b.stopListen != nil {
			b.stopListen()
			b.stopListen = nil
			b.idle = nil
		}
	})
	b.idle = t
}

// listen turns NOTIFYs from every replica into wake-ups of this process's
// waiters until ctx ends. When the connection fails, waiters still
// re-evaluate at their heartbeat (at most StaleAfter/3) and on their own
// timers, so a lost notification delays, never blocks.
func (b *Budget) listen(ctx context.Context) {
	for {
		err := b.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("budget: lost the notification connection; retrying", slog.Any("err", err))
		b.broadcast()
		t := time.NewTimer(b.notifyWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (b *Budget) listenOnce(ctx context.Context) error {
	pc, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// Taken out of the pool: a LISTENing connection must not serve queries
	// of others, nor go back still listening.
	conn := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+budgetChannel); err != nil {
		return err
	}
	// A change between a waiter's last look and LISTEN was not heard: look
	// again now that every later one will be.
	b.broadcast()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		b.broadcast()
	}
}
