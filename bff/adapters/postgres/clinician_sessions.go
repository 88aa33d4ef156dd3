package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.ClinicianSessionStore = (*DB)(nil)

const clinicianSessionColumns = `id, username, device, address, signed_in_at, last_seen, expires_at`

// AddClinicianSession indexes a signed-in session (replacing one of the
// same token).
func (db *DB) AddClinicianSession(ctx context.Context, token string, s *bff.ClinicianSession) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO clinician_sessions (token, `+clinicianSessionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (token) DO UPDATE SET id = excluded.id, username = excluded.username, device = excluded.device, address = excluded.address,
			signed_in_at = excluded.signed_in_at, last_seen = excluded.last_seen, expires_at = excluded.expires_at`,
		token, s.ID, s.Username, s.Device, s.Address, s.SignedInAt, s.LastSeen, s.ExpiresAt); err != nil {
		return fmt.Errorf("postgres: add clinician session: %w", err)
	}
	return nil
}

// ClinicianSession returns the unexpired indexed session with token.
func (db *DB) ClinicianSession(ctx context.Context, token string, now time.Time) (*bff.ClinicianSession, error) {
	s, err := scanClinicianSession(db.pool.QueryRow(ctx, `SELECT `+clinicianSessionColumns+`
		FROM clinician_sessions WHERE token = $1 AND expires_at > $2`, token, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Session not found.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: clinician session: %w", err)
	}
	return s, nil
}

// TouchClinicianSession sets a session's last seen time.
func (db *DB) TouchClinicianSession(ctx context.Context, token string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE clinician_sessions SET last_seen = $1 WHERE token = $2`, at, token)
	if err != nil {
		return fmt.Errorf("postgres: touch clinician session: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Session not found.")
	}
	return nil
}

// ClinicianSessions returns username's ("" everyone's) unexpired sessions,
// the latest seen first.
func (db *DB) ClinicianSessions(ctx context.Context, username string, now time.Time) ([]*bff.ClinicianSession, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+clinicianSessionColumns+` FROM clinician_sessions
		WHERE ($1 = '' OR username = $1) AND expires_at > $2 ORDER BY last_seen DESC, id`, username, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: clinician sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.ClinicianSession, error) { return scanClinicianSession(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: clinician sessions: %w", err)
	}
	return out, nil
}

// EndClinicianSession removes a session from the index and scs's table,
// together.
func (db *DB) EndClinicianSession(ctx context.Context, id string) (*bff.ClinicianSession, error) {
	var s *bff.ClinicianSession
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var token string
		var err error
		s, err = scanClinicianSession(tx.QueryRow(ctx, `DELETE FROM clinician_sessions WHERE id = $1 RETURNING `+clinicianSessionColumns+`, token`, id), &token)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM sessions WHERE token = $1`, token)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "No such session: it may have ended already.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: end clinician session: %w", err)
	}
	return s, nil
}

// RemoveClinicianSession removes a session from the index only.
func (db *DB) RemoveClinicianSession(ctx context.Context, token string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM clinician_sessions WHERE token = $1`, token); err != nil {
		return fmt.Errorf("postgres: remove clinician session: %w", err)
	}
	return nil
}

// PruneClinicianSessions removes the sessions expired at before.
func (db *DB) PruneClinicianSessions(ctx context.Context, before time.Time) (int64, error) {
	tag, err := db.pool.Exec(ctx, `DELETE FROM clinician_sessions WHERE expires_at <= $1`, before)
	if err != nil {
		return 0, fmt.Errorf("postgres: prune clinician sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

func scanClinicianSession(r pgx.Row, extra ...any) (*bff.ClinicianSession, error) {
	var s bff.ClinicianSession
	if err := r.Scan(append([]any{&s.ID, &s.Username, &s.Device, &s.Address, &s.SignedInAt, &s.LastSeen, &s.ExpiresAt}, extra...)...); err != nil {
		return nil, err
	}
	s.SignedInAt, s.LastSeen, s.ExpiresAt = utc(s.SignedInAt), utc(s.LastSeen), utc(s.ExpiresAt)
	return &s, nil
}
