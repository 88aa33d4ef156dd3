package postgres_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres/pgtest"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

var _ storetest.Stores = (*postgres.DB)(nil)

// openDB opens a store on a fresh database, closed when t ends.
func openDB(t *testing.T, opts ...postgres.Option) (*postgres.DB, string) {
	t.Helper()
	url := pgtest.URL(t)
	return openURL(t, url, opts...), url
}

func openURL(t *testing.T, url string, opts ...postgres.Option) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now bff.Clock) storetest.Stores {
		db, _ := openDB(t, postgres.WithClock(now))
		return db
	})
}

func TestEventLogSuite(t *testing.T) {
	storetest.RunEventLog(t, func(t *testing.T) bff.TurnEventLog {
		db, _ := openDB(t)
		return db
	})
}

// go test -run XXX -bench HotPath ./bff/adapters/postgres/
func BenchmarkHotPath(b *testing.B) {
	db, err := postgres.Open(context.Background(), pgtest.URL(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	storetest.BenchHotPath(b, db)
}
