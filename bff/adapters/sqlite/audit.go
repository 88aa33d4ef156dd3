package sqlite

import (
	"context"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
)

// The audit table is append-only: triggers of migration 0003 refuse UPDATE
// and DELETE, whoever issues them.

const auditColumns = `id, at, actor, action, intake_id, detail`

// AddAudit appends e, setting e.ID (increasing, never reused).
func (db *DB) AddAudit(ctx context.Context, e *bff.AuditEntry) error {
	var id int64
	err := db.w.QueryRowContext(ctx, `INSERT INTO audit (at, actor, action, intake_id, detail)
		VALUES (?, ?, ?, ?, ?) RETURNING id`,
		formatTime(e.At), e.Actor, e.Action, e.IntakeID, e.Detail).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: add audit: %w", err)
	}
	e.ID = id
	return nil
}

// Audit returns entries newest first (by ID, the order of appending): at
// most limit, with ID < before (before <= 0 means from the newest). A limit
// <= 0 returns none. To page, pass the last ID of a page as the next before.
func (db *DB) Audit(ctx context.Context, limit int, before int64) ([]*bff.AuditEntry, error) {
	if limit <= 0 {
		return nil, nil
	}
	query, args := `SELECT `+auditColumns+` FROM audit ORDER BY id DESC LIMIT ?`, []any{limit}
	if before > 0 {
		query, args = `SELECT `+auditColumns+` FROM audit WHERE id < ? ORDER BY id DESC LIMIT ?`, []any{before, limit}
	}
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	defer rows.Close()
	var out []*bff.AuditEntry
	for rows.Next() {
		var (
			e  bff.AuditEntry
			at string
		)
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.IntakeID, &e.Detail); err != nil {
			return nil, fmt.Errorf("store: audit: %w", err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("store: audit: %w", err)
		}
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: audit: %w", err)
	}
	return out, nil
}
