package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

var _ bff.ScenarioRunStore = (*DB)(nil)

// listColumns are runColumns without the suite (null): lists do not need it.
var listColumns = strings.Replace(runColumns, "suite,", "'null'::jsonb,", 1)

const runColumns = `id, suite, repeats, label, target, started_by, state, items, played,
	turns_used, estimate, not_before, note, created_at, updated_at, finished_at, release,
	lease_owner, lease_until, suite_name, summary, replay_of, replay_question`

const itemColumns = `run_id, seq, vignette_id, title, repeat, state, encounter_id, turns,
	result, handoff, updated_at, variation`

// notEnded is the SQL test of a run that will play more: the states
// scenario_runs_claim indexes (the CHECK constraint makes it the
// complement of done and cancelled).
const notEnded = `state IN ('queued', 'active', 'waiting')`

// Messages of the scenario store's errors, as the SQLite store's.
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
func (db *DB) CreateScenarioRun(ctx context.Context, r *bff.ScenarioRun, items []*bff.ScenarioItem) error {
	suite, err := json.Marshal(r.Suite)
	if err != nil {
		return fmt.Errorf("postgres: create scenario run: suite: %w", err)
	}
	summary, err := summaryJSON(r.Summary)
	if err != nil {
		return fmt.Errorf("postgres: create scenario run: %w", err)
	}
	state := r.State
	if state == "" {
		state = bff.RunQueued
	}
	var b pgx.Batch
	b.Queue(`INSERT INTO scenario_runs (`+runColumns+`)
		VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21::jsonb, $22, $23)`,
		r.ID, string(suite), r.Repeats, r.Label, r.Target, r.StartedBy, string(state), r.Items,
		r.Played, r.TurnsUsed, r.Estimate, nullTime(r.NotBefore), r.Note, r.CreatedAt,
		r.UpdatedAt, nullTime(r.FinishedAt), r.Release, r.LeaseOwner, nullTime(r.LeaseUntil), r.SuiteLabel(), summary, r.ReplayOf, r.ReplayQuestion)
	for _, it := range items {
		st := it.State
		if st == "" {
			st = bff.ItemPending
		}
		turns, result, err := itemJSON(it)
		if err != nil {
			return fmt.Errorf("postgres: create scenario run: %w", err)
		}
		b.Queue(`INSERT INTO scenario_items (`+itemColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12)`,
			r.ID, it.Seq, it.VignetteID, it.Title, it.Repeat, string(st), it.EncounterID, turns, result,
			it.Handoff, it.UpdatedAt, it.Variation)
	}
	// One round trip, one transaction: the batch's statements in order.
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, &b).Close() })
	if pe := pgError(err, codeUnique); pe != nil && pe.ConstraintName == "scenario_runs_pkey" {
		return bff.Errorf(bff.ECONFLICT, msgRunExists)
	} else if err != nil {
		return fmt.Errorf("postgres: create scenario run: %w", err)
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
	r, err := scanRun(db.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM scenario_runs WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, msgRunNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("postgres: scenario run: %w", err)
	}
	return r, nil
}

// ScenarioRuns returns runs newest first (by CreatedAt, then id), at most
// limit (0 = all).
func (db *DB) ScenarioRuns(ctx context.Context, limit int) ([]*bff.ScenarioRun, error) {
	var lim *int // NULL: LIMIT ALL
	if limit > 0 {
		lim = &limit
	}
	rows, err := db.pool.Query(ctx, `SELECT `+listColumns+` FROM scenario_runs
		ORDER BY created_at DESC, id DESC LIMIT $1`, lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario runs: %w", err)
	}
	rs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.ScenarioRun, error) { return scanRun(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario runs: %w", err)
	}
	return rs, nil
}

// ClaimScenarioRun leases to owner, until until, the oldest run (by
// CreatedAt, then id) not ended, whose NotBefore is at or before now and
// whose lease is empty or ran out at or before stale; ENOTFOUND when there
// is none. One statement whose row is locked FOR UPDATE SKIP LOCKED: a
// concurrent claimer passes over it, and one that read it before it was
// claimed re-checks the lease on the new row version and leaves it.
func (db *DB) ClaimScenarioRun(ctx context.Context, owner string, now, stale, until time.Time) (*bff.ScenarioRun, error) {
	r, err := scanRun(db.pool.QueryRow(ctx, `UPDATE scenario_runs SET lease_owner = $1, lease_until = $2
		WHERE id = (SELECT id FROM scenario_runs
			WHERE `+notEnded+` AND (not_before IS NULL OR not_before <= $3)
				AND (lease_until IS NULL OR lease_until <= $4)
			ORDER BY created_at, id LIMIT 1
			FOR UPDATE SKIP LOCKED)
		RETURNING `+runColumns, owner, until, now, stale))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, "No scenario run to play.")
	} else if err != nil {
		return nil, fmt.Errorf("postgres: claim scenario run: %w", err)
	}
	return r, nil
}

// RenewScenarioLeases extends every lease owner holds on a run not ended
// to until, returning how many.
func (db *DB) RenewScenarioLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	tag, err := db.pool.Exec(ctx, `UPDATE scenario_runs SET lease_until = $1
		WHERE lease_owner = $2 AND `+notEnded, until, owner)
	if err != nil {
		return 0, fmt.Errorf("postgres: renew scenario leases: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// UpdateScenarioRun writes r's State, NotBefore, Note, UpdatedAt,
// FinishedAt, Release and lease, if owner (not "") holds the run's lease
// and the run has not ended: the check is the UPDATE's own condition, which
// PostgreSQL re-checks on the row a concurrent write left. ECONFLICT
// otherwise; ENOTFOUND when there is no such run.
func (db *DB) UpdateScenarioRun(ctx context.Context, r *bff.ScenarioRun, owner string) error {
	summary, err := summaryJSON(r.Summary)
	if err != nil {
		return fmt.Errorf("postgres: update scenario run: %w", err)
	}
	tag, err := db.pool.Exec(ctx, `UPDATE scenario_runs SET state = $1, not_before = $2, note = $3,
		updated_at = $4, finished_at = $5, release = $6, lease_owner = $7, lease_until = $8, summary = $11::jsonb
		WHERE id = $9 AND lease_owner = $10 AND lease_owner <> '' AND `+notEnded,
		string(r.State), nullTime(r.NotBefore), r.Note, r.UpdatedAt, nullTime(r.FinishedAt),
		r.Release, r.LeaseOwner, nullTime(r.LeaseUntil), r.ID, owner, summary)
	if err != nil {
		return fmt.Errorf("postgres: update scenario run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return runLost(ctx, db.pool, r.ID, msgRunLost)
	}
	return nil
}

// CancelScenarioRun ends a run not ended: State cancelled, Note,
// FinishedAt and UpdatedAt at, lease cleared. ENOTFOUND for no such run,
// ECONFLICT when it had ended.
func (db *DB) CancelScenarioRun(ctx context.Context, id, note string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE scenario_runs SET state = 'cancelled', note = $1,
		finished_at = $2, updated_at = $2, lease_owner = '', lease_until = NULL
		WHERE id = $3 AND `+notEnded, note, at, id)
	if err != nil {
		return fmt.Errorf("postgres: cancel scenario run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return runLost(ctx, db.pool, id, msgRunEnded)
	}
	return nil
}

// ScenarioItems returns a run's items in Seq order (none for no such run).
func (db *DB) ScenarioItems(ctx context.Context, runID string) ([]*bff.ScenarioItem, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+itemColumns+` FROM scenario_items
		WHERE run_id = $1 ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario items: %w", err)
	}
	its, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.ScenarioItem, error) { return scanItem(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario items: %w", err)
	}
	return its, nil
}

// ScenarioItem returns one item; ENOTFOUND when there is none.
func (db *DB) ScenarioItem(ctx context.Context, runID string, seq int) (*bff.ScenarioItem, error) {
	it, err := scanItem(db.pool.QueryRow(ctx, `SELECT `+itemColumns+` FROM scenario_items
		WHERE run_id = $1 AND seq = $2`, runID, seq))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bff.Errorf(bff.ENOTFOUND, msgItemNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("postgres: scenario item: %w", err)
	}
	return it, nil
}

// PlayingScenarioItems returns a run's items in state playing, in Seq
// order, at most limit (none: an empty slice). The run's rows are found by
// the primary key; a run has at most scenarioruns.MaxItems of them.
func (db *DB) PlayingScenarioItems(ctx context.Context, runID string, limit int) ([]*bff.ScenarioItem, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+itemColumns+` FROM scenario_items
		WHERE run_id = $1 AND state = 'playing' ORDER BY seq LIMIT $2`, runID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: playing scenario items: %w", err)
	}
	its, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.ScenarioItem, error) { return scanItem(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: playing scenario items: %w", err)
	}
	return its, nil
}

// SaveScenarioItem writes it's State, EncounterID, Turns, Result, Handoff
// and UpdatedAt and adds turnsSpent to the run's TurnsUsed (and one to its
// Played when the item goes from pending or playing to done or failed), in
// one transaction, if owner (not "") holds the run's lease and the run has
// not ended. ECONFLICT otherwise; ENOTFOUND for no such run or item
// (nothing is written).
//
// The run's row is updated first, under its condition: it stays locked to
// the commit, so a cancel or a takeover waits for this save or this save
// sees it; the item's previous state is then read locked, so two saves of
// one item count it played once.
func (db *DB) SaveScenarioItem(ctx context.Context, it *bff.ScenarioItem, turnsSpent int, owner string) error {
	turns, result, err := itemJSON(it)
	if err != nil {
		return fmt.Errorf("postgres: save scenario item: %w", err)
	}
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE scenario_runs SET turns_used = turns_used + $1
			WHERE id = $2 AND lease_owner = $3 AND lease_owner <> '' AND `+notEnded, turnsSpent, it.RunID, owner)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return runLost(ctx, tx, it.RunID, msgRunLost)
		}
		var prev string
		err = tx.QueryRow(ctx, `SELECT state FROM scenario_items WHERE run_id = $1 AND seq = $2 FOR UPDATE`,
			it.RunID, it.Seq).Scan(&prev)
		if errors.Is(err, pgx.ErrNoRows) {
			return bff.Errorf(bff.ENOTFOUND, msgItemNotFound)
		} else if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE scenario_items SET state = $1, encounter_id = $2, turns = $3::jsonb,
			result = $4::jsonb, handoff = $5, updated_at = $6 WHERE run_id = $7 AND seq = $8`,
			string(it.State), it.EncounterID, turns, result, it.Handoff, it.UpdatedAt, it.RunID, it.Seq); err != nil {
			return err
		}
		if finishes(bff.ScenarioItemState(prev), it.State) {
			if _, err := tx.Exec(ctx, `UPDATE scenario_runs SET played = played + 1 WHERE id = $1`, it.RunID); err != nil {
				return err
			}
		}
		return nil
	})
	var be *bff.Error
	if errors.As(err, &be) {
		return be
	} else if err != nil {
		return fmt.Errorf("postgres: save scenario item: %w", err)
	}
	return nil
}

// AddScenarioAdjudication appends a, setting a.ID.
func (db *DB) AddScenarioAdjudication(ctx context.Context, a *bff.ScenarioAdjudication) error {
	err := db.pool.QueryRow(ctx, `INSERT INTO scenario_adjudications
		(vignette_id, verdict, gold, note, by_name, at, base_run, head_run)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		a.VignetteID, string(a.Verdict), string(a.Gold), a.Note, a.By, a.At,
		a.BaseRun, a.HeadRun).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("postgres: add scenario adjudication: %w", err)
	}
	return nil
}

