package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

const clinicianColumns = `username, password_hash, disabled, created_at, totp_secret, totp_step`

// clinicianSelect reads an account with its roles (an array, empty for
// none).
const clinicianSelect = `SELECT ` + clinicianColumns + `,
	ARRAY(SELECT role FROM clinician_roles r WHERE r.username = clinicians.username)
	FROM clinicians`

// CreateClinician inserts c with its roles; ECONFLICT if the username
// exists.
func (db *DB) CreateClinician(ctx context.Context, c *bff.Clinician) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return insertClinician(ctx, tx, c) })
}

// insertClinician inserts c and its roles within tx (CreateClinician's,
// or CreateLinkedClinician's with the link); ECONFLICT if the username
// exists.
func insertClinician(ctx context.Context, tx pgx.Tx, c *bff.Clinician) error {
	hash := c.PasswordHash
	if hash == nil {
		hash = []byte{} // bytea, never NULL
	}
	var secret []byte // NULL for none
	if len(c.TOTPSecret) > 0 {
		secret = c.TOTPSecret
	}
	_, err := tx.Exec(ctx, `INSERT INTO clinicians (`+clinicianColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.Username, hash, c.Disabled, c.CreatedAt, secret, c.TOTPStep)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "This username is taken.")
	} else if err != nil {
		return fmt.Errorf("postgres: create clinician: %w", err)
	}
	if err := insertRoles(ctx, tx, c.Username, c.Roles); err != nil {
		return fmt.Errorf("postgres: create clinician: %w", err)
	}
	return nil
}

func insertRoles(ctx context.Context, tx pgx.Tx, username string, roles []bff.Role) error {
	names := []string{}
	for _, r := range bff.NormalRoles(roles) {
		names = append(names, string(r))
	}
	_, err := tx.Exec(ctx, `INSERT INTO clinician_roles (username, role) SELECT $1, unnest($2::text[])`, username, names)
	return err
}

// SetClinicianRoles replaces an account's roles (unknown ones dropped);
// ENOTFOUND if none.
func (db *DB) SetClinicianRoles(ctx context.Context, username string, roles []bff.Role) error {
	found := true
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// The account's row is locked, so two changes of its roles queue.
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM clinicians WHERE username = $1 FOR UPDATE`, username).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
			found = false
			return nil
		} else if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM clinician_roles WHERE username = $1`, username); err != nil {
			return err
		}
		return insertRoles(ctx, tx, username, roles)
	})
	if err != nil {
		return fmt.Errorf("postgres: set clinician roles: %w", err)
	}
	if !found {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

// Clinician returns the account with username (exact match: the service
// normalises case before calling); ENOTFOUND if none.
func (db *DB) Clinician(ctx context.Context, username string) (*bff.Clinician, error) {
	c, err := scanClinician(db.pool.QueryRow(ctx, clinicianSelect+` WHERE username = $1`, username))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: clinician: %w", err)
	}
	return c, nil
}

// Clinicians returns every account ordered by username (byte order: the
// column's collation is "C").
func (db *DB) Clinicians(ctx context.Context) ([]*bff.Clinician, error) {
	rows, err := db.pool.Query(ctx, clinicianSelect+` ORDER BY username`)
	if err != nil {
		return nil, fmt.Errorf("postgres: clinicians: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.Clinician, error) { return scanClinician(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: clinicians: %w", err)
	}
	return out, nil
}

