package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/clinical-intake/intake-web/bff/adapters/sweep"
)

var (
	_ scs.Store            = (*SessionStore)(nil)
	_ scs.CtxStore         = (*SessionStore)(nil)
	_ scs.IterableStore    = (*SessionStore)(nil)
	_ scs.IterableCtxStore = (*SessionStore)(nil)
)

// DefaultSessionCleanup is how often NewSessionStore deletes expired
// sessions.
const DefaultSessionCleanup = 5 * time.Minute

// SessionStore is an scs store on the sessions table, row for row what
// github.com/alexedwards/scs/sqlite3store reads and writes (the two can be
// swapped on one database), with three differences: it implements
// scs.CtxStore, so a request's context reaches the database; it logs cleanup
// failures with slog; and its cleanup goroutine stops when the DB closes.
// Find and All read through the read pool, Commit and Delete write through
// the writer.
type SessionStore struct {
	db     *DB
	logger *slog.Logger
	sweep  *sweep.Sweeper // nil: no cleanup
}

// NewSessionStore returns a session store on db that deletes expired
// sessions every DefaultSessionCleanup.
func NewSessionStore(db *DB) *SessionStore {
	return NewSessionStoreWithCleanup(db, DefaultSessionCleanup)
}

// NewSessionStoreWithCleanup returns a session store on db that deletes
// expired sessions every interval (never if interval <= 0). db.Close stops
// the cleanup; so does StopCleanup.
func NewSessionStoreWithCleanup(db *DB, interval time.Duration) *SessionStore {
	s := &SessionStore{db: db, logger: db.logger.With(slog.String("component", "sessions"))}
	if interval <= 0 {
		return s
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if !db.closed {
		s.sweep = sweep.Every(interval, s.DeleteExpired, s.logger)
		db.sessions = append(db.sessions, s)
	}
	return s
}

// StopCleanup stops the cleanup goroutine and waits for it. It is safe to
// call more than once.
func (s *SessionStore) StopCleanup() { s.sweep.Stop() }

// DeleteExpired deletes the expired sessions now and returns how many;
// the index of clinicians' sessions loses its expired ones too.
func (s *SessionStore) DeleteExpired(ctx context.Context) (int64, error) {
	if _, err := s.db.PruneClinicianSessions(ctx, time.Now()); err != nil {
		return 0, err
	}
	res, err := s.db.w.ExecContext(ctx, `DELETE FROM sessions WHERE expiry < julianday('now')`)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", err)
	}
	return res.RowsAffected()
}

// FindCtx returns the data of an unexpired session.
func (s *SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var b []byte
	err := s.db.r.QueryRowContext(ctx,
		`SELECT data FROM sessions WHERE token = ? AND julianday('now') < expiry`, token).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("store: find session: %w", err)
	}
	return b, true, nil
}

// CommitCtx adds or replaces a session. The expiry is kept to the
// millisecond, as sqlite3store does.
func (s *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if b == nil {
		b = []byte{}
	}
	_, err := s.db.w.ExecContext(ctx, `REPLACE INTO sessions (token, data, expiry) VALUES (?, ?, julianday(?))`,
		token, b, expiry.UTC().Format("2006-01-02T15:04:05.999"))
	if err != nil {
		return fmt.Errorf("store: commit session: %w", err)
	}
	return nil
}

// DeleteCtx removes a session; a missing token is no error.
func (s *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	if _, err := s.db.w.ExecContext(ctx, `DELETE FROM sessions WHERE token = ?`, token); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// AllCtx returns every unexpired session by token (an empty map if none).
func (s *SessionStore) AllCtx(ctx context.Context) (map[string][]byte, error) {
	rows, err := s.db.r.QueryContext(ctx, `SELECT token, data FROM sessions WHERE julianday('now') < expiry`)
	if err != nil {
		return nil, fmt.Errorf("store: all sessions: %w", err)
	}
	defer rows.Close()
	all := make(map[string][]byte)
	for rows.Next() {
		var (
			token string
			data  []byte
		)
		if err := rows.Scan(&token, &data); err != nil {
			return nil, fmt.Errorf("store: all sessions: %w", err)
		}
		all[token] = data
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: all sessions: %w", err)
	}
	return all, nil
}

// Find is FindCtx without a context (scs uses FindCtx).
func (s *SessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit is CommitCtx without a context (scs uses CommitCtx).
func (s *SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete is DeleteCtx without a context (scs uses DeleteCtx).
func (s *SessionStore) Delete(token string) error {
	return s.DeleteCtx(context.Background(), token)
}

// All is AllCtx without a context (scs uses AllCtx).
func (s *SessionStore) All() (map[string][]byte, error) {
	return s.AllCtx(context.Background())
}
