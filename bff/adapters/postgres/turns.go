package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
)

const turnColumns = `intake_id, idx, submission_id, message, status, reply, choices,
	terminal, urgent, safety_status, disposition, disposition_label, error_code,
	error_message, service_release, created_at, completed_at, blocking, lease_owner, lease_until`

// createTurnRetries bounds CreateTurn's retries after its index collided
// with a concurrent creation's. A collision means that creation committed
// (an insert that fails on another constraint is rolled back, and ours then
// goes ahead), so a creation retries at most once per other creation on
// the same intake: bounded by the turns an intake can have, not by luck.
// Eight was luck: one of 50 creations at once lost eight times in a row
// under load. The bound is only a guard against a bug spinning forever.
const createTurnRetries = 1000

// CreateTurn inserts t, assigning t.Index (the next index of its intake)
// and t.CreatedAt; an empty t.Status is stored (and set) as queued, and
// t.LeaseOwner/t.LeaseUntil as given. ECONFLICT when the intake already has
// a turn with t.SubmissionID (bff.MsgDuplicateSubmission) or a pending turn
// (bff.MsgTurnPending); ENOTFOUND when the intake does not exist.
//
// The index is MAX+1 inside the INSERT. Two creations at once on one
// intake may compute the same index: the primary key refuses the later, which
// then tries again and meets the clash that matters (a pending turn, the same
// submission) or takes the next index.
func (db *DB) CreateTurn(ctx context.Context, t *bff.Turn) error {
	choices, err := json.Marshal(t.Choices)
	if err != nil {
		return fmt.Errorf("postgres: create turn: choices: %w", err)
	}
	status := t.Status
	if status == "" {
		status = bff.TurnQueued
	}
	created := db.now().UTC().Truncate(time.Microsecond)
	var idx int
	for attempt := 0; ; attempt++ {
		err = db.pool.QueryRow(ctx, `INSERT INTO turns (`+turnColumns+`)
			SELECT $1::text, COALESCE(MAX(idx), 0) + 1, $2::text, $3::text, $4::text, $5::text, $6::jsonb,
				$7::boolean, $8::boolean, $9::text, $10::text, $11::text, $12::text, $13::text, $14::text,
				$15::timestamptz, $16::timestamptz, $17::boolean, $18::text, $19::timestamptz
			FROM turns WHERE intake_id = $1
			RETURNING idx`,
			t.IntakeID, t.SubmissionID, t.Message, string(status), t.Reply, string(choices),
			t.Terminal, t.Urgent, t.SafetyStatus, t.Disposition,
			t.DispositionLabel, t.ErrorCode, t.ErrorMessage, t.Release,
			created, t.CompletedAt, t.Blocking, t.LeaseOwner, leaseTime(t.LeaseUntil)).Scan(&idx)
		if pe := pgError(err, codeUnique); pe != nil && pe.ConstraintName == "turns_pkey" && attempt < createTurnRetries {
			continue
		}
		break
	}
	if isForeignKey(err) {
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.")
	} else if pe := pgError(err, codeUnique); pe != nil {
		switch pe.ConstraintName {
		case "turns_submission":
			return bff.Errorf(bff.ECONFLICT, bff.MsgDuplicateSubmission)
		case "turns_one_pending":
			return bff.Errorf(bff.ECONFLICT, bff.MsgTurnPending)
		}
		return fmt.Errorf("postgres: create turn: %w", err)
	} else if err != nil {
		return fmt.Errorf("postgres: create turn: %w", err)
	}
	t.Index, t.CreatedAt, t.Status = idx, created, status
	return nil
}

// Turn returns the turn of an intake at index; ENOTFOUND if none.
func (db *DB) Turn(ctx context.Context, intakeID string, index int) (*bff.Turn, error) {
	return db.oneTurn(ctx, `SELECT `+turnColumns+` FROM turns WHERE intake_id = $1 AND idx = $2`, intakeID, index)
}

// TurnBySubmission finds a turn by its form submission id; ENOTFOUND if none.
func (db *DB) TurnBySubmission(ctx context.Context, intakeID, submissionID string) (*bff.Turn, error) {
	return db.oneTurn(ctx, `SELECT `+turnColumns+` FROM turns WHERE intake_id = $1 AND submission_id = $2`,
		intakeID, submissionID)
}

// Turns returns an intake's turns in order (none for an unknown intake).
func (db *DB) Turns(ctx context.Context, intakeID string) ([]*bff.Turn, error) {
	return db.queryTurns(ctx, `SELECT `+turnColumns+` FROM turns WHERE intake_id = $1 ORDER BY idx`, intakeID)
}

// PendingTurns returns every queued or streaming turn, oldest first.
func (db *DB) PendingTurns(ctx context.Context) ([]*bff.Turn, error) {
	return db.queryTurns(ctx, `SELECT `+turnColumns+` FROM turns
		WHERE status IN ('queued', 'streaming')
		ORDER BY created_at, seq`)
}