// ScenarioAdjudications returns every adjudication in the order added.
func (db *DB) ScenarioAdjudications(ctx context.Context) ([]*bff.ScenarioAdjudication, error) {
	rows, err := db.pool.Query(ctx, `SELECT id, vignette_id, verdict, gold, note, by_name, at,
		base_run, head_run FROM scenario_adjudications ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario adjudications: %w", err)
	}
	as, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*bff.ScenarioAdjudication, error) {
		var (
			a             bff.ScenarioAdjudication
			verdict, gold string
		)
		if err := r.Scan(&a.ID, &a.VignetteID, &verdict, &gold, &a.Note, &a.By, &a.At,
			&a.BaseRun, &a.HeadRun); err != nil {
			return nil, err
		}
		a.Verdict, a.Gold, a.At = scenarios.Verdict(verdict), scenarios.Class(gold), utc(a.At)
		return &a, nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: scenario adjudications: %w", err)
	}
	return as, nil
}

// finishes reports whether an item going from prev to next is one more
// played.
func finishes(prev, next bff.ScenarioItemState) bool {
	return (prev == bff.ItemPending || prev == bff.ItemPlaying) &&
		(next == bff.ItemDone || next == bff.ItemFailed)
}

// runLost tells why a conditional update of run id matched no row:
// ENOTFOUND (no such run) or ECONFLICT with msg.
func runLost(ctx context.Context, q querier, id, msg string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM scenario_runs WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return bff.Errorf(bff.ENOTFOUND, msgRunNotFound)
	} else if err != nil {
		return fmt.Errorf("postgres: scenario run: %w", err)
	}
	return bff.Errorf(bff.ECONFLICT, "%s", msg)
}

// itemJSON encodes an item's turns and its result (NULL when nil).
func itemJSON(it *bff.ScenarioItem) (turns string, result *string, err error) {
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
	s := string(rb)
	return string(b), &s, nil
}

// nullTime stores a zero time as NULL.
func nullTime(t time.Time) *time.Time { return leaseTime(t) }

// zeroTime reads a NULL time as the zero time, in UTC.
func zeroTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func scanRun(r pgx.Row) (*bff.ScenarioRun, error) {
	var (
		run                             bff.ScenarioRun
		suite, summary                  []byte
		state                           string
		notBefore, finished, leaseUntil *time.Time
	)
	if err := r.Scan(&run.ID, &suite, &run.Repeats, &run.Label, &run.Target, &run.StartedBy, &state,
		&run.Items, &run.Played, &run.TurnsUsed, &run.Estimate, &notBefore, &run.Note, &run.CreatedAt,
		&run.UpdatedAt, &finished, &run.Release, &run.LeaseOwner, &leaseUntil, &run.SuiteName, &summary, &run.ReplayOf, &run.ReplayQuestion); err != nil {
		return nil, err
	}
	if summary != nil {
		if err := json.Unmarshal(summary, &run.Summary); err != nil {
			return nil, fmt.Errorf("bad summary of scenario run %s: %w", run.ID, err)
		}
	}
	run.State = bff.ScenarioRunState(state)
	if err := json.Unmarshal(suite, &run.Suite); err != nil {
		return nil, fmt.Errorf("bad suite of scenario run %s: %w", run.ID, err)
	}
	run.CreatedAt, run.UpdatedAt = utc(run.CreatedAt), utc(run.UpdatedAt)
	run.NotBefore, run.FinishedAt, run.LeaseUntil = zeroTime(notBefore), zeroTime(finished), zeroTime(leaseUntil)
	return &run, nil
}

func scanItem(r pgx.Row) (*bff.ScenarioItem, error) {
	var (
		it            bff.ScenarioItem
		state         string
		turns, result []byte
	)
	if err := r.Scan(&it.RunID, &it.Seq, &it.VignetteID, &it.Title, &it.Repeat, &state,
		&it.EncounterID, &turns, &result, &it.Handoff, &it.UpdatedAt, &it.Variation); err != nil {
		return nil, err
	}
	it.State = bff.ScenarioItemState(state)
	if err := json.Unmarshal(turns, &it.Turns); err != nil {
		return nil, fmt.Errorf("bad turns of scenario item %s/%d: %w", it.RunID, it.Seq, err)
	}
	if result != nil {
		if err := json.Unmarshal(result, &it.Result); err != nil {
			return nil, fmt.Errorf("bad result of scenario item %s/%d: %w", it.RunID, it.Seq, err)
		}
	}
	it.UpdatedAt = utc(it.UpdatedAt)
	return &it, nil
}

// summaryJSON is a run's summary as a JSON parameter, nil for none.
func summaryJSON(s *scenarios.Summary) (*string, error) {
	if s == nil {
		return nil, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	str := string(b)
	return &str, nil
}
