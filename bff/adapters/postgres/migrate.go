package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Migrations are migrations/NNNN_name.sql, applied in version order, each in
// its own transaction together with its row in schema_migrations. Every
// version not recorded yet is applied, so files written on separate
// branches (budget, worklist) apply whatever order they merge in. An applied
// file is never edited.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLock is the pg_advisory_lock key under which migrations run, so
// replicas starting at once apply each migration once ("intake-web"
// in ASCII).
const migrationLock int64 = 0x696e74616b652d77

type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads fsys's *.sql files in version order, refusing
// duplicate versions and badly named files.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %q: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migration %q: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: m[2], sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("migration %04d: two files", ms[i].version)
		}
	}
	return ms, nil
}

func (db *DB) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		return err
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	defer conn.Release()
	return applyMigrations(ctx, conn.Conn(), db.logger, ms)
}

// applyMigrations applies the migrations of ms not recorded yet, holding
// the session's advisory lock: a second replica waits, then finds them all
// recorded.
func applyMigrations(ctx context.Context, conn *pgx.Conn, logger *slog.Logger, ms []migration) (err error) {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("migrations: lock: %w", err)
	}
	defer func() {
		// A fresh context: the lock must go even when ctx ended, or the
		// pooled connection would keep it.
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock); uerr != nil {
			err = errors.Join(err, fmt.Errorf("migrations: unlock: %w", uerr))
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer     NOT NULL PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	known := map[int]bool{}
	for _, m := range ms {
		known[m.version] = true
	}
	for _, v := range applied {
		if !known[int(v)] {
			logger.Warn("database schema is newer than this binary", slog.Int("unknown_version", int(v)))
			break
		}
	}
	for _, m := range ms {
		if slices.Contains(applied, int32(m.version)) {
			continue
		}
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// No arguments: the simple protocol runs every statement of the file.
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		}); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
		}
		logger.LogAttrs(ctx, slog.LevelInfo, "migration applied",
			slog.Int("version", m.version), slog.String("name", m.name))
	}
	return nil
}
