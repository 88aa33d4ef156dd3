package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// PutScenarioReadings replaces the readings recorded for runID by rs.
func (db *DB) PutScenarioReadings(ctx context.Context, runID string, rs []*bff.ScenarioReading) (err error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: put scenario readings: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err = tx.ExecContext(ctx, `DELETE FROM scenario_readings WHERE run_id = ?`, runID); err != nil {
		return fmt.Errorf("store: put scenario readings: %w", err)
	}
	for _, r := range rs {
		r.RunID = runID
		data, err := json.Marshal(r.QuestionRead)
		if err != nil {
			return fmt.Errorf("store: put scenario readings: %w", err)
		}
		if _, err = tx.ExecContext(ctx, `INSERT INTO scenario_readings (run_id, release, question, seen_at, data)
			VALUES (?, ?, ?, ?, ?)`, runID, r.Release, r.Question, formatTime(r.SeenAt), string(data)); err != nil {
			return fmt.Errorf("store: put scenario readings: %w", err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: put scenario readings: %w", err)
	}
	return nil
}

// ScenarioReadings returns every run's readings of release, oldest first.
func (db *DB) ScenarioReadings(ctx context.Context, release string) ([]*bff.ScenarioReading, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT run_id, seen_at, data FROM scenario_readings
		WHERE release = ? ORDER BY seen_at, run_id, question`, release)
	if err != nil {
		return nil, fmt.Errorf("store: scenario readings: %w", err)
	}
	defer rows.Close()
	var out []*bff.ScenarioReading
	for rows.Next() {
		var (
			r        bff.ScenarioReading
			at, data string
		)
		if err := rows.Scan(&r.RunID, &at, &data); err != nil {
			return nil, fmt.Errorf("store: scenario readings: %w", err)
		}
		if r.SeenAt, err = parseTime(at); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(data), &r.QuestionRead); err != nil {
			return nil, fmt.Errorf("store: scenario readings: %w", err)
		}
		out = append(out, &r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: scenario readings: %w", err)
	}
	return out, nil
}

// ReadingReleases returns the releases with readings, first seen latest first.
func (db *DB) ReadingReleases(ctx context.Context) ([]bff.ReadingRelease, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT release, MIN(seen_at) AS first FROM scenario_readings
		GROUP BY release ORDER BY first DESC, release`)
	if err != nil {
		return nil, fmt.Errorf("store: reading releases: %w", err)
	}
	defer rows.Close()
	var out []bff.ReadingRelease
	for rows.Next() {
		var (
			r  bff.ReadingRelease
			at string
		)
		if err := rows.Scan(&r.Release, &at); err != nil {
			return nil, fmt.Errorf("store: reading releases: %w", err)
		}
		if r.FirstSeen, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading releases: %w", err)
	}
	return out, nil
}

// AddReadingReview appends rv, setting rv.ID.
func (db *DB) AddReadingReview(ctx context.Context, rv *bff.ReadingReview) error {
	reading, err := json.Marshal(rv.Reading)
	if err != nil {
		return fmt.Errorf("store: add reading review: %w", err)
	}
	inverse := 0
	if rv.Inverse {
		inverse = 1
	}
	if err := db.w.QueryRowContext(ctx, `INSERT INTO reading_reviews
		(release, question, decision, reading, concept, inverse, note, by_name, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		rv.Release, rv.Question, string(rv.Decision), string(reading), rv.Concept, inverse, rv.Note, rv.By,
		formatTime(rv.At)).Scan(&rv.ID); err != nil {
		return fmt.Errorf("store: add reading review: %w", err)
	}
	return nil
}

// ReadingReviews returns release's reviews, oldest first.
func (db *DB) ReadingReviews(ctx context.Context, release string) ([]*bff.ReadingReview, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, release, question, decision, reading, concept, inverse,
		note, by_name, at FROM reading_reviews WHERE release = ? ORDER BY id`, release)
	if err != nil {
		return nil, fmt.Errorf("store: reading reviews: %w", err)
	}
	defer rows.Close()
	var out []*bff.ReadingReview
	for rows.Next() {
		var (
			rv                    bff.ReadingReview
			decision, reading, at string
			inverse               int
		)
		if err := rows.Scan(&rv.ID, &rv.Release, &rv.Question, &decision, &reading, &rv.Concept, &inverse,
			&rv.Note, &rv.By, &at); err != nil {
			return nil, fmt.Errorf("store: reading reviews: %w", err)
		}
		rv.Decision, rv.Inverse = scenarios.ReviewDecision(decision), inverse != 0
		if err := json.Unmarshal([]byte(reading), &rv.Reading); err != nil {
			return nil, fmt.Errorf("store: reading reviews: %w", err)
		}
		if rv.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, &rv)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: reading reviews: %w", err)
	}
	return out, nil
}
