package sqlite

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Unwritable reports whether err says the database cannot be written right
// now (its disk is full, the file is read-only, a write failed), with why
// in a few words: not a fault of the request, and it passes once the
// cause does.
func Unwritable(err error) (reason string, ok bool) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary code of an extended one
		case sqlite3.SQLITE_FULL:
			return "disk full", true
		case sqlite3.SQLITE_READONLY:
			return "read-only", true
		case sqlite3.SQLITE_IOERR:
			return "write failed (I/O error)", true
		}
	}
	if errors.Is(err, syscall.ENOSPC) {
		return "disk full", true
	}
	return "", false
}

// ProbeWrite rewrites one row: nil when the database can be written.
func (db *DB) ProbeWrite(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `INSERT INTO write_probe (id, at) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET at = excluded.at`, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("store: probe a write: %w", err)
	}
	return nil
}
