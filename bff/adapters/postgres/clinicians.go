package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinical-intake/intake-web/bff"
)

const clinicianColumns = `username, password_hash, disabled, created_at`

// CreateClinician inserts c; ECONFLICT if the username exists.
func (db *DB) CreateClinician(ctx context.Context, c *bff.Clinician) error {
	return insertClinician(ctx, db.pool, c)
}

// insertClinician inserts c with ex (the pool or a transaction).
func insertClinician(ctx context.Context, ex interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, c *bff.Clinician) error {
	hash := c.PasswordHash
	if hash == nil {
		hash = []byte{} // bytea, never NULL
	}
	_, err := ex.Exec(ctx, `INSERT INTO clinicians (`+clinicianColumns+`) VALUES ($1, $2, $3, $4)`,
		c.Username, hash, c.Disabled, c.CreatedAt)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, "This username is taken.")
	} else if err != nil {
		return fmt.Errorf("postgres: create clinician: %w", err)
	}
	return nil
}

// Clinician returns the account with username (exact match: the service
// normalises case before calling); ENOTFOUND if none.
func (db *DB) Clinician(ctx context.Context, username string) (*bff.Clinician, error) {
	c, err := scanClinician(db.pool.QueryRow(ctx, `SELECT `+clinicianColumns+`
		FROM clinicians WHERE username = $1`, username))
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
	rows, err := db.pool.Query(ctx, `SELECT `+clinicianColumns+` FROM clinicians ORDER BY username`)
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
	var c bff.Clinician
	if err := r.Scan(&c.Username, &c.PasswordHash, &c.Disabled, &c.CreatedAt); err != nil {
		return nil, err
	}
	c.CreatedAt = utc(c.CreatedAt)
	return &c, nil
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
