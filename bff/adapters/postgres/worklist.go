package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

// workItemSelect reads a worklist row: the intake (intakeColumns, prefixed),
// its group (wl_group, 0003_worklist.sql), its opening message (turn 1, by
// primary key) and its latest review (reviews_intake_reviewed; ties to the
// later insert, as LatestReviews), looked up only for reviewed intakes.
var workItemSelect = `SELECT ` + prefixColumns("i.", intakeColumns) + `, i.wl_group,
		COALESCE(t.message, ''), r.clinician, r.note, r.reviewed_at
	FROM intakes i
	LEFT JOIN turns t ON t.intake_id = i.id AND t.idx = 1
	LEFT JOIN LATERAL (SELECT r2.clinician, r2.note, r2.reviewed_at FROM reviews r2
		WHERE i.reviewed_at IS NOT NULL AND r2.intake_id = i.id
		ORDER BY r2.reviewed_at DESC, r2.id DESC LIMIT 1) r ON true`

func prefixColumns(prefix, cols string) string {
	fs := strings.Split(cols, ",")
	for i, f := range fs {
		fs[i] = prefix + strings.TrimSpace(f)
	}
	return strings.Join(fs, ", ")
}

// WorklistPage returns a page of the worklist: see bff.WorklistStore; the
// error is internal. A page is at most two index range scans: the rest of
// the cursor's group (a seek on (wl_group, updated_at, id)), then the
// following groups in order; with a filter, on that filter's partial index
// (intakes_worklist_open, _urgent, _open_urgent, ...).
func (db *DB) WorklistPage(ctx context.Context, f bff.WorklistFilter, from bff.WorklistCursor, limit int) ([]*bff.WorkItem, bool, error) {
	if limit <= 0 {
		return nil, false, fmt.Errorf("postgres: worklist page: limit %d", limit)
	}
	want := limit + 1 // one more tells whether there is more
	var items []*bff.WorkItem
	if !from.IsZero() {
		q, a := worklistQuery(f, from, true, want)
		got, err := db.queryWorkItems(ctx, q, a...)
		if err != nil {
			return nil, false, err
		}
		items = got
	}
	if len(items) < want {
		q, a := worklistQuery(f, from, false, want-len(items))
		got, err := db.queryWorkItems(ctx, q, a...)
		if err != nil {
			return nil, false, err
		}
		items = append(items, got...)
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	if from.Backward {
		slices.Reverse(items)
	}
	return items, more, nil
}

// worklistQuery is one of a page's two queries: with sameGroup, the rows
// of from's group beyond from; else the rows of the groups beyond from's
// (every group from the zero cursor). n rows at most. The query text
// depends only on the filter's shape and the direction, so pgx's statement
// cache holds a handful of them.
func worklistQuery(f bff.WorklistFilter, from bff.WorklistCursor, sameGroup bool, n int) (string, []any) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	switch f.Status {
	case "":
	case bff.StatusOpen, bff.StatusClosed, bff.StatusExpired:
		// A literal, so the planner can use the status's partial index
		// (0003_worklist.sql) in a generic plan too.
		where = append(where, "i.status = '"+f.Status+"'")
	default: // matches nothing; no index for it
		where = append(where, "i.status = "+arg(f.Status))
	}
	if f.UrgentOnly {
		where = append(where, "i.urgent")
	}
	if f.Unreviewed {
		where = append(where, "i.wl_group < 4")
	}
	// Forward: group ascending, updated_at and id descending; backward the
	// exact reverse (WorklistPage turns the rows round). Ids compare
	// byte-wise, as the indexes hold them.
	desc, cmp, groupCmp, groupOrder := "DESC", "<", ">", "ASC"
	if from.Backward {
		desc, cmp, groupCmp, groupOrder = "ASC", ">", "<", "DESC"
	}
	order := ` ORDER BY i.wl_group ` + groupOrder + `, i.updated_at ` + desc + `, i.id COLLATE "C" ` + desc
	if sameGroup {
		where = append(where, "i.wl_group = "+arg(from.Group)+
			` AND (i.updated_at, i.id COLLATE "C") `+cmp+` (`+arg(from.UpdatedAt)+`, `+arg(from.ID)+`)`)
		order = ` ORDER BY i.updated_at ` + desc + `, i.id COLLATE "C" ` + desc
	} else {
		g := from.Group
		if from.IsZero() {
			g = -1 // every group
			if from.Backward {
				g = bff.GroupReviewed + 1
			}
		}
		where = append(where, "i.wl_group "+groupCmp+" "+arg(g))
	}
	lim := arg(n)
	return workItemSelect + " WHERE " + strings.Join(where, " AND ") + order + " LIMIT " + lim, args
}

// WorkItem returns one intake's worklist row; ENOTFOUND for no such intake,
// any other error internal.
func (db *DB) WorkItem(ctx context.Context, id string) (*bff.WorkItem, error) {
	items, err := db.queryWorkItems(ctx, workItemSelect+" WHERE i.id = $1", id)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	}
	return items[0], nil
}

// ExpiredOpen returns the ids of intakes stored open whose expires_at is at
// or before now (intakes_open_expiry); the error is internal.
func (db *DB) ExpiredOpen(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM intakes WHERE status = 'open' AND expires_at <= $1`, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: expired open intakes: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: expired open intakes: %w", err)
	}
	return ids, nil
}

func (db *DB) queryWorkItems(ctx context.Context, query string, args ...any) ([]*bff.WorkItem, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: worklist: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.WorkItem, error) { return scanWorkItem(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: worklist: %w", err)
	}
	return out, nil
}

// rowPlus adapts a row with more columns after the intake's to scanIntake.
type rowPlus struct {
	pgx.Row
	extra []any
}

func (r rowPlus) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

func scanWorkItem(r pgx.Row) (*bff.WorkItem, error) {
	var (
		it              bff.WorkItem
		clinician, note *string
		reviewedAt      *time.Time
	)
	in, err := scanIntake(rowPlus{r, []any{&it.Group, &it.Opening, &clinician, &note, &reviewedAt}})
	if err != nil {
		return nil, err
	}
	it.Intake = in
	switch {
	case reviewedAt != nil:
		it.Review = &bff.Review{IntakeID: in.ID, Clinician: *clinician, Note: *note, ReviewedAt: utc(*reviewedAt)}
	case it.Group == bff.GroupReviewed:
		return nil, errors.New("reviewed intake without a review")
	}
	return &it, nil
}
