// Package app assembles intake-web: it opens the store, builds the pacer,
// the upstream client, the relay hub and the core service, registers the
// metrics, and hands the service to package web, which knows none of the
// adapters. The binary (cmd/intake-web) and every test that wants the whole
// app in front of a sandbox go through Open, so they run the same wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/postgres"
	"github.com/clinical-intake/intake-web/bff/adapters/relay"
	"github.com/clinical-intake/intake-web/bff/adapters/sweep"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
	"github.com/clinical-intake/intake-web/bff/services/intakes"
	"github.com/clinical-intake/intake-web/bff/services/review"
	"github.com/clinical-intake/intake-web/bff/services/safetycase"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/web"
)

// App is the assembled, serving app.
type App struct {
	*web.Server // URL, Shutdown of the HTTP side

	cfg      Config
	runName  string // what this process's turns and scenario runs are leased to (processName)
	log      *slog.Logger
	db       *backend
	sstore   sessionStore // nil until assembled
	runner   *intakes.Runner
	accounts *accounts.Service
	client   *intakeapi.Client
	budget   keyBudget
	// scenarios plays scenario runs; closeScenarioSandbox stops the
	// limitless sandbox they play on, when they do.
	scenarios            *scenarioruns.Service
	closeScenarioSandbox func()
	ready                *readiness
	// With PostgreSQL: the hub and the worklist feed shared by replicas.
	replicated *relay.Replicated
	sharedFeed *relay.SharedFeed
	// stopServe ends the background work: lease renewal and the takeover
	// sweep, and with PostgreSQL the event log's flusher and the listener.
	stopServe context.CancelFunc
	served    chan struct{}
	// demo is the demo clinician as this start found it (DemoClinician).
	demo DemoAccount
}

// DemoAccount is the demo clinician as a start found it: whether it can
// sign in, and its password when this start made it (it is never stored
// in clear, so a later start cannot say it).
type DemoAccount struct {
	Active   bool
	Password string
}

// Demo is the demo clinician as this start found it, for the start-up
// output to say where and how to sign in (nothing without DemoClinician).
func (a *App) Demo() DemoAccount { return a.demo }

// serve starts the background work; stopServing ends it.
func (a *App) serve(ctx context.Context) {
	ctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopServe, a.served = stop, make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { a.runner.Serve(ctx) })
	wg.Go(func() { a.scenarios.Serve(ctx) })
	if sh := a.db.shared; sh != nil {
		wg.Go(func() { a.replicated.Run(ctx) })
		// The event log is for following running turns: a day is plenty.
		pruner := sweep.Every(time.Hour, func(ctx context.Context) (int64, error) {
			return sh.pruneEvents(ctx, time.Now().Add(-24*time.Hour))
		}, a.log.With("component", "turn-events"))
		wg.Go(func() { <-ctx.Done(); pruner.Stop() })
		wg.Go(func() {
			_ = sh.listen(ctx, postgres.Notifications{
				TurnEvents:    a.replicated.Wake,
				IntakeChanged: a.sharedFeed.Receive,
				Reconnected: func() {
					a.replicated.CatchUp(ctx)
					a.sharedFeed.Missed()
				},
			})
		})
	}
	go func() { wg.Wait(); close(a.served) }()
}

// Open assembles the app from cfg and starts serving on cfg.ListenAddr.
// Turns the last run left pending are settled first.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.Logger = log
	}
	db, err := openBackend(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: log, db: db}
	if err := a.assemble(ctx); err != nil {
		a.closeStores()
		return nil, err
	}
	if a.budget.restore != nil {
		if err := a.budget.restore(ctx); err != nil { // the window and today's counts, before Recover sends anything
			a.closeStores()
			return nil, fmt.Errorf("read back the pacer's journal: %w", err)
		}
	}
	if n, err := a.runner.Recover(ctx); err != nil {
		a.closeStores()
		return nil, fmt.Errorf("settle turns left pending: %w", err)
	} else if n > 0 {
		log.Warn("settling turns the last run left pending", "turns", n)
	}
	a.serve(ctx)
	if cfg.DemoClinician {
		if err := a.demoClinician(ctx); err != nil {
			a.closeStores()
			return nil, err
		}
	}
	if err := a.Listen(ctx); err != nil {
		a.closeStores()
		return nil, err
	}
	log.Info("intake-web listening", "url", a.URL, "public_url", cfg.PublicURL, "upstream", cfg.UpstreamURL,
		"embedded_sandbox", cfg.Embedded, "max_connections", a.MaxConnections())
	return a, nil
}

