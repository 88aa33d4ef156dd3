package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// RunWorklist runs the worklist part of the suite (bff.WorklistStore's
// pages, rows and expiry), each test on a store of its own. Run runs it
// too; an adapter calls it alone to repeat it on a store set up otherwise
// (PostgreSQL under a linguistic collation).
func RunWorklist(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, Opener)
	}{
		{"PagesEveryFilter", testWorklistPagesEveryFilter},
		{"PagesWhileRowsChange", testWorklistPagesWhileRowsChange},
		{"WorkItemAndExpiredOpen", testWorkItemAndExpiredOpen},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, open) })
	}
}

var wlBase = time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC)

// seedMixed creates n intakes through the store's own methods, spread over
// every group, with updated_at ties (so the id decides), ids whose
// byte-wise order is not their dictionary order (a capital I sorts before
// every lower-case letter, but a collation for people reads "In_005" after
// "in_004"), and some turns and reviews (some added newest first); it
// returns them as the worklist should list them, unfiltered.
func seedMixed(t *testing.T, db Stores, n int) map[string]*bff.WorkItem {
	t.Helper()
	ctx := context.Background()
	all := map[string]*bff.WorkItem{}
	for i := range n {
		k := (i * 37) % n // ids not in updated order
		id := fmt.Sprintf("in_%03d", k)
		if k%5 < 2 { // k%5 varies within every (group, updated_at) tie
			id = fmt.Sprintf("In_%03d", k)
		}
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
			hours := []int{0, 1}
			if i%8 == 0 {
				hours = []int{1, 0} // the latest is not the last added
			}
			for _, h := range hours {
				r := &bff.Review{IntakeID: id, Clinician: fmt.Sprint("dr", h), Note: fmt.Sprint("note ", h),
					ReviewedAt: wlBase.Add(time.Duration(h) * time.Hour)}
				if err := db.AddReview(ctx, r); err != nil {
					t.Fatal(err)
				}
				if h == 1 {
					it.Review = r
				}
			}
		}
		it.Group = bff.WorkGroup(in, it.Review != nil)
		all[id] = it
	}
	return all
}

// expectedOrder is the worklist as the in-memory code computed it before
// pages: filter, then group, updated_at newest first, id descending byte-wise.
func expectedOrder(all map[string]*bff.WorkItem, f bff.WorklistFilter) []string {
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
	return itemIDs(items)
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

func itemIDs(items []*bff.WorkItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Intake.ID
	}
	return out
}

// checkItem fails t unless got is the row want describes: the intake as
// created, its group, opening message and latest review.
func checkItem(t *testing.T, got, want *bff.WorkItem) {
	t.Helper()
	ok := equalIntake(got.Intake, want.Intake) && got.Group == want.Group && got.Opening == want.Opening &&
		(got.Review == nil) == (want.Review == nil)
	if ok && got.Review != nil {
		g, w := *got.Review, *want.Review
		ok = g.IntakeID == w.IntakeID && g.Clinician == w.Clinician && g.Note == w.Note && g.ReviewedAt.Equal(w.ReviewedAt)
	}
	if !ok {
		t.Fatalf("row %s: %+v group %d opening %q review %+v\nwant %+v group %d opening %q review %+v",
			want.Intake.ID, got.Intake, got.Group, got.Opening, got.Review, want.Intake, want.Group, want.Opening, want.Review)
	}
}

// testWorklistPagesEveryFilter walks every filter forward page by page and
// back again: the pages, joined, are the whole filtered list in order, and
// each row is the intake with its group, latest review and opening message.
func testWorklistPagesEveryFilter(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t, fixedClock())
	all := seedMixed(t, db, 120)
	if _, _, err := db.WorklistPage(ctx, bff.WorklistFilter{}, bff.WorklistCursor{}, 0); err == nil {
		t.Fatal("limit 0: no error")
	}
	if items, more, err := db.WorklistPage(ctx, bff.WorklistFilter{Status: "bogus"}, bff.WorklistCursor{}, 10); err != nil || len(items) != 0 || more {
		t.Fatalf("unknown status: %v, %v, %v; want an empty page", itemIDs(items), more, err)
	}
	const size = 7
	for _, f := range worklistFilters() {
		want := expectedOrder(all, f)
		if f == (bff.WorklistFilter{}) && len(want) != 120 {
			t.Fatalf("unfiltered: %d", len(want))
		}
		if len(want) == 0 {
			t.Fatalf("filter %+v selects nothing: the seed misses a case", f)
		}
		var got []string
		pages := 0
		from := bff.WorklistCursor{}
		for {
			items, more, err := db.WorklistPage(ctx, f, from, size)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				checkItem(t, it, all[it.Intake.ID])
			}
			got = append(got, itemIDs(items)...)
			if !more || pages > 100 {
				break
			}
			pages++
			from = bff.KeyOf(items[len(items)-1])
		}
		if !slices.Equal(got, want) {
			t.Fatalf("filter %+v: pages give\n%v\nwant\n%v", f, got, want)
		}
		if pages == 0 {
			continue
		}
		// Backward from the last page's first row to the start.
		var back []string
		cur := bff.KeyOf(all[got[pages*size]])
		cur.Backward = true
		for range 100 {
			items, more, err := db.WorklistPage(ctx, f, cur, size)
			if err != nil {
				t.Fatal(err)
			}
			back = append(itemIDs(items), back...)
			if !more {
				break
			}
			cur = bff.KeyOf(items[0])
			cur.Backward = true
		}
		if !slices.Equal(back, want[:pages*size]) {
			t.Fatalf("filter %+v: backward pages give\n%v\nwant\n%v", f, back, want[:pages*size])
		}
		// From the end backward: the last page.
		last, more, err := db.WorklistPage(ctx, f, bff.WorklistCursor{Backward: true}, size)
		if n := min(size, len(want)); err != nil || !slices.Equal(itemIDs(last), want[len(want)-n:]) || more != (len(want) > size) {
			t.Fatalf("filter %+v: last page %v, more %v, %v; want %v", f, itemIDs(last), more, err, want[len(want)-n:])
		}
	}
}