// SetClinicianDisabled enables or disables an account; ENOTFOUND if none.
func (db *DB) SetClinicianDisabled(ctx context.Context, username string, disabled bool) error {
	tag, err := db.pool.Exec(ctx, `UPDATE clinicians SET disabled = $1 WHERE username = $2`, disabled, username)
	if err != nil {
		return fmt.Errorf("postgres: set clinician disabled: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

// SetClinicianPassword replaces an account's password hash; ENOTFOUND if
// none.
func (db *DB) SetClinicianPassword(ctx context.Context, username string, hash []byte) error {
	tag, err := db.pool.Exec(ctx, `UPDATE clinicians SET password_hash = $1 WHERE username = $2`, hash, username)
	if err != nil {
		return fmt.Errorf("postgres: set clinician password: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

func scanClinician(r pgx.Row) (*bff.Clinician, error) {
	var (
		c     bff.Clinician
		roles []string
	)
	if err := r.Scan(&c.Username, &c.PasswordHash, &c.Disabled, &c.CreatedAt, &c.TOTPSecret, &c.TOTPStep, &roles); err != nil {
		return nil, err
	}
	rs := make([]bff.Role, len(roles))
	for i, r := range roles {
		rs[i] = bff.Role(r)
	}
	c.Roles = bff.NormalRoles(rs)
	c.CreatedAt = utc(c.CreatedAt)
	return &c, nil
}

// SetClinicianTOTP replaces an account's second factor and recovery codes
// together; ENOTFOUND if none.
func (db *DB) SetClinicianTOTP(ctx context.Context, username string, sealed []byte, codes []bff.RecoveryCode) error {
	found := true
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var secret []byte
		if len(sealed) > 0 {
			secret = sealed
		}
		tag, err := tx.Exec(ctx, `UPDATE clinicians SET totp_secret = $1, totp_step = 0 WHERE username = $2`, secret, username)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			found = false
			return nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM clinician_recovery_codes WHERE username = $1`, username); err != nil {
			return err
		}
		if secret == nil {
			return nil
		}
		for _, c := range codes {
			if _, err := tx.Exec(ctx, `INSERT INTO clinician_recovery_codes (username, id, salt, hash) VALUES ($1, $2, $3, $4)`,
				username, c.ID, c.Salt, c.Hash); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: set totp: %w", err)
	}
	if !found {
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	}
	return nil
}

// AdvanceTOTPStep records an accepted step; ECONFLICT for a step not
// after the stored one, ENOTFOUND for no account.
func (db *DB) AdvanceTOTPStep(ctx context.Context, username string, step int64) error {
	tag, err := db.pool.Exec(ctx, `UPDATE clinicians SET totp_step = $1 WHERE username = $2 AND totp_step < $1`, step, username)
	if err != nil {
		return fmt.Errorf("postgres: advance totp step: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := db.Clinician(ctx, username); err != nil {
		return err
	}
	return bff.Errorf(bff.ECONFLICT, "This code was used already.")
}

// RecoveryCodes returns an account's recovery codes by ID.
func (db *DB) RecoveryCodes(ctx context.Context, username string) ([]bff.RecoveryCode, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, salt, hash, used FROM clinician_recovery_codes WHERE username = $1 ORDER BY id`, username)
	if err != nil {
		return nil, fmt.Errorf("postgres: recovery codes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bff.RecoveryCode, error) {
		var c bff.RecoveryCode
		err := r.Scan(&c.ID, &c.Salt, &c.Hash, &c.Used)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: recovery codes: %w", err)
	}
	return out, nil
}

// UseRecoveryCode marks an unused code used; ENOTFOUND otherwise.
func (db *DB) UseRecoveryCode(ctx context.Context, username string, id int) error {
	tag, err := db.pool.Exec(ctx, `UPDATE clinician_recovery_codes SET used = true WHERE username = $1 AND id = $2 AND NOT used`, username, id)
	if err != nil {
		return fmt.Errorf("postgres: use recovery code: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "This recovery code was used already, or is not one of yours.")
	}
	return nil
}

const reviewColumns = `intake_id, clinician, note, reviewed_at`

// AddReview inserts r; ENOTFOUND if the intake does not exist. An intake may
// be reviewed any number of times.
func (db *DB) AddReview(ctx context.Context, r *bff.Review) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO reviews (`+reviewColumns+`) VALUES ($1, $2, $3, $4)`,
		r.IntakeID, r.Clinician, r.Note, r.ReviewedAt)
	if isForeignKey(err) {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if err != nil {
		return fmt.Errorf("postgres: add review: %w", err)
	}
	return nil
}

// Reviews returns an intake's reviews, newest first (by ReviewedAt, then the
// later insert first); none, not ENOTFOUND, for an unknown intake.
func (db *DB) Reviews(ctx context.Context, intakeID string) ([]*bff.Review, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+reviewColumns+` FROM reviews
		WHERE intake_id = $1 ORDER BY reviewed_at DESC, id DESC`, intakeID)
	if err != nil {
		return nil, fmt.Errorf("postgres: reviews: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.Review, error) { return scanReview(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: reviews: %w", err)
	}
	return out, nil
}

// LatestReviews returns the newest review of every reviewed intake, keyed by
// intake id, in one query; ties on ReviewedAt go to the later insert. The map
// is empty, never nil, when nothing was reviewed.
func (db *DB) LatestReviews(ctx context.Context) (map[string]*bff.Review, error) {
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT ON (intake_id) `+reviewColumns+`
		FROM reviews ORDER BY intake_id, reviewed_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("postgres: latest reviews: %w", err)
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.Review, error) { return scanReview(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: latest reviews: %w", err)
	}
	out := make(map[string]*bff.Review, len(rs))
	for _, r := range rs {
		out[r.IntakeID] = r
	}
	return out, nil
}

func scanReview(row pgx.Row) (*bff.Review, error) {
	var r bff.Review
	if err := row.Scan(&r.IntakeID, &r.Clinician, &r.Note, &r.ReviewedAt); err != nil {
		return nil, err
	}
	r.ReviewedAt = utc(r.ReviewedAt)
	return &r, nil
}
