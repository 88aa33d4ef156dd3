package sqlite

import (
	"context"
	"crypto/rand"
	"fmt"
)

// Secret returns the random key stored under name, creating one of size
// bytes on first use. Two processes starting on one file get the same key:
// the insert is ignored when another wrote first, and the read comes after.
func (db *DB) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	fresh := make([]byte, size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, fresh, formatTime(db.now())); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	var key []byte
	if err := db.w.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return key, nil
}
