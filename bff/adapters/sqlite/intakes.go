package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
)

const intakeColumns = `id, owner, created_at, expires_at, updated_at, status, turn_count,
	terminal, urgent, safety_status, disposition, disposition_label, active_protocol,
	age_years, sex, history, service_release, encounter_id`

// CreateIntake inserts in; ECONFLICT if the id exists.
func (db *DB) CreateIntake(ctx context.Context, in *bff.Intake) error {
	_, err := db.w.ExecContext(ctx, `INSERT INTO intakes (`+intakeColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		in.ID, in.Owner, formatTime(in.CreatedAt), formatTime(in.ExpiresAt), formatTime(in.UpdatedAt),
		in.Status, in.TurnCount, in.Terminal, in.Urgent, in.SafetyStatus, in.Disposition,
		in.DispositionLabel, in.ActiveProtocol, intPtr(in.AgeYears), in.Sex, in.History, in.Release,
		in.EncounterID)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "This intake already exists.")
	} else if err != nil {
		return fmt.Errorf("store: create intake: %w", err)
	}
	return nil
}

// Intake returns the intake with id, whoever owns it.
func (db *DB) Intake(ctx context.Context, id string) (*bff.Intake, error) {
	in, err := scanIntake(db.st.intake.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store: intake: %w", err)
	}
	return in, nil
}

// IntakesByOwner returns the owner's intakes, newest first.
func (db *DB) IntakesByOwner(ctx context.Context, owner string) ([]*bff.Intake, error) {
	return db.queryIntakes(ctx, `SELECT `+intakeColumns+` FROM intakes WHERE owner = ?
		ORDER BY created_at DESC, rowid DESC`, owner)
}

// Intakes returns every intake, newest first, at most limit (0 = all).
func (db *DB) Intakes(ctx context.Context, limit int) ([]*bff.Intake, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	return db.queryIntakes(ctx, `SELECT `+intakeColumns+` FROM intakes
		ORDER BY created_at DESC, rowid DESC LIMIT ?`, limit)
}

// UpdateIntake writes every field of in except ID, Owner and CreatedAt.
func (db *DB) UpdateIntake(ctx context.Context, in *bff.Intake) error {
	return updateIntake(ctx, db.st.updateIntake, in)
}

// updateIntakeSQL writes the mutable fields of an intake (the arguments of
// intakeArgs).
const updateIntakeSQL = `UPDATE intakes SET expires_at = ?, updated_at = ?,
	status = ?, turn_count = ?, terminal = ?, urgent = ?, safety_status = ?, disposition = ?,
	disposition_label = ?, active_protocol = ?, age_years = ?, sex = ?, history = ?,
	service_release = ?, encounter_id = ?
	WHERE id = ?`

func updateIntake(ctx context.Context, st *sql.Stmt, in *bff.Intake) error {
	res, err := st.ExecContext(ctx,
		formatTime(in.ExpiresAt), formatTime(in.UpdatedAt), in.Status, in.TurnCount, in.Terminal,
		in.Urgent, in.SafetyStatus, in.Disposition, in.DispositionLabel, in.ActiveProtocol,
		intPtr(in.AgeYears), in.Sex, in.History, in.Release, in.EncounterID, in.ID)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "Another intake has this encounter.")
	} else if err != nil {
		return fmt.Errorf("store: update intake: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: update intake: %w", err)
	} else if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	}
	return nil
}

func (db *DB) queryIntakes(ctx context.Context, query string, args ...any) ([]*bff.Intake, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: intakes: %w", err)
	}
	defer rows.Close()
	var out []*bff.Intake
	for rows.Next() {
		in, err := scanIntake(rows)
		if err != nil {
			return nil, fmt.Errorf("store: intakes: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: intakes: %w", err)
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanIntake(s scanner) (*bff.Intake, error) {
	var (
		in                        bff.Intake
		created, expires, updated string
		age                       sql.NullInt64
	)
	if err := s.Scan(&in.ID, &in.Owner, &created, &expires, &updated, &in.Status, &in.TurnCount,
		&in.Terminal, &in.Urgent, &in.SafetyStatus, &in.Disposition, &in.DispositionLabel,
		&in.ActiveProtocol, &age, &in.Sex, &in.History, &in.Release, &in.EncounterID); err != nil {
		return nil, err
	}
	var err error
	if in.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if in.ExpiresAt, err = parseTime(expires); err != nil {
		return nil, err
	}
	if in.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	if age.Valid {
		a := int(age.Int64)
		in.AgeYears = &a
	}
	return &in, nil
}

func intPtr(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
