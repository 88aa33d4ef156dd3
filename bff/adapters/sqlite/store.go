// Package sqlite is the SQLite adapter of the bff store interfaces
// (bff.Stores: not bff.TurnEventLog, which one process does not need), the pacer's
// journal (DB.PacerJournal, a pacer.Journal) and the home of the scs
// session table. It uses the pure-Go driver modernc.org/sqlite, so the binary
// needs no cgo and no database server.
//
// # Connections
//
// A database file is opened twice: a writer pool of exactly one connection,
// through which every write (and every transaction) goes, and a read pool of
// several query-only connections. SQLite allows one writer at a time anyway;
// queueing writers in database/sql instead of in SQLite's lock means
// concurrent writers in this process wait their turn (honouring their
// context) and never see SQLITE_BUSY, while WAL lets readers run beside the
// writer. busy_timeout still covers another process on the same file.
//
// The writer's transactions begin IMMEDIATE. A caller holding a transaction
// on SQL() must not call the store's methods until it ends: the single writer
// connection is busy.
//
// The hot path's statements (creating, starting and settling a turn, reading
// an intake and its turns) are prepared once at Open; database/sql re-prepares
// them on a reader connection that has not seen them yet.
//
// An in-memory database (":memory:" or "") has one connection for both, as
// separate connections would see separate databases.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/clinical-intake/intake-web/bff"
)

var (
	_ bff.IntakeStore  = (*DB)(nil)
	_ bff.TurnStore    = (*DB)(nil)
	_ bff.HandoffStore = (*DB)(nil)
)

// busyTimeout is how long a connection waits for another process's lock.
const busyTimeout = 10 * time.Second

// DB is an open SQLite store. It is safe for concurrent use.
type DB struct {
	w      *sql.DB // the single writer connection
	r      *sql.DB // query-only readers (== w in memory)
	logger *slog.Logger
	now    bff.Clock
	path   string
	st     stmts

	mu       sync.Mutex
	sessions []*SessionStore // cleanup goroutines stopped on Close
	closed   bool
}

// Option configures Open.
type Option func(*DB)

// WithClock sets the time source of CreateTurn's CreatedAt (default time.Now).
func WithClock(c bff.Clock) Option { return func(db *DB) { db.now = c } }

// Open opens (creating if need be) the SQLite database at path and applies
// every pending migration. path is a file name, or ":memory:" for a private
// in-memory database. logger may be nil.
func Open(ctx context.Context, path string, logger *slog.Logger, opts ...Option) (*DB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db := &DB{logger: logger, now: time.Now, path: path}

	memory := path == "" || path == ":memory:"
	var err error
	if memory {
		db.w, err = sql.Open("sqlite", dsn(":memory:", false))
		if err != nil {
			return nil, fmt.Errorf("store: open %q: %w", path, err)
		}
		db.r = db.w
	} else {
		if db.w, err = sql.Open("sqlite", dsn(path, false)); err != nil {
			return nil, fmt.Errorf("store: open %q: %w", path, err)
		}
		if db.r, err = sql.Open("sqlite", dsn(path, true)); err != nil {
			db.w.Close()
			return nil, fmt.Errorf("store: open %q: %w", path, err)
		}
		n := max(4, runtime.GOMAXPROCS(0))
		db.r.SetMaxOpenConns(n)
		db.r.SetMaxIdleConns(n)
		db.r.SetConnMaxIdleTime(0)
		db.r.SetConnMaxLifetime(0)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxIdleTime(0) // an in-memory database lives in its connection
	db.w.SetConnMaxLifetime(0)

	for _, o := range opts {
		o(db)
	}

	if err := db.w.PingContext(ctx); err != nil {
		db.closePools()
		return nil, fmt.Errorf("store: open %q: %w", path, err)
	}
	if !memory {
		var mode string
		if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			db.closePools()
			return nil, fmt.Errorf("store: open %q: journal mode: %w", path, err)
		}
		if !strings.EqualFold(mode, "wal") {
			db.closePools()
			return nil, fmt.Errorf("store: open %q: journal mode is %q, not WAL", path, mode)
		}
	}
	if err := db.migrate(ctx); err != nil {
		db.closePools()
		return nil, fmt.Errorf("store: open %q: %w", path, err)
	}
	if err := db.prepare(ctx); err != nil {
		db.closePools()
		return nil, fmt.Errorf("store: open %q: %w", path, err)
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "store opened", slog.String("path", path))
	return db, nil
}

// dsn builds the driver's data source name: pragmas run on every new
// connection of the pool.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if path != ":memory:" {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Opaque: path, RawQuery: q.Encode()}
	if path != ":memory:" {
		// Opaque keeps the path as given; escape only what a URI cannot hold.
		u.Opaque = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	}
	return u.String()
}

// SQL returns the writer pool (one connection), for the session store and
// for migrations of other packages. Do not hold a transaction on it while
// calling the store's methods.
func (db *DB) SQL() *sql.DB { return db.w }

// Ping checks both pools.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping writer: %w", err)
	}
	if err := db.r.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping readers: %w", err)
	}
	return nil
}

// Close stops the session stores' cleanup and closes the database. It is
// safe to call more than once.
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
	db.closeStmts()
	err := db.closePools()
	db.logger.Info("store closed", slog.String("path", db.path))
	return err
}

func (db *DB) closePools() error {
	var errR error
	if db.r != db.w {
		errR = db.r.Close()
	}
	return errors.Join(errR, db.w.Close())
}

// Times are stored as fixed-width UTC text: sortable, readable, exact.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: bad time %q: %w", s, err)
	}
	return t.UTC(), nil
}

func formatTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
}

// constraint classifies a constraint violation of err: sqlite3 extended
// codes for UNIQUE, PRIMARY KEY and FOREIGN KEY, or 0.
func constraint(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch c := se.Code(); c {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return c
		}
	}
	return 0
}

func isUnique(err error) bool {
	c := constraint(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

func isForeignKey(err error) bool { return constraint(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY }

// nullString maps a nullable column to *string, keeping NULL apart from ”.
func nullString(ns sql.NullString) *string {
	if !ns.Valid {
		return nil
	}
	s := ns.String
	return &s
}

func stringPtr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
