// Command intake-sandbox serves the offline Clinical Intake Service: the whole
// spec, with the deterministic rules engine, for developing and testing
// without a key to the real service. See sandbox/README.md.
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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "intake-sandbox:", err)
		os.Exit(1)
	}
}

// keyList is a repeatable -api-key flag.
type keyList []string

func (k *keyList) String() string     { return fmt.Sprintf("%d key(s)", len(*k)) } // never the keys
func (k *keyList) Set(v string) error { *k = append(*k, v); return nil }

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == "recognition" {
		return recognitionCommand(args[1:], stdout, stderr)
	}
	cfg := sandbox.DefaultConfig()
	fs := flag.NewFlagSet("intake-sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var keys keyList
	listen := fs.String("listen", "127.0.0.1:8090", "address to serve on")
	fs.Var(&keys, "api-key", "accepted API key, shaped <prefix>_sb_<hex> (repeatable; also SANDBOX_API_KEYS, comma-separated); one is generated when none is given")
	fs.StringVar(&cfg.KeyPrefix, "key-prefix", cfg.KeyPrefix, "the service's fixed sandbox key prefix")
	fs.IntVar(&cfg.RPM, "rpm", cfg.RPM, "requests per rolling minute per key (0 = no limit)")
	fs.IntVar(&cfg.TurnsPerDay, "turns-per-day", cfg.TurnsPerDay, "turns per key per UTC day (0 = no limit)")
	fs.IntVar(&cfg.IntakesPerDay, "intakes-per-day", cfg.IntakesPerDay, "intakes per key per UTC day (0 = no limit)")
	fs.DurationVar(&cfg.SessionTTL, "session-ttl", cfg.SessionTTL, "open intakes expire this long after creation")
	fs.DurationVar(&cfg.FragmentDelay, "fragment-delay", cfg.FragmentDelay, "pause between streamed fragments")
	fs.DurationVar(&cfg.FirstTokenDelay, "first-token-delay", cfg.FirstTokenDelay, "pause before the first fragment")
	profile := fs.String("profile", "fast", "streaming pace: fast, or realistic (a few seconds to first token, 20-40 s a reply)")
	fs.BoolVar(&cfg.Faults, "faults", false, "enable fault injection at POST /v1/sandbox/faults")
	fs.StringVar(&cfg.Release, "release", cfg.Release, "release name reported in x-service-release, health and provenance")
	voice := fs.String("voice", rules.VoicePlain, "the engine's wording, same decisions in every voice: "+strings.Join(rules.Voices(), ", "))
	voiceFile := fs.String("voice-file", "", "the engine worded by this voice file instead of -voice (the shape -voice-template prints)")
	template := fs.Bool("voice-template", false, "print the plain voice as a voice file to reword, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *template {
		data, err := rules.VoiceTemplate()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", data)
		return err
	}
	if err := cfg.ApplyProfile(*profile); err != nil {
		return err
	}
	if !slices.Contains(rules.Voices(), *voice) {
		return fmt.Errorf("-voice %q: unknown voice; use one of %s", *voice, strings.Join(rules.Voices(), ", "))
	}
	for _, k := range strings.Split(getenv("SANDBOX_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	generated := len(keys) == 0
	if generated {
		keys = append(keys, sandbox.GenerateKey(cfg.KeyPrefix))
	}
	cfg.Keys = keys

	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.Logger = log
	eng, err := rules.NewVoice(*voice)
	if *voiceFile != "" {
		var data []byte
		if data, err = os.ReadFile(*voiceFile); err == nil {
			eng, err = rules.NewVoiceOverlay(*voiceFile, data)
		}
		*voice = *voiceFile
	}
	if err != nil {
		return fmt.Errorf("load the protocol library: %w", err)
	}
	cfg.Engine = eng

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := sandbox.Listen(ctx, *listen, cfg)
	if err != nil {
		return err
	}
	if generated {
		// Printed once so a developer can use it; it is a sandbox key only.
		fmt.Fprintf(stdout, "sandbox API key (generated): %s\n", keys[0])
	}
	fmt.Fprintf(stdout, "sandbox Clinical Intake Service on %s (faults %v, %d rpm, %d turns/day)\n", srv.URL, cfg.Faults, cfg.RPM, cfg.TurnsPerDay)
	log.Info("sandbox started", "url", srv.URL, "release", cfg.Release, "keys", len(keys), "profile", *profile, "voice", *voice)
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	log.Info("sandbox stopping")
	return srv.Shutdown(shutdown)
}
