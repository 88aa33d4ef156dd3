package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/sqlite"
	"github.com/clinical-intake/intake-web/bff/sqlite/sqlitetest"
)

var wlBase = time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC)

// seedMixed creates n intakes through the store's own methods, spread over
// every group, with updated_at ties (so the id decides) and some turns and
// reviews; it returns them as the worklist should list them, unfiltered.
func seedMixed(t *testing.T, db *sqlite.DB, n int) map[string]*bff.WorkItem {
	t.Helper()
	ctx := context.Background()
	all := map[string]*bff.WorkItem{}
	for i := range n {
		id := fmt.Sprintf("in_%03d", (i*37)%n) // ids not in updated order
		in := &bff.Intake{ID: id, Owner: "o", CreatedAt: wlBase, ExpiresAt: wlBase.Add(1000 * time.Hour),
			UpdatedAt: wlBase.Add(time.Duration(i%9) * time.Minute), Status: bff.StatusOpen}
		switch i % 6 {
		case 0:
			in.Urgent = true
		case 1, 2:
			in.Status, in.Terminal = bff.StatusClosed, true
		case 3:
			in.Status = bff.StatusExpired
		}
		if i%7 == 0 {
			in.Urgent = true
		}
		if err := db.CreateIntake(ctx, in); err != nil {
			t.Fatal(err)
		}
		it := &bff.WorkItem{Intake: in}
		if i%3 == 0 {
			if err := db.CreateTurn(ctx, &bff.Turn{IntakeID: id, SubmissionID: "s", Message: "opening " + id, Status: bff.TurnCompleted}); err != nil {
				t.Fatal(err)
			}
			it.Opening = "opening " + id
		}
		if i%4 == 0 {
			for k := range 2 { // the latest review is the one shown
				r := &bff.Review{IntakeID: id, Clinician: fmt.Sprint("dr", k), ReviewedAt: wlBase.Add(time.Duration(k) * time.Hour)}
				if err := db.AddReview(ctx, r); err != nil {
					t.Fatal(err)
				}
				it.Review = r
			}
		}
		it.Group = bff.WorkGroup(in, it.Review != nil)
		all[id] = it
	}
	return all
}

// expected is the worklist as the old in-memory code computed it: filter,
// then group, updated_at newest first, id descending.
func expected(all map[string]*bff.WorkItem, f bff.WorklistFilter) []string {
	var items []*bff.WorkItem
	for _, it := range all {
		if f.Matches(it) {
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(a, b *bff.WorkItem) int {
		if bff.KeyOf(a).Before(bff.KeyOf(b)) {
			return -1
		}
		return 1
	})
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.Intake.ID
	}
	return ids
}

func allFilters() []bff.WorklistFilter {
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

func ids(items []*bff.WorkItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Intake.ID
	}
	return out
}

// TestWorklistPagesEveryFilter walks every filter forward page by page and
// back again: the pages, joined, are the whole filtered list in order, and
// each row carries its group, latest review and opening message.
func TestWorklistPagesEveryFilter(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	all := seedMixed(t, db, 120)
	for _, f := range allFilters() {
		want := expected(all, f)
		if f == (bff.WorklistFilter{}) && len(want) != 120 {
			t.Fatalf("unfiltered: %d", len(want))
		}
		var got []string
		var pages []bff.WorklistCursor // the cursor after each page
		from := bff.WorklistCursor{}
		for range 100 {
			items, more, err := db.WorklistPage(ctx, f, from, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				w := all[it.Intake.ID]
				if it.Group != w.Group || it.Opening != w.Opening || (it.Review == nil) != (w.Review == nil) ||
					(it.Review != nil && it.Review.Clinician != w.Review.Clinician) {
					t.Fatalf("filter %+v: row %s: group %d opening %q review %+v, want %d %q %+v",
						f, it.Intake.ID, it.Group, it.Opening, it.Review, w.Group, w.Opening, w.Review)
				}
			}
			got = append(got, ids(items)...)
			if !more {
				break
			}
			from = bff.KeyOf(items[len(items)-1])
			pages = append(pages, from)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("filter %+v: pages give\n%v\nwant\n%v", f, got, want)
		}
		// Backward from the last page's first row to the start.
		if len(pages) == 0 {
			continue
		}
		var back []string
		cur := bff.KeyOf(all[got[len(pages)*7]])
		cur.Backward = true
		for {
			items, more, err := db.WorklistPage(ctx, f, cur, 7)
			if err != nil {
				t.Fatal(err)
			}
			back = append(ids(items), back...)
			if !more {
				break
			}
			cur = bff.KeyOf(items[0])
			cur.Backward = true
		}
		if !slices.Equal(back, want[:len(pages)*7]) {
			t.Fatalf("filter %+v: backward pages give %v, want %v", f, back, want[:len(pages)*7])
		}
	}
}

