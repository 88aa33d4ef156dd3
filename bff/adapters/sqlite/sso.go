package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.SSOLinkStore = (*DB)(nil)

// SSOLink returns the username linked to the issuer's subject; ENOTFOUND if
// none.
func (db *DB) SSOLink(ctx context.Context, issuer, subject string) (string, error) {
	var username string
	err := db.r.QueryRowContext(ctx, `SELECT username FROM sso_links WHERE issuer = ? AND subject = ?`, issuer, subject).Scan(&username)
	if errors.Is(err, sql.ErrNoRows) {
		return "", bff.Errorf(bff.ENOTFOUND, "No account is linked to this sign-in.")
	} else if err != nil {
		return "", fmt.Errorf("store: sso link: %w", err)
	}
	return username, nil
}

// LinkSSO links the issuer's subject to the account username; ENOTFOUND for
// no such account, ECONFLICT when either is linked already.
func (db *DB) LinkSSO(ctx context.Context, issuer, subject, username string, at time.Time) error {
	return linkSSO(ctx, db.w, issuer, subject, username, at)
}

func linkSSO(ctx context.Context, ex interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}, issuer, subject, username string, at time.Time) error {
	_, err := ex.ExecContext(ctx, `INSERT INTO sso_links (issuer, subject, username, linked_at) VALUES (?, ?, ?, ?)`,
		issuer, subject, username, formatTime(at))
	switch {
	case isUnique(err):
		return bff.Errorf(bff.ECONFLICT, "This sign-in or this account is linked already.")
	case isForeignKey(err):
		return bff.Errorf(bff.ENOTFOUND, "Clinician not found.")
	case err != nil:
		return fmt.Errorf("store: link sso: %w", err)
	}
	return nil
}

// CreateLinkedClinician inserts c linked to the issuer's subject in one
// transaction; ECONFLICT when the username or the subject is taken.
func (db *DB) CreateLinkedClinician(ctx context.Context, c *bff.Clinician, issuer, subject string) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create linked clinician: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	if err := insertClinician(ctx, tx, c); err != nil {
		return err
	}
	if err := linkSSO(ctx, tx, issuer, subject, c.Username, c.CreatedAt); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: create linked clinician: %w", err)
	}
	return nil
}
