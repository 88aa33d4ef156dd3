package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// PutScenarioReadings replaces the readings recorded for runID by rs.
func (db *DB) PutScenarioReadings(ctx context.Context, runID string, rs []*bff.ScenarioReading) error {
	var b pgx.Batch
	b.Queue(`DELETE FROM scenario_readings WHERE run_id = $1`, runID)
	for _, r := range rs {
		r.RunID = runID
		data, err := json.Marshal(r.QuestionRead)
		if err != nil {
			return fmt.Errorf("postgres: put scenario readings: %w", err)
		}
		b.Queue(`INSERT INTO scenario_readings (run_id, release, question, seen_at, data) VALUES ($1, $2, $3, $4, $5)`,
			runID, r.Release, r.Question, r.SeenAt, string(data))
	}
	if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, &b).Close() }); err != nil {
		return fmt.Errorf("postgres: put scenario readings: %w", err)
	}
	return nil
}

// ScenarioReadings returns every run's readings of release, oldest first.
func (db *DB) ScenarioReadings(ctx context.Context, release string) ([]*bff.ScenarioReading, error) {
	rows, err := db.pool.Query(ctx, `SELECT run_id, seen_at, data FROM scenario_readings
		WHERE release = $1 ORDER BY seen_at, run_id, question`, release)
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario readings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*bff.ScenarioReading, error) {
		var (
			r    bff.ScenarioReading
			data []byte
		)
		if err := row.Scan(&r.RunID, &r.SeenAt, &data); err != nil {
			return nil, err
		}
		r.SeenAt = utc(r.SeenAt)
		return &r, json.Unmarshal(data, &r.QuestionRead)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario readings: %w", err)
	}
	return out, nil
}

// ReadingReleases returns the releases with readings, first seen latest first.
func (db *DB) ReadingReleases(ctx context.Context) ([]bff.ReadingRelease, error) {
	rows, err := db.pool.Query(ctx, `SELECT release, MIN(seen_at) AS first FROM scenario_readings
		GROUP BY release ORDER BY first DESC, release`)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading releases: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (bff.ReadingRelease, error) {
		var r bff.ReadingRelease
		err := row.Scan(&r.Release, &r.FirstSeen)
		r.FirstSeen = utc(r.FirstSeen)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading releases: %w", err)
	}
	return out, nil
}

// AddReadingReview appends rv, setting rv.ID.
func (db *DB) AddReadingReview(ctx context.Context, rv *bff.ReadingReview) error {
	reading, err := json.Marshal(rv.Reading)
	if err != nil {
		return fmt.Errorf("postgres: add reading review: %w", err)
	}
	if err := db.pool.QueryRow(ctx, `INSERT INTO reading_reviews
		(release, question, decision, reading, concept, inverse, note, by_name, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		rv.Release, rv.Question, string(rv.Decision), string(reading), rv.Concept, rv.Inverse, rv.Note, rv.By,
		rv.At).Scan(&rv.ID); err != nil {
		return fmt.Errorf("postgres: add reading review: %w", err)
	}
	return nil
}

// ReadingReviews returns release's reviews, oldest first.
func (db *DB) ReadingReviews(ctx context.Context, release string) ([]*bff.ReadingReview, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, release, question, decision, reading, concept, inverse,
		note, by_name, at FROM reading_reviews WHERE release = $1 ORDER BY id`, release)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading reviews: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*bff.ReadingReview, error) {
		var (
			rv       bff.ReadingReview
			decision string
			reading  []byte
		)
		if err := row.Scan(&rv.ID, &rv.Release, &rv.Question, &decision, &reading, &rv.Concept, &rv.Inverse,
			&rv.Note, &rv.By, &rv.At); err != nil {
			return nil, err
		}
		rv.Decision, rv.At = scenarios.ReviewDecision(decision), utc(rv.At)
		return &rv, json.Unmarshal(reading, &rv.Reading)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading reviews: %w", err)
	}
	return out, nil
}
