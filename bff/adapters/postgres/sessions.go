package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5"

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

// SessionStore is an scs store on the sessions table, laid out as
// github.com/alexedwards/scs/pgxstore lays it out, with the API of
// bff/adapters/sqlite's SessionStore (so the composition root uses either): it
// implements scs.CtxStore, logs cleanup failures with slog, and its cleanup
// stops with StopCleanup or when the DB closes. Expiry is the database's
// clock, as in pgxstore.
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
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM sessions WHERE expiry < current_timestamp`)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// FindCtx returns the data of an unexpired session.
func (s *SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var b []byte
	err := s.db.pool.QueryRow(ctx,
		`SELECT data FROM sessions WHERE token = $1 AND current_timestamp < expiry`, token).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("postgres: find session: %w", err)
	}
	return b, true, nil
}

// CommitCtx adds or replaces a session.
func (s *SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if b == nil {
		b = []byte{}
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO sessions (token, data, expiry) VALUES ($1, $2, $3)
		ON CONFLICT (token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`,
		token, b, expiry); err != nil {
		return fmt.Errorf("postgres: commit session: %w", err)
	}
	return nil
}

// DeleteCtx removes a session; a missing token is no error.
func (s *SessionStore) DeleteCtx(ctx context.Context, token string) error {
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM sessions WHERE token = $1`, token); err != nil {
		return fmt.Errorf("postgres: delete session: %w", err)
	}
	return nil
}

// AllCtx returns every unexpired session by token (an empty map if none).
func (s *SessionStore) AllCtx(ctx context.Context) (map[string][]byte, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT token, data FROM sessions WHERE current_timestamp < expiry`)
	if err != nil {
		return nil, fmt.Errorf("postgres: all sessions: %w", err)
	}
	all := make(map[string][]byte)
	var (
		token string
		data  []byte
	)
	if _, err := pgx.ForEachRow(rows, []any{&token, &data}, func() error {
		all[token] = data
		data = nil // ForEachRow reuses the targets; each session keeps its own bytes
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: all sessions: %w", err)
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
