// Package apptest starts the whole app in front of an in-process sandbox,
// for tests: the one harness the web tests and the browser tests share. The
// app is assembled by app.Open, as the binary does, on a SQLite file in the
// test's temp dir, with no pacing and no daily quotas unless asked; its log
// is printed when the test fails.
package apptest

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite/sqlitetest"
	"github.com/clinical-intake/intake-web/bff/services/accounts"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/engine"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"github.com/clinical-intake/intake-web/web"
)

// Options shape the stack; the zero value is the rules engine streaming a
// fragment every 2 ms.
type Options struct {
	Engine        engine.Engine // nil: the rules engine of sandbox/rules
	FragmentDelay time.Duration // 0: 2 ms between streamed fragments
	Sandbox       func(*sandbox.Config)
	App           func(*app.Config)
	// Clinicians are accounts (username: password) written to the database
	// before the app opens it, with a cheap bcrypt cost.
	Clinicians map[string]string
}

// Stack is a running sandbox and the app in front of it.
type Stack struct {
	App     *app.App
	URL     string // the app's base URL, no trailing slash
	Sandbox *sandbox.Server
	Key     string // the upstream API key: it must never reach a browser
	DBPath  string
	Logs    *Logs

	t      testing.TB
	dbOnce sync.Once
	db     *sqlite.DB // a second handle on DBPath, for Intake and Intakes
	dbErr  error
}

// rulesEngine is the rules engine of sandbox/rules, built once per test
// process and shared by every stack's sandbox, as one sandbox shares it
// between all its intakes (it keeps nothing between calls): building it
// again for each stack took a second under the race detector.
var rulesEngine = sync.OnceValues(rules.New)

// Start serves a fresh stack for t; everything stops at the test's end.
func Start(t testing.TB, o Options) *Stack {
	t.Helper()
	ctx := context.Background()
	if o.Engine == nil {
		eng, err := rulesEngine()
		if err != nil {
			t.Fatalf("rules engine: %v", err)
		}
		o.Engine = eng
	}
	if o.FragmentDelay == 0 {
		o.FragmentDelay = 2 * time.Millisecond
	}
	key := sandbox.GenerateKey("cis")
	scfg := sandbox.DefaultConfig()
	scfg.Keys, scfg.Engine = []string{key}, o.Engine
	scfg.RPM, scfg.TurnsPerDay, scfg.IntakesPerDay = 0, 0, 0
	scfg.FragmentDelay, scfg.Faults = o.FragmentDelay, true
	if o.Sandbox != nil {
		o.Sandbox(&scfg)
	}
	sb, err := sandbox.Start(ctx, scfg)
	if err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	t.Cleanup(sb.Close)

	s := &Stack{Sandbox: sb, Key: key, DBPath: filepath.Join(t.TempDir(), "app.db"), Logs: &Logs{}, t: t}
	// The database starts migrated, as on every start of the app but its
	// first (sqlitetest.Seed: migrating it again was a third of a stack's
	// start-up).
	sqlitetest.Seed(t, s.DBPath)
	if len(o.Clinicians) > 0 {
		addClinicians(t, s.DBPath, o.Clinicians)
	}
	cfg := app.Config{
		Config: web.Config{
			ListenAddr: "127.0.0.1:0",
			Logger:     slog.New(slog.NewTextHandler(s.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
		DatabasePath: s.DBPath, UpstreamURL: sb.URL, APIKey: key,
		PacerPerMinute: -1, TurnsPerDay: -1, IntakesPerDay: -1, // negative: none (0 would mean the defaults)
		BcryptCost: 4,
	}
	if o.App != nil {
		o.App(&cfg)
	}
	s.App, err = app.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open the app: %v", err)
	}
	s.URL = strings.TrimRight(s.App.URL, "/")
	// Cleanups run last-in first-out: the app stops before the sandbox.
	t.Cleanup(func() {
		s.App.Close()
		if t.Failed() {
			t.Logf("app log:\n%s", s.Logs.String())
		}
	})
	return s
}

// Intake reads the app's intake with the app's id (the last part of its
// address) from the app's database, as the app last wrote it; the test
// fails if there is none. Tests take the service's encounter id from it
// (EncounterID, "" before the intake's first turn): pages never show it.
func (s *Stack) Intake(t testing.TB, id string) *bff.Intake {
	t.Helper()
	in, err := s.store(t).Intake(context.Background(), id)
	if err != nil {
		t.Fatalf("the app's intake %s: %v", id, err)
	}
	return in
}

// Intakes reads every intake in the app's database, newest first.
func (s *Stack) Intakes(t testing.TB) []*bff.Intake {
	t.Helper()
	ins, err := s.store(t).Intakes(context.Background(), 0)
	if err != nil {
		t.Fatalf("the app's intakes: %v", err)
	}
	return ins
}

func (s *Stack) store(t testing.TB) *sqlite.DB {
	t.Helper()
	s.dbOnce.Do(func() {
		// Opened once, beside the app's own handle (WAL lets both read),
		// and closed at the test's end.
		s.db, s.dbErr = sqlite.Open(context.Background(), s.DBPath, nil)
		if s.dbErr == nil {
			s.t.Cleanup(func() { _ = s.db.Close() })
		}
	})
	if s.dbErr != nil {
		t.Fatalf("open the app's database: %v", s.dbErr)
	}
	return s.db
}

func addClinicians(t testing.TB, dbPath string, accs map[string]string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath, nil)
	if err != nil {
		t.Fatalf("open %s: %v", dbPath, err)
	}
	defer db.Close()
	svc := accounts.New(accounts.Deps{Clinicians: db, Audit: db, BcryptCost: 4})
	for user, password := range accs {
		if _, err := svc.AddClinician(ctx, "system", user, password, bff.AllRoles()); err != nil {
			t.Fatalf("add clinician %s: %v", user, err)
		}
	}
}

// Logs is the app's log, safe to write from any goroutine.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// RaiseParallel lets a package's parallel tests run n at a time, unless
// go test was given -parallel: its default, GOMAXPROCS (2 on the test
// machines), suits tests that compute, while those of a package that calls
// this mostly wait (on a browser, child processes, replies streamed and
// timeouts run in real time). Call it from TestMain, before m.Run.
func RaiseParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
