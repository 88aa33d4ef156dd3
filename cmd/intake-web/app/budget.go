package app

import (
	"context"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// keyBudget is the gate of the key's requests, whichever: the pacer in this
// process (one replica, its journal in SQLite), or the budget every replica
// shares through PostgreSQL.
type keyBudget struct {
	intakeapi.Gate
	// checkQuota is the refusal a call of op would get now for a spent
	// daily quota, spending nothing.
	checkQuota func(ctx context.Context, op intakeapi.Op) error
	// stats reads the queue's depth and today's turns, for the metrics.
	stats func(ctx context.Context) (waiting, turnsUsed int, err error)
	// restore reads back what the last run of this process spent (the
	// window, today's counts, a pause) before anything is sent; nil when the
	// budget is shared and kept in the database already.
	restore func(ctx context.Context) error
}

// statsTimeout bounds a metrics scrape's read of the shared budget.
const statsTimeout = 2 * time.Second
