package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
)

// The budget is the client's Gate.
var _ intakeapi.Gate = (*postgres.Budget)(nil)

// These tests run on real time against a real database: each "replica" is a
// Budget on a pool of its own. Windows are shortened (Window, Margin -1) so a
// test takes a few seconds; checks are on what the database recorded or on
// lower bounds of time (a grant never comes before a pause ends), never on
// how soon something happens, so a slow machine can only make them slower.

// replicas opens one database with migration 0002 applied and returns a
// Budget per name, each on its own pool, with cfg (Replica set to the name),
// and a pool for the test's own queries.
func replicas(t testing.TB, cfg postgres.BudgetConfig, names ...string) ([]*postgres.Budget, *pgxpool.Pool) {
	t.Helper()
	url := pgtest.URL(t)
	open := func() *pgxpool.Pool {
		pool, err := pgxpool.New(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		return pool
	}
	// The real migrations, once (they include the budget's tables).
	migrated, err := postgres.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	migrated.Close()
	admin := open()
	var out []*postgres.Budget
	for _, name := range names {
		c := cfg
		c.Replica = name
		out = append(out, postgres.NewBudget(open(), c))
	}
	return out, admin
}

func call(op intakeapi.Op, prio intakeapi.Priority) intakeapi.Call {
	return intakeapi.Call{Op: op, Priority: prio, Attempt: 1}
}

func read(prio intakeapi.Priority) intakeapi.Call { return call(intakeapi.OpHandoff, prio) }

var ok200 = intakeapi.Outcome{Status: 200}

// within is a context for one test's waits: a lost wake-up fails the test
// instead of hanging it.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustWait(ctx context.Context, t *testing.T, b *postgres.Budget, c intakeapi.Call) func(intakeapi.Outcome) {
	t.Helper()
	release, err := b.Wait(ctx, c)
	if err != nil {
		t.Fatalf("Wait(%s, %s): %v", c.Op, c.Priority, err)
	}
	return release
}

// waitAndSettle is mustWait for a goroutine other than the test's: it
// reports a failure without stopping the test from there.
func waitAndSettle(ctx context.Context, t *testing.T, b *postgres.Budget, c intakeapi.Call, o intakeapi.Outcome) {
	release, err := b.Wait(ctx, c)
	if err != nil {
		t.Errorf("Wait(%s, %s): %v", c.Op, c.Priority, err)
		return
	}
	release(o)
}

// eventually polls cond until it holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: not %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waiting(t *testing.T, b *postgres.Budget) int {
	t.Helper()
	s, err := b.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s.Waiting
}

type grantRow struct {
	SentAt  time.Time
	Replica string
}

