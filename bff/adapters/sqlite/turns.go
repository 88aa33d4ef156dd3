package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff"
)

// The messages of CreateTurn's conflicts; callers may show them (the same
// as bff's, which every store uses).
const (
	MsgDuplicateSubmission = bff.MsgDuplicateSubmission
	MsgTurnPending         = bff.MsgTurnPending
)

const turnColumns = `intake_id, idx, submission_id, message, status, reply, choices,
	terminal, urgent, safety_status, disposition, disposition_label, error_code,
	error_message, service_release, created_at, completed_at, blocking, lease_owner, lease_until`

// CreateTurn inserts t, assigning t.Index (the next index of its intake)
// and t.CreatedAt; an empty t.Status is stored (and set) as queued.
// ECONFLICT when the intake already has a turn with t.SubmissionID
// (MsgDuplicateSubmission) or a pending turn (MsgTurnPending); ENOTFOUND
// when the intake does not exist.
//
// The index is computed inside the INSERT, a single statement: atomic
// whatever else writes. Conflicts are caught by the unique indexes, then
// told apart by looking for the submission (turns are never deleted alone).
func (db *DB) CreateTurn(ctx context.Context, t *bff.Turn) error {
	choices, err := json.Marshal(t.Choices)
	if err != nil {
		return fmt.Errorf("store: create turn: choices: %w", err)
	}
	status := t.Status
	if status == "" {
		status = bff.TurnQueued
	}
	created := db.now().UTC()
	var idx int
	err = db.st.createTurn.QueryRowContext(ctx,
		t.IntakeID, t.SubmissionID, t.Message, string(status), t.Reply, string(choices),
		t.Terminal, t.Urgent, stringPtr(t.SafetyStatus), stringPtr(t.Disposition),
		stringPtr(t.DispositionLabel), t.ErrorCode, t.ErrorMessage, t.Release,
		formatTime(created), formatTimePtr(t.CompletedAt), t.Blocking, t.LeaseOwner,
		leaseTime(t.LeaseUntil), t.IntakeID).Scan(&idx)
	switch {
	case isForeignKey(err):
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	case isUnique(err):
		_, ferr := db.TurnBySubmission(ctx, t.IntakeID, t.SubmissionID)
		switch bff.ErrorCode(ferr) {
		case "":
			return bff.Errorf(bff.ECONFLICT, MsgDuplicateSubmission)
		case bff.ENOTFOUND:
			return bff.Errorf(bff.ECONFLICT, MsgTurnPending)
		default:
			return fmt.Errorf("store: create turn: %w", errors.Join(err, ferr))
		}
	case err != nil:
		return fmt.Errorf("store: create turn: %w", err)
	}
	t.Index, t.CreatedAt, t.Status = idx, created, status
	return nil
}

// Turn returns the turn of an intake at index.
func (db *DB) Turn(ctx context.Context, intakeID string, index int) (*bff.Turn, error) {
	return db.oneTurn(ctx, `SELECT `+turnColumns+` FROM turns WHERE intake_id = ? AND idx = ?`, intakeID, index)
}

// TurnBySubmission finds a turn by its form submission id.
func (db *DB) TurnBySubmission(ctx context.Context, intakeID, submissionID string) (*bff.Turn, error) {
	return db.oneTurn(ctx, `SELECT `+turnColumns+` FROM turns WHERE intake_id = ? AND submission_id = ?`,
		intakeID, submissionID)
}

// Turns returns an intake's turns in order.
func (db *DB) Turns(ctx context.Context, intakeID string) ([]*bff.Turn, error) {
	return collectTurns(db.st.turns.QueryContext(ctx, intakeID))
}

