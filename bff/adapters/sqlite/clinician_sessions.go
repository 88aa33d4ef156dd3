package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.ClinicianSessionStore = (*DB)(nil)

const clinicianSessionColumns = `id, username, device, address, signed_in_at, last_seen, expires_at`

// AddClinicianSession indexes a signed-in session (replacing one of the
// same token).
func (db *DB) AddClinicianSession(ctx context.Context, token string, s *bff.ClinicianSession) error {
	if _, err := db.w.ExecContext(ctx, `REPLACE INTO clinician_sessions (token, `+clinicianSessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		token, s.ID, s.Username, s.Device, s.Address, formatTime(s.SignedInAt), formatTime(s.LastSeen), formatTime(s.ExpiresAt)); err != nil {
		return fmt.Errorf("store: add clinician session: %w", err)
	}
	return nil
}

// ClinicianSession returns the unexpired indexed session with token.
func (db *DB) ClinicianSession(ctx context.Context, token string, now time.Time) (*bff.ClinicianSession, error) {
	s, err := scanClinicianSession(db.r.QueryRowContext(ctx, `SELECT `+clinicianSessionColumns+`
		FROM clinician_sessions WHERE token = ? AND expires_at > ?`, token, formatTime(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Session not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store: clinician session: %w", err)
	}
	return s, nil
}

// TouchClinicianSession sets a session's last seen time.
func (db *DB) TouchClinicianSession(ctx context.Context, token string, at time.Time) error {
	res, err := db.w.ExecContext(ctx, `UPDATE clinician_sessions SET last_seen = ? WHERE token = ?`, formatTime(at), token)
	if err != nil {
		return fmt.Errorf("store: touch clinician session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: touch clinician session: %w", err)
	} else if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Session not found.")
	}
	return nil
}

// ClinicianSessions returns username's ("" everyone's) unexpired sessions,
// the latest seen first.
func (db *DB) ClinicianSessions(ctx context.Context, username string, now time.Time) ([]*bff.ClinicianSession, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+clinicianSessionColumns+` FROM clinician_sessions
		WHERE (? = '' OR username = ?) AND expires_at > ? ORDER BY last_seen DESC, id`, username, username, formatTime(now))
	if err != nil {
		return nil, fmt.Errorf("store: clinician sessions: %w", err)
	}
	defer rows.Close()
	var out []*bff.ClinicianSession
	for rows.Next() {
		s, err := scanClinicianSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: clinician sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: clinician sessions: %w", err)
	}
	return out, nil
}

// EndClinicianSession removes a session from the index and scs's table,
// together.
func (db *DB) EndClinicianSession(ctx context.Context, id string) (*bff.ClinicianSession, error) {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: end clinician session: %w", err)
	}
	defer tx.Rollback()
	var token string
	s, err := scanClinicianSession(tx.QueryRowContext(ctx, `SELECT `+clinicianSessionColumns+`, token FROM clinician_sessions WHERE id = ?`, id), &token)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "No such session: it may have ended already.")
	} else if err != nil {
		return nil, fmt.Errorf("store: end clinician session: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM clinician_sessions WHERE id = ?`, id); err != nil {
		return nil, fmt.Errorf("store: end clinician session: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token = ?`, token); err != nil {
		return nil, fmt.Errorf("store: end clinician session: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: end clinician session: %w", err)
	}
	return s, nil
}

// RemoveClinicianSession removes a session from the index only.
func (db *DB) RemoveClinicianSession(ctx context.Context, token string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM clinician_sessions WHERE token = ?`, token); err != nil {
		return fmt.Errorf("store: remove clinician session: %w", err)
	}
	return nil
}

// PruneClinicianSessions removes the sessions expired at before.
func (db *DB) PruneClinicianSessions(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM clinician_sessions WHERE expires_at <= ?`, formatTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune clinician sessions: %w", err)
	}
	return res.RowsAffected()
}

func scanClinicianSession(s scanner, extra ...any) (*bff.ClinicianSession, error) {
	var (
		cs                    bff.ClinicianSession
		signedIn, seen, until string
	)
	if err := s.Scan(append([]any{&cs.ID, &cs.Username, &cs.Device, &cs.Address, &signedIn, &seen, &until}, extra...)...); err != nil {
		return nil, err
	}
	var err error
	if cs.SignedInAt, err = parseTime(signedIn); err != nil {
		return nil, err
	}
	if cs.LastSeen, err = parseTime(seen); err != nil {
		return nil, err
	}
	if cs.ExpiresAt, err = parseTime(until); err != nil {
		return nil, err
	}
	return &cs, nil
}