func grants(t *testing.T, db *pgxpool.Pool) []grantRow {
	t.Helper()
	rows, err := db.Query(t.Context(), `SELECT sent_at, replica FROM budget_grants ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[grantRow])
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// hold pauses every replica for an hour, so a test can queue callers in a
// known order however slow the machine; lift ends the pause (as the hour
// passing would) and announces it.
func hold(ctx context.Context, t *testing.T, b *postgres.Budget) {
	t.Helper()
	if err := b.Pause(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
}

func lift(ctx context.Context, t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	liftQuietly(ctx, t, db)
	if _, err := db.Exec(ctx, `SELECT pg_notify('intake_budget', '')`); err != nil {
		t.Fatal(err)
	}
}

// liftQuietly ends the pause without telling anyone: waiters find out at
// their next look.
func liftQuietly(ctx context.Context, t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	if _, err := db.Exec(ctx, `UPDATE budget_holds SET until_at = now() - interval '1 second' WHERE name = 'pause'`); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetWindowAcrossReplicas: 20 callers split over two replicas never
// get more than PerMinute grants in any window, and all are served.
func TestBudgetWindowAcrossReplicas(t *testing.T) {
	const perMinute, window, callers = 6, 500 * time.Millisecond, 20
	bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: perMinute, Window: window, Margin: -1}}, "a", "b")
	ctx := within(t, 30*time.Second)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			prios := []intakeapi.Priority{intakeapi.PriorityPatientTurn, intakeapi.PriorityClinicianRead, intakeapi.PriorityBackground}
			waitAndSettle(ctx, t, bs[i%2], read(prios[i%3]), ok200)
		})
	}
	wg.Wait()
	all := grants(t, db)
	slices.SortFunc(all, func(x, y grantRow) int { return x.SentAt.Compare(y.SentAt) })
	if len(all) != callers {
		t.Fatalf("%d grants, want %d", len(all), callers)
	}
	per := map[string]int{}
	for i, g := range all {
		per[g.Replica]++
		if i+perMinute < len(all) {
			if gap := all[i+perMinute].SentAt.Sub(g.SentAt); gap < window {
				t.Errorf("grants %d and %d are %v apart: %d in less than a window of %v", i, i+perMinute, gap, perMinute+1, window)
			}
		}
	}
	if per["a"] != callers/2 || per["b"] != callers/2 {
		t.Errorf("grants per replica %v, want %d each", per, callers/2)
	}
	if n := waiting(t, bs[0]); n != 0 {
		t.Errorf("%d waiters left", n)
	}
}

// TestBudgetPriorityAcrossReplicas: a patient's turn queued on one replica
// goes before clinician reads queued earlier on another; equal priorities go
// in arrival order.
func TestBudgetPriorityAcrossReplicas(t *testing.T) {
	// Heartbeats 20 s apart: only NOTIFY from the other replica wakes a
	// waiter within the test's 15 s.
	bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: -1}, StaleAfter: time.Minute}, "a", "b")
	a, b := bs[0], bs[1]
	ctx := within(t, 15*time.Second)
	hold(ctx, t, a)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { waitAndSettle(ctx, t, a, read(intakeapi.PriorityClinicianRead), ok200) })
		eventually(t, fmt.Sprintf("%d readers queued", i+1), func() bool { return waiting(t, a) == i+1 })
	}
	wg.Go(func() { waitAndSettle(ctx, t, b, call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn), ok200) })
	eventually(t, "the patient's turn queued", func() bool { return waiting(t, a) == 4 })
	wg.Go(func() { waitAndSettle(ctx, t, b, read(intakeapi.PriorityClinicianRead), ok200) })
	eventually(t, "a reader queued on b", func() bool { return waiting(t, a) == 5 })
	lift(ctx, t, db)
	wg.Wait()
	var got []string
	for _, g := range grants(t, db) {
		got = append(got, g.Replica)
	}
	if want := []string{"b", "a", "a", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("grants went to replicas %v, want %v: the patient first, then the readers in arrival order", got, want)
	}
}

// TestBudgetNewcomerQueuesBehindEqualPriority: a caller arriving when the
// window has room is not granted on its first look while an earlier caller
// of its priority, on another replica, has not yet noticed the room. (The
// gate suite's order tests always queue against a full window, where a
// newcomer queues whatever its first look decides.)
func TestBudgetNewcomerQueuesBehindEqualPriority(t *testing.T) {
	bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: -1}, StaleAfter: time.Minute}, "a", "b")
	a, b := bs[0], bs[1]
	ctx := within(t, 30*time.Second)
	hold(ctx, t, a)
	var wg sync.WaitGroup
	wg.Go(func() { waitAndSettle(ctx, t, a, read(intakeapi.PriorityClinicianRead), ok200) })
	eventually(t, "a's reader queued", func() bool { return waiting(t, a) == 1 })
	liftQuietly(ctx, t, db) // a's reader sleeps on (its next heartbeat is 20 s away)
	waitAndSettle(ctx, t, b, read(intakeapi.PriorityClinicianRead), ok200)
	wg.Wait()
	var got []string
	for _, g := range grants(t, db) {
		got = append(got, g.Replica)
	}
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("grants went to replicas %v, want %v", got, want)
	}
}

// TestBudgetRetryAfterPausesEveryReplica: a 429 with Retry-After settled on
// one replica holds the other's calls until it has passed.
func TestBudgetRetryAfterPausesEveryReplica(t *testing.T) {
	const retryAfter = 700 * time.Millisecond
	bs, _ := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: -1}}, "a", "b")
	a, b := bs[0], bs[1]
	ctx := within(t, 30*time.Second)
	release := mustWait(ctx, t, a, read(intakeapi.PriorityClinicianRead))
	before := time.Now()
	release(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeRateLimited, RetryAfter: retryAfter})

	s, err := b.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.PausedUntil.Before(before.Add(retryAfter)) {
		t.Fatalf("replica b's stats: paused until %v, want at least %v", s.PausedUntil, before.Add(retryAfter))
	}
	var told []intakeapi.Progress
	c := call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn)
	c.Progress = func(p intakeapi.Progress) { told = append(told, p) }
	mustWait(ctx, t, b, c)(ok200)
	if waited := time.Since(before); waited < retryAfter {
		t.Fatalf("replica b was granted %v after the 429, before its Retry-After of %v", waited, retryAfter)
	}
	if len(told) == 0 || told[0].Position != 1 || told[0].Wait <= 0 || told[0].Wait > retryAfter+100*time.Millisecond {
		t.Fatalf("progress during the pause: %v, want first at position 1 with the pause's wait", told)
	}
}

// TestBudgetDailyQuotaAcrossReplicas: the replicas share the daily quotas;
// uncharged outcomes are given back; a refusal says when the quota resets;
// the service's quota_exceeded on one replica refuses on the other.
func TestBudgetDailyQuotaAcrossReplicas(t *testing.T) {
	y, m, d := time.Now().UTC().Date()
	offset := time.Until(time.Date(y, m, d, 10, 0, 0, 0, time.UTC)) // the clock reads 10:00 UTC today
	nextDay := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return time.Now().Add(offset) }
	bs, _ := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: -1, TurnsPerDay: 2, IntakesPerDay: 5}, Now: now}, "a", "b")
	a, b := bs[0], bs[1]
	ctx := within(t, 30*time.Second)
	turn := call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn)

	mustWait(ctx, t, a, turn)(ok200)                          // charged
	mustWait(ctx, t, b, turn)(intakeapi.Outcome{Status: 500}) // refused before processing: given back
	mustWait(ctx, t, b, turn)(intakeapi.Outcome{Status: 200, Replayed: true})
	inflight := mustWait(ctx, t, b, turn) // counted while in flight
	_, err := a.Wait(ctx, turn)
	var qe *intakeapi.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, intakeapi.ErrQuotaSpent) || !intakeapi.IsCode(err, intakeapi.CodeQuotaExceeded) {
		t.Fatalf("a third turn of 2: %v, want a *QuotaError", err)
	}
	if qe.Quota != "turns" || qe.Limit != 2 || !qe.ResetAt.Equal(nextDay) {
		t.Fatalf("QuotaError %+v, want turns, 2, reset at %v", qe, nextDay)
	}
	inflight(intakeapi.Outcome{NotSent: true})
	mustWait(ctx, t, a, turn)(intakeapi.Outcome{Status: 0}) // no answer: counted
	if _, err := b.Wait(ctx, turn); !errors.Is(err, intakeapi.ErrQuotaSpent) {
		t.Fatalf("after two charged turns: %v, want ErrQuotaSpent", err)
	}
	if s, err := b.Stats(ctx); err != nil || s.TurnsUsed != 2 || !s.DayResetAt.Equal(nextDay) {
		t.Fatalf("stats %+v (%v), want 2 turns used, reset at %v", s, err, nextDay)
	}
	mustWait(ctx, t, a, read(intakeapi.PriorityClinicianRead))(ok200) // reads spend no quota

	create := call(intakeapi.OpCreateIntake, intakeapi.PriorityCreateIntake)
	mustWait(ctx, t, b, create)(intakeapi.Outcome{Status: 429, Code: intakeapi.CodeQuotaExceeded})
	_, err = a.Wait(ctx, create)
	if !errors.As(err, &qe) || qe.Quota != "intakes" || qe.Limit != 0 || !qe.ResetAt.Equal(nextDay) {
		t.Fatalf("an intake after the service's quota_exceeded on b: %v, want intakes, reset at %v", err, nextDay)
	}
}

// TestBudgetDeadWaitersDoNotBlock: a waiter whose replica died (no more
// heartbeats) is dropped after StaleAfter; a waiter whose context ended
// leaves the shared queue at once.
func TestBudgetDeadWaitersDoNotBlock(t *testing.T) {
	t.Run("heartbeat stopped", func(t *testing.T) {
		const stale = 500 * time.Millisecond
		bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: -1}, StaleAfter: stale}, "b")
		ctx := within(t, 10*time.Second)
		// A replica that queued a patient's turn and died.
		if _, err := db.Exec(ctx, `INSERT INTO budget_waiters (priority, enqueued_at, replica, heartbeat)
			VALUES ($1, now(), 'dead', now())`, int(intakeapi.PriorityPatientTurn)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		mustWait(ctx, t, bs[0], read(intakeapi.PriorityClinicianRead))(ok200)
		if waited := time.Since(start); waited < stale/2 {
			t.Fatalf("granted after %v: the dead waiter ahead was not in the queue", waited)
		}
		var left int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM budget_waiters`).Scan(&left); err != nil || left != 0 {
			t.Fatalf("%d waiters left (%v)", left, err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: -1}, StaleAfter: time.Minute}, "a", "b")
		a, b := bs[0], bs[1]
		ctx := within(t, 10*time.Second)
		hold(ctx, t, a)
		actx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := a.Wait(actx, call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn))
			errc <- err
		}()
		eventually(t, "a's turn queued", func() bool { return waiting(t, b) == 1 })
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("a's cancelled wait: %v", err)
		}
		lift(ctx, t, db)
		// Without a's row gone, b would wait for it to go stale (a minute).
		mustWait(ctx, t, b, read(intakeapi.PriorityClinicianRead))(ok200)
	})
}

