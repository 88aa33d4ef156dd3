package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unwritable reports whether err is PostgreSQL refusing to write (its disk
// full, out of resources, a read-only transaction or server), with why in a
// few words: not a fault of the request, and it passes once the cause does.
func Unwritable(err error) (reason string, ok bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "", false
	}
	switch {
	case pe.Code == "53100":
		return "disk full", true
	case pe.Code == "25006":
		return "read-only", true
	case strings.HasPrefix(pe.Code, "53"):
		return "out of resources (" + pe.Code + ")", true
	case pe.Code == "58030":
		return "write failed (I/O error)", true
	}
	return "", false
}

// ProbeWrite rewrites one row: nil when the database can be written.
func (db *DB) ProbeWrite(ctx context.Context) error {
	if _, err := db.pool.Exec(ctx, `INSERT INTO write_probe (id, at) VALUES (1, $1)
		ON CONFLICT (id) DO UPDATE SET at = excluded.at`, time.Now()); err != nil {
		return fmt.Errorf("postgres: probe a write: %w", err)
	}
	return nil
}