// TestWorklistPagesWhileRowsChange walks the list while, between pages,
// new intakes arrive in every group, rows already shown are updated (they
// move up their group, behind the cursor) and rows not yet shown change
// without moving: every intake there at the start is listed exactly once,
// and nothing twice.
func TestWorklistPagesWhileRowsChange(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	all := seedMixed(t, db, 90)
	seen := map[string]int{}
	var shown []*bff.WorkItem
	from := bff.WorklistCursor{}
	for page := 0; ; page++ {
		items, more, err := db.WorklistPage(ctx, bff.WorklistFilter{}, from, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			seen[it.Intake.ID]++
		}
		shown = append(shown, items...)
		if !more {
			break
		}
		from = bff.KeyOf(items[len(items)-1])
		// Changes before the next page.
		now := wlBase.Add(time.Duration(100+page) * time.Minute)
		for g, st := range []string{bff.StatusOpen, bff.StatusClosed, bff.StatusExpired} {
			in := &bff.Intake{ID: fmt.Sprintf("new_%02d_%d", page, g), Owner: "o", CreatedAt: now, ExpiresAt: now.Add(time.Hour),
				UpdatedAt: now, Status: st, Urgent: g == 0 && page%2 == 0}
			if err := db.CreateIntake(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		moved := shown[page%len(shown)].Intake
		moved.UpdatedAt, moved.TurnCount = now, moved.TurnCount+1
		if err := db.UpdateIntake(ctx, moved); err != nil {
			t.Fatal(err)
		}
		next, _, err := db.WorklistPage(ctx, bff.WorklistFilter{}, from, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(next) == 1 {
			if err := db.SetActiveProtocol(ctx, next[0].Intake.ID, fmt.Sprint("p", page)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id := range all {
		if seen[id] != 1 {
			t.Errorf("intake %s listed %d times", id, seen[id])
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("intake %s listed %d times", id, n)
		}
	}
}

// TestWorkItemAndExpiredOpen: one row by id as the page shows it, ENOTFOUND
// for none; the open intakes past their expiry and no others.
func TestWorkItemAndExpiredOpen(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.MustOpenDB(t)
	all := seedMixed(t, db, 12)
	for id, w := range all {
		it, err := db.WorkItem(ctx, id)
		if err != nil || it.Group != w.Group || it.Opening != w.Opening || (it.Review == nil) != (w.Review == nil) {
			t.Fatalf("WorkItem(%s) = %+v, %v; want group %d", id, it, err, w.Group)
		}
	}
	_, err := db.WorkItem(ctx, "nobody")
	wantCode(t, err, bff.ENOTFOUND)

	past := &bff.Intake{ID: "past", Owner: "o", CreatedAt: wlBase, ExpiresAt: wlBase.Add(time.Hour), UpdatedAt: wlBase, Status: bff.StatusOpen}
	if err := db.CreateIntake(ctx, past); err != nil {
		t.Fatal(err)
	}
	got, err := db.ExpiredOpen(ctx, wlBase.Add(time.Hour))
	if err != nil || !slices.Equal(got, []string{"past"}) {
		t.Fatalf("ExpiredOpen at expiry = %v, %v", got, err)
	}
	if got, err := db.ExpiredOpen(ctx, wlBase.Add(time.Hour-time.Nanosecond)); err != nil || len(got) != 0 {
		t.Fatalf("ExpiredOpen before expiry = %v, %v", got, err)
	}
}
