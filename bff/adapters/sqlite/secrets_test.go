package sqlite

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
)

// A secret is made once and read back the same, across reopening the file.
func TestSecretKeptAcrossOpens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	var first []byte
	for i := range 2 {
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		k, err := db.Secret(ctx, "csrf", 32)
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != 32 {
			t.Fatalf("key of %d bytes", len(k))
		}
		if i == 0 {
			first = k
		} else if !bytes.Equal(k, first) {
			t.Fatal("the key changed when the database was opened again")
		}
		other, err := db.Secret(ctx, "other", 32)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(other, k) {
			t.Fatal("two names share a key")
		}
		_ = db.Close()
	}
}
