// Package postgres is the PostgreSQL adapter of the bff store interfaces
// (bff.Stores and bff.TurnEventLog), for several
// replicas of the app on one database. It keeps the SQLite adapter's error
// contract and messages (bff/adapters/sqlite) method for method.
//
// # Connections and statements
//
// A pgxpool.Pool serves every method. pgx's default query mode is kept: each
// statement is prepared once per connection, on its first use there, and
// its prepared form (and result description) is cached by the connection,
// so the hot path is never re-parsed. Listen uses a connection of its own,
// outside the pool, because a LISTEN belongs to one session.
//
// # Concurrency
//
// Where the SQLite store relies on its single writer, this one relies on
// constraints and row locks: CreateTurn's MAX+1 index may collide with a
// concurrent creation's, which the primary key catches and CreateTurn
// retries; ClaimStaleTurns locks the rows it takes with FOR UPDATE SKIP
// LOCKED, so two replicas never claim the same turn.
//
// Times are stored with microsecond precision: a time read back is the time
// written, truncated to the microsecond.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinical-intake/intake-web/bff"
)

var (
	_ bff.IntakeStore        = (*DB)(nil)
	_ bff.TurnStore          = (*DB)(nil)
	_ bff.HandoffStore       = (*DB)(nil)
	_ bff.ClinicianStore     = (*DB)(nil)
	_ bff.ReviewStore        = (*DB)(nil)
	_ bff.AuditStore         = (*DB)(nil)
	_ bff.SignInFailureStore = (*DB)(nil)
	_ bff.WorklistStore      = (*DB)(nil)
	_ bff.TurnQueue          = (*DB)(nil)
	_ bff.TurnEventLog       = (*DB)(nil)
)

// DB is an open PostgreSQL store. It is safe for concurrent use.
type DB struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	now    bff.Clock
	tracer pgx.QueryTracer

	mu       sync.Mutex
	sessions []*SessionStore // cleanup goroutines stopped on Close
	closed   bool
}

// Option configures Open.
type Option func(*DB)

// WithClock sets the time source of CreateTurn's CreatedAt and of Secret
// (default time.Now).
func WithClock(c bff.Clock) Option { return func(db *DB) { db.now = c } }

// WithTracer traces every statement of the pool's connections (pgx's
// QueryTracer): the hot path's statements are counted with it.
func WithTracer(t pgx.QueryTracer) Option { return func(db *DB) { db.tracer = t } }

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string) and applies every pending migration, once however many
// replicas start at the same time. logger may be nil. The error is internal
// (wrapped), with the URL's password never in it.
func Open(ctx context.Context, url string, logger *slog.Logger, opts ...Option) (*DB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors redact the password.
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db := &DB{logger: logger, now: time.Now}
	for _, o := range opts {
		o(db)
	}
	if db.tracer != nil {
		cfg.ConnConfig.Tracer = db.tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	db.pool = pool
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open %s: %w", cfg.ConnConfig.Host, err)
	}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "store opened",
		slog.String("host", cfg.ConnConfig.Host), slog.String("database", cfg.ConnConfig.Database))
	return db, nil
}

// Pool returns the connection pool, for the packages that keep their own
// tables in this database. Its connections must be released promptly.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Ping checks that the database answers; the error is internal.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Close stops the session stores' cleanup and closes the pool, waiting for
// the connections in use to come back. It is safe to call more than once and
// always returns nil (the error is for io.Closer's sake).
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	sessions := db.sessions
	db.sessions = nil
	db.mu.Unlock()
	for _, s := range sessions {
		s.StopCleanup()
	}
	db.pool.Close()
	db.logger.Info("store closed")
	return nil
}

// SQLSTATE codes this package tells apart.
const (
	codeUnique     = "23505"
	codeForeignKey = "23503"
)

// pgError returns err's PostgreSQL error with code, or nil.
func pgError(err error, code string) *pgconn.PgError {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == code {
		return pe
	}
	return nil
}

func isUnique(err error) bool     { return pgError(err, codeUnique) != nil }
func isForeignKey(err error) bool { return pgError(err, codeForeignKey) != nil }

// utc returns t in UTC: pgx reads timestamptz in the local zone.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// leaseTime stores a zero lease time as NULL: no lease.
func leaseTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