// OpeningMessages returns each intake's first message (its turn 1), by
// intake id; intakes without a turn are absent.
func (db *DB) OpeningMessages(ctx context.Context) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT intake_id, message FROM turns WHERE idx = 1`)
	if err != nil {
		return nil, fmt.Errorf("store: opening messages: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, msg string
		if err := rows.Scan(&id, &msg); err != nil {
			return nil, fmt.Errorf("store: opening messages: %w", err)
		}
		out[id] = msg
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: opening messages: %w", err)
	}
	return out, nil
}

// SetActiveProtocol records an intake's active protocol alone.
func (db *DB) SetActiveProtocol(ctx context.Context, id, protocol string) error {
	res, err := db.w.ExecContext(ctx, `UPDATE intakes SET active_protocol = ? WHERE id = ?`, protocol, id)
	if err != nil {
		return fmt.Errorf("store: set active protocol: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	}
	return nil
}

// PendingTurns returns every queued or streaming turn, oldest first: the
// turns a restart must settle.
func (db *DB) PendingTurns(ctx context.Context) ([]*bff.Turn, error) {
	return db.queryTurns(ctx, `SELECT `+turnColumns+` FROM turns
		WHERE status IN ('queued', 'streaming')
		ORDER BY created_at, rowid`)
}

// UpdateTurn writes the mutable fields of t (status, reply, choices,
// terminal, urgent, state, error, release, completion time, lease), found by
// t.IntakeID and t.Index. ENOTFOUND if there is no such turn; ECONFLICT
// (MsgTurnPending) if it would make a second pending turn of the intake.
func (db *DB) UpdateTurn(ctx context.Context, t *bff.Turn) error {
	choices, err := json.Marshal(t.Choices)
	if err != nil {
		return fmt.Errorf("store: update turn: choices: %w", err)
	}
	res, err := db.w.ExecContext(ctx, `UPDATE turns SET status = ?, reply = ?, choices = ?,
		terminal = ?, urgent = ?, safety_status = ?, disposition = ?, disposition_label = ?,
		error_code = ?, error_message = ?, service_release = ?, completed_at = ?,
		lease_owner = ?, lease_until = ?
		WHERE intake_id = ? AND idx = ?`,
		string(t.Status), t.Reply, string(choices), t.Terminal, t.Urgent,
		stringPtr(t.SafetyStatus), stringPtr(t.Disposition), stringPtr(t.DispositionLabel),
		t.ErrorCode, t.ErrorMessage, t.Release, formatTimePtr(t.CompletedAt),
		t.LeaseOwner, leaseTime(t.LeaseUntil), t.IntakeID, t.Index)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, MsgTurnPending)
	} else if err != nil {
		return fmt.Errorf("store: update turn: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: update turn: %w", err)
	} else if n == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Turn not found.")
	}
	return nil
}

func (db *DB) oneTurn(ctx context.Context, query string, args ...any) (*bff.Turn, error) {
	t, err := scanTurn(db.r.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Turn not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store: turn: %w", err)
	}
	return t, nil
}

func (db *DB) queryTurns(ctx context.Context, query string, args ...any) ([]*bff.Turn, error) {
	return collectTurns(db.r.QueryContext(ctx, query, args...))
}

func collectTurns(rows *sql.Rows, err error) ([]*bff.Turn, error) {
	if err != nil {
		return nil, fmt.Errorf("store: turns: %w", err)
	}
	defer rows.Close()
	var out []*bff.Turn
	for rows.Next() {
		t, err := scanTurn(rows)
		if err != nil {
			return nil, fmt.Errorf("store: turns: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: turns: %w", err)
	}
	return out, nil
}

func scanTurn(s scanner) (*bff.Turn, error) {
	var (
		t                        bff.Turn
		status, choices, created string
		safety, disp, label      sql.NullString
		completed, leaseUntil    sql.NullString
	)
	if err := s.Scan(&t.IntakeID, &t.Index, &t.SubmissionID, &t.Message, &status, &t.Reply,
		&choices, &t.Terminal, &t.Urgent, &safety, &disp, &label, &t.ErrorCode,
		&t.ErrorMessage, &t.Release, &created, &completed, &t.Blocking, &t.LeaseOwner, &leaseUntil); err != nil {
		return nil, err
	}
	t.Status = bff.TurnStatus(status)
	if err := json.Unmarshal([]byte(choices), &t.Choices); err != nil {
		return nil, fmt.Errorf("bad choices of turn %s/%d: %w", t.IntakeID, t.Index, err)
	}
	t.SafetyStatus, t.Disposition, t.DispositionLabel = nullString(safety), nullString(disp), nullString(label)
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if completed.Valid {
		c, err := parseTime(completed.String)
		if err != nil {
			return nil, err
		}
		t.CompletedAt = &c
	}
	if leaseUntil.Valid {
		if t.LeaseUntil, err = parseTime(leaseUntil.String); err != nil {
			return nil, err
		}
	}
	return &t, nil
}

// leaseTime stores a zero lease time as NULL: no lease.
func leaseTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}