func (a *App) assemble(ctx context.Context) error {
	cfg := a.cfg
	a.runName = processName(replicaName(cfg), a.db.shared != nil)
	csrfKey, err := a.db.Secret(ctx, "csrf", 32)
	if err != nil {
		return err
	}
	flashHash, err := a.db.Secret(ctx, "flash-hash", 32)
	if err != nil {
		return err
	}
	flashBlock, err := a.db.Secret(ctx, "flash-block", 32)
	if err != nil {
		return err
	}
	totpKey, err := a.db.Secret(ctx, "totp", 32) // seals the clinicians' TOTP secrets
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	m := newUpstreamMetrics(reg)
	a.budget = a.db.budget()
	a.client, err = intakeapi.New(intakeapi.Config{
		BaseURL: cfg.UpstreamURL, APIKey: cfg.APIKey, Gate: timedGate{Gate: a.budget.Gate, wait: m.gateWait},
		UnencryptedHTTP2: cfg.Embedded, // the embedded sandbox speaks HTTP/2 without TLS (sandbox.Protocols)
		Logger:           a.log.With("component", "intakeapi"), Observer: m.observe,
	})
	if err != nil {
		return fmt.Errorf("intake service client: %w", err)
	}
	hub, feed := relay.NewHub(10*time.Minute, nil), relay.NewFeed(200)
	var streams intakes.Streams = hub
	var announce bff.Announcer = feed
	shared := a.db.shared != nil
	if shared {
		a.replicated = relay.NewReplicated(hub, a.db.shared.events, a.log.With("component", "relay"), 100*time.Millisecond)
		a.sharedFeed = relay.NewSharedFeed(feed, replicaName(cfg), a.db.shared.notifyIntakeChanged, a.log.With("component", "relay"))
		streams, announce = a.replicated, a.sharedFeed
	}
	runName := a.runName
	var presence bff.ReplicaPresence
	if shared {
		presence = a.db.shared.presence
	}
	var patients *intakes.Patients
	patients, a.runner = intakes.New(intakes.Deps{
		Client: a.client, Intakes: a.db, Turns: a.db, Handoffs: a.db, Hub: streams, Feed: announce,
		Now: cfg.Now, Logger: a.log.With("component", "turns"), Replica: runName, Shared: shared, Presence: presence, Lease: cfg.TurnLease,
		IntakeQuota: func(ctx context.Context) error { return a.budget.checkQuota(ctx, intakeapi.OpCreateIntake) },
	})
	reviews := review.New(review.Deps{
		Client: a.client, Intakes: a.db, Handoffs: a.db, Reviews: a.db, Audit: a.db, Worklist: a.db, Feed: feed, Announce: announce,
		Now: cfg.Now, Logger: a.log.With("component", "review"),
	})
	a.accounts = accounts.New(accounts.Deps{
		Clinicians: a.db, Audit: a.db, SignInFailures: a.db, Now: cfg.Now, BcryptCost: cfg.BcryptCost,
		Logger: a.log.With("component", "accounts"), TOTPKey: totpKey, Sessions: a.db,
	})
	sso, err := a.singleSignOn()
	if err != nil {
		return err
	}
	if err := a.newScenarios(ctx); err != nil {
		return err
	}
	a.sstore = a.db.sessions()
	save := &saveWatch{unwritable: a.db.unwritable, probe: a.db.ProbeWrite, log: a.log.With("component", "database"),
		now: now(cfg.Now), probeFailing: 2 * time.Second, probeFine: 30 * time.Second}
	a.ready = &readiness{db: a.db, save: save, client: a.client, answered: m, probeEvery: 5 * time.Minute}
	registerServiceMetrics(reg, a.runner, a.budget.stats, func() int { return hub.Subscribers() + feed.Subscribers() })
	var faults bff.FaultArmer
	if cfg.SandboxFaults {
		faults = &sandboxFaults{url: cfg.UpstreamURL, key: cfg.APIKey, http: &http.Client{}, audit: a.db, intakes: a.db,
			log: a.log.With("component", "faults"), now: now(cfg.Now)}
	}
	safetyCase, err := safetycase.New(safetycase.Deps{Store: a.db, Runs: a.db, Scenarios: a.scenarios,
		Now: now(cfg.Now), Logger: a.log.With("component", "safety")})
	if err != nil {
		return err
	}
	a.Server, err = web.New(cfg.Config, web.Deps{
		Patients: patients, Reviews: reviews, Accounts: a.accounts, Scenarios: a.scenarios, Readings: a.scenarios, Safety: safetyCase,
		Sessions: a.sstore, CSRFKey: csrfKey,
		FlashHashKey: flashHash, FlashBlockKey: flashBlock, SSO: sso,
		Release: a.client.Release, Ready: a.ready.check, Faults: faults, CannotSave: save.refused,
		Metrics: reg, MetricsHandler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slogPrinter{a.log}}),
	})
	return err
}

