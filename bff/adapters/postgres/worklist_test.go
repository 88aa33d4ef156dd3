package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

// openTestDB opens a store on url, closed when tb ends.
func openTestDB(tb testing.TB, url string, opts ...Option) *DB {
	tb.Helper()
	db, err := Open(context.Background(), url, nil, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// seedWorklist copies storetest.WorklistSeed's n intakes, their opening
// turns and reviews into db with COPY (the review trigger fires for copied
// rows as for inserted ones), then ANALYZEs, as a database in use would be.
func seedWorklist(tb testing.TB, db *DB, n int, now time.Time) {
	tb.Helper()
	ctx := context.Background()
	seed := storetest.WorklistSeed(n, now)
	var intakes, turns, reviews [][]any
	for _, s := range seed {
		in := s.Intake
		intakes = append(intakes, []any{in.ID, in.Owner, in.CreatedAt, in.ExpiresAt, in.UpdatedAt, in.Status,
			in.TurnCount, in.Terminal, in.Urgent, in.SafetyStatus, in.DispositionLabel})
		turns = append(turns, []any{in.ID, 1, "s", s.Opening, "completed", in.CreatedAt})
		if r := s.Review; r != nil {
			reviews = append(reviews, []any{r.IntakeID, r.Clinician, r.Note, r.ReviewedAt})
		}
	}
	if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, c := range []struct {
			table string
			cols  []string
			rows  [][]any
		}{
			{"intakes", []string{"id", "owner", "created_at", "expires_at", "updated_at", "status",
				"turn_count", "terminal", "urgent", "safety_status", "disposition_label"}, intakes},
			{"turns", []string{"intake_id", "idx", "submission_id", "message", "status", "created_at"}, turns},
			{"reviews", []string{"intake_id", "clinician", "note", "reviewed_at"}, reviews},
		} {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
				return fmt.Errorf("copy %s: %w", c.table, err)
			}
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE`); err != nil {
		tb.Fatal(err)
	}
}

// TestWorklistPlansUseIndexes checks, for every filter and every kind of
// page query (from the start, the rest of a group, the groups beyond it,
// backward), that PostgreSQL reads intakes with the filter's index in page
// order: an Index Scan on it, no Sort over intakes, no sequential scan of
// any table. It checks both the plan for the values at hand and the generic
// plan that a prepared statement may settle on after five runs. 20,000
// intakes: with a few thousand the planner rightly sorts a handful of rows
// instead (measured: 2,000 gives bitmap scans and sorts, 20,000 and 100,000
// the plans checked here).
func TestWorklistPlansUseIndexes(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, pgtest.URL(t))
	now := time.Now()
	seedWorklist(t, db, 20_000, now)
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	cursors := []bff.WorklistCursor{
		{},
		{Group: 2, UpdatedAt: now.Add(-time.Hour), ID: "in_0010000"},
		{Group: 2, UpdatedAt: now.Add(-time.Hour), ID: "in_0010000", Backward: true},
		{Backward: true},
	}
	for _, f := range worklistFilters() {
		index := "intakes_worklist"
		if f.Status != "" {
			index += "_" + f.Status
		}
		if f.UrgentOnly {
			index += "_urgent"
		}
		for _, from := range cursors {
			for _, same := range []bool{true, false} {
				if same && from.IsZero() {
					continue // WorklistPage runs no such query
				}
				query, args := worklistQuery(f, from, same, 51)
				for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
					plan := explain(t, conn.Conn(), mode, query, args)
					if msg := checkPlan(plan, index, same); msg != "" {
						pretty, _ := json.MarshalIndent(plan, "", " ")
						t.Errorf("filter %+v from %+v (rest of group %v), %s: %s\n%s\n%s", f, from, same, mode, msg, query, pretty)
					}
				}
			}
		}
	}
}

// worklistFilters is every combination of the filter's fields.
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

// planNode is the part of EXPLAIN (FORMAT JSON)'s plan these checks read.
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Cond     string     `json:"Index Cond"`
	Plans    []planNode `json:"Plans"`
}

// explain returns the plan of query with args, planned under plan_cache_mode
// mode: the query is prepared as a statement, which EXPLAIN EXECUTE plans
// as a later run of it would be.
func explain(t *testing.T, conn *pgx.Conn, mode, query string, args []any) planNode {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, `RESET plan_cache_mode`) //nolint:errcheck // the connection is this test's
	if _, err := conn.Prepare(ctx, "wl_explain", query); err != nil {
		t.Fatal(err)
	}
	defer conn.Deallocate(ctx, "wl_explain") //nolint:errcheck // as above
	// EXECUTE takes values, not parameters: literals of the test's own
	// values, each coerced to its parameter's type.
	params := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int:
			params[i] = fmt.Sprint(v)
		case string:
			params[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case time.Time:
			params[i] = "'" + v.UTC().Format(time.RFC3339Nano) + "'"
		default:
			t.Fatalf("argument %d: %T", i, a)
		}
	}
	var out []struct {
		Plan planNode `json:"Plan"`
	}
	if err := conn.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE wl_explain(`+strings.Join(params, ", ")+`)`).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out[0].Plan
}

// checkPlan returns what is wrong with plan, "" if nothing: intakes must
// be read by an Index Scan on index (forward or backward) that seeks to the
// group and, for the rest of a group (seek), to the cursor's (updated_at,
// id) within it, with no Sort above it, and no table by a sequential scan.
func checkPlan(plan planNode, index string, seek bool) string {
	var problems []string
	scans := 0
	var walk func(n planNode, sorted bool)
	walk = func(n planNode, sorted bool) {
		if strings.Contains(n.NodeType, "Sort") {
			sorted = true
		}
		switch {
		case n.NodeType == "Seq Scan":
			problems = append(problems, "a sequential scan of "+n.Relation)
		case n.Relation == "intakes" || strings.HasPrefix(n.NodeType, "Bitmap Index"):
			scans++
			if n.NodeType != "Index Scan" || n.Index != index {
				problems = append(problems, fmt.Sprintf("intakes read by %s %s, not an Index Scan on %s", n.NodeType, n.Index, index))
			}
			if sorted {
				problems = append(problems, "a Sort over intakes")
			}
			if !strings.Contains(n.Cond, "wl_group") || seek && !strings.Contains(n.Cond, "ROW(updated_at, ") {
				problems = append(problems, fmt.Sprintf("the index scan does not seek to the cursor: Index Cond %q", n.Cond))
			}
		}
		for _, c := range n.Plans {
			walk(c, sorted)
		}
	}
	walk(plan, false)
	if scans != 1 {
		problems = append(problems, fmt.Sprintf("intakes read %d times", scans))
	}
	return strings.Join(problems, "; ")
}

// TestWorklistLinguisticCollation runs the shared worklist tests on a
// database whose default collation is ICU's en-US, where "In_005" sorts
// after "in_004": pages must still follow the cursor's byte-wise id order.
func TestWorklistLinguisticCollation(t *testing.T) {
	storetest.RunWorklist(t, func(t *testing.T, now bff.Clock) storetest.Stores {
		return openTestDB(t, icuDatabase(t), WithClock(now))
	})
}

// icuDatabase creates a database with ICU's en-US as its default collation
// beside pgtest's fresh one, dropped when t ends, and returns its URL.
func icuDatabase(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	base := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/") + "_icu"
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name+` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	check, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close(ctx)
	var linguistic bool
	if err := check.QueryRow(ctx, `SELECT 'In_005' > 'in_004'`).Scan(&linguistic); err != nil || !linguistic {
		t.Fatalf("the database compares byte-wise (%v): the test would prove nothing", err)
	}
	return u.String()
}

// BenchmarkWorklist reads worklist pages of 50 from 100,000 intakes
// (storetest.BenchWorklist, as bff/adapters/sqlite does).
//
//	go test -run '^$' -bench Worklist -benchtime 200x ./bff/adapters/postgres/
func BenchmarkWorklist(b *testing.B) {
	const n = 100_000
	db := openTestDB(b, pgtest.URL(b))
	began := time.Now()
	seedWorklist(b, db, n, time.Now())
	b.Logf("seeded %d intakes in %v", n, time.Since(began).Round(time.Millisecond))
	storetest.BenchWorklist(b, db, n)
}

// TestWorklistMigrationBackfills applies 0003_worklist.sql to a database
// that already holds reviewed intakes: their latest review time is filled
// in, so they list as reviewed, and later reviews keep it up to date.
func TestWorklistMigrationBackfills(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m migration) bool { return m.name == "worklist" })
	if i < 0 {
		t.Fatal("no worklist migration")
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	logger := slog.New(slog.DiscardHandler)
	if err := applyMigrations(ctx, conn, logger, ms[:i]); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC)
	if _, err := conn.Exec(ctx, `INSERT INTO intakes (id, owner, created_at, expires_at, updated_at, status)
		VALUES ('seen', 'o', $1, $1, $1, 'closed'), ('unseen', 'o', $1, $1, $1, 'closed')`, at); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO reviews (intake_id, clinician, note, reviewed_at)
		VALUES ('seen', 'dr.b', '', $1), ('seen', 'dr.a', '', $2)`, at.Add(time.Hour), at); err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t, dbURL) // applies the rest
	for id, want := range map[string]int{"seen": bff.GroupReviewed, "unseen": bff.GroupToReview} {
		it, err := db.WorkItem(ctx, id)
		if err != nil || it.Group != want {
			t.Fatalf("WorkItem(%s) = %+v, %v; want group %d", id, it, err, want)
		}
	}
	var latest time.Time
	if err := db.pool.QueryRow(ctx, `SELECT reviewed_at FROM intakes WHERE id = 'seen'`).Scan(&latest); err != nil || !latest.Equal(at.Add(time.Hour)) {
		t.Fatalf("reviewed_at %v, %v; want %v", latest, err, at.Add(time.Hour))
	}
	for _, h := range []int{3, 2} { // a later review moves it on, an earlier one does not
		if err := db.AddReview(ctx, &bff.Review{IntakeID: "seen", Clinician: "dr.c", ReviewedAt: at.Add(time.Duration(h) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.pool.QueryRow(ctx, `SELECT reviewed_at FROM intakes WHERE id = 'seen'`).Scan(&latest); err != nil || !latest.Equal(at.Add(3*time.Hour)) {
		t.Fatalf("reviewed_at after reviews %v, %v; want %v", latest, err, at.Add(3*time.Hour))
	}
}
