package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
)

// AddHazardLog stores v as the version after the latest. Two replicas
// adding at once both compute the same number: the second insert breaks
// the primary key and is ECONFLICT.
func (db *DB) AddHazardLog(ctx context.Context, v *bff.HazardLogVersion) error {
	data, err := json.Marshal(v.Log)
	if err != nil {
		return fmt.Errorf("postgres: add hazard log: %w", err)
	}
	var next int
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) + 1 FROM hazard_log_versions`).Scan(&next); err != nil {
			return err
		}
		if v.Version != 0 && v.Version != next {
			return bff.Errorf(bff.ECONFLICT, "The hazard log was changed by someone else (it is now at version %d): reload it and make your change again.", next-1)
		}
		_, err := tx.Exec(ctx, `INSERT INTO hazard_log_versions (version, log, by_name, at, note) VALUES ($1, $2, $3, $4, $5)`,
			next, string(data), v.By, v.At, v.Note)
		return err
	})
	var be *bff.Error
	switch {
	case errors.As(err, &be):
		return be
	case isUnique(err):
		return bff.Errorf(bff.ECONFLICT, "The hazard log was changed by someone else: reload it and make your change again.")
	case err != nil:
		return fmt.Errorf("postgres: add hazard log: %w", err)
	}
	v.Version = next
	return nil
}

// HazardLog returns a version of the log (0: the latest).
func (db *DB) HazardLog(ctx context.Context, version int) (*bff.HazardLogVersion, error) {
	var (
		v    bff.HazardLogVersion
		data []byte
	)
	err := db.pool.QueryRow(ctx, `SELECT version, log, by_name, at, note FROM hazard_log_versions
		WHERE version = $1 OR ($1 = 0 AND version = (SELECT MAX(version) FROM hazard_log_versions))`, version).
		Scan(&v.Version, &data, &v.By, &v.At, &v.Note)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "No such version of the hazard log.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: hazard log: %w", err)
	}
	v.At = utc(v.At)
	v.Log = &safety.Log{}
	if err := json.Unmarshal(data, v.Log); err != nil {
		return nil, fmt.Errorf("postgres: hazard log: %w", err)
	}
	return &v, nil
}

// HazardLogVersions returns every version, newest first, without its log.
func (db *DB) HazardLogVersions(ctx context.Context) ([]*bff.HazardLogVersion, error) {
	rows, err := db.pool.Query(ctx, `SELECT version, by_name, at, note FROM hazard_log_versions ORDER BY version DESC`)
	if err != nil {
		return nil, fmt.Errorf("postgres: hazard log versions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*bff.HazardLogVersion, error) {
		var v bff.HazardLogVersion
		err := row.Scan(&v.Version, &v.By, &v.At, &v.Note)
		v.At = utc(v.At)
		return &v, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: hazard log versions: %w", err)
	}
	return out, nil
}

// AddSafetyDecision appends d, setting d.ID.
func (db *DB) AddSafetyDecision(ctx context.Context, d *bff.SafetyDecision) error {
	snap, err := json.Marshal(d.Snapshot)
	if err != nil {
		return fmt.Errorf("postgres: add safety decision: %w", err)
	}
	if err := db.pool.QueryRow(ctx, `INSERT INTO safety_decisions
		(release, voice, verdict, conditions, reasoning, by_name, at, log_version, hash, snapshot)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		d.Subject.Release, d.Subject.Voice, string(d.Verdict), d.Conditions, d.Reasoning, d.By, d.At,
		d.LogVersion, d.Hash, string(snap)).Scan(&d.ID); err != nil {
		if isForeignKey(err) {
			return bff.Errorf(bff.ENOTFOUND, "No such version of the hazard log.")
		}
		return fmt.Errorf("postgres: add safety decision: %w", err)
	}
	return nil
}

// SafetyDecisions returns the decisions on subject, oldest first.
func (db *DB) SafetyDecisions(ctx context.Context, s safety.Subject) ([]*bff.SafetyDecision, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, verdict, conditions, reasoning, by_name, at, log_version, hash, snapshot
		FROM safety_decisions WHERE release = $1 AND voice = $2 ORDER BY id`, s.Release, s.Voice)
	if err != nil {
		return nil, fmt.Errorf("postgres: safety decisions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*bff.SafetyDecision, error) {
		d := bff.SafetyDecision{Subject: s, Snapshot: &safety.Evaluation{}}
		var (
			verdict string
			snap    []byte
		)
		if err := row.Scan(&d.ID, &verdict, &d.Conditions, &d.Reasoning, &d.By, &d.At, &d.LogVersion, &d.Hash, &snap); err != nil {
			return nil, err
		}
		d.Verdict, d.At = safety.Verdict(verdict), utc(d.At)
		return &d, json.Unmarshal(snap, d.Snapshot)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: safety decisions: %w", err)
	}
	return out, nil
}