// testWorklistPagesWhileRowsChange walks the list while, between pages, new
// intakes arrive in every group, rows already shown are updated (they move
// up their group, behind the cursor) and rows not yet shown change without
// moving: every intake there at the start is listed exactly once, nothing
// twice, and each page lies after its cursor.
func testWorklistPagesWhileRowsChange(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t, fixedClock())
	all := seedMixed(t, db, 90)
	seen := map[string]int{}
	var shown []*bff.WorkItem
	from := bff.WorklistCursor{}
	for page := 0; page < 100; page++ {
		items, more, err := db.WorklistPage(ctx, bff.WorklistFilter{}, from, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if !from.IsZero() && !from.Before(bff.KeyOf(it)) {
				t.Fatalf("page %d: %s at %+v is not after the cursor %+v", page, it.Intake.ID, bff.KeyOf(it), from)
			}
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

// testWorkItemAndExpiredOpen: one row by id as the page shows it, ENOTFOUND
// for none; a review moves a row to the reviewed group at once; the open
// intakes past their expiry are listed, stay in the open group until marked
// expired, and no others are.
func testWorkItemAndExpiredOpen(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t, fixedClock())
	all := seedMixed(t, db, 12)
	for id, w := range all {
		it, err := db.WorkItem(ctx, id)
		if err != nil {
			t.Fatalf("WorkItem(%s): %v", id, err)
		}
		checkItem(t, it, w)
	}
	_, err := db.WorkItem(ctx, "nobody")
	WantCode(t, err, bff.ENOTFOUND)

	past := &bff.Intake{ID: "past", Owner: "o", CreatedAt: wlBase, ExpiresAt: wlBase.Add(time.Hour), UpdatedAt: wlBase, Status: bff.StatusOpen}
	pastClosed := &bff.Intake{ID: "past_closed", Owner: "o", CreatedAt: wlBase, ExpiresAt: wlBase, UpdatedAt: wlBase, Status: bff.StatusClosed}
	for _, in := range []*bff.Intake{past, pastClosed} {
		if err := db.CreateIntake(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ExpiredOpen(ctx, wlBase.Add(time.Hour))
	if err != nil || !slices.Equal(got, []string{"past"}) {
		t.Fatalf("ExpiredOpen at expiry = %v, %v", got, err)
	}
	if got, err := db.ExpiredOpen(ctx, wlBase.Add(time.Hour-time.Microsecond)); err != nil || len(got) != 0 {
		t.Fatalf("ExpiredOpen before expiry = %v, %v", got, err)
	}
	if it, err := db.WorkItem(ctx, "past"); err != nil || it.Group != bff.GroupOpen {
		t.Fatalf("WorkItem(past) = %+v, %v; want the open group until marked expired", it, err)
	}
	past.Status = bff.StatusExpired
	if err := db.UpdateIntake(ctx, past); err != nil {
		t.Fatal(err)
	}
	if it, err := db.WorkItem(ctx, "past"); err != nil || it.Group != bff.GroupExpired {
		t.Fatalf("WorkItem(past) marked expired = %+v, %v", it, err)
	}
	if got, err := db.ExpiredOpen(ctx, wlBase.Add(time.Hour)); err != nil || len(got) != 0 {
		t.Fatalf("ExpiredOpen after marking = %v, %v", got, err)
	}
	r := &bff.Review{IntakeID: "past", Clinician: "dr.ada", Note: "seen", ReviewedAt: wlBase.Add(2 * time.Hour)}
	if err := db.AddReview(ctx, r); err != nil {
		t.Fatal(err)
	}
	it, err := db.WorkItem(ctx, "past")
	if err != nil || it.Group != bff.GroupReviewed || it.Review == nil || it.Review.Clinician != "dr.ada" {
		t.Fatalf("WorkItem(past) reviewed = %+v, %v", it, err)
	}
	items, _, err := db.WorklistPage(ctx, bff.WorklistFilter{Unreviewed: true}, bff.WorklistCursor{}, 100)
	if err != nil || slices.Contains(itemIDs(items), "past") {
		t.Fatalf("unreviewed after a review: %v, %v", itemIDs(items), err)
	}
}
