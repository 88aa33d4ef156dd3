package sqlite_test

import "time"

// The SQLite-only tests' own helpers; the rest come from bff/adapters/storetest.

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)

func ptr[T any](v T) *T { return &v }
