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
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

func main() {
	os.Exit(intakeWeb(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// fromEnv reads the configuration every command uses (app.FromEnv), then
// lets tune change it. tune does nothing in the binary; this package's
// tests (process_test.go's TestMain) set it once, before any command runs,
// to hash passwords at bcrypt's least cost, as every other test of the app
// does (apptest): under the race detector a hash at the real cost takes
// seconds, and the demo clinician and the clinician command make many.
func fromEnv(getenv func(string) string) (app.Config, error) {
	cfg, err := app.FromEnv(getenv)
	if err == nil {
		tune(&cfg)
	}
	return cfg, err
}

var tune = func(*app.Config) {}

// commands are intake-web's commands besides serving, as its usage says.
const commands = `usage: intake-web [flags]                serve the app (on the embedded sandbox unless INTAKE_BASE_URL is set)
       intake-web clinician VERB ...     clinician accounts: add, passwd, unlock, list, disable (intake-web clinician -h)
       intake-web scenarios run [flags]  play a scenario suite against the engine (intake-web scenarios -h)
       intake-web scenarios readings export|import ...  reviewed readings as a YAML file per release
       intake-web safety report|export|import ...  the clinical safety case: its report (PDF), its hazard log as YAML`

// intakeWeb runs the command args name and returns the exit status: 0, 1
// when it failed, 2 on a usage error (a mistyped command, verb, flag or
// argument), which does nothing: no server, no database.
func intakeWeb(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "scenarios":
		return scenariosCommand(args[1:], stdout, stderr, getenv)
	case len(args) > 0 && args[0] == "safety":
		return safetyCommand(args[1:], stdout, stderr, getenv)
	case len(args) > 0 && args[0] == "clinician":
		err = clinicianCommand(args[1:], stdin, stdout, stderr, getenv)
	default:
		err = run(args, stderr, getenv)
	}
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		if usage.msg != "" {
			fmt.Fprintln(stderr, "intake-web:", usage.msg)
		}
		if usage.usage != "" {
			fmt.Fprintln(stderr, usage.usage)
		}
		return 2
	}
	fmt.Fprintln(stderr, "intake-web:", err)
	return 1
}

// usageError is a command line the command does not take: msg says what
// is wrong ("" when the flag package said it already), usage what it takes.
type usageError struct{ msg, usage string }

func (e *usageError) Error() string { return e.msg }

// flagError is a parse error of fs as a usageError (the flag package has
// printed it and the usage), or nil for -h.
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return &usageError{}
}

// printUsage is intake-web -h: the commands, the flags, and the
// environment variables from the configuration's table (app.Variables).
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintln(w, commands)
	fmt.Fprintln(w, "\nflags (each sets the environment variable named, and wins over it):")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprintln(w, "\nenvironment variables (default in brackets; README.md, \"Configuration\", and docs/operations.md say more):")
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	for _, v := range app.Variables() {
		name := v.Name
		if v.Default != "" {
			name += " [" + v.Default + "]"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, v.Help)
	}
	_ = tw.Flush()
}

// envFlag is the usage of a flag that sets the environment variable name:
// the variable's meaning in the configuration's table, and its name.
func envFlag(name string) string { return app.Help(name) + " (" + name + ")" }

func run(args []string, stderr io.Writer, getenv func(string) string) error {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := fromEnv(getenv)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("intake-web", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(stderr, fs) }
	fs.StringVar(&cfg.ListenAddr, "listen", cfg.ListenAddr, envFlag("LISTEN_ADDR"))
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, envFlag("DATABASE_PATH"))
	fs.StringVar(&cfg.PublicURL, "public-url", cfg.PublicURL, envFlag("PUBLIC_URL"))
	fs.BoolVar(&cfg.Demo, "demo", cfg.Demo, envFlag("DEMO"))
	sandboxFaults := fs.Bool("sandbox-faults", cfg.SandboxFaults, envFlag("SANDBOX_FAULTS"))
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	// Serving takes no argument: a word left is a mistyped command (or a
	// command after the flags), and nothing starts.
	if word := fs.Arg(0); word != "" {
		msg := fmt.Sprintf("unknown command %q", word)
		if word == "clinician" || word == "scenarios" || word == "safety" {
			msg = fmt.Sprintf("%q after flags: the command comes first (intake-web %s ...)", word, word)
		}
		return &usageError{msg: msg, usage: commands + "\n(intake-web -h lists the flags and the environment variables)"}
	}
	cfg.SandboxFaults = false // the embedded sandbox's only, below
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
	fmt.Fprint(stderr, readyLines(cfg, srv.URL, srv.Demo()))
	<-ctx.Done()
	log.Info("shutting down", "grace", cfg.ShutdownGrace)
	shutdown, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// readyLines are the start-up output's last words: how fast the app may
// call its upstream, where the app is, where the clinician area is and,
// with the embedded sandbox, how to sign in there (the demo clinician's
// password when this start made it: it is never shown again).
func readyLines(cfg app.Config, url string, demo app.DemoAccount) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n  %s\n  intake-web is ready: open %s\n  clinician area: %s/clinician", pacingLine(cfg), url, url)
	switch {
	case demo.Password != "":
		fmt.Fprintf(&b, "\n  sign in as demo, password %s (shown only now; intake-web clinician passwd demo -generate makes a new one)", demo.Password)
	case demo.Active:
		b.WriteString("\n  sign in as demo: its password was shown at its first start (lost? intake-web clinician passwd demo -generate)")
	}
	b.WriteString("\n\n")
	return b.String()
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
