package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

var _ bff.ScenarioRunStore = (*DB)(nil)

// listColumns are runColumns without the suite ('null'): lists do not need it.
var listColumns = strings.Replace(runColumns, "suite,", "'null',", 1)

const runColumns = `id, suite, repeats, label, target, started_by, state, items, played,
	turns_used, estimate, not_before, note, created_at, updated_at, finished_at, release,
	lease_owner, lease_until, suite_name, summary, replay_of, replay_question`

const itemColumns = `run_id, seq, vignette_id, title, repeat, state, encounter_id, turns,
	result, handoff, updated_at, variation`

// notEnded is the SQL test of a run that will play more: the states
// scenario_runs_claim indexes (the CHECK constraint makes it the
// complement of done and cancelled).
const notEnded = `state IN ('queued', 'active', 'waiting')`

// Messages of the scenario store's errors.
const (
	msgRunNotFound  = "Scenario run not found."
	msgItemNotFound = "Scenario item not found."
	msgRunExists    = "A scenario run with this id exists."
	msgRunLost      = "The scenario run is another process's, or it ended."
	msgRunEnded     = "The scenario run has ended."
)

// CreateScenarioRun inserts r and its items in one transaction; an empty
// r.State is stored (and set) as queued, an item's empty State as pending,
// and each item's RunID is set to r.ID. ECONFLICT if r.ID exists.
func (db *DB) CreateScenarioRun(ctx context.Context, r *bff.ScenarioRun, items []*bff.ScenarioItem) (err error) {
	suite, err := json.Marshal(r.Suite)
	if err != nil {
		return fmt.Errorf("store: create scenario run: suite: %w", err)
	}
	summary, err := summaryJSON(r.Summary)
	if err != nil {
		return fmt.Errorf("store: create scenario run: %w", err)
	}
	state := r.State
	if state == "" {
		state = bff.RunQueued
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create scenario run: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	_, err = tx.ExecContext(ctx, `INSERT INTO scenario_runs (`+runColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, string(suite), r.Repeats, r.Label, r.Target, r.StartedBy, string(state), r.Items,
		r.Played, r.TurnsUsed, r.Estimate, nullTime(r.NotBefore), r.Note, formatTime(r.CreatedAt),
		formatTime(r.UpdatedAt), nullTime(r.FinishedAt), r.Release, r.LeaseOwner, nullTime(r.LeaseUntil),
		r.SuiteLabel(), summary, r.ReplayOf, r.ReplayQuestion)
	if isUnique(err) {
		return bff.Errorf(bff.ECONFLICT, msgRunExists)
	} else if err != nil {
		return fmt.Errorf("store: create scenario run: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, `INSERT INTO scenario_items (`+itemColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("store: create scenario run: %w", err)
	}
	defer ins.Close()
	for _, it := range items {
		st := it.State
		if st == "" {
			st = bff.ItemPending
		}
		turns, result, err := itemJSON(it)
		if err != nil {
			return fmt.Errorf("store: create scenario run: %w", err)
		}
		if _, err := ins.ExecContext(ctx, r.ID, it.Seq, it.VignetteID, it.Title, it.Repeat, string(st),
			it.EncounterID, turns, result, blob(it.Handoff), formatTime(it.UpdatedAt), it.Variation); err != nil {
			return fmt.Errorf("store: create scenario run: item %d: %w", it.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: create scenario run: %w", err)
	}
	r.State = state
	for _, it := range items {
		it.RunID = r.ID
		if it.State == "" {
			it.State = bff.ItemPending
		}
	}
	return nil
}

// ScenarioRun returns a run; ENOTFOUND when there is none.
func (db *DB) ScenarioRun(ctx context.Context, id string) (*bff.ScenarioRun, error) {
	r, err := scanRun(db.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM scenario_runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, msgRunNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("store: scenario run: %w", err)
	}
	return r, nil
}

// ScenarioRuns returns runs newest first (by CreatedAt, then id), at most
// limit (0 = all).
func (db *DB) ScenarioRuns(ctx context.Context, limit int) ([]*bff.ScenarioRun, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rs, err := collectRuns(db.r.QueryContext(ctx, `SELECT `+listColumns+` FROM scenario_runs
		ORDER BY created_at DESC, id DESC LIMIT ?`, limit))
	if err != nil {
		return nil, fmt.Errorf("store: scenario runs: %w", err)
	}
	return rs, nil
}

// ClaimScenarioRun leases to owner, until until, the oldest run (by
// CreatedAt, then id) not ended, whose NotBefore is at or before now and
// whose lease is empty or ran out at or before stale; ENOTFOUND when there
// is none. One UPDATE: the single writer makes it atomic, so two claimers
// never share a run.
func (db *DB) ClaimScenarioRun(ctx context.Context, owner string, now, stale, until time.Time) (*bff.ScenarioRun, error) {
	r, err := scanRun(db.w.QueryRowContext(ctx, `UPDATE scenario_runs SET lease_owner = ?, lease_until = ?
		WHERE id = (SELECT id FROM scenario_runs
			WHERE `+notEnded+` AND (not_before IS NULL OR not_before <= ?)
				AND (lease_until IS NULL OR lease_until <= ?)
			ORDER BY created_at, id LIMIT 1)
		RETURNING `+runColumns, owner, formatTime(until), formatTime(now), formatTime(stale)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "No scenario run to play.")
	} else if err != nil {
		return nil, fmt.Errorf("store: claim scenario run: %w", err)
	}
	return r, nil
}

// RenewScenarioLeases extends every lease owner holds on a run not ended
// to until, returning how many.
func (db *DB) RenewScenarioLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE scenario_runs SET lease_until = ?
		WHERE lease_owner = ? AND `+notEnded, formatTime(until), owner)
	if err != nil {
		return 0, fmt.Errorf("store: renew scenario leases: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: renew scenario leases: %w", err)
	}
	return int(n), nil
}

// UpdateScenarioRun writes r's State, NotBefore, Note, UpdatedAt,
// FinishedAt, Release and lease, if owner (not "") holds the run's lease
// and the run has not ended: the check is the UPDATE's own condition.
// ECONFLICT otherwise; ENOTFOUND when there is no such run.
func (db *DB) UpdateScenarioRun(ctx context.Context, r *bff.ScenarioRun, owner string) error {
	summary, err := summaryJSON(r.Summary)
	if err != nil {
		return fmt.Errorf("store: update scenario run: %w", err)
	}
	res, err := db.w.ExecContext(ctx, `UPDATE scenario_runs SET state = ?, not_before = ?, note = ?,
		updated_at = ?, finished_at = ?, release = ?, lease_owner = ?, lease_until = ?, summary = ?
		WHERE id = ? AND lease_owner = ? AND lease_owner <> '' AND `+notEnded,
		string(r.State), nullTime(r.NotBefore), r.Note, formatTime(r.UpdatedAt), nullTime(r.FinishedAt),
		r.Release, r.LeaseOwner, nullTime(r.LeaseUntil), summary, r.ID, owner)
	if err != nil {
		return fmt.Errorf("store: update scenario run: %w", err)
	}
	return runLost(ctx, db.r, res, r.ID, msgRunLost)
}

// CancelScenarioRun ends a run not ended: State cancelled, Note,
// FinishedAt and UpdatedAt at, lease cleared. ENOTFOUND for no such run,
// ECONFLICT when it had ended.
func (db *DB) CancelScenarioRun(ctx context.Context, id, note string, at time.Time) error {
	res, err := db.w.ExecContext(ctx, `UPDATE scenario_runs SET state = 'cancelled', note = ?,
		finished_at = ?, updated_at = ?, lease_owner = '', lease_until = NULL
		WHERE id = ? AND `+notEnded, note, formatTime(at), formatTime(at), id)
	if err != nil {
		return fmt.Errorf("store: cancel scenario run: %w", err)
	}
	return runLost(ctx, db.r, res, id, msgRunEnded)
}

// ScenarioItems returns a run's items in Seq order (none for no such run).
func (db *DB) ScenarioItems(ctx context.Context, runID string) ([]*bff.ScenarioItem, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+itemColumns+` FROM scenario_items
		WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: scenario items: %w", err)
	}
	defer rows.Close()
	var out []*bff.ScenarioItem
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("store: scenario items: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: scenario items: %w", err)
	}
	return out, nil
}

// ScenarioItem returns one item; ENOTFOUND when there is none.
func (db *DB) ScenarioItem(ctx context.Context, runID string, seq int) (*bff.ScenarioItem, error) {
	it, err := scanItem(db.r.QueryRowContext(ctx, `SELECT `+itemColumns+` FROM scenario_items
		WHERE run_id = ? AND seq = ?`, runID, seq))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, msgItemNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("store: scenario item: %w", err)
	}
	return it, nil
}