type progressLog struct {
	mu  sync.Mutex
	all []intakeapi.Progress
}

func (l *progressLog) record(p intakeapi.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, p)
}

// TestBudgetProgressMoves: a caller's position comes from the queue of
// every replica and drops to 1 as those ahead are granted, and its expected
// wait counts down in between, re-reported every ProgressEvery.
func TestBudgetProgressMoves(t *testing.T) {
	const window = 400 * time.Millisecond
	bs, db := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: 1, Window: window, Margin: -1}, ProgressEvery: 50 * time.Millisecond}, "a", "b")
	ctx := within(t, 30*time.Second)
	turn := call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn)
	hold(ctx, t, bs[0])
	var wg sync.WaitGroup
	for i := range 3 { // three ahead, on both replicas, in a known order
		wg.Go(func() { waitAndSettle(ctx, t, bs[i%2], turn, ok200) })
		eventually(t, fmt.Sprintf("%d queued", i+1), func() bool { return waiting(t, bs[0]) == i+1 })
	}
	log := &progressLog{}
	c := turn
	c.Progress = log.record
	wg.Go(func() { waitAndSettle(ctx, t, bs[1], c, ok200) })
	eventually(t, "the fourth told its place twice", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.all) >= 2
	})
	lift(ctx, t, db) // from here one grant per window
	wg.Wait()

	told := log.all
	if len(told) == 0 || told[0].Position != 4 || told[len(told)-1].Position != 1 {
		t.Fatalf("progress %v: want from position 4 down to 1", told)
	}
	runs := map[int]int{} // position -> reports at it
	for i, p := range told {
		runs[p.Position]++
		if i == 0 {
			continue
		}
		prev := told[i-1]
		if p.Position > prev.Position {
			t.Fatalf("progress %v: position went up at %d", told, i)
		}
		if p.Position == prev.Position && p.Wait >= prev.Wait {
			t.Fatalf("progress %v: at position %d the wait did not count down (report %d)", told, p.Position, i)
		}
	}
	for pos := 3; pos >= 1; pos-- {
		// Each of these positions lasts a window (400 ms); reported every 50 ms.
		if runs[pos] < 2 {
			t.Fatalf("progress %v: position %d told %d times, want it re-told as the wait counts down", told, pos, runs[pos])
		}
	}
}

