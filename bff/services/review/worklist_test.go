package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/review"
)

var wlNow = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

func worklistService(t *testing.T) (*review.Service, *sqlite.DB, *relay.Feed) {
	db := sqlitetest.MustOpenDB(t)
	feed := relay.NewFeed(100)
	rs := review.New(review.Deps{Intakes: db, Handoffs: db, Reviews: db, Audit: db, Worklist: db, Feed: feed,
		Now: func() time.Time { return wlNow }})
	return rs, db, feed
}

func addIntake(t *testing.T, db *sqlite.DB, id, status string, expires time.Time, updated time.Duration) {
	t.Helper()
	in := &bff.Intake{ID: id, Owner: "o", CreatedAt: wlNow.Add(-3 * time.Hour), ExpiresAt: expires,
		UpdatedAt: wlNow.Add(-updated), Status: status, Terminal: status == bff.StatusClosed}
	if err := db.CreateIntake(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

func pageIDs(p *bff.WorklistPage) []string {
	var ids []string
	for _, it := range p.Items {
		ids = append(ids, it.Intake.ID)
	}
	return ids
}

// An open intake past its two hours is in the Expired group of the page
// read after that moment, stored as expired, and announced to open
// worklists (its row moves group); one not yet due stays open.
func TestWorklistPageMarksOverdueIntakesExpired(t *testing.T) {
	rs, db, feed := worklistService(t)
	ctx := context.Background()
	addIntake(t, db, "due", bff.StatusOpen, wlNow, time.Hour) // expires exactly now
	addIntake(t, db, "later", bff.StatusOpen, wlNow.Add(time.Second), 2*time.Hour)
	addIntake(t, db, "done", bff.StatusClosed, wlNow.Add(-time.Hour), 3*time.Hour)
	p, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, bff.WorklistCursor{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := pageIDs(p); !slices.Equal(got, []string{"done", "later", "due"}) {
		t.Fatalf("order %v, want done (awaiting review), later (open), due (expired)", got)
	}
	if g := p.Items[2].Group; g != bff.GroupExpired {
		t.Errorf("due: group %d, want expired", g)
	}
	if in, err := db.Intake(ctx, "due"); err != nil || in.Status != bff.StatusExpired {
		t.Errorf("due stored as %+v, %v", in, err)
	}
	replay, _, cancel, _ := feed.Subscribe(0)
	cancel()
	var announced []string
	for _, ev := range replay {
		var d bff.IntakeChanged
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		announced = append(announced, d.IntakeID+":"+d.Status)
	}
	if !slices.Equal(announced, []string{"due:expired"}) {
		t.Errorf("announced %v, want the expiry of due only", announced)
	}
	if p, _ := rs.WorklistPage(ctx, bff.WorklistFilter{Status: bff.StatusOpen}, bff.WorklistCursor{}, 0); !slices.Equal(pageIDs(p), []string{"later"}) {
		t.Errorf("open filter: %v", pageIDs(p))
	}
}

// The page cursors: Next until the end, Previous back to a first page that
// is full and says so.
func TestWorklistPageCursors(t *testing.T) {
	rs, db, _ := worklistService(t)
	ctx := context.Background()
	for i := range 7 {
		addIntake(t, db, fmt.Sprint("in_", i), bff.StatusClosed, wlNow.Add(time.Hour), time.Duration(i)*time.Minute)
	}
	p1, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, bff.WorklistCursor{}, 3)
	if err != nil || !p1.First || !p1.Prev.IsZero() || p1.Next.IsZero() {
		t.Fatalf("first page %+v, %v", p1, err)
	}
	p2, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, p1.Next, 3)
	if err != nil || p2.First || p2.Prev.IsZero() || !p2.Prev.Backward || p2.Next.IsZero() {
		t.Fatalf("second page %+v, %v", p2, err)
	}
	p3, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, p2.Next, 3)
	if err != nil || !slices.Equal(pageIDs(p3), []string{"in_6"}) || !p3.Next.IsZero() || p3.Prev.IsZero() {
		t.Fatalf("last page %+v, %v", p3, err)
	}
	back, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, p3.Prev, 3)
	if err != nil || !slices.Equal(pageIDs(back), pageIDs(p2)) || back.First || back.Next != p2.Next {
		t.Fatalf("previous of the last page %v (next %+v), want %v", pageIDs(back), back.Next, pageIDs(p2))
	}
	// Previous of the second page: nothing before it, so the first page.
	first, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, p2.Prev, 3)
	if err != nil || !first.First || !first.Prev.IsZero() || !slices.Equal(pageIDs(first), pageIDs(p1)) {
		t.Fatalf("previous of the second page %+v (%v), want the first %v", first, pageIDs(first), pageIDs(p1))
	}
	// Previous from the second row: one row before it, shown as a full first page.
	short := bff.KeyOf(p1.Items[1])
	short.Backward = true
	if p, err := rs.WorklistPage(ctx, bff.WorklistFilter{}, short, 3); err != nil || !p.First || len(p.Items) != 3 {
		t.Fatalf("short previous page %v first=%v, %v", pageIDs(p), p.First, err)
	}
}

// The live feed's single row: as the page shows it, marked expired when due.
func TestWorkItem(t *testing.T) {
	rs, db, _ := worklistService(t)
	addIntake(t, db, "due", bff.StatusOpen, wlNow.Add(-time.Minute), time.Hour)
	it, err := rs.WorkItem(context.Background(), "due")
	if err != nil || it.Group != bff.GroupExpired || it.Intake.Status != bff.StatusExpired {
		t.Fatalf("WorkItem = %+v, %v", it, err)
	}
	if _, err := rs.WorkItem(context.Background(), "none"); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Fatalf("no such intake: %v", err)
	}
}