// PlayingScenarioItems returns a run's items in state playing, in Seq
// order, at most limit (none: an empty slice). The run's rows are found by
// the primary key; a run has at most scenarioruns.MaxItems of them.
func (db *DB) PlayingScenarioItems(ctx context.Context, runID string, limit int) ([]*bff.ScenarioItem, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+itemColumns+` FROM scenario_items
		WHERE run_id = ? AND state = 'playing' ORDER BY seq LIMIT ?`, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: playing scenario items: %w", err)
	}
	defer rows.Close()
	out := []*bff.ScenarioItem{}
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, fmt.Errorf("store: playing scenario items: %w", err)
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: playing scenario items: %w", err)
	}
	return out, nil
}

// SaveScenarioItem writes it's State, EncounterID, Turns, Result, Handoff
// and UpdatedAt and adds turnsSpent to the run's TurnsUsed (and one to its
// Played when the item goes from pending or playing to done or failed), in
// one IMMEDIATE transaction, if owner (not "") holds the run's lease and
// the run has not ended. ECONFLICT otherwise; ENOTFOUND for no such run
// or item (nothing is written).
func (db *DB) SaveScenarioItem(ctx context.Context, it *bff.ScenarioItem, turnsSpent int, owner string) (err error) {
	turns, result, err := itemJSON(it)
	if err != nil {
		return fmt.Errorf("store: save scenario item: %w", err)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: save scenario item: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	res, err := tx.ExecContext(ctx, `UPDATE scenario_runs SET turns_used = turns_used + ?
		WHERE id = ? AND lease_owner = ? AND lease_owner <> '' AND `+notEnded, turnsSpent, it.RunID, owner)
	if err != nil {
		return fmt.Errorf("store: save scenario item: %w", err)
	}
	if err := runLost(ctx, tx, res, it.RunID, msgRunLost); err != nil {
		return err
	}
	// The previous state, read under the writer's lock: nothing writes
	// between it and the item's update.
	var prev string
	err = tx.QueryRowContext(ctx, `SELECT state FROM scenario_items WHERE run_id = ? AND seq = ?`,
		it.RunID, it.Seq).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return bff.Errorf(bff.ENOTFOUND, msgItemNotFound)
	} else if err != nil {
		return fmt.Errorf("store: save scenario item: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE scenario_items SET state = ?, encounter_id = ?, turns = ?,
		result = ?, handoff = ?, updated_at = ? WHERE run_id = ? AND seq = ?`,
		string(it.State), it.EncounterID, turns, result, blob(it.Handoff), formatTime(it.UpdatedAt),
		it.RunID, it.Seq); err != nil {
		return fmt.Errorf("store: save scenario item: %w", err)
	}
	if finishes(bff.ScenarioItemState(prev), it.State) {
		if _, err := tx.ExecContext(ctx, `UPDATE scenario_runs SET played = played + 1 WHERE id = ?`, it.RunID); err != nil {
			return fmt.Errorf("store: save scenario item: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: save scenario item: %w", err)
	}
	return nil
}

// AddScenarioAdjudication appends a, setting a.ID.
func (db *DB) AddScenarioAdjudication(ctx context.Context, a *bff.ScenarioAdjudication) error {
	err := db.w.QueryRowContext(ctx, `INSERT INTO scenario_adjudications
		(vignette_id, verdict, gold, note, by_name, at, base_run, head_run)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		a.VignetteID, string(a.Verdict), string(a.Gold), a.Note, a.By, formatTime(a.At),
		a.BaseRun, a.HeadRun).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("store: add scenario adjudication: %w", err)
	}
	return nil
}

