package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.SSOLinkStore = (*DB)(nil)

// SSOLink returns the username linked to the issuer's subject; ENOTFOUND if
// none.
func (db *DB) SSOLink(ctx context.Context, issuer, subject string) (string, error) {
	var username string
	err := db.pool.QueryRow(ctx, `SELECT username FROM sso_links WHERE issuer = $1 AND subject = $2`, issuer, subject).Scan(&username)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", bff.Errorf(bff.ENOTFOUND, "No account is linked to this sign-in.")
	} else if err != nil {
		return "", fmt.Errorf("postgres: sso link: %w", err)
	}
	return username, nil
}

// LinkSSO links the issuer's subject to the account username; ENOTFOUND for
// no such account, ECONFLICT when either is linked already.
func (db *DB) LinkSSO(ctx context.Context, issuer, subject, username string, at time.Time) error {
	return linkSSO(ctx, db.pool, issuer, subject, username, at)
}

func linkSSO(ctx context.Context, ex interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}, issuer, subject, username string, at time.Time) error {
	_, err := ex.Exec(ctx, `INSERT INTO sso_links (issuer, subject, username, linked_at) VALUES ($1, $2, $3, $4)`,
		issuer, subject, username, at)
	switch {
	case isUnique(err):
		return bff.Errorf(bff.ECONFLICT, "This sign-in or this account is linked already.")
	case isForeignKey(err):
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	case err != nil:
		return fmt.Errorf("postgres: link sso: %w", err)
	}
	return nil
}

// CreateLinkedClinician inserts c linked to the issuer's subject in one
// transaction; ECONFLICT when the username or the subject is taken.
func (db *DB) CreateLinkedClinician(ctx context.Context, c *bff.Clinician, issuer, subject string) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if err := insertClinician(ctx, tx, c); err != nil {
			return err
		}
		return linkSSO(ctx, tx, issuer, subject, c.Username, c.CreatedAt)
	})
}
