package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
)

// PacerJournal is the pacer's journal in the database (table pacer_journal).
// Its zero value is not usable; get one from DB.PacerJournal.
type PacerJournal struct{ db *DB }

var _ pacer.Journal = PacerJournal{}

// PacerJournal returns the pacer's journal kept in db. (A type of its own,
// not methods of DB: Record, Load and Prune say nothing on a DB.)
func (db *DB) PacerJournal() PacerJournal { return PacerJournal{db: db} }

// Record appends e: one insert on the writer.
func (j PacerJournal) Record(ctx context.Context, e pacer.Entry) error {
	var until any
	if !e.Until.IsZero() {
		until = formatTime(e.Until)
	}
	if _, err := j.db.w.ExecContext(ctx, `INSERT INTO pacer_journal (at, event, quota, until) VALUES (?, ?, ?, ?)`,
		formatTime(e.At), string(e.Event), e.Quota, until); err != nil {
		return fmt.Errorf("store: pacer journal record: %w", err)
	}
	return nil
}

// Load returns the entries recorded at or after since, and those whose
// Until is after since, oldest first (in recording order within an instant).
func (j PacerJournal) Load(ctx context.Context, since time.Time) ([]pacer.Entry, error) {
	s := formatTime(since)
	rows, err := j.db.r.QueryContext(ctx, `SELECT at, event, quota, until FROM pacer_journal
		WHERE at >= ? OR until > ? ORDER BY at, id`, s, s)
	if err != nil {
		return nil, fmt.Errorf("store: pacer journal load: %w", err)
	}
	defer rows.Close()
	var out []pacer.Entry
	for rows.Next() {
		var (
			e         pacer.Entry
			at, event string
			until     sql.NullString
		)
		if err := rows.Scan(&at, &event, &e.Quota, &until); err != nil {
			return nil, fmt.Errorf("store: pacer journal load: %w", err)
		}
		e.Event = pacer.Event(event)
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("store: pacer journal load: %w", err)
		}
		if until.Valid {
			if e.Until, err = parseTime(until.String); err != nil {
				return nil, fmt.Errorf("store: pacer journal load: %w", err)
			}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: pacer journal load: %w", err)
	}
	return out, nil
}

// Prune deletes the entries recorded before before whose Until is not after
// before.
func (j PacerJournal) Prune(ctx context.Context, before time.Time) error {
	b := formatTime(before)
	if _, err := j.db.w.ExecContext(ctx, `DELETE FROM pacer_journal WHERE at < ? AND (until IS NULL OR until <= ?)`, b, b); err != nil {
		return fmt.Errorf("store: pacer journal prune: %w", err)
	}
	return nil
}
