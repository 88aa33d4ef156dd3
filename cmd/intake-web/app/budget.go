package app

import (
	"context"
	"time"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/pacer"
	"github.com/clinical-intake/intake-web/bff/postgres"
	"github.com/clinical-intake/intake-web/bff/sqlite"
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
}

func (a *App) newBudget() keyBudget {
	cfg := a.cfg
	if pg, ok := a.db.(*postgres.DB); ok {
		b := postgres.NewBudget(pg.Pool(), postgres.BudgetConfig{
			PerMinute: cfg.PacerPerMinute, TurnsPerDay: cfg.TurnsPerDay, IntakesPerDay: cfg.IntakesPerDay,
			Replica: replicaName(cfg), Now: cfg.Now, Logger: a.log.With("component", "budget"),
		})
		return keyBudget{Gate: b, checkQuota: b.CheckQuota, stats: func(ctx context.Context) (int, int, error) {
			s, err := b.Stats(ctx)
			return s.Waiting, s.TurnsUsed, err
		}}
	}
	var journal pacer.Journal
	if db, ok := a.db.(*sqlite.DB); ok {
		journal = db.PacerJournal()
	}
	a.pacer = pacer.New(pacer.Config{
		PerMinute: cfg.PacerPerMinute, TurnsPerDay: cfg.TurnsPerDay, IntakesPerDay: cfg.IntakesPerDay,
		Logger: a.log.With("component", "pacer"), Journal: journal,
	})
	p := a.pacer
	return keyBudget{Gate: p,
		checkQuota: func(_ context.Context, op intakeapi.Op) error { return p.CheckQuota(op) },
		stats: func(context.Context) (int, int, error) {
			s := p.Stats()
			return s.Waiting, s.TurnsUsed, nil
		}}
}

// statsTimeout bounds a metrics scrape's read of the shared budget.
const statsTimeout = 2 * time.Second
