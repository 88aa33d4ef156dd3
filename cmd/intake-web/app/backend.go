package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
)

// backend is the store the app runs on and everything that follows from
// which one it is, decided once, in openBackend: the stores, the session
// store, the key's budget, the test of a write refused for lack of space,
// and, with PostgreSQL, the state shared with other replicas (the turn
// event log, the notifications and their listener). Nothing else in the
// app asks which database it has.
type backend struct {
	database
	// sessions keeps the identity sessions in the same database; its
	// cleanup runs from when it is made (the app's assembly, not the
	// command line's account commands).
	sessions func() sessionStore
	// unwritable says whether an error is the database refusing writes
	// (a full disk, read-only), and why.
	unwritable func(error) (string, bool)
	// budget builds the gate of the key's requests: the pacer in this
	// process, or the budget every replica shares.
	budget func() keyBudget
	// shared is nil when this process is the only one (SQLite).
	shared *sharedState
}

// database is every store interface of the core and what the composition
// root needs besides.
type database interface {
	bff.Stores
	Secret(ctx context.Context, name string, size int) ([]byte, error)
	Ping(ctx context.Context) error
	ProbeWrite(ctx context.Context) error
	Close() error
}

// sharedState is what replicas sharing one PostgreSQL use besides the
// stores.
type sharedState struct {
	events              bff.TurnEventLog
	presence            bff.ReplicaPresence
	notifyIntakeChanged func(context.Context, []byte) error
	listen              func(context.Context, postgres.Notifications) error
	pruneEvents         func(ctx context.Context, before time.Time) (int64, error)
}

// sessionStore is scs's store with its cleanup.
type sessionStore interface {
	scs.Store
	StopCleanup()
}

var (
	_ database = (*sqlite.DB)(nil)
	_ database = (*postgres.DB)(nil)
)

// postgresURL reports whether u names a PostgreSQL database.
func postgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// AccountsDB is the app's database as the command line's clinician
// commands and its readings export and import use it (OpenDatabase).
type AccountsDB interface {
	bff.ClinicianStore
	bff.AuditStore
	bff.SignInFailureStore // the running app's: unlock and passwd lift its locks
	bff.ScenarioRunStore   // intake-web scenarios readings export|import
	bff.SSOLinkStore       // intake-web clinician link
	bff.SafetyStore        // intake-web safety
	Close() error
}

// OpenDatabase opens the app's database as Open does, for the command
// line's clinician accounts.
func OpenDatabase(ctx context.Context, cfg Config, log *slog.Logger) (AccountsDB, error) {
	b, err := openBackend(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	return b.database, nil
}

// openBackend opens PostgreSQL when cfg.DatabaseURL is set, else the
// SQLite file at cfg.DatabasePath, with everything that depends on which.
func openBackend(ctx context.Context, cfg Config, log *slog.Logger) (*backend, error) {
	if cfg.DatabaseURL != "" {
		db, err := postgres.Open(ctx, cfg.DatabaseURL, log.With("component", "postgres"))
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL (DATABASE_URL): %w", err)
		}
		return &backend{
			database:   db,
			sessions:   func() sessionStore { return postgres.NewSessionStoreWithCleanup(db, 10*time.Minute) },
			unwritable: postgres.Unwritable,
			budget: func() keyBudget {
				b := postgres.NewBudget(db.Pool(), postgres.BudgetConfig{Rules: cfg.KeyRules(), Replica: replicaName(cfg), Now: cfg.Now, Logger: log.With("component", "budget")})
				return keyBudget{Gate: b, checkQuota: b.CheckQuota, stats: func(ctx context.Context) (int, int, error) {
					s, err := b.Stats(ctx)
					return s.Waiting, s.TurnsUsed, err
				}}
			},
			shared: &sharedState{events: db, presence: db, notifyIntakeChanged: db.NotifyIntakeChanged, listen: db.Listen, pruneEvents: db.PruneTurnEvents},
		}, nil
	}
	db, err := sqlite.Open(ctx, cfg.DatabasePath, log)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", cfg.DatabasePath, err)
	}
	return &backend{
		database:   db,
		sessions:   func() sessionStore { return sqlite.NewSessionStoreWithCleanup(db, 10*time.Minute) },
		unwritable: sqlite.Unwritable,
		budget: func() keyBudget {
			p := pacer.New(pacer.Config{Rules: cfg.KeyRules(), Logger: log.With("component", "pacer"), Journal: db.PacerJournal()})
			return keyBudget{Gate: p,
				checkQuota: func(_ context.Context, op intakeapi.Op) error { return p.CheckQuota(op) },
				stats: func(context.Context) (int, int, error) {
					s := p.Stats()
					return s.Waiting, s.TurnsUsed, nil
				},
				restore: p.Restore,
			}
		},
	}, nil
}
