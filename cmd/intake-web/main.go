// Command intake-web serves the Clinical Intake web app. With no
// INTAKE_BASE_URL it starts the sandbox service in-process (the spec's
// limits, a generated key) so `go run ./cmd/intake-web` needs nothing else;
// `-demo` (DEMO=1) lifts the sandbox's limits and the app's pacing together
// for local use. See the README for every setting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "scenarios" {
		os.Exit(scenariosCommand(os.Args[2:], os.Stdout, os.Stderr, os.Getenv))
	}
	if len(os.Args) > 1 && os.Args[1] == "clinician" {
		err = clinicianCommand(os.Args[2:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	} else {
		err = run(os.Args[1:], os.Stderr, os.Getenv)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "intake-web:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer, getenv func(string) string) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("intake-web", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.ListenAddr, "listen", cfg.ListenAddr, "address to serve on (LISTEN_ADDR)")
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database file (DATABASE_PATH)")
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, "URL browsers use to reach the app; https makes cookies Secure (PUBLIC_URL)")
	fs.BoolVar(&cfg.Demo, "demo", cfg.Demo, "for local use: the embedded sandbox without its rate limit and daily quotas, and no pacing (DEMO=1)")
	sandboxFaults := fs.Bool("sandbox-faults", getenv("SANDBOX_FAULTS") == "1", "with the embedded sandbox: enable its fault injection (SANDBOX_FAULTS=1)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	cfg.Logger = log
	raiseFileLimit(log)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.UpstreamURL == "" {
		sb, limits, err := startSandbox(ctx, log, *sandboxFaults, cfg.Demo)
		if err != nil {
			return err
		}
		defer sb.Close()
		cfg.UpstreamURL, cfg.APIKey, cfg.Embedded = sb.URL, sb.Service.Key(), true
		cfg.SandboxLimits = limits
		cfg.DemoClinician = true // never against a real upstream
		cfg.SandboxFaults = *sandboxFaults
		if cfg.Demo {
			cfg.ApplyDemo()
			log.Warn("DEMO MODE (-demo, DEMO=1): the embedded sandbox has no rate limit and no daily quotas, and the app "+
				"does not pace its requests; replies come as fast as the engine answers. The real service allows "+
				"6 requests a minute and 100 turns a day: start without -demo to see the app as it behaves against that",
				"sandbox_url", sb.URL, "faults", *sandboxFaults)
		} else {
			log.Warn("INTAKE_BASE_URL is not set: using the EMBEDDED SANDBOX as the Clinical Intake Service "+
				"(offline, deterministic rules engine, synthetic data only; limits as the spec: 6 requests a minute, "+
				"so once six have gone a message waits up to a minute; -demo or DEMO=1 lifts the limits for local use)",
				"sandbox_url", sb.URL, "faults", *sandboxFaults)
		}
	}
	srv, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\n  %s\n  intake-web is ready: open %s\n\n", pacingLine(cfg), srv.URL)
	<-ctx.Done()
	log.Info("shutting down", "grace", cfg.ShutdownGrace)
	shutdown, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// pacingLine says above the ready line how fast the app may call its
// upstream, so the first thing a newcomer reads says why a reply waits.
func pacingLine(cfg app.Config) string {
	switch {
	case cfg.Demo:
		return fmt.Sprintf("demo mode: no rate limit, no daily quotas (start without -demo for the real service's %d requests a minute)",
			pacing.DefaultPerMinute)
	case cfg.Embedded:
		return fmt.Sprintf("the embedded sandbox keeps the real service's limits (%d requests a minute: a message may wait up to a minute); "+
			"-demo lifts them for local use", cfg.SandboxLimits.PerMinute)
	case cfg.PacerPerMinute < 0:
		return "pacing: off (PACER_PER_MINUTE is negative)"
	}
	n := cfg.PacerPerMinute
	if n == 0 {
		n = pacing.DefaultPerMinute
	}
	return fmt.Sprintf("pacing: %d requests a minute", n)
}

// startSandbox runs the sandbox service on a loopback port with the rules
// engine and a fresh key that never leaves this process: with the spec's
// limits, or with none in demo mode. It returns the limits it kept.
func startSandbox(ctx context.Context, log *slog.Logger, faults, demo bool) (*sandbox.Server, app.SandboxLimits, error) {
	eng, err := rules.New()
	if err != nil {
		return nil, app.SandboxLimits{}, fmt.Errorf("load the sandbox protocol library: %w", err)
	}
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{sandbox.GenerateKey(cfg.KeyPrefix)}
	cfg.Engine = eng
	cfg.Faults = faults
	cfg.Logger = log.With("component", "sandbox")
	if demo {
		cfg.RPM, cfg.TurnsPerDay, cfg.IntakesPerDay = 0, 0, 0 // 0 = no limit
	}
	sb, err := sandbox.Start(ctx, cfg)
	return sb, app.SandboxLimits{PerMinute: cfg.RPM, TurnsPerDay: cfg.TurnsPerDay, IntakesPerDay: cfg.IntakesPerDay}, err
}
