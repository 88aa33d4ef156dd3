package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.SignInFailureStore = (*DB)(nil)

// AddSignInFailure records one failure of each key at at, in one transaction.
func (db *DB) AddSignInFailure(ctx context.Context, at time.Time, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: add sign-in failure: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT INTO signin_failures (key, at) VALUES (?, ?)`, k, formatTime(at)); err != nil {
			return fmt.Errorf("store: add sign-in failure: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: add sign-in failure: %w", err)
	}
	return nil
}

// SignInFailures returns the times of key's failures after since, oldest
// first. A read pool connection sees every committed failure (WAL), so a
// limit check sees the one the previous attempt, or its own, just recorded.
func (db *DB) SignInFailures(ctx context.Context, key string, since time.Time) ([]time.Time, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT at FROM signin_failures WHERE key = ? AND at > ? ORDER BY at, id`, key, formatTime(since))
	if err != nil {
		return nil, fmt.Errorf("store: sign-in failures: %w", err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("store: sign-in failures: %w", err)
		}
		t, err := parseTime(s)
		if err != nil {
			return nil, fmt.Errorf("store: sign-in failures: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sign-in failures: %w", err)
	}
	return out, nil
}

// RemoveSignInFailure deletes one failure of key recorded at exactly at.
func (db *DB) RemoveSignInFailure(ctx context.Context, key string, at time.Time) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM signin_failures WHERE id =
		(SELECT id FROM signin_failures WHERE key = ? AND at = ? ORDER BY id DESC LIMIT 1)`, key, formatTime(at)); err != nil {
		return fmt.Errorf("store: remove sign-in failure: %w", err)
	}
	return nil
}

// ClearSignInFailures deletes every failure of key.
func (db *DB) ClearSignInFailures(ctx context.Context, key string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM signin_failures WHERE key = ?`, key); err != nil {
		return fmt.Errorf("store: clear sign-in failures: %w", err)
	}
	return nil
}

// PruneSignInFailures deletes every failure at or before before.
func (db *DB) PruneSignInFailures(ctx context.Context, before time.Time) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM signin_failures WHERE at <= ?`, formatTime(before)); err != nil {
		return fmt.Errorf("store: prune sign-in failures: %w", err)
	}
	return nil
}
