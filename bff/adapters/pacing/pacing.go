// Package pacing holds the rules that keep one API key of the Clinical
// Intake Service within its limits, written once: the rolling window and
// its margin, the daily quotas, headroom, the order of callers and their
// expected wait. It is pure: a decision is computed from the state it is
// given and the instant the caller read, with no clock, lock or storage of
// its own. Two gates keep that state: bff/adapters/pacer in one process
// (journalled to SQLite), bff/adapters/postgres's Budget in tables shared by
// every replica. Both ask this package for the window, the quotas, the
// waits and the places shown; three rules the Budget must apply inside one
// SQL statement (who is ahead: Ahead, FollowUpFirst; who is passed over:
// HeldBack) it states again there, and the one suite both gates pass
// (bff/adapters/gatetest) holds the two statements of them to each other.
package pacing

import (
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// The spec's limits for one key.
const (
	DefaultPerMinute     = 6
	DefaultTurnsPerDay   = 100
	DefaultIntakesPerDay = 100
	DefaultMargin        = time.Second
	DefaultWindow        = time.Minute
	// DefaultProgressEvery is how often a waiting caller is told its place
	// again when nothing in the queue changed.
	DefaultProgressEvery = 2 * time.Second
)

// FollowUpHold is how long a follow-up announced by a granted call
// (intakeapi.Call.FollowUps) counts for others before it comes: a first
// turn follows its intake's creation within moments.
const FollowUpHold = 30 * time.Second

// Rules are one key's limits. Zero values take the spec's; see WithDefaults.
type Rules struct {
	// PerMinute is the number of requests allowed in any rolling Window;
	// 0 means DefaultPerMinute, negative means no limit (a raised key).
	PerMinute int
	// Window is the rolling window; 0 means one minute.
	Window time.Duration
	// Margin keeps each grant in the window this much longer than Window:
	// a gate stamps a request when it lets it go, the service when it
	// arrives, and latency (or, across replicas, clock skew) varies between
	// the two. 0 means DefaultMargin; negative means none.
	Margin time.Duration
	// TurnsPerDay and IntakesPerDay are the daily quotas (UTC day); 0 means
	// the default of 100, negative means no quota.
	TurnsPerDay, IntakesPerDay int
}

// WithDefaults returns r with its zero values replaced by the spec's limits
// and a negative Margin by none.
func (r Rules) WithDefaults() Rules {
	if r.PerMinute == 0 {
		r.PerMinute = DefaultPerMinute
	}
	if r.Window <= 0 {
		r.Window = DefaultWindow
	}
	switch {
	case r.Margin == 0:
		r.Margin = DefaultMargin
	case r.Margin < 0:
		r.Margin = 0
	}
	if r.TurnsPerDay == 0 {
		r.TurnsPerDay = DefaultTurnsPerDay
	}
	if r.IntakesPerDay == 0 {
		r.IntakesPerDay = DefaultIntakesPerDay
	}
	return r
}

// Limited reports whether the rolling window limits anything.
func (r Rules) Limited() bool { return r.PerMinute > 0 }

// Hold is how long a grant occupies the window: Window plus Margin.
func (r Rules) Hold() time.Duration { return r.Window + r.Margin }

// Quota names a daily quota.
type Quota string

// Quotas. QuotaNone is that of calls on no quota (reads, probes).
const (
	QuotaNone    Quota = ""
	QuotaTurns   Quota = "turns"
	QuotaIntakes Quota = "intakes"
)

// QuotaOf is the daily quota a call of op spends.
func QuotaOf(op intakeapi.Op) Quota {
	switch {
	case op.IsTurn():
		return QuotaTurns
	case op == intakeapi.OpCreateIntake:
		return QuotaIntakes
	}
	return QuotaNone
}

// Limit is q's daily limit: positive, or none (<= 0).
func (r Rules) Limit(q Quota) int {
	switch q {
	case QuotaTurns:
		return r.TurnsPerDay
	case QuotaIntakes:
		return r.IntakesPerDay
	}
	return 0
}

// Day is the UTC day t falls in; quotas reset at its end.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// QuotaErr is the refusal of a call on q at now, or nil: q is spent when
// the service said so (spentUntil after now) or today's count (used, calls
// in flight included) has reached the limit.
func (r Rules) QuotaErr(q Quota, now, spentUntil time.Time, used int) *intakeapi.QuotaError {
	if q == QuotaNone {
		return nil
	}
	if spentUntil.After(now) {
		return &intakeapi.QuotaError{Quota: string(q), ResetAt: spentUntil}
	}
	if l := r.Limit(q); l > 0 && used >= l {
		return &intakeapi.QuotaError{Quota: string(q), Limit: l, ResetAt: Day(now).Add(24 * time.Hour)}
	}
	return nil
}

// SpentUntil is when a quota the service reported spent at now may be
// tried again: the next UTC reset.
func SpentUntil(now time.Time) time.Time { return Day(now).Add(24 * time.Hour) }

// Headroom is the headroom call is held to: none without a window, and at
// most PerMinute-1 (such a call goes only into an empty window), so every
// call can go some time.
func (r Rules) Headroom(call intakeapi.Call) int {
	if !r.Limited() || call.Headroom <= 0 {
		return 0
	}
	return min(call.Headroom, r.PerMinute-1)
}

// HeldBack reports whether a waiter with headroom is kept out of a window
// that holds inWindow grants now. A held-back waiter is skipped, not waited
// behind: a scenario run's call never blocks a call queued after it.
func (r Rules) HeldBack(inWindow, headroom int) bool {
	return headroom > 0 && inWindow > r.PerMinute-1-headroom
}

// Ahead reports whether a waiter (prio, ord) goes before one (prio2, ord2):
// higher priority first, then earlier ord (arrival; for a follow-up, its
// announcer's grant).
func Ahead(prio intakeapi.Priority, ord int64, prio2 intakeapi.Priority, ord2 int64) bool {
	return prio > prio2 || (prio == prio2 && ord < ord2)
}

// FollowUpFirst reports whether a follow-up announced with ticket goes
// before a waiter (prio, ord): every follow-up goes before a lower
// priority, one announced earlier before another follow-up.
func FollowUpFirst(ticket int64, prio intakeapi.Priority, ord int64) bool {
	return prio < intakeapi.PriorityFirstTurn || ticket < ord
}

// Place is the place shown to a waiter: 1 plus the requests that go before
// it (the waiters ahead that are not held back, the follow-ups they
// announce, the follow-ups already announced that go first) plus its own
// headroom (it goes only once that many more could go before it, so it is
// never shown next while held).
func Place(ahead, aheadFollowUps, announcedFirst, headroom int) int {
	return 1 + ahead + aheadFollowUps + announcedFirst + headroom
}

// State is what a decision needs of a gate's shared state.
type State struct {
	// Window holds the grants still in the rolling window (sent within
	// Hold before now), ascending; the last PerMinute are enough.
	Window []time.Time
	// PausedUntil ends a Retry-After pause; zero when none.
	PausedUntil time.Time
}

// NextSlot is the earliest time one more request that leaves headroom free
// slots fits: after any pause, and once the window holds fewer than
// PerMinute-headroom grants.
func (r Rules) NextSlot(s State, now time.Time, headroom int) time.Time {
	t := now
	if s.PausedUntil.After(t) {
		t = s.PausedUntil
	}
	if n := r.PerMinute - headroom; r.Limited() && len(s.Window) >= n {
		if free := s.Window[len(s.Window)-n].Add(r.Hold()); free.After(t) {
			t = free
		}
	}
	return t
}

// Estimate is the expected wait, from now, of the request at place (1 =
// next): the window replayed forward, each request before it granted at its
// earliest slot. A request that arrives later with a higher priority can
// still overtake; the gates make a live patient's turn the highest.
//
// Replayed grant by grant, the k-th request goes at the later of start and
// the grant PerMinute before it plus Hold; past the first PerMinute that
// grant is itself a replayed one, so place q×PerMinute + r (r in 1..PerMinute)
// goes q Holds after place r, which the window alone decides. Constant time
// and no allocation: every waiter re-estimates at each change of the queue,
// and a queue of thousands replayed in full cost as much at each of them.
func (r Rules) Estimate(s State, place int, now time.Time) time.Duration {
	start := now
	if s.PausedUntil.After(start) {
		start = s.PausedUntil
	}
	if !r.Limited() || place < 1 {
		return start.Sub(now)
	}
	n := r.PerMinute
	q, k := (place-1)/n, (place-1)%n+1
	t := start
	if j := len(s.Window) + k - 1; j >= n { // the k-th grant follows n others
		if free := s.Window[j-n].Add(r.Hold()); free.After(t) {
			t = free
		}
	}
	return t.Add(time.Duration(q) * r.Hold()).Sub(now)
}

// Progress is what a waiter at place is told: its place, and the wait until
// the requests it stands for are sent, its own and the followUps it
// announces (a patient's first message creates the intake, then sends the
// turn; the patient waits for both, so the wait shown covers both), and
// whether that wait includes a pause the service asked for.
func (r Rules) Progress(s State, place, followUps int, now time.Time) intakeapi.Progress {
	return intakeapi.Progress{
		Position: place,
		Wait:     r.Estimate(s, place+max(followUps, 0), now),
		Paused:   s.PausedUntil.After(now),
	}
}

// Stats is a snapshot of a gate's state.
type Stats struct {
	Waiting     int       // callers in the queue
	InWindow    int       // grants within the rolling window
	PausedUntil time.Time // zero when not paused
	TurnsUsed   int       // today's turns, in-flight ones included
	IntakesUsed int
	DayResetAt  time.Time
}