// OpeningMessages returns each intake's first message (its turn 1), by
// intake id; intakes without a turn are absent.
func (db *DB) OpeningMessages(ctx context.Context) (map[string]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT intake_id, message FROM turns WHERE idx = 1`)
	if err != nil {
		return nil, fmt.Errorf("postgres: opening messages: %w", err)
	}
	out := map[string]string{}
	var id, msg string
	if _, err := pgx.ForEachRow(rows, []any{&id, &msg}, func() error {
		out[id] = msg
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: opening messages: %w", err)
	}
	return out, nil
}

// UpdateTurn writes the mutable fields of t (status, reply, choices,
// terminal, urgent, state, error, release, completion time, lease), found by
// t.IntakeID and t.Index. ENOTFOUND if there is no such turn; ECONFLICT
// (bff.MsgTurnPending) if it would make a second pending turn of the intake.
func (db *DB) UpdateTurn(ctx context.Context, t *bff.Turn) error {
	choices, err := json.Marshal(t.Choices)
	if err != nil {
		return fmt.Errorf("postgres: update turn: choices: %w", err)
	}
	tag, err := db.pool.Exec(ctx, `UPDATE turns SET status = $1, reply = $2, choices = $3::jsonb,
		terminal = $4, urgent = $5, safety_status = $6, disposition = $7, disposition_label = $8,
		error_code = $9, error_message = $10, service_release = $11, completed_at = $12,
		lease_owner = $13, lease_until = $14
		WHERE intake_id = $15 AND idx = $16`,
		string(t.Status), t.Reply, string(choices), t.Terminal, t.Urgent,
		t.SafetyStatus, t.Disposition, t.DispositionLabel,
		t.ErrorCode, t.ErrorMessage, t.Release, t.CompletedAt,
		t.LeaseOwner, leaseTime(t.LeaseUntil), t.IntakeID, t.Index)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, bff.MsgTurnPending)
	} else if err != nil {
		return fmt.Errorf("postgres: update turn: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return bff.Errorf(bff.ENOTFOUND, "Turn not found.")
	}
	return nil
}

// ClaimStaleTurns leases to owner, until until, at most n pending turns whose
// lease is empty or ran out at or before now, oldest first. The rows are
// locked FOR UPDATE SKIP LOCKED: a concurrent claimer passes over them, and
// one that read them before they were claimed re-checks the lease on the
// new row version and leaves them.
func (db *DB) ClaimStaleTurns(ctx context.Context, owner string, now, until time.Time, n int) ([]*bff.Turn, error) {
	if n <= 0 {
		return nil, nil
	}
	ts, err := db.queryTurns(ctx, `UPDATE turns SET lease_owner = $1, lease_until = $2
		WHERE (intake_id, idx) IN (SELECT intake_id, idx FROM turns
			WHERE status IN ('queued', 'streaming') AND (lease_until IS NULL OR lease_until <= $3)
			ORDER BY created_at, seq LIMIT $4
			FOR UPDATE SKIP LOCKED)
		RETURNING `+turnColumns, owner, until, now, n)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim stale turns: %w", err)
	}
	sortTurns(ts)
	return ts, nil
}

// sortTurns orders claimed turns oldest first: RETURNING has no order of
// its own.
func sortTurns(ts []*bff.Turn) {
	slices.SortFunc(ts, func(a, b *bff.Turn) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.IntakeID, b.IntakeID), cmp.Compare(a.Index, b.Index))
	})
}

// RenewLeases extends every lease owner holds on a pending turn to until,
// returning how many.
func (db *DB) RenewLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE turns SET lease_until = $1
		WHERE lease_owner = $2 AND status IN ('queued', 'streaming')`, until, owner)
	if err != nil {
		return 0, fmt.Errorf("postgres: renew leases: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// MarkTurnStreaming sets a pending turn streaming with t.Release, if
// t.LeaseOwner holds its lease (or t.LeaseOwner is ""). ECONFLICT when the
// lease is another's or the turn settled; ENOTFOUND when there is no turn.
func (db *DB) MarkTurnStreaming(ctx context.Context, t *bff.Turn) error {
	tag, err := db.pool.Exec(ctx, `UPDATE turns SET status = 'streaming', service_release = $1
		WHERE intake_id = $2 AND idx = $3 AND status IN ('queued', 'streaming')
		AND ($4::text = '' OR lease_owner = $4)`, t.Release, t.IntakeID, t.Index, t.LeaseOwner)
	if err != nil {
		return fmt.Errorf("postgres: mark turn streaming: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return lostLease(ctx, db.pool, t)
	}
	t.Status = bff.TurnStreaming
	return nil
}

// SettleTurn writes t's settled fields (clearing its lease) and, when in is
// not nil, in's mutable fields, in one transaction, if t.LeaseOwner holds
// the lease (or is ""). ECONFLICT when the lease is another's (nothing is
// written); ENOTFOUND when there is no such turn or intake.
func (db *DB) SettleTurn(ctx context.Context, t *bff.Turn, in *bff.Intake) error {
	choices, err := json.Marshal(t.Choices)
	if err != nil {
		return fmt.Errorf("postgres: settle turn: choices: %w", err)
	}
	// One statement, both rows or neither: the hot path's fourth (see
	// docs/benchmarks.md). The intake is written only when the turn was,
	// and its active protocol only when the turn knows one (a clinician's
	// read may have recorded a newer one meanwhile).
	withIntake := in != nil
	if in == nil {
		in = &bff.Intake{}
	}
	var turns, intakes, exists int
	err = db.pool.QueryRow(ctx, `WITH t AS (
			UPDATE turns SET status = $1, reply = $2, choices = $3::jsonb,
			terminal = $4, urgent = $5, safety_status = $6, disposition = $7, disposition_label = $8,
			error_code = $9, error_message = $10, service_release = $11, completed_at = $12,
			lease_owner = '', lease_until = NULL
			WHERE intake_id = $13 AND idx = $14 AND ($15::text = '' OR lease_owner = $15)
			AND (NOT $16::boolean OR EXISTS (SELECT 1 FROM intakes WHERE id = $32))
			RETURNING 1),
		i AS (
			UPDATE intakes SET expires_at = $17, updated_at = $18,
			status = $19, turn_count = $20, terminal = $21, urgent = $22, safety_status = $23, disposition = $24,
			disposition_label = $25, active_protocol = COALESCE(NULLIF($26, ''), active_protocol),
			age_years = $27, sex = $28, history = $29, service_release = $30, encounter_id = $31
			WHERE id = $32 AND $16::boolean AND EXISTS (SELECT 1 FROM t)
			RETURNING 1)
		SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM i), (SELECT count(*) FROM intakes WHERE id = $32)`,
		string(t.Status), t.Reply, string(choices), t.Terminal, t.Urgent,
		t.SafetyStatus, t.Disposition, t.DispositionLabel,
		t.ErrorCode, t.ErrorMessage, t.Release, t.CompletedAt,
		t.IntakeID, t.Index, t.LeaseOwner, withIntake,
		in.ExpiresAt, in.UpdatedAt, in.Status, in.TurnCount, in.Terminal,
		in.Urgent, in.SafetyStatus, in.Disposition, in.DispositionLabel, in.ActiveProtocol,
		in.AgeYears, in.Sex, in.History, in.Release, in.EncounterID, in.ID).Scan(&turns, &intakes, &exists)
	switch {
	case isUnique(err):
		return bff.Errorf(bff.ECONFLICT, "Another intake has this encounter.")
	case err != nil:
		return fmt.Errorf("postgres: settle turn: %w", err)
	case withIntake && exists == 0:
		return bff.Errorf(bff.ENOTFOUND, "Intake not found.") // and the turn was not written
	case turns == 0:
		return lostLease(ctx, db.pool, t)
	}
	t.LeaseOwner, t.LeaseUntil = "", time.Time{}
	return nil
}

// querier is what a pool and a transaction both do.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lostLease tells why a conditional update of t matched no row: ENOTFOUND
// (no such turn) or ECONFLICT (the lease is another's, or it settled).
func lostLease(ctx context.Context, q querier, t *bff.Turn) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM turns WHERE intake_id = $1 AND idx = $2`, t.IntakeID, t.Index).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return bff.Errorf(bff.ENOTFOUND, "Turn not found.")
	} else if err != nil {
		return fmt.Errorf("postgres: turn lease: %w", err)
	}
	return bff.Errorf(bff.ECONFLICT, "Another process took this turn over.")
}

func (db *DB) oneTurn(ctx context.Context, query string, args ...any) (*bff.Turn, error) {
	t, err := scanTurn(db.pool.QueryRow(ctx, query, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "Turn not found.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: turn: %w", err)
	}
	return t, nil
}

func (db *DB) queryTurns(ctx context.Context, query string, args ...any) ([]*bff.Turn, error) {
	rows, err := db.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: turns: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.Turn, error) { return scanTurn(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: turns: %w", err)
	}
	return out, nil
}

func scanTurn(r pgx.Row) (*bff.Turn, error) {
	var (
		t          bff.Turn
		status     string
		choices    []byte
		leaseUntil *time.Time
	)
	if err := r.Scan(&t.IntakeID, &t.Index, &t.SubmissionID, &t.Message, &status, &t.Reply,
		&choices, &t.Terminal, &t.Urgent, &t.SafetyStatus, &t.Disposition, &t.DispositionLabel, &t.ErrorCode,
		&t.ErrorMessage, &t.Release, &t.CreatedAt, &t.CompletedAt, &t.Blocking, &t.LeaseOwner, &leaseUntil); err != nil {
		return nil, err
	}
	t.Status = bff.TurnStatus(status)
	if err := json.Unmarshal(choices, &t.Choices); err != nil {
		return nil, fmt.Errorf("bad choices of turn %s/%d: %w", t.IntakeID, t.Index, err)
	}
	t.CreatedAt, t.CompletedAt = utc(t.CreatedAt), utcPtr(t.CompletedAt)
	if leaseUntil != nil {
		t.LeaseUntil = leaseUntil.UTC()
	}
	return &t, nil
}
