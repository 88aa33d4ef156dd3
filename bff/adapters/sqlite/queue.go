package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

var _ bff.TurnQueue = (*DB)(nil)

// stmts are the hot path's statements, prepared once at Open: a turn's
// creation, its start, its settlement, and the reads of a page.
type stmts struct {
	createTurn, markStreaming, settleTurn, updateIntake *sql.Stmt // on the writer
	intake, turns                                       *sql.Stmt // on the readers
}

func (db *DB) prepare(ctx context.Context) error {
	var err error
	prep := func(on *sql.DB, query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = on.PrepareContext(ctx, query)
		return st
	}
	db.st.createTurn = prep(db.w, `INSERT INTO turns (`+turnColumns+`)
		SELECT ?, COALESCE(MAX(idx), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
		FROM turns WHERE intake_id = ?
		RETURNING idx`)
	db.st.markStreaming = prep(db.w, `UPDATE turns SET status = 'streaming', service_release = ?
		WHERE intake_id = ? AND idx = ? AND status IN ('queued', 'streaming')
		AND (? = '' OR lease_owner = ?)`)
	db.st.settleTurn = prep(db.w, `UPDATE turns SET status = ?, reply = ?, choices = ?,
		terminal = ?, urgent = ?, safety_status = ?, disposition = ?, disposition_label = ?,
		error_code = ?, error_message = ?, service_release = ?, completed_at = ?,
		lease_owner = '', lease_until = NULL
		WHERE intake_id = ? AND idx = ? AND (? = '' OR lease_owner = ?)`)
	db.st.updateIntake = prep(db.w, updateIntakeSQL)
	db.st.intake = prep(db.r, `SELECT `+intakeColumns+` FROM intakes WHERE id = ?`)
	db.st.turns = prep(db.r, `SELECT `+turnColumns+` FROM turns WHERE intake_id = ? ORDER BY idx`)
	if err != nil {
		db.closeStmts()
		return fmt.Errorf("prepare: %w", err)
	}
	return nil
}

func (db *DB) closeStmts() {
	for _, st := range []*sql.Stmt{db.st.createTurn, db.st.markStreaming, db.st.settleTurn,
		db.st.updateIntake, db.st.intake, db.st.turns} {
		if st != nil {
			_ = st.Close()
		}
	}
}

// ClaimStaleTurns leases to owner, until until, at most n pending turns whose
// lease is empty or ran out at or before now, oldest first. One UPDATE: the
// single writer makes it atomic, so two claimers never share a turn.
func (db *DB) ClaimStaleTurns(ctx context.Context, owner string, now, until time.Time, n int) ([]*bff.Turn, error) {
	if n <= 0 {
		return nil, nil
	}
	ts, err := collectTurns(db.w.QueryContext(ctx, `UPDATE turns SET lease_owner = ?, lease_until = ?
		WHERE rowid IN (SELECT rowid FROM turns
			WHERE status IN ('queued', 'streaming') AND (lease_until IS NULL OR lease_until <= ?)
			ORDER BY created_at, rowid LIMIT ?)
		RETURNING `+turnColumns, owner, formatTime(until), formatTime(now), n))
	if err != nil {
		return nil, fmt.Errorf("store: claim stale turns: %w", err)
	}
	// RETURNING has no order of its own.
	slices.SortFunc(ts, func(a, b *bff.Turn) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.IntakeID, b.IntakeID), cmp.Compare(a.Index, b.Index))
	})
	return ts, nil
}

// RenewLeases extends every lease owner holds on a pending turn to until.
func (db *DB) RenewLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE turns SET lease_until = ?
		WHERE lease_owner = ? AND status IN ('queued', 'streaming')`, formatTime(until), owner)
	if err != nil {
		return 0, fmt.Errorf("store: renew leases: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: renew leases: %w", err)
	}
	return int(n), nil
}

// MarkTurnStreaming sets a pending turn streaming with t.Release, if
// t.LeaseOwner holds its lease (or t.LeaseOwner is ""). ECONFLICT when the
// lease is another's or the turn settled; ENOTFOUND when there is no turn.
func (db *DB) MarkTurnStreaming(ctx context.Context, t *bff.Turn) error {
	res, err := db.st.markStreaming.ExecContext(ctx, t.Release, t.IntakeID, t.Index, t.LeaseOwner, t.LeaseOwner)
	if err != nil {
		return fmt.Errorf("store: mark turn streaming: %w", err)
	}
	if err := db.lostLease(ctx, res, t); err != nil {
		return err
	}
	t.Status = bff.TurnStreaming
	return nil
}

// SettleTurn writes t's settled fields (clearing its lease) and, when in is
// not nil, in's mutable fields, in one transaction, if t.LeaseOwner holds
// the lease (or is ""). ECONFLICT when the lease is another's (nothing is
// written); ENOTFOUND when there is no such turn or intake.
func (db *DB) SettleTurn(ctx context.Context, t *bff.Turn, in *bff.Intake) (err error) {
	choices, err := json.Marshal(t.Choices)
	if err != nil {
		return fmt.Errorf("store: settle turn: choices: %w", err)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: settle turn: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	res, err := tx.StmtContext(ctx, db.st.settleTurn).ExecContext(ctx,
		string(t.Status), t.Reply, string(choices), t.Terminal, t.Urgent,
		stringPtr(t.SafetyStatus), stringPtr(t.Disposition), stringPtr(t.DispositionLabel),
		t.ErrorCode, t.ErrorMessage, t.Release, formatTimePtr(t.CompletedAt),
		t.IntakeID, t.Index, t.LeaseOwner, t.LeaseOwner)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, MsgTurnPending)
	} else if err != nil {
		return fmt.Errorf("store: settle turn: %w", err)
	}
	if err := db.lostLease(ctx, res, t); err != nil {
		return err
	}
	if in != nil {
		if err := updateIntake(ctx, tx.StmtContext(ctx, db.st.updateIntake), in); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: settle turn: %w", err)
	}
	t.LeaseOwner, t.LeaseUntil = "", time.Time{}
	return nil
}

// lostLease turns a conditional update that matched no row into ENOTFOUND
// (no such turn) or ECONFLICT (the lease is another's).
func (db *DB) lostLease(ctx context.Context, res sql.Result, t *bff.Turn) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: turn lease: %w", err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = db.r.QueryRowContext(ctx, `SELECT 1 FROM turns WHERE intake_id = ? AND idx = ?`, t.IntakeID, t.Index).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return bff.Errorf(bff.ENOTFOUND, "Turn not found.")
	} else if err != nil {
		return fmt.Errorf("store: turn lease: %w", err)
	}
	return bff.Errorf(bff.ECONFLICT, "Another process took this turn over.")
}
