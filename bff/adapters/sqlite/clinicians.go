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

const clinicianColumns = `username, password_hash, disabled, created_at, totp_secret, totp_step`

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
	_, err := tx.ExecContext(ctx, `INSERT INTO clinicians (`+clinicianColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		c.Username, hash, c.Disabled, formatTime(c.CreatedAt), nilIfEmpty(c.TOTPSecret), c.TOTPStep)
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
	if err := s.Scan(&c.Username, &c.PasswordHash, &c.Disabled, &created, &c.TOTPSecret, &c.TOTPStep, &roles); err != nil {
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

// nilIfEmpty is b, or NULL for none.
func nilIfEmpty(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// rowsFound is ENOTFOUND (with what) when res changed no row.
func rowsFound(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

// SetClinicianTOTP replaces an account's second factor and recovery codes
// together; ENOTFOUND if none.
func (db *DB) SetClinicianTOTP(ctx context.Context, username string, sealed []byte, codes []bff.RecoveryCode) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: set totp: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE clinicians SET totp_secret = ?, totp_step = 0 WHERE username = ?`, nilIfEmpty(sealed), username)
	if err != nil {
		return fmt.Errorf("store: set totp: %w", err)
	}
	if err := rowsFound(res, "set totp"); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM clinician_recovery_codes WHERE username = ?`, username); err != nil {
		return fmt.Errorf("store: set totp: %w", err)
	}
	if len(sealed) > 0 {
		for _, c := range codes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO clinician_recovery_codes (username, id, salt, hash) VALUES (?, ?, ?, ?)`,
				username, c.ID, c.Salt, c.Hash); err != nil {
				return fmt.Errorf("store: set totp: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: set totp: %w", err)
	}
	return nil
}

// AdvanceTOTPStep records an accepted step; ECONFLICT for a step not
// after the stored one, ENOTFOUND for no account.
func (db *DB) AdvanceTOTPStep(ctx context.Context, username string, step int64) error {
	res, err := db.w.ExecContext(ctx, `UPDATE clinicians SET totp_step = ? WHERE username = ? AND totp_step < ?`, step, username, step)
	if err != nil {
		return fmt.Errorf("store: advance totp step: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: advance totp step: %w", err)
	} else if n == 1 {
		return nil
	}
	if _, err := db.Clinician(ctx, username); err != nil {
		return err
	}
	return bff.Errorf(bff.ECONFLICT, "This code was used already.")
}

// RecoveryCodes returns an account's recovery codes by ID.
func (db *DB) RecoveryCodes(ctx context.Context, username string) ([]bff.RecoveryCode, error) {
	rows, err := db.w.QueryContext(ctx, `SELECT id, salt, hash, used FROM clinician_recovery_codes WHERE username = ? ORDER BY id`, username)
	if err != nil {
		return nil, fmt.Errorf("store: recovery codes: %w", err)
	}
	defer rows.Close()
	var out []bff.RecoveryCode
	for rows.Next() {
		var c bff.RecoveryCode
		if err := rows.Scan(&c.ID, &c.Salt, &c.Hash, &c.Used); err != nil {
			return nil, fmt.Errorf("store: recovery codes: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: recovery codes: %w", err)
	}
	return out, nil
}

// UseRecoveryCode marks an unused code used; ENOTFOUND otherwise.
func (db *DB) UseRecoveryCode(ctx context.Context, username string, id int) error {
	res, err := db.w.ExecContext(ctx, `UPDATE clinician_recovery_codes SET used = 1 WHERE username = ? AND id = ? AND used = 0`, username, id)
	if err != nil {
		return fmt.Errorf("store: use recovery code: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: use recovery code: %w", err)
	} else if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "This recovery code was used already, or is not one of yours.")
	}
	return nil
}
