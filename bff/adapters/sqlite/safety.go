package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/safety"
)

// AddHazardLog stores v as the version after the latest.
func (db *DB) AddHazardLog(ctx context.Context, v *bff.HazardLogVersion) (err error) {
	data, err := json.Marshal(v.Log)
	if err != nil {
		return fmt.Errorf("store: add hazard log: %w", err)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: add hazard log: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var next int
	if err = tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) + 1 FROM hazard_log_versions`).Scan(&next); err != nil {
		return fmt.Errorf("store: add hazard log: %w", err)
	}
	if v.Version != 0 && v.Version != next {
		return bff.Errorf(bff.ECONFLICT, "The hazard log was changed by someone else (it is now at version %d): reload it and make your change again.", next-1)
	}
	if _, err = tx.ExecContext(ctx, `INSERT INTO hazard_log_versions (version, log, by_name, at, note) VALUES (?, ?, ?, ?, ?)`,
		next, string(data), v.By, formatTime(v.At), v.Note); err != nil {
		if isUnique(err) {
			return bff.Errorf(bff.ECONFLICT, "The hazard log was changed by someone else: reload it and make your change again.")
		}
		return fmt.Errorf("store: add hazard log: %w", err)
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: add hazard log: %w", err)
	}
	v.Version = next
	return nil
}

// HazardLog returns a version of the log (0: the latest).
func (db *DB) HazardLog(ctx context.Context, version int) (*bff.HazardLogVersion, error) {
	var (
		v        bff.HazardLogVersion
		at, data string
	)
	err := db.r.QueryRowContext(ctx, `SELECT version, log, by_name, at, note FROM hazard_log_versions
		WHERE version = ? OR (? = 0 AND version = (SELECT MAX(version) FROM hazard_log_versions))`, version, version).
		Scan(&v.Version, &data, &v.By, &at, &v.Note)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "No such version of the hazard log.")
	} else if err != nil {
		return nil, fmt.Errorf("store: hazard log: %w", err)
	}
	if v.At, err = parseTime(at); err != nil {
		return nil, err
	}
	v.Log = &safety.Log{}
	if err := json.Unmarshal([]byte(data), v.Log); err != nil {
		return nil, fmt.Errorf("store: hazard log: %w", err)
	}
	return &v, nil
}

// HazardLogVersions returns every version, newest first, without its log.
func (db *DB) HazardLogVersions(ctx context.Context) ([]*bff.HazardLogVersion, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT version, by_name, at, note FROM hazard_log_versions ORDER BY version DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: hazard log versions: %w", err)
	}
	defer rows.Close()
	var out []*bff.HazardLogVersion
	for rows.Next() {
		var (
			v  bff.HazardLogVersion
			at string
		)
		if err := rows.Scan(&v.Version, &v.By, &at, &v.Note); err != nil {
			return nil, fmt.Errorf("store: hazard log versions: %w", err)
		}
		if v.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, &v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: hazard log versions: %w", err)
	}
	return out, nil
}

// AddSafetyDecision appends d, setting d.ID.
func (db *DB) AddSafetyDecision(ctx context.Context, d *bff.SafetyDecision) error {
	snap, err := json.Marshal(d.Snapshot)
	if err != nil {
		return fmt.Errorf("store: add safety decision: %w", err)
	}
	if err := db.w.QueryRowContext(ctx, `INSERT INTO safety_decisions
		(release, voice, verdict, conditions, reasoning, by_name, at, log_version, hash, snapshot)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		d.Subject.Release, d.Subject.Voice, string(d.Verdict), d.Conditions, d.Reasoning, d.By, formatTime(d.At),
		d.LogVersion, d.Hash, string(snap)).Scan(&d.ID); err != nil {
		if isForeignKey(err) {
			return bff.Errorf(bff.ENOTFOUND, "No such version of the hazard log.")
		}
		return fmt.Errorf("store: add safety decision: %w", err)
	}
	return nil
}

// SafetyDecisions returns the decisions on subject, oldest first.
func (db *DB) SafetyDecisions(ctx context.Context, s safety.Subject) ([]*bff.SafetyDecision, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, verdict, conditions, reasoning, by_name, at, log_version, hash, snapshot
		FROM safety_decisions WHERE release = ? AND voice = ? ORDER BY id`, s.Release, s.Voice)
	if err != nil {
		return nil, fmt.Errorf("store: safety decisions: %w", err)
	}
	defer rows.Close()
	var out []*bff.SafetyDecision
	for rows.Next() {
		d := bff.SafetyDecision{Subject: s}
		var at, snap, verdict string
		if err := rows.Scan(&d.ID, &verdict, &d.Conditions, &d.Reasoning, &d.By, &at, &d.LogVersion, &d.Hash, &snap); err != nil {
			return nil, fmt.Errorf("store: safety decisions: %w", err)
		}
		d.Verdict = safety.Verdict(verdict)
		if d.At, err = parseTime(at); err != nil {
			return nil, err
		}
		d.Snapshot = &safety.Evaluation{}
		if err := json.Unmarshal([]byte(snap), d.Snapshot); err != nil {
			return nil, fmt.Errorf("store: safety decisions: %w", err)
		}
		out = append(out, &d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: safety decisions: %w", err)
	}
	return out, nil
}
