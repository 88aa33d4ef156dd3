// Command intake-web serves the Clinical Intake web app. With no
// INTAKE_BASE_URL it starts the sandbox service in-process (the spec's
// limits, a generated key) so `go run ./cmd/intake-web` needs nothing else.
// See the README for every setting.
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
		sb, err := startSandbox(ctx, log, *sandboxFaults)
		if err != nil {
			return err
		}
		defer sb.Close()
		cfg.UpstreamURL, cfg.APIKey, cfg.Embedded = sb.URL, sb.Service.Key(), true
		cfg.DemoClinician = true // never against a real upstream
		cfg.SandboxFaults = *sandboxFaults
		log.Warn("INTAKE_BASE_URL is not set: using the EMBEDDED SANDBOX as the Clinical Intake Service "+
			"(offline, deterministic rules engine, synthetic data only; limits as the spec)",
			"sandbox_url", sb.URL, "faults", *sandboxFaults)
	}
	srv, err := app.Open(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\n  intake-web is ready: open %s\n\n", srv.URL)
	<-ctx.Done()
	log.Info("shutting down", "grace", cfg.ShutdownGrace)
	shutdown, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// startSandbox runs the sandbox service on a loopback port with the rules
// engine and a fresh key that never leaves this process.
func startSandbox(ctx context.Context, log *slog.Logger, faults bool) (*sandbox.Server, error) {
	eng, err := rules.New()
	if err != nil {
		return nil, fmt.Errorf("load the sandbox protocol library: %w", err)
	}
	cfg := sandbox.DefaultConfig()
	cfg.Keys = []string{sandbox.GenerateKey(cfg.KeyPrefix)}
	cfg.Engine = eng
	cfg.Faults = faults
	cfg.Logger = log.With("component", "sandbox")
	return sandbox.Start(ctx, cfg)
}
