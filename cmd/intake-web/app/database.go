package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/postgres"
	"github.com/clinical-intake/intake-web/bff/sqlite"
)

// database is the store the app runs on, SQLite or PostgreSQL: every store
// interface of the core, and what the composition root needs besides.
type database interface {
	bff.IntakeStore
	bff.TurnStore
	bff.HandoffStore
	bff.ClinicianStore
	bff.ReviewStore
	bff.AuditStore
	bff.SignInFailureStore
	bff.WorklistStore
	bff.TurnQueue
	Secret(ctx context.Context, name string, size int) ([]byte, error)
	Ping(ctx context.Context) error
	ProbeWrite(ctx context.Context) error
	Close() error
}

// sessionStore is scs's store with its cleanup.
type sessionStore interface {
	scs.Store
	StopCleanup()
}

var (
	_ database = (*sqlite.DB)(nil)
	_ database = (*postgres.DB)(nil)
)

// postgresURL reports whether u names a PostgreSQL database.
func postgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// AccountsDB is the app's database as the command line's clinician
// commands use it (OpenDatabase).
type AccountsDB interface {
	bff.ClinicianStore
	bff.AuditStore
	Close() error
}

// OpenDatabase opens the app's database as Open does, for the command
// line's clinician accounts.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (AccountsDB, error) {
	return openDatabase(ctx, cfg, log)
}

// openDatabase opens PostgreSQL when cfg.DatabaseURL is set, else the
// SQLite file at cfg.DatabasePath.
func openDatabase(ctx context.Context, cfg Config, log *slog.Logger) (database, error) {
	if cfg.DatabaseURL != "" {
		db, err := postgres.Open(ctx, cfg.DatabaseURL, log.With("component", "postgres"))
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL (DATABASE_URL): %w", err)
		}
		return db, nil
	}
	db, err := sqlite.Open(ctx, cfg.DatabasePath, log)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", cfg.DatabasePath, err)
	}
	return db, nil
}

// unwritable is the adapter's test of an error for the database refusing
// writes (a full disk, read-only).
func unwritable(db database) func(error) (string, bool) {
	switch db.(type) {
	case *postgres.DB:
		return postgres.Unwritable
	case *sqlite.DB:
		return sqlite.Unwritable
	}
	panic(fmt.Sprintf("app: no test of unwritable errors for %T", db))
}

// newSessionStore keeps sessions in the app's database.
func newSessionStore(db database) sessionStore {
	switch db := db.(type) {
	case *postgres.DB:
		return postgres.NewSessionStoreWithCleanup(db, 10*time.Minute)
	case *sqlite.DB:
		return sqlite.NewSessionStoreWithCleanup(db, 10*time.Minute)
	}
	panic(fmt.Sprintf("app: no session store for %T", db))
}

// replicaName names this process among the replicas: its host and pid,
// unless REPLICA_NAME says otherwise.
func replicaName(cfg Config) string {
	if cfg.ReplicaName != "" {
		return cfg.ReplicaName
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