// BenchmarkBudgetGrant: one Wait and its release with an empty queue and
// room in the window, the cost every upstream call pays: a read (no quota)
// and a turn (today's count read too).
func BenchmarkBudgetGrant(b *testing.B) {
	for _, c := range []intakeapi.Call{read(intakeapi.PriorityClinicianRead), call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn)} {
		b.Run(string(c.Op), func(b *testing.B) {
			bs, _ := replicas(b, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: 1 << 30, TurnsPerDay: 1 << 30}}, "a")
			for b.Loop() {
				release, err := bs[0].Wait(b.Context(), c)
				if err != nil {
					b.Fatal(err)
				}
				release(ok200)
			}
		})
	}
}

// An intake's creation announces its first turn (Call.FollowUps): once the
// creation is granted, a patient behind is shown that turn ahead of them
// until it has come and gone, so the place they are shown never goes up
// when the first turn, at PriorityFirstTurn, goes before them.
func TestBudgetAnnouncedFirstTurnCountsInThePlaceShown(t *testing.T) {
	const window = 400 * time.Millisecond
	bs, _ := replicas(t, postgres.BudgetConfig{Rules: pacing.Rules{PerMinute: 1, Window: window, Margin: -1}, ProgressEvery: 50 * time.Millisecond}, "a", "b")
	ctx := within(t, 30*time.Second)
	fu := new(intakeapi.FollowUp)
	create := call(intakeapi.OpCreateIntake, intakeapi.PriorityPatientTurn)
	create.FollowUps, create.Announces = 1, fu
	release := mustWait(ctx, t, bs[0], create) // granted at once; its turn is to come
	release(ok200)
	log := &progressLog{}
	other := call(intakeapi.OpStreamTurn, intakeapi.PriorityPatientTurn)
	other.Progress = log.record
	var wg sync.WaitGroup
	wg.Go(func() { waitAndSettle(ctx, t, bs[1], other, ok200) })
	eventually(t, "the other patient told a place", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.all) >= 1
	})
	first := call(intakeapi.OpStreamTurn, intakeapi.PriorityFirstTurn)
	first.Follows = fu
	waitAndSettle(ctx, t, bs[0], first, ok200)
	wg.Wait()
	told := log.all
	if len(told) == 0 || told[0].Position != 2 {
		t.Fatalf("progress %v: the first place shown should count the announced first turn (2)", told)
	}
	for i := 1; i < len(told); i++ {
		if told[i].Position > told[i-1].Position {
			t.Fatalf("progress %v: the place went up at %d", told, i)
		}
	}
}