// Shutdown stops taking requests, ends browser streams with a retry hint,
// lets running turns finish within ctx, and closes the stores.
func (a *App) Shutdown(ctx context.Context) error {
	var errs []error
	stopped, err := a.Server.Shutdown(ctx)
	if !stopped {
		return nil // already shut down
	}
	if err != nil {
		errs = append(errs, err)
	}
	if err := a.runner.Shutdown(ctx); err != nil {
		errs = append(errs, err)
	}
	a.stopServing()
	a.closeStores()
	a.log.Info("intake-web stopped")
	return errors.Join(errs...)
}

// Close stops the app at once.
func (a *App) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = a.Shutdown(ctx)
}

// stopServing stops the lease renewal and the sweep, and waits for them.
func (a *App) stopServing() {
	if a.stopServe != nil {
		a.stopServe()
		<-a.served
		a.stopServe = nil
	}
}

func (a *App) closeStores() {
	a.stopServing()
	if a.sstore != nil {
		a.sstore.StopCleanup()
	}
	if a.closeScenarioSandbox != nil {
		a.closeScenarioSandbox()
		a.closeScenarioSandbox = nil
	}
	_ = a.db.Close()
}

// demoClinician creates the demo account on a database with no clinicians,
// and keeps its password for the start-up output to say this once (Demo):
// it is never stored in clear. It is idempotent: a replica that loses the
// race to create it carries on.
func (a *App) demoClinician(ctx context.Context) error {
	if !a.cfg.Embedded {
		return errors.New("a demo clinician is only created with the embedded sandbox")
	}
	has, err := a.accounts.HasClinicians(ctx)
	if err != nil {
		return err
	}
	if has {
		if _, err := a.accounts.ActiveClinician(ctx, "demo"); err == nil {
			a.demo.Active = true
		}
		return nil
	}
	password := randomHex(12)
	if _, err := a.accounts.AddClinician(ctx, "system", "demo", password, bff.AllRoles()); err != nil {
		// Replicas starting together on one database all saw no clinician:
		// one created the account, and its password is in that one's log.
		if _, found := a.accounts.ActiveClinician(ctx, "demo"); found == nil {
			a.log.Info("another replica created the demo clinician at the same moment; its start-up output shows the password",
				"username", "demo")
			a.demo.Active = true
			return nil
		}
		return fmt.Errorf("create the demo clinician: %w", err)
	}
	// The password is not logged (logs are kept and shipped): the
	// start-up output says it once, last (cmd/intake-web).
	a.log.Info("created a demo clinician for the embedded sandbox; its password is shown once, below the ready line", "username", "demo")
	a.demo = DemoAccount{Active: true, Password: password}
	return nil
}

// slogPrinter takes promhttp's error lines.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Error(fmt.Sprint(v...), "component", "metrics") }

// now is clock, or time.Now when nil.
func now(clock func() time.Time) func() time.Time {
	if clock == nil {
		return time.Now
	}
	return clock
}

// processName is the name this run of the process leases its turns and
// scenario runs under: with other replicas, the replica's name and a
// suffix of its own, so a replica restarted under the same name (a
// container's host and pid 1, a fixed REPLICA_NAME) finds the last run's
// leases gone and takes them over within seconds, instead of renewing
// leases nothing works on. Alone, the name itself: a start takes every
// lease back anyway.
func processName(replica string, shared bool) string {
	if !shared {
		return replica
	}
	return replica + "." + randomHex(3)
}
