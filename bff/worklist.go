package bff

import (
	"context"
	"sort"
)

// WorkItem is one row of the clinicians' worklist.
type WorkItem struct {
	Intake *Intake
	Review *Review // the latest review, nil if none
	Group  int     // the worklist's order: see Worklist
}

// WorkGroup names, in worklist order.
const (
	GroupUrgent   = iota // urgent and not yet reviewed
	GroupToReview        // closed, awaiting review
	GroupOpen            // still in conversation
	GroupExpired         // passed the two-hour limit, not reviewed
	GroupReviewed        // reviewed
)

// WorklistFilter narrows the worklist; zero values select everything.
type WorklistFilter struct {
	Status     string // open, closed or expired
	UrgentOnly bool
	Unreviewed bool
}

// Worklist returns every intake created through this app: urgent first,
// then closed ones awaiting review, then open, then expired, then reviewed;
// the most recently updated first within each group.
func (s *Service) Worklist(ctx context.Context, f WorklistFilter) ([]WorkItem, error) {
	ins, err := s.intakes.Intakes(ctx, 0)
	if err != nil {
		return nil, err
	}
	latest, err := s.reviews.LatestReviews(ctx)
	if err != nil {
		return nil, err
	}
	items := make([]WorkItem, 0, len(ins))
	for _, in := range ins {
		s.markExpired(ctx, in)
		it := WorkItem{Intake: in, Review: latest[in.ID]}
		switch {
		case it.Review != nil:
			it.Group = GroupReviewed
		case in.Urgent:
			it.Group = GroupUrgent
		case in.Status == StatusClosed || in.Terminal:
			it.Group = GroupToReview
		case in.Status == StatusOpen:
			it.Group = GroupOpen
		default:
			it.Group = GroupExpired
		}
		if (f.Status != "" && in.Status != f.Status) || (f.UrgentOnly && !in.Urgent) || (f.Unreviewed && it.Review != nil) {
			continue
		}
		items = append(items, it)
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Group != items[j].Group {
			return items[i].Group < items[j].Group
		}
		return items[i].Intake.UpdatedAt.After(items[j].Intake.UpdatedAt)
	})
	return items, nil
}
