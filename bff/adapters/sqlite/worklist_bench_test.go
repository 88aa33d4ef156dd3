package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

// seedWorklist inserts storetest.WorklistSeed's n intakes in one
// transaction on the writer, each with its opening turn and its review (the
// review trigger keeps reviewed_at as in production), then ANALYZEs.
func seedWorklist(tb testing.TB, db *DB, n int, now time.Time) {
	tb.Helper()
	ctx := context.Background()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	ins, err := tx.PrepareContext(ctx, `INSERT INTO intakes (id, owner, created_at, expires_at, updated_at, status, turn_count, terminal, urgent, safety_status, disposition_label)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	turn, err := tx.PrepareContext(ctx, `INSERT INTO turns (intake_id, idx, submission_id, message, status, created_at)
		VALUES (?, 1, 's', ?, 'completed', ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	review, err := tx.PrepareContext(ctx, `INSERT INTO reviews (intake_id, clinician, note, reviewed_at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range storetest.WorklistSeed(n, now) {
		in := s.Intake
		if _, err := ins.ExecContext(ctx, in.ID, in.Owner, formatTime(in.CreatedAt), formatTime(in.ExpiresAt), formatTime(in.UpdatedAt),
			in.Status, in.TurnCount, in.Terminal, in.Urgent, in.SafetyStatus, in.DispositionLabel); err != nil {
			tb.Fatal(err)
		}
		if _, err := turn.ExecContext(ctx, in.ID, s.Opening, formatTime(in.CreatedAt)); err != nil {
			tb.Fatal(err)
		}
		if r := s.Review; r != nil {
			if _, err := review.ExecContext(ctx, r.IntakeID, r.Clinician, r.Note, formatTime(r.ReviewedAt)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.w.ExecContext(ctx, `ANALYZE`); err != nil {
		tb.Fatal(err)
	}
}

// TestWorklistPlansUseIndexes checks that every filter's page reads an
// index range in page order: no full scan, no sort of the whole table.
func TestWorklistPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seedWorklist(t, db, 2000, time.Now())
	cur := bff.WorklistCursor{Group: 2, UpdatedAt: time.Now(), ID: "in_0001000"}
	for _, f := range worklistFilters() {
		for _, from := range []bff.WorklistCursor{{}, cur, {Group: 2, UpdatedAt: time.Now(), ID: "x", Backward: true}} {
			plans := db.explainWorklist(t, f, from)
			for _, p := range plans {
				if strings.Contains(p, "SCAN i") && !strings.Contains(p, "USING INDEX") || strings.Contains(p, "TEMP B-TREE") {
					t.Errorf("filter %+v from %+v: plan without an index in page order:\n%s", f, from, strings.Join(plans, "\n"))
				}
			}
		}
	}
}

func worklistFilters() []bff.WorklistFilter {
	var fs []bff.WorklistFilter
	for _, st := range []string{"", bff.StatusOpen, bff.StatusClosed, bff.StatusExpired} {
		for _, u := range []bool{false, true} {
			for _, r := range []bool{false, true} {
				fs = append(fs, bff.WorklistFilter{Status: st, UrgentOnly: u, Unreviewed: r})
			}
		}
	}
	return fs
}

// explainWorklist returns the query plans of both of a page's queries.
func (db *DB) explainWorklist(t *testing.T, f bff.WorklistFilter, from bff.WorklistCursor) []string {
	t.Helper()
	var plans []string
	for _, same := range []bool{true, false} {
		query, args := worklistQuery(f, from, same, 51)
		rows, err := db.r.Query("EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, detail)
		}
		rows.Close()
		plans = append(plans, b.String())
	}
	return plans
}

// BenchmarkWorklist reads worklist pages of 50 from 100,000 intakes
// (storetest.BenchWorklist, as bff/adapters/postgres does). BenchmarkWorklistBefore
// is the whole list as it was read before keyset pages (every intake, every
// latest review, every opening message, grouped and sorted in Go).
//
//	go test -run '^$' -bench 'Worklist$' -benchtime 200x -v ./bff/adapters/sqlite/
func BenchmarkWorklist(b *testing.B) {
	const n = 100_000
	db, err := Open(context.Background(), filepath.Join(b.TempDir(), "worklist.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	began := time.Now()
	seedWorklist(b, db, n, time.Now())
	b.Logf("seeded %d intakes in %v", n, time.Since(began).Round(time.Millisecond))
	storetest.BenchWorklist(b, db, n)
}

// BenchmarkWorklistBefore reads the whole worklist of 100,000 intakes as it
// was read before keyset pages, for the "before" figure (seconds an op: run
// it with few iterations).
//
//	go test -run '^$' -bench WorklistBefore -benchtime 3x ./bff/adapters/sqlite/
func BenchmarkWorklistBefore(b *testing.B) {
	const n = 100_000
	db, err := Open(context.Background(), filepath.Join(b.TempDir(), "worklist.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	seedWorklist(b, db, n, time.Now())
	for b.Loop() {
		if got := oldWorklist(b, db); got != n {
			b.Fatalf("%d items", got)
		}
	}
}

// oldWorklist is the worklist as it was read before keyset pages (the
// service's former Worklist, without the expiry writes).
func oldWorklist(b *testing.B, db *DB) int {
	ctx := context.Background()
	ins, err := db.Intakes(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	latest, err := db.LatestReviews(ctx)
	if err != nil {
		b.Fatal(err)
	}
	openings, err := db.OpeningMessages(ctx)
	if err != nil {
		b.Fatal(err)
	}
	items := make([]bff.WorkItem, 0, len(ins))
	for _, in := range ins {
		it := bff.WorkItem{Intake: in, Review: latest[in.ID], Opening: openings[in.ID]}
		it.Group = bff.WorkGroup(in, it.Review != nil)
		items = append(items, it)
	}
	slices.SortStableFunc(items, func(x, y bff.WorkItem) int {
		if bff.KeyOf(&x).Before(bff.KeyOf(&y)) {
			return -1
		}
		return 1
	})
	return len(items)
}
