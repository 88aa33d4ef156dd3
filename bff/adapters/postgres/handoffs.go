package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

// PutHandoff inserts or replaces the handoff of h.IntakeID, keeping h.JSON
// byte for byte. ENOTFOUND when the intake does not exist.
func (db *DB) PutHandoff(ctx context.Context, h *bff.StoredHandoff) error {
	raw := h.JSON
	if raw == nil {
		raw = []byte{} // bytea, never NULL
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO handoffs (intake_id, json, terminal, fetched_at, service_release)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (intake_id) DO UPDATE SET json = excluded.json, terminal = excluded.terminal,
			fetched_at = excluded.fetched_at, service_release = excluded.service_release`,
		h.IntakeID, raw, h.Terminal, h.FetchedAt, h.Release)
	if isForeignKey(err) {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if err != nil {
		return fmt.Errorf("postgres: put handoff: %w", err)
	}
	return nil
}

// Handoff returns the stored handoff of an intake; ENOTFOUND if none.
func (db *DB) Handoff(ctx context.Context, intakeID string) (*bff.StoredHandoff, error) {
	h := bff.StoredHandoff{IntakeID: intakeID}
	err := db.pool.QueryRow(ctx, `SELECT json, terminal, fetched_at, service_release
		FROM handoffs WHERE intake_id = $1`, intakeID).Scan(&h.JSON, &h.Terminal, &h.FetchedAt, &h.Release)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Handoff not found.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: handoff: %w", err)
	}
	h.FetchedAt = utc(h.FetchedAt)
	return &h, nil
}
