package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

// The audit table is append-only: triggers of migration 0001 refuse UPDATE,
// DELETE and TRUNCATE, whoever issues them.

const auditColumns = `id, at, actor, action, intake_id, detail`

// AddAudit appends e, setting e.ID (increasing, never reused); every error is
// internal.
func (db *DB) AddAudit(ctx context.Context, e *bff.AuditEntry) error {
	var id int64
	err := db.pool.QueryRow(ctx, `INSERT INTO audit (at, actor, action, intake_id, detail)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		e.At, e.Actor, e.Action, e.IntakeID, e.Detail).Scan(&id)
	if err != nil {
		return fmt.Errorf("postgres: add audit: %w", err)
	}
	e.ID = id
	return nil
}

// Audit returns entries newest first (by ID): at most limit, with ID <
// before (before <= 0 means from the newest). A limit <= 0 returns none.
func (db *DB) Audit(ctx context.Context, limit int, before int64) ([]*bff.AuditEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	query, args := `SELECT `+auditColumns+` FROM audit ORDER BY id DESC LIMIT $1`, []any{limit}
	if before > 0 {
		query, args = `SELECT `+auditColumns+` FROM audit WHERE id < $1 ORDER BY id DESC LIMIT $2`, []any{before, limit}
	}
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: audit: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.AuditEntry, error) {
		var e bff.AuditEntry
		err := r.Scan(&e.ID, &e.At, &e.Actor, &e.Action, &e.IntakeID, &e.Detail)
		e.At = utc(e.At)
		return &e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: audit: %w", err)
	}
	return out, nil
}

// AddSignInFailure records one failure of each key at at, in one statement.
func (db *DB) AddSignInFailure(ctx context.Context, at time.Time, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO signin_failures (key, at)
		SELECT k, $2 FROM unnest($1::text[]) WITH ORDINALITY AS u (k, n) ORDER BY n`, keys, at); err != nil {
		return fmt.Errorf("postgres: add sign-in failure: %w", err)
	}
	return nil
}

// SignInFailures returns the times of key's failures after since, oldest
// first.
func (db *DB) SignInFailures(ctx context.Context, key string, since time.Time) ([]time.Time, error) {
	rows, err := db.pool.Query(ctx, `SELECT at FROM signin_failures WHERE key = $1 AND at > $2 ORDER BY at, id`, key, since)
	if err != nil {
		return nil, fmt.Errorf("postgres: sign-in failures: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (time.Time, error) {
		var t time.Time
		err := r.Scan(&t)
		return t.UTC(), err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: sign-in failures: %w", err)
	}
	return out, nil
}

// RemoveSignInFailure deletes one failure of key recorded at exactly at (to
// the microsecond); none is no error.
func (db *DB) RemoveSignInFailure(ctx context.Context, key string, at time.Time) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM signin_failures WHERE id =
		(SELECT id FROM signin_failures WHERE key = $1 AND at = $2 ORDER BY id DESC LIMIT 1)`, key, at); err != nil {
		return fmt.Errorf("postgres: remove sign-in failure: %w", err)
	}
	return nil
}

// ClearSignInFailures deletes every failure of key.
func (db *DB) ClearSignInFailures(ctx context.Context, key string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM signin_failures WHERE key = $1`, key); err != nil {
		return fmt.Errorf("postgres: clear sign-in failures: %w", err)
	}
	return nil
}

// PruneSignInFailures deletes every failure at or before before.
func (db *DB) PruneSignInFailures(ctx context.Context, before time.Time) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM signin_failures WHERE at <= $1`, before); err != nil {
		return fmt.Errorf("postgres: prune sign-in failures: %w", err)
	}
	return nil
}
