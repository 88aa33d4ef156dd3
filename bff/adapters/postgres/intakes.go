package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinical-intake/intake-web/bff"
)

const intakeColumns = `id, owner, created_at, expires_at, updated_at, status, turn_count,
	terminal, urgent, safety_status, disposition, disposition_label, active_protocol,
	age_years, sex, history, service_release, encounter_id`

// CreateIntake inserts in; ECONFLICT if the id (or a non-empty encounter
// id) exists.
func (db *DB) CreateIntake(ctx context.Context, in *bff.Intake) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO intakes (`+intakeColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		in.ID, in.Owner, in.CreatedAt, in.ExpiresAt, in.UpdatedAt,
		in.Status, in.TurnCount, in.Terminal, in.Urgent, in.SafetyStatus, in.Disposition,
		in.DispositionLabel, in.ActiveProtocol, in.AgeYears, in.Sex, in.History, in.Release,
		in.EncounterID)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "This intake already exists.")
	} else if err != nil {
		return fmt.Errorf("postgres: create intake: %w", err)
	}
	return nil
}

// Intake returns the intake with id, whoever owns it; ENOTFOUND if none.
func (db *DB) Intake(ctx context.Context, id string) (*bff.Intake, error) {
	in, err := scanIntake(db.pool.QueryRow(ctx, `SELECT `+intakeColumns+` FROM intakes WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: intake: %w", err)
	}
	return in, nil
}

// IntakesByOwner returns the owner's intakes, newest first (ties: the later
// insert first).
func (db *DB) IntakesByOwner(ctx context.Context, owner string) ([]*bff.Intake, error) {
	return db.queryIntakes(ctx, `SELECT `+intakeColumns+` FROM intakes WHERE owner = $1
		ORDER BY created_at DESC, seq DESC`, owner)
}

// Intakes returns every intake, newest first, at most limit (0 = all).
func (db *DB) Intakes(ctx context.Context, limit int) ([]*bff.Intake, error) {
	var lim *int // NULL: no limit
	if limit > 0 {
		lim = &limit
	}
	return db.queryIntakes(ctx, `SELECT `+intakeColumns+` FROM intakes
		ORDER BY created_at DESC, seq DESC LIMIT $1`, lim)
}

// UpdateIntake writes every field of in except ID, Owner and CreatedAt;
// ENOTFOUND if there is no such intake, ECONFLICT if another intake has its
// encounter id.
func (db *DB) UpdateIntake(ctx context.Context, in *bff.Intake) error {
	return updateIntake(ctx, db.pool, in)
}

// execer is what a pool and a transaction both do.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

func updateIntake(ctx context.Context, q execer, in *bff.Intake) error {
	tag, err := q.Exec(ctx, `UPDATE intakes SET expires_at = $1, updated_at = $2,
		status = $3, turn_count = $4, terminal = $5, urgent = $6, safety_status = $7, disposition = $8,
		disposition_label = $9, active_protocol = $10, age_years = $11, sex = $12, history = $13,
		service_release = $14, encounter_id = $15
		WHERE id = $16`,
		in.ExpiresAt, in.UpdatedAt, in.Status, in.TurnCount, in.Terminal,
		in.Urgent, in.SafetyStatus, in.Disposition, in.DispositionLabel, in.ActiveProtocol,
		in.AgeYears, in.Sex, in.History, in.Release, in.EncounterID, in.ID)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "Another intake has this encounter.")
	} else if err != nil {
		return fmt.Errorf("postgres: update intake: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	}
	return nil
}

// SetActiveProtocol records an intake's active protocol alone; ENOTFOUND
// for no such intake.
func (db *DB) SetActiveProtocol(ctx context.Context, id, protocol string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE intakes SET active_protocol = $1 WHERE id = $2`, protocol, id)
	if err != nil {
		return fmt.Errorf("postgres: set active protocol: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	}
	return nil
}

func (db *DB) queryIntakes(ctx context.Context, query string, args ...any) ([]*bff.Intake, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: intakes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.Intake, error) { return scanIntake(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: intakes: %w", err)
	}
	return out, nil
}

func scanIntake(r pgx.Row) (*bff.Intake, error) {
	var in bff.Intake
	if err := r.Scan(&in.ID, &in.Owner, &in.CreatedAt, &in.ExpiresAt, &in.UpdatedAt, &in.Status, &in.TurnCount,
		&in.Terminal, &in.Urgent, &in.SafetyStatus, &in.Disposition, &in.DispositionLabel,
		&in.ActiveProtocol, &in.AgeYears, &in.Sex, &in.History, &in.Release, &in.EncounterID); err != nil {
		return nil, err
	}
	in.CreatedAt, in.ExpiresAt, in.UpdatedAt = utc(in.CreatedAt), utc(in.ExpiresAt), utc(in.UpdatedAt)
	return &in, nil
}