// ScenarioAdjudications returns every adjudication in the order added.
func (db *DB) ScenarioAdjudications(ctx context.Context) ([]*bff.ScenarioAdjudication, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, vignette_id, verdict, gold, note, by_name, at,
		base_run, head_run FROM scenario_adjudications ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: scenario adjudications: %w", err)
	}
	defer rows.Close()
	var out []*bff.ScenarioAdjudication
	for rows.Next() {
		var (
			a                 bff.ScenarioAdjudication
			verdict, gold, at string
		)
		if err := rows.Scan(&a.ID, &a.VignetteID, &verdict, &gold, &a.Note, &a.By, &at,
			&a.BaseRun, &a.HeadRun); err != nil {
			return nil, fmt.Errorf("store: scenario adjudications: %w", err)
		}
		a.Verdict, a.Gold = scenarios.Verdict(verdict), scenarios.Class(gold)
		if a.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("store: scenario adjudications: %w", err)
		}
		out = append(out, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: scenario adjudications: %w", err)
	}
	return out, nil
}

// finishes reports whether an item going from prev to next is one more
// played.
func finishes(prev, next bff.ScenarioItemState) bool {
	return (prev == bff.ItemPending || prev == bff.ItemPlaying) &&
		(next == bff.ItemDone || next == bff.ItemFailed)
}

