package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
)

func TestFreshDatabase(t *testing.T) {
	u := pgtest.URL(t)
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("fresh database has %d tables (err %v)", n, err)
	}
}
