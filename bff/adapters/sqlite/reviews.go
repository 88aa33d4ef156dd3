package sqlite

import (
	"context"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
)

const reviewColumns = `intake_id, clinician, note, reviewed_at`

// AddReview inserts r; ENOTFOUND if the intake does not exist. An intake may
// be reviewed any number of times.
func (db *DB) AddReview(ctx context.Context, r *bff.Review) error {
	_, err := db.w.ExecContext(ctx, `INSERT INTO reviews (`+reviewColumns+`) VALUES (?, ?, ?, ?)`,
		r.IntakeID, r.Clinician, r.Note, formatTime(r.ReviewedAt))
	if isForeignKey(err) {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if err != nil {
		return fmt.Errorf("store: add review: %w", err)
	}
	return nil
}

// Reviews returns an intake's reviews, newest first (by ReviewedAt, then the
// later insert first); none, not ENOTFOUND, for an unknown intake.
func (db *DB) Reviews(ctx context.Context, intakeID string) ([]*bff.Review, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+reviewColumns+` FROM reviews
		WHERE intake_id = ? ORDER BY reviewed_at DESC, id DESC`, intakeID)
	if err != nil {
		return nil, fmt.Errorf("store: reviews: %w", err)
	}
	defer rows.Close()
	var out []*bff.Review
	for rows.Next() {
		r, err := scanReview(rows)
		if err != nil {
			return nil, fmt.Errorf("store: reviews: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reviews: %w", err)
	}
	return out, nil
}

// LatestReviews returns the newest review of every reviewed intake, keyed by
// intake id, in one query; ties on ReviewedAt go to the later insert, as in
// Reviews. The map is empty, never nil, when nothing was reviewed.
func (db *DB) LatestReviews(ctx context.Context) (map[string]*bff.Review, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+reviewColumns+` FROM (
			SELECT `+reviewColumns+`, ROW_NUMBER() OVER (
				PARTITION BY intake_id ORDER BY reviewed_at DESC, id DESC) AS n
			FROM reviews)
		WHERE n = 1`)
	if err != nil {
		return nil, fmt.Errorf("store: latest reviews: %w", err)
	}
	defer rows.Close()
	out := make(map[string]*bff.Review)
	for rows.Next() {
		r, err := scanReview(rows)
		if err != nil {
			return nil, fmt.Errorf("store: latest reviews: %w", err)
		}
		out[r.IntakeID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: latest reviews: %w", err)
	}
	return out, nil
}

func scanReview(s scanner) (*bff.Review, error) {
	var (
		r        bff.Review
		reviewed string
	)
	if err := s.Scan(&r.IntakeID, &r.Clinician, &r.Note, &reviewed); err != nil {
		return nil, err
	}
	var err error
	if r.ReviewedAt, err = parseTime(reviewed); err != nil {
		return nil, err
	}
	return &r, nil
}
