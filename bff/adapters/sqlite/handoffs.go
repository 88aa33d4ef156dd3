package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
)

// PutHandoff inserts or replaces the handoff of h.IntakeID, keeping h.JSON
// byte for byte. ENOTFOUND when the intake does not exist.
func (db *DB) PutHandoff(ctx context.Context, h *bff.StoredHandoff) error {
	raw := h.JSON
	if raw == nil {
		raw = []byte{} // a BLOB, never NULL
	}
	_, err := db.w.ExecContext(ctx, `INSERT INTO handoffs (intake_id, json, terminal, fetched_at, service_release)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (intake_id) DO UPDATE SET json = excluded.json, terminal = excluded.terminal,
			fetched_at = excluded.fetched_at, service_release = excluded.service_release`,
		h.IntakeID, raw, h.Terminal, formatTime(h.FetchedAt), h.Release)
	if isForeignKey(err) {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if err != nil {
		return fmt.Errorf("store: put handoff: %w", err)
	}
	return nil
}

// Handoff returns the stored handoff of an intake.
func (db *DB) Handoff(ctx context.Context, intakeID string) (*bff.StoredHandoff, error) {
	var (
		h       = bff.StoredHandoff{IntakeID: intakeID}
		fetched string
	)
	err := db.r.QueryRowContext(ctx, `SELECT json, terminal, fetched_at, service_release
		FROM handoffs WHERE intake_id = ?`, intakeID).Scan(&h.JSON, &h.Terminal, &fetched, &h.Release)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Handoff not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store: handoff: %w", err)
	}
	if h.FetchedAt, err = parseTime(fetched); err != nil {
		return nil, fmt.Errorf("store: handoff: %w", err)
	}
	return &h, nil
}
