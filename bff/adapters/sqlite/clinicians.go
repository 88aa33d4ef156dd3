package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
)

var (
	_ bff.ClinicianStore = (*DB)(nil)
	_ bff.ReviewStore    = (*DB)(nil)
	_ bff.AuditStore     = (*DB)(nil)
)

const clinicianColumns = `username, password_hash, disabled, created_at`

// CreateClinician inserts c; ECONFLICT if the username exists.
func (db *DB) CreateClinician(ctx context.Context, c *bff.Clinician) error {
	return insertClinician(ctx, db.w, c)
}

// insertClinician inserts c with ex (the database or a transaction).
func insertClinician(ctx context.Context, ex interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, c *bff.Clinician) error {
	hash := c.PasswordHash
	if hash == nil {
		hash = []byte{} // a BLOB, never NULL
	}
	_, err := ex.ExecContext(ctx, `INSERT INTO clinicians (`+clinicianColumns+`) VALUES (?, ?, ?, ?)`,
		c.Username, hash, c.Disabled, formatTime(c.CreatedAt))
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "This username is taken.")
	} else if err != nil {
		return fmt.Errorf("store: create clinician: %w", err)
	}
	return nil
}

// Clinician returns the account with username (exact match: the service
// normalises case before calling).
func (db *DB) Clinician(ctx context.Context, username string) (*bff.Clinician, error) {
	c, err := scanClinician(db.r.QueryRowContext(ctx, `SELECT `+clinicianColumns+`
		FROM clinicians WHERE username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store: clinician: %w", err)
	}
	return c, nil
}

// Clinicians returns every account ordered by username (byte order).
func (db *DB) Clinicians(ctx context.Context) ([]*bff.Clinician, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+clinicianColumns+` FROM clinicians ORDER BY username`)
	if err != nil {
		return nil, fmt.Errorf("store: clinicians: %w", err)
	}
	defer rows.Close()
	var out []*bff.Clinician
	for rows.Next() {
		c, err := scanClinician(rows)
		if err != nil {
			return nil, fmt.Errorf("store: clinicians: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: clinicians: %w", err)
	}
	return out, nil
}

// SetClinicianDisabled enables or disables an account; ENOTFOUND if none.
func (db *DB) SetClinicianDisabled(ctx context.Context, username string, disabled bool) error {
	res, err := db.w.ExecContext(ctx, `UPDATE clinicians SET disabled = ? WHERE username = ?`, disabled, username)
	if err != nil {
		return fmt.Errorf("store: set clinician disabled: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: set clinician disabled: %w", err)
	} else if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

// SetClinicianPassword replaces an account's password hash; ENOTFOUND if
// none.
func (db *DB) SetClinicianPassword(ctx context.Context, username string, hash []byte) error {
	res, err := db.w.ExecContext(ctx, `UPDATE clinicians SET password_hash = ? WHERE username = ?`, hash, username)
	if err != nil {
		return fmt.Errorf("store: set clinician password: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: set clinician password: %w", err)
	} else if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

func scanClinician(s scanner) (*bff.Clinician, error) {
	var (
		c       bff.Clinician
		created string
	)
	if err := s.Scan(&c.Username, &c.PasswordHash, &c.Disabled, &created); err != nil {
		return nil, err
	}
	var err error
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	return &c, nil
}
