package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// SeedItem is one intake of WorklistSeed: the intake, its opening message
// (turn 1) and its review, if any.
type SeedItem struct {
	Intake  *bff.Intake
	Opening string
	Review  *bff.Review
}

// WorklistSeed returns n intakes for the worklist benchmarks, in a
// realistic mix: about 3% urgent, 30% closed, 30% open, 17% expired and 20%
// reviewed, each with an opening message; none of the open ones has
// expired at now. Adapters insert them in bulk (their own fastest way) so
// that every adapter measures the same data. Times are whole microseconds.
func WorklistSeed(n int, now time.Time) []SeedItem {
	now = now.UTC().Truncate(time.Microsecond)
	out := make([]SeedItem, n)
	for i := range n {
		created := now.Add(-time.Duration(n-i) * time.Minute)
		updated := created.Add(time.Duration(i%17) * time.Minute)
		in := &bff.Intake{ID: fmt.Sprintf("in_%07d", i), Owner: "o", CreatedAt: created, ExpiresAt: created.Add(2 * time.Hour),
			UpdatedAt: updated, Status: bff.StatusOpen, TurnCount: 3, Urgent: i%33 == 0,
			SafetyStatus: "clear", DispositionLabel: "Self-care"}
		switch i % 10 {
		case 0, 1, 2:
			in.Status, in.Terminal = bff.StatusClosed, true
		case 3, 4:
			in.Status = bff.StatusExpired
		default:
			in.ExpiresAt = now.Add(2 * time.Hour) // still open: not swept
		}
		out[i] = SeedItem{Intake: in, Opening: "I have had a sore throat for three days and it hurts to swallow"}
		if i%5 == 4 {
			out[i].Review = &bff.Review{IntakeID: in.ID, Clinician: "dr.ada", ReviewedAt: updated.Add(time.Minute)}
		}
	}
	return out
}

// BenchWorklist reads worklist pages of 50 from db, which holds the n
// intakes of WorklistSeed: the first page, filtered first pages, a deep page
// (after row 0.9n) and a Previous page there.
func BenchWorklist(b *testing.B, db Stores, n int) {
	ctx := context.Background()
	deep := deepCursor(b, db, n*9/10)
	back := deep
	back.Backward = true
	page := func(f bff.WorklistFilter, from bff.WorklistCursor) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				items, _, err := db.WorklistPage(ctx, f, from, 50)
				if err != nil || len(items) != 50 {
					b.Fatalf("%d items, %v", len(items), err)
				}
			}
		}
	}
	b.Run("first", page(bff.WorklistFilter{}, bff.WorklistCursor{}))
	b.Run("filter=closed,unreviewed", page(bff.WorklistFilter{Status: bff.StatusClosed, Unreviewed: true}, bff.WorklistCursor{}))
	b.Run("filter=urgent", page(bff.WorklistFilter{UrgentOnly: true}, bff.WorklistCursor{}))
	b.Run(fmt.Sprintf("deep=%d", n*9/10), page(bff.WorklistFilter{}, deep))
	b.Run(fmt.Sprintf("deep=%d/previous", n*9/10), page(bff.WorklistFilter{}, back))
}

// deepCursor is the key of the row at offset in worklist order, found by
// paging through the list (so it needs nothing but the interface).
func deepCursor(b *testing.B, db Stores, offset int) bff.WorklistCursor {
	ctx := context.Background()
	var from bff.WorklistCursor
	for seen := 0; ; {
		items, more, err := db.WorklistPage(ctx, bff.WorklistFilter{}, from, 1000)
		if err != nil {
			b.Fatal(err)
		}
		if offset < seen+len(items) {
			return bff.KeyOf(items[offset-seen])
		}
		if !more {
			b.Fatalf("the list has %d rows, not %d", seen+len(items), offset+1)
		}
		seen += len(items)
		from = bff.KeyOf(items[len(items)-1])
	}
}