// queryRower is what the reader pool and a transaction both do.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// runLost turns a conditional update of run id that matched no row into
// ENOTFOUND (no such run) or ECONFLICT with msg.
func runLost(ctx context.Context, q queryRower, res sql.Result, id, msg string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: scenario run: %w", err)
	}
	if n > 0 {
		return nil
	}
	var one int
	err = q.QueryRowContext(ctx, `SELECT 1 FROM scenario_runs WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return bff.Errorf(bff.ENOTFOUND, msgRunNotFound)
	} else if err != nil {
		return fmt.Errorf("store: scenario run: %w", err)
	}
	return bff.Errorf(bff.ECONFLICT, "%s", msg)
}

// itemJSON encodes an item's turns and its result (NULL when nil).
func itemJSON(it *bff.ScenarioItem) (turns string, result any, err error) {
	b, err := json.Marshal(it.Turns)
	if err != nil {
		return "", nil, fmt.Errorf("item %d: turns: %w", it.Seq, err)
	}
	if it.Result == nil {
		return string(b), nil, nil
	}
	rb, err := json.Marshal(it.Result)
	if err != nil {
		return "", nil, fmt.Errorf("item %d: result: %w", it.Seq, err)
	}
	return string(b), string(rb), nil
}

// blob stores a nil slice as NULL (the driver would bind an empty BLOB).
func blob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// nullTime stores a zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// parseNullTime reads a NULL time as the zero time.
func parseNullTime(ns sql.NullString) (time.Time, error) {
	if !ns.Valid {
		return time.Time{}, nil
	}
	return parseTime(ns.String)
}

func collectRuns(rows *sql.Rows, err error) ([]*bff.ScenarioRun, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*bff.ScenarioRun
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRun(s scanner) (*bff.ScenarioRun, error) {
	var (
		r                               bff.ScenarioRun
		suite, state, created, updated  string
		notBefore, finished, leaseUntil sql.NullString
		summary                         sql.NullString
	)
	if err := s.Scan(&r.ID, &suite, &r.Repeats, &r.Label, &r.Target, &r.StartedBy, &state, &r.Items,
		&r.Played, &r.TurnsUsed, &r.Estimate, &notBefore, &r.Note, &created, &updated, &finished,
		&r.Release, &r.LeaseOwner, &leaseUntil, &r.SuiteName, &summary, &r.ReplayOf, &r.ReplayQuestion); err != nil {
		return nil, err
	}
	if summary.Valid {
		if err := json.Unmarshal([]byte(summary.String), &r.Summary); err != nil {
			return nil, fmt.Errorf("bad summary of scenario run %s: %w", r.ID, err)
		}
	}
	r.State = bff.ScenarioRunState(state)
	if err := json.Unmarshal([]byte(suite), &r.Suite); err != nil {
		return nil, fmt.Errorf("bad suite of scenario run %s: %w", r.ID, err)
	}
	var err error
	if r.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if r.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	if r.NotBefore, err = parseNullTime(notBefore); err != nil {
		return nil, err
	}
	if r.FinishedAt, err = parseNullTime(finished); err != nil {
		return nil, err
	}
	if r.LeaseUntil, err = parseNullTime(leaseUntil); err != nil {
		return nil, err
	}
	return &r, nil
}

func scanItem(s scanner) (*bff.ScenarioItem, error) {
	var (
		it                    bff.ScenarioItem
		state, turns, updated string
		result                sql.NullString
	)
	if err := s.Scan(&it.RunID, &it.Seq, &it.VignetteID, &it.Title, &it.Repeat, &state,
		&it.EncounterID, &turns, &result, &it.Handoff, &updated, &it.Variation); err != nil {
		return nil, err
	}
	it.State = bff.ScenarioItemState(state)
	if err := json.Unmarshal([]byte(turns), &it.Turns); err != nil {
		return nil, fmt.Errorf("bad turns of scenario item %s/%d: %w", it.RunID, it.Seq, err)
	}
	if result.Valid {
		if err := json.Unmarshal([]byte(result.String), &it.Result); err != nil {
			return nil, fmt.Errorf("bad result of scenario item %s/%d: %w", it.RunID, it.Seq, err)
		}
	}
	var err error
	if it.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	return &it, nil
}

// summaryJSON is a run's summary as a JSON parameter, nil for none.
func summaryJSON(s *scenarios.Summary) (any, error) {
	if s == nil {
		return nil, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	return string(b), nil
}
