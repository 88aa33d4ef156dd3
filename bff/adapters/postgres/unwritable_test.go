package postgres_test

import (
	"context"
	"testing"

	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
)

// A database that refuses writes (here: read-only by default) fails the
// write probe with an error Unwritable names; reads still work, and once it
// accepts writes again the probe passes.
func TestUnwritable(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	if err := db.ProbeWrite(ctx); err != nil {
		t.Fatalf("probe a writable database: %v", err)
	}
	if _, ok := postgres.Unwritable(context.Canceled); ok {
		t.Fatal("a cancelled context is not the database refusing writes")
	}
	setReadOnly := func(on string) {
		t.Helper()
		var name string
		if err := db.Pool().QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil {
			t.Fatal(err)
		}
		conn, err := db.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SET default_transaction_read_only = off`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `ALTER DATABASE "`+name+`" SET default_transaction_read_only = `+on); err != nil {
			t.Fatal(err)
		}
		db.Pool().Reset() // new connections take the setting
	}
	setReadOnly("on")
	err := db.ProbeWrite(ctx)
	if reason, ok := postgres.Unwritable(err); !ok || reason != "read-only" {
		t.Fatalf("probe a read-only database: %v; Unwritable says %q, %v", err, reason, ok)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("a read-only database still answers: %v", err)
	}
	setReadOnly("off")
	if err := db.ProbeWrite(ctx); err != nil {
		t.Fatalf("probe once writable again: %v", err)
	}
}
