package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.WorklistStore = (*DB)(nil)

// workItemSelect reads a worklist row: the intake (intakeColumns, prefixed),
// its group (wl_group, 0009_worklist.sql), its opening message (turn 1, by
// primary key) and its latest review (reviews_intake_reviewed; ties to the
// later insert, as LatestReviews).
var workItemSelect = `SELECT ` + prefixColumns("i.", intakeColumns) + `, i.wl_group,
		COALESCE(t.message, ''), r.clinician, r.note, r.reviewed_at
	FROM intakes i
	LEFT JOIN turns t ON t.intake_id = i.id AND t.idx = 1
	LEFT JOIN reviews r ON i.reviewed_at IS NOT NULL AND r.id = (SELECT r2.id FROM reviews r2
		WHERE r2.intake_id = i.id ORDER BY r2.reviewed_at DESC, r2.id DESC LIMIT 1)`

func prefixColumns(prefix, cols string) string {
	fs := strings.Split(cols, ",")
	for i, f := range fs {
		fs[i] = prefix + strings.TrimSpace(f)
	}
	return strings.Join(fs, ", ")
}

// WorklistPage returns a page of the worklist: see bff.WorklistStore. A page
// is at most two index range scans: the rest of the cursor's group (a seek
// on (group, updated_at, id)), then the following groups in order; with a
// filter, the index that starts with its equality columns
// (intakes_worklist_status, _urgent, _status_urgent).
func (db *DB) WorklistPage(ctx context.Context, f bff.WorklistFilter, from bff.WorklistCursor, limit int) ([]*bff.WorkItem, bool, error) {
	if limit <= 0 {
		return nil, false, fmt.Errorf("store: worklist page: limit %d", limit)
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
// (every group from the zero cursor). n rows at most.
func worklistQuery(f bff.WorklistFilter, from bff.WorklistCursor, sameGroup bool, n int) (string, []any) {
	var (
		where []string
		args  []any
	)
	if f.Status != "" {
		where, args = append(where, "i.status = ?"), append(args, f.Status)
	}
	if f.UrgentOnly {
		where = append(where, "i.urgent = 1")
	}
	if f.Unreviewed {
		where = append(where, "i.wl_group < 4")
	}
	// Forward: group ascending, updated_at and id descending; backward the
	// exact reverse (WorklistPage turns the rows round).
	desc, cmp, groupCmp, groupOrder := "DESC", "<", ">", "ASC"
	if from.Backward {
		desc, cmp, groupCmp, groupOrder = "ASC", ">", "<", "DESC"
	}
	order := " ORDER BY i.wl_group " + groupOrder + ", i.updated_at " + desc + ", i.id " + desc
	if sameGroup {
		where = append(where, "i.wl_group = ? AND (i.updated_at, i.id) "+cmp+" (?, ?)")
		args = append(args, from.Group, formatTime(from.UpdatedAt), from.ID)
		order = " ORDER BY i.updated_at " + desc + ", i.id " + desc
	} else {
		g := from.Group
		if from.IsZero() {
			g = -1 // every group
			if from.Backward {
				g = bff.GroupReviewed + 1
			}
		}
		where, args = append(where, "i.wl_group "+groupCmp+" ?"), append(args, g)
	}
	return workItemSelect + " WHERE " + strings.Join(where, " AND ") + order + " LIMIT ?", append(args, n)
}

// WorkItem returns one intake's worklist row; ENOTFOUND for no such intake.
func (db *DB) WorkItem(ctx context.Context, id string) (*bff.WorkItem, error) {
	items, err := db.queryWorkItems(ctx, workItemSelect+" WHERE i.id = ?", id)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	}
	return items[0], nil
}

// ExpiredOpen returns the ids of intakes stored open whose expires_at is at
// or before now (intakes_open_expiry).
func (db *DB) ExpiredOpen(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM intakes WHERE status = 'open' AND expires_at <= ?`, formatTime(now))
	if err != nil {
		return nil, fmt.Errorf("store: expired open intakes: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: expired open intakes: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: expired open intakes: %w", err)
	}
	return ids, nil
}

func (db *DB) queryWorkItems(ctx context.Context, query string, args ...any) ([]*bff.WorkItem, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: worklist: %w", err)
	}
	defer rows.Close()
	var out []*bff.WorkItem
	for rows.Next() {
		it, err := scanWorkItem(rows)
		if err != nil {
			return nil, fmt.Errorf("store: worklist: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: worklist: %w", err)
	}
	return out, nil
}

// intakeScan adapts a row with more columns after the intake's to scanIntake.
type intakeScan struct {
	rows  *sql.Rows
	extra []any
}

func (s intakeScan) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.extra...)...) }

func scanWorkItem(rows *sql.Rows) (*bff.WorkItem, error) {
	var (
		it                   bff.WorkItem
		clinician, note, rat sql.NullString
	)
	in, err := scanIntake(intakeScan{rows, []any{&it.Group, &it.Opening, &clinician, &note, &rat}})
	if err != nil {
		return nil, err
	}
	it.Intake = in
	if rat.Valid {
		at, err := parseTime(rat.String)
		if err != nil {
			return nil, err
		}
		it.Review = &bff.Review{IntakeID: in.ID, Clinician: clinician.String, Note: note.String, ReviewedAt: at}
	} else if it.Group == bff.GroupReviewed {
		return nil, errors.New("reviewed intake without a review")
	}
	return &it, nil
}
