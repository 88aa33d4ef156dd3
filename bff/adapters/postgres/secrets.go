package postgres

import (
	"context"
	"crypto/rand"
	"fmt"
)

// Secret returns the random key stored under name, creating one of size
// bytes on first use. Replicas starting at once get the same key: the insert
// is ignored when another wrote first, and the read comes after. Every error
// is internal.
func (db *DB) Secret(ctx context.Context, name string, size int) ([]byte, error) {
	fresh := make([]byte, size)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, fresh, db.now()); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	var key []byte
	if err := db.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("secret %s: %w", name, err)
	}
	return key, nil
}
