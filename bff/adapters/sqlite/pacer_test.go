package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
)

func TestPacerJournal(t *testing.T) {
	db := sqlitetest.MustOpenDB(t)
	j := db.PacerJournal()
	ctx := context.Background()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	if es, err := j.Load(ctx, time.Time{}); err != nil || len(es) != 0 {
		t.Fatalf("fresh store: %v, %v", es, err)
	}
	entries := []pacer.Entry{
		{At: at(0), Event: pacer.EventGrant, Quota: "turns"},
		{At: at(0), Event: pacer.EventGrant},
		{At: at(1).In(time.FixedZone("CET", 3600)), Event: pacer.EventRefund, Quota: "intakes"},
		{At: at(2), Event: pacer.EventPause, Until: at(3600)},
		{At: at(3), Event: pacer.EventSpent, Quota: "intakes", Until: at(50000)},
		{At: at(100), Event: pacer.EventGrant, Quota: "intakes"},
	}
	// Recorded out of time order: Load sorts by time, then by recording.
	for _, i := range []int{0, 1, 5, 2, 3, 4} {
		if err := j.Record(ctx, entries[i]); err != nil {
			t.Fatalf("Record %d: %v", i, err)
		}
	}
	equal := func(got, want []pacer.Entry) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			g, w := got[i], want[i]
			if !g.At.Equal(w.At) || g.Event != w.Event || g.Quota != w.Quota || !g.Until.Equal(w.Until) || g.At.Location() != time.UTC {
				return false
			}
		}
		return true
	}
	if es, err := j.Load(ctx, t0); err != nil || !equal(es, entries) {
		t.Fatalf("Load all: %v, %+v", err, es)
	}
	// since is inclusive for At; a pause or spent quota still in force at
	// since comes back however old.
	if es, err := j.Load(ctx, at(100)); err != nil || !equal(es, []pacer.Entry{entries[3], entries[4], entries[5]}) {
		t.Fatalf("Load from 100 s: %v, %+v", err, es)
	}
	if es, err := j.Load(ctx, at(4000)); err != nil || !equal(es, []pacer.Entry{entries[4]}) {
		t.Fatalf("Load from 4000 s: %v, %+v", err, es)
	}

	// Prune keeps what is recent or still in force.
	if err := j.Prune(ctx, at(4000)); err != nil {
		t.Fatal(err)
	}
	if es, err := j.Load(ctx, time.Time{}); err != nil || !equal(es, []pacer.Entry{entries[4]}) {
		t.Fatalf("after prune: %v, %+v", err, es)
	}

	// The table refuses what the pacer never writes.
	if err := j.Record(ctx, pacer.Entry{At: t0, Event: "bogus"}); err == nil {
		t.Error("an unknown event was recorded")
	}
	if err := j.Record(ctx, pacer.Entry{At: t0, Event: pacer.EventGrant, Quota: "reads"}); err == nil {
		t.Error("an unknown quota was recorded")
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := j.Record(cctx, entries[0]); !errors.Is(err, context.Canceled) || bff.ErrorCode(err) != bff.EINTERNAL {
		t.Errorf("Record: %v", err)
	}
	if _, err := j.Load(cctx, t0); !errors.Is(err, context.Canceled) {
		t.Errorf("Load: %v", err)
	}
	if err := j.Prune(cctx, t0); !errors.Is(err, context.Canceled) {
		t.Errorf("Prune: %v", err)
	}
}

// The whole chain on a database file: a pacer fills its window, the process
// "stops" (the store is closed), a new pacer on the reopened file restores,
// and its next call waits for the window instead of drawing a 429; today's
// counts carry over.
func TestPacerRestartsFromTheDatabase(t *testing.T) {
	// In a testing/synctest bubble: the pacer runs on its real clock, which
	// the bubble fakes, so the minute passes at once.
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		path := filepath.Join(t.TempDir(), "intake.db")
		run := func() (*pacer.Pacer, *sqlite.DB) {
			db, err := sqlite.Open(ctx, path, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := pacer.New(pacer.Config{Rules: pacing.Rules{Margin: -1, PerMinute: 6, TurnsPerDay: 10}, Journal: db.PacerJournal()})
			if err := p.Restore(ctx); err != nil {
				t.Fatal(err)
			}
			return p, db
		}
		p, db := run()
		start := time.Now()
		for range 6 {
			rel, err := p.Wait(ctx, intakeapi.Call{Op: intakeapi.OpTurn, Priority: pacer.PatientTurn, Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			rel(intakeapi.Outcome{Status: 200})
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)

		p, db = run()
		defer db.Close()
		if s := p.Stats(); s.InWindow != 6 || s.TurnsUsed != 6 {
			t.Fatalf("after the restart: %+v, want 6 in the window and 6 turns used", s)
		}
		// The 7th waits for the window to free, a minute after the first
		// grant (not at once, as a pacer that forgot would let it).
		rel, err := p.Wait(ctx, intakeapi.Call{Op: intakeapi.OpTurn, Priority: pacer.PatientTurn, Attempt: 1})
		if err != nil {
			t.Fatalf("the 7th call: %v", err)
		}
		rel(intakeapi.Outcome{Status: 200})
		if got := time.Since(start); got != time.Minute {
			t.Fatalf("the 7th call went %v after the first, want once the window freed at 1m0s", got)
		}
	})
}
