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
)

// seedWorklist inserts n intakes in one transaction on the writer, each
// with an opening turn, in a realistic mix: about 3% urgent, 30% closed,
// 30% open, 17% expired and 20% reviewed (the review trigger keeps
// reviewed_at as in production).
func seedWorklist(tb testing.TB, db *DB, n int, now time.Time) {
	tb.Helper()
	ctx := context.Background()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	in, err := tx.PrepareContext(ctx, `INSERT INTO intakes (id, owner, created_at, expires_at, updated_at, status, turn_count, terminal, urgent, safety_status, disposition_label)
		VALUES (?, 'o', ?, ?, ?, ?, 3, ?, ?, 'clear', 'Self-care')`)
	if err != nil {
		tb.Fatal(err)
	}
	turn, err := tx.PrepareContext(ctx, `INSERT INTO turns (intake_id, idx, submission_id, message, status, created_at)
		VALUES (?, 1, 's', ?, 'completed', ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	review, err := tx.PrepareContext(ctx, `INSERT INTO reviews (intake_id, clinician, note, reviewed_at) VALUES (?, 'dr.ada', '', ?)`)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("in_%07d", i)
		created := now.Add(-time.Duration(n-i) * time.Minute)
		updated := created.Add(time.Duration(i%17) * time.Minute)
		status, terminal, urgent, expires := bff.StatusOpen, false, i%33 == 0, created.Add(2*time.Hour)
		switch i % 10 {
		case 0, 1, 2:
			status, terminal = bff.StatusClosed, true
		case 3, 4:
			status = bff.StatusExpired
		}
		if status == bff.StatusOpen {
			expires = now.Add(2 * time.Hour) // still open: not swept
		}
		if _, err := in.ExecContext(ctx, id, formatTime(created), formatTime(expires), formatTime(updated), status, terminal, urgent); err != nil {
			tb.Fatal(err)
		}
		if _, err := turn.ExecContext(ctx, id, "I have had a sore throat for three days and it hurts to swallow", formatTime(created)); err != nil {
			tb.Fatal(err)
		}
		if i%5 == 4 {
			if _, err := review.ExecContext(ctx, id, formatTime(updated.Add(time.Minute))); err != nil {
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

// BenchmarkWorklist reads worklist pages of 50 from 100,000 intakes: the
// first page, filtered pages, a deep page (after row 90,000) and a
// Previous page there. BenchmarkWorklistBefore is the whole list as it was
// read before keyset pages (every intake, every latest review, every
// opening message, grouped and sorted in Go).
//
//	go test -run '^$' -bench 'Worklist$' -benchtime 200x -v ./bff/sqlite/
func BenchmarkWorklist(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "worklist.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	began := time.Now()
	seedWorklist(b, db, n, time.Now())
	b.Logf("seeded %d intakes in %v", n, time.Since(began).Round(time.Millisecond))

	deep := deepCursor(b, db, 90_000)
	back := deep
	back.Backward = true
	page := func(f bff.WorklistFilter, from bff.WorklistCursor, want int) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				items, _, err := db.WorklistPage(ctx, f, from, 50)
				if err != nil || len(items) != want {
					b.Fatalf("%d items, %v", len(items), err)
				}
			}
		}
	}
	b.Run("first", page(bff.WorklistFilter{}, bff.WorklistCursor{}, 50))
	b.Run("filter=closed,unreviewed", page(bff.WorklistFilter{Status: bff.StatusClosed, Unreviewed: true}, bff.WorklistCursor{}, 50))
	b.Run("filter=urgent", page(bff.WorklistFilter{UrgentOnly: true}, bff.WorklistCursor{}, 50))
	b.Run("deep=90000", page(bff.WorklistFilter{}, deep, 50))
	b.Run("deep=90000/previous", page(bff.WorklistFilter{}, back, 50))
}

// BenchmarkWorklistBefore reads the whole worklist of 100,000 intakes as it
// was read before keyset pages, for the "before" figure (seconds an op: run
// it with few iterations).
//
//	go test -run '^$' -bench WorklistBefore -benchtime 3x ./bff/sqlite/
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

// deepCursor is the key of the row at offset in worklist order.
func deepCursor(b *testing.B, db *DB, offset int) bff.WorklistCursor {
	var (
		c       bff.WorklistCursor
		updated string
	)
	if err := db.r.QueryRow(`SELECT wl_group, updated_at, id FROM intakes
		ORDER BY wl_group, updated_at DESC, id DESC LIMIT 1 OFFSET ?`, offset).Scan(&c.Group, &updated, &c.ID); err != nil {
		b.Fatal(err)
	}
	var err error
	if c.UpdatedAt, err = parseTime(updated); err != nil {
		b.Fatal(err)
	}
	return c
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
