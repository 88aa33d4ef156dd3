package sqlite_test

import (
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/adapters/storetest"
)

var _ storetest.Stores = (*sqlite.DB)(nil)

func TestStoreSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now bff.Clock) storetest.Stores {
		return sqlitetest.MustOpenDB(t, sqlite.WithClock(now))
	})
}

// go test -run XXX -bench HotPath ./bff/adapters/sqlite/
func BenchmarkHotPath(b *testing.B) {
	db := sqlitetest.MustOpenDB(b)
	storetest.BenchHotPath(b, db)
}
