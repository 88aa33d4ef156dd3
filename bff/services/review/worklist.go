package review

import (
	"context"

	"github.com/clinical-intake/intake-web/bff"
)

// Page sizes of the worklist: what a page shows unless asked otherwise, and
// the most it shows.
const (
	DefaultWorklistLimit = 50
	MaxWorklistLimit     = 200
)

// WorklistPage returns one page of the worklist in review order (urgent
// first, then closed ones awaiting review, then open, then expired, then
// reviewed; the most recently updated first within each group): see
// bff.ReviewService. Open intakes past their two hours are marked expired
// first, as reading them one by one did, so the page's groups are those of
// now. A Previous page that comes back short is the first page.
func (s *Service) WorklistPage(ctx context.Context, f bff.WorklistFilter, from bff.WorklistCursor, limit int) (*bff.WorklistPage, error) {
	if limit <= 0 {
		limit = DefaultWorklistLimit
	}
	limit = min(limit, MaxWorklistLimit)
	if err := s.expireOverdue(ctx); err != nil {
		return nil, err
	}
	items, more, err := s.worklist.WorklistPage(ctx, f, from, limit)
	if err != nil {
		return nil, err
	}
	if from.Backward && !more {
		// Nothing before these: show the first page, full.
		from = bff.WorklistCursor{}
		if items, more, err = s.worklist.WorklistPage(ctx, f, from, limit); err != nil {
			return nil, err
		}
	}
	p := &bff.WorklistPage{Items: items, First: from.IsZero()}
	if len(items) == 0 {
		if !p.First { // the rows beyond from went away: offer the way back
			p.Prev = from
			p.Prev.Backward = true
		}
		return p, nil
	}
	first, last := bff.KeyOf(items[0]), bff.KeyOf(items[len(items)-1])
	first.Backward = true
	switch {
	case from.Backward: // more is true here
		p.Prev, p.Next = first, last
	default:
		if more {
			p.Next = last
		}
		if !p.First {
			p.Prev = first
		}
	}
	return p, nil
}

// WorkItem returns one intake's worklist row (for the live feed's single-row
// update); ENOTFOUND for no such intake.
func (s *Service) WorkItem(ctx context.Context, id string) (*bff.WorkItem, error) {
	it, err := s.worklist.WorkItem(ctx, id)
	if err != nil {
		return nil, err
	}
	if it.Intake.Status == bff.StatusOpen && !s.now().Before(it.Intake.ExpiresAt) {
		bff.MarkExpired(ctx, s.intakes, s.log, it.Intake, s.now())
		it.Group = bff.WorkGroup(it.Intake, it.Review != nil)
		bff.AnnounceChange(s.feed, it.Intake)
	}
	return it, nil
}

// expireOverdue marks expired the open intakes past their expires_at (an
// index finds the few), and tells open worklists: each moves group.
func (s *Service) expireOverdue(ctx context.Context) error {
	now := s.now()
	ids, err := s.worklist.ExpiredOpen(ctx, now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		in, err := s.intakes.Intake(ctx, id)
		if err != nil {
			return err
		}
		bff.MarkExpired(ctx, s.intakes, s.log, in, now)
		bff.AnnounceChange(s.feed, in)
	}
	return nil
}
