package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/clinical-intake/intake-web/bff"
)

var (
	_ bff.ClinicianStore = (*DB)(nil)
	_ bff.ReviewStore    = (*DB)(nil)
	_ bff.AuditStore     = (*DB)(nil)
)

const clinicianColumns = `username, password_hash, disabled, created_at`

// clinicianSelect reads an account with its roles (comma-separated, NULL
// for none).
const clinicianSelect = `SELECT ` + clinicianColumns + `,
	(SELECT group_concat(role, ',') FROM clinician_roles r WHERE r.username = clinicians.username)
	FROM clinicians`

// CreateClinician inserts c with its roles; ECONFLICT if the username
// exists.
func (db *DB) CreateClinician(ctx context.Context, c *bff.Clinician) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create clinician: %w", err)
	}
	defer tx.Rollback()
	if err := insertClinician(ctx, tx, c); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: create clinician: %w", err)
	}
	return nil
}

// insertClinician inserts c and its roles within tx (CreateClinician's,
// or CreateLinkedClinician's with the link); ECONFLICT if the username
// exists.
func insertClinician(ctx context.Context, tx *sql.Tx, c *bff.Clinician) error {
	hash := c.PasswordHash
	if hash == nil {
		hash = []byte{} // a BLOB, never NULL
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO clinicians (`+clinicianColumns+`) VALUES (?, ?, ?, ?)`,
		c.Username, hash, c.Disabled, formatTime(c.CreatedAt))
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "This username is taken.")
	} else if err != nil {
		return fmt.Errorf("store: create clinician: %w", err)
	}
	if err := insertRoles(ctx, tx, c.Username, c.Roles); err != nil {
		return fmt.Errorf("store: create clinician: %w", err)
	}
	return nil
}

func insertRoles(ctx context.Context, tx *sql.Tx, username string, roles []bff.Role) error {
	for _, r := range bff.NormalRoles(roles) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO clinician_roles (username, role) VALUES (?, ?)`, username, string(r)); err != nil {
			return err
		}
	}
	return nil
}

// SetClinicianRoles replaces an account's roles (unknown ones dropped);
// ENOTFOUND if none.
func (db *DB) SetClinicianRoles(ctx context.Context, username string, roles []bff.Role) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: set clinician roles: %w", err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM clinicians WHERE username = ?`, username).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	} else if err != nil {
		return fmt.Errorf("store: set clinician roles: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM clinician_roles WHERE username = ?`, username); err != nil {
		return fmt.Errorf("store: set clinician roles: %w", err)
	}
	if err := insertRoles(ctx, tx, username, roles); err != nil {
		return fmt.Errorf("store: set clinician roles: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: set clinician roles: %w", err)
	}
	return nil
}

// Clinician returns the account with username (exact match: the service
// normalises case before calling).
func (db *DB) Clinician(ctx context.Context, username string) (*bff.Clinician, error) {
	c, err := scanClinician(db.r.QueryRowContext(ctx, clinicianSelect+` WHERE username = ?`, username))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store: clinician: %w", err)
	}
	return c, nil
}

// Clinicians returns every account ordered by username (byte order).
func (db *DB) Clinicians(ctx context.Context) ([]*bff.Clinician, error) {
	rows, err := db.r.QueryContext(ctx, clinicianSelect+` ORDER BY username`)
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
		roles   sql.NullString
	)
	if err := s.Scan(&c.Username, &c.PasswordHash, &c.Disabled, &created, &roles); err != nil {
		return nil, err
	}
	c.Roles = splitRoles(roles.String)
	var err error
	if c.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	return &c, nil
}

// splitRoles reads a comma-separated list of stored roles in
// bff.NormalRoles order.
func splitRoles(list string) []bff.Role {
	var rs []bff.Role
	for _, r := range strings.Split(list, ",") {
		rs = append(rs, bff.Role(r))
	}
	return bff.NormalRoles(rs)
}
