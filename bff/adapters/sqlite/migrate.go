package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Migrations are migrations/NNNN_name.sql, applied in version order, each in
// its own transaction together with its row in schema_migrations. A new
// schema change is a new file with the next number; an applied file is never
// edited. Each file runs with foreign keys on, inside a transaction (so it
// must not change PRAGMA foreign_keys or journal_mode); tables are STRICT.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads fsys's *.sql files in version order, refusing gaps,
// duplicates and badly named files.
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
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: expected version %d (no gaps, no duplicates)", m.version, m.name, i+1)
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
	return applyMigrations(ctx, db.w, db.logger, ms)
}

// applyMigrations applies the migrations of ms not yet recorded. Each runs in
// an IMMEDIATE transaction that re-checks the record, so two processes
// starting on one file apply each migration once.
func applyMigrations(ctx context.Context, w *sql.DB, logger *slog.Logger, ms []migration) error {
	if _, err := w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at TEXT    NOT NULL
	) STRICT`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var latest int
	if err := w.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&latest); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if len(ms) > 0 && latest > ms[len(ms)-1].version {
		// A newer binary migrated this file; its additions are unknown here
		// but the older tables are still as this binary expects.
		logger.Warn("database schema is newer than this binary",
			slog.Int("database_version", latest), slog.Int("binary_version", ms[len(ms)-1].version))
	}
	for _, m := range ms {
		if m.version <= latest {
			continue
		}
		applied, err := applyMigration(ctx, w, m)
		if err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.version, m.name, err)
		}
		if applied {
			logger.LogAttrs(ctx, slog.LevelInfo, "migration applied",
				slog.Int("version", m.version), slog.String("name", m.name))
		}
	}
	return nil
}

func applyMigration(ctx context.Context, w *sql.DB, m migration) (applied bool, err error) {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, tx.Commit() // another process was first
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, formatTime(time.Now())); err != nil {
		return false, err
	}
	return true, tx.Commit()
}
