package main

import (
	"cmp"
	"context"
	"encoding/json"
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
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/pacer"
	"github.com/clinical-intake/intake-web/bff/pacing"
	"github.com/clinical-intake/intake-web/bff/scenarioruns"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/play"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

const scenariosUsage = `usage: intake-web scenarios run [-suite FILE] [-repeats N] [-parallel N] [-voice NAME] [-baseline FILE] [-json FILE]

Plays a scenario suite (the built-in one without -suite) against the intake
service: INTAKE_BASE_URL and INTAKE_API_KEY, or an embedded sandbox with its
limits off when INTAKE_BASE_URL is unset (-voice chooses its engine's
wording: plain or conversational). Plays as many vignettes at once as the
key's requests a minute (PACER_PER_MINUTE) can feed, at most -parallel
(one at the spec's 6 a minute). Prints a summary table; writes the
JSON report to -json; exits 1 when a vignette regressed against -baseline (a
report of an earlier run), 2 on a usage or suite error.`

// scenariosCommand runs `intake-web scenarios ...` and returns the exit
// status.
func scenariosCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintln(stderr, scenariosUsage)
		return 2
	}
	fs := flag.NewFlagSet("scenarios run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suiteFile := fs.String("suite", "", "a suite file (YAML, docs/scenarios.md); default the built-in suite")
	repeats := fs.Int("repeats", 1, "runs of each vignette (1-20)")
	baseline := fs.String("baseline", "", "the JSON report of an earlier run to compare with")
	jsonOut := fs.String("json", "", "write the JSON report to this file")
	parallel := fs.Int("parallel", app.DefaultScenarioParallel, "the most vignettes played at once (1-2000); within it, as many as the key's requests a minute can feed")
	voice := fs.String("voice", "", "the embedded sandbox engine's voice: "+strings.Join(rules.Voices(), " or ")+" (default "+rules.VoicePlain+"); the real service words its own")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *repeats < 1 || *repeats > 20 {
		fmt.Fprintln(stderr, "intake-web scenarios: -repeats must be from 1 to 20")
		return 2
	}
	if *parallel < 1 || *parallel > scenarioruns.MaxItems {
		fmt.Fprintf(stderr, "intake-web scenarios: -parallel must be from 1 to %d\n", scenarioruns.MaxItems)
		return 2
	}
	if *voice != "" && !slices.Contains(rules.Voices(), *voice) {
		fmt.Fprintf(stderr, "intake-web scenarios: -voice must be one of %s, got %q\n", strings.Join(rules.Voices(), ", "), *voice)
		return 2
	}
	if *voice != "" && getenv("INTAKE_BASE_URL") != "" {
		fmt.Fprintln(stderr, "intake-web scenarios: -voice chooses the embedded sandbox's wording; the service at INTAKE_BASE_URL words its own")
		return 2
	}
	suite, err := loadSuite(*suiteFile)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	var base *scenarios.Report
	if *baseline != "" {
		if base, err = readReport(*baseline); err != nil {
			fmt.Fprintln(stderr, "intake-web scenarios:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, closeUpstream, where, err := scenarioClient(ctx, getenv, *voice)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	defer closeUpstream()

	runs := len(suite.Vignettes) * *repeats
	fmt.Fprintf(stderr, "%s: %d vignettes x %d = %d runs against %s\n", suite.Name, len(suite.Vignettes), *repeats, runs, where)
	fmt.Fprintln(stderr, estimate(suite, *repeats, getenv))
	width := cliParallel(suite, getenv, *parallel)
	fmt.Fprintf(stderr, "playing up to %d vignettes at once\n", width)
	bar := newProgress(stderr)
	results, err := play.Run(ctx, client, suite, play.Options{
		RunID: fmt.Sprintf("%s-%d", suite.Name, time.Now().UnixNano()), Repeats: *repeats, Parallel: width,
		Progress: func(done, total int, r *scenarios.Result) { bar.step(done, total, r) },
	})
	bar.done()
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios: stopped:", err)
	}
	report := scenarios.NewReport(results)
	printSummary(stdout, report)
	if *jsonOut != "" {
		if werr := writeReport(*jsonOut, report); werr != nil {
			fmt.Fprintln(stderr, "intake-web scenarios:", werr)
			return 2
		}
	}
	if base != nil {
		cmp := scenarios.Compare(base.Results, results, nil)
		printComparison(stdout, cmp)
		if cmp.Regressed() {
			return 1
		}
	}
	if err != nil {
		return 2
	}
	return 0
}

func loadSuite(file string) (*scenarios.Suite, error) {
	if file == "" {
		return scenarios.Builtin()
	}
	return scenarios.LoadFile(file)
}

// scenarioClient is the app's client of the service: the configured one
// behind a pacer at the key's limits, or an embedded sandbox without limits
// (a run of the built-in suite takes hundreds of turns).
func scenarioClient(ctx context.Context, getenv func(string) string, voice string) (*intakeapi.Client, func(), string, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		return nil, nil, "", err
	}
	if cfg.UpstreamURL == "" {
		client, closeSandbox, err := app.LimitlessSandbox(ctx, log, voice)
		if err != nil {
			return nil, nil, "", err
		}
		return client, closeSandbox, "an embedded sandbox (limits off, voice " + cmp.Or(voice, rules.VoicePlain) + ")", nil
	}
	p := pacer.New(pacer.Config{PerMinute: cfg.PacerPerMinute, TurnsPerDay: cfg.TurnsPerDay, IntakesPerDay: cfg.IntakesPerDay, Logger: log})
	client, err := intakeapi.New(intakeapi.Config{BaseURL: cfg.UpstreamURL, APIKey: cfg.APIKey, Gate: p, Logger: log})
	if err != nil {
		return nil, nil, "", err
	}
	return client, func() {}, cfg.UpstreamURL, nil
}

// cliParallel is how many vignettes the command plays at once: ceiling
// against the embedded sandbox (its limits are off), else what the key's
// requests a minute can feed (scenarioruns.Parallel, as the app's runs).
func cliParallel(s *scenarios.Suite, getenv func(string) string, ceiling int) int {
	if getenv("INTAKE_BASE_URL") == "" {
		return ceiling
	}
	cfg, _ := app.FromEnv(getenv)
	perMinute := cfg.PacerPerMinute
	if perMinute == 0 {
		perMinute = pacing.DefaultPerMinute
	}
	turns := 0
	for _, v := range s.Vignettes {
		limit := cmp.Or(v.MaxTurns, scenarios.DefaultMaxTurns)
		turns += min(limit, len(v.Facts)+1) // as the app's estimate guesses
	}
	return scenarioruns.Parallel(perMinute, (turns+len(s.Vignettes)-1)/max(len(s.Vignettes), 1), ceiling)
}

// estimate says how many requests the run needs and whether a day's quota
// covers it (the service's 100 turns and 100 intakes unless configured).
func estimate(s *scenarios.Suite, repeats int, getenv func(string) string) string {
	turns := 0
	for _, v := range s.Vignettes {
		limit := v.MaxTurns
		if limit == 0 {
			limit = 15
		}
		turns += min(limit, 10) // most intakes end by 10 turns (docs/protocols.md)
	}
	turns *= repeats
	intakes := len(s.Vignettes) * repeats
	msg := fmt.Sprintf("estimate: %d intakes and about %d turns", intakes, turns)
	if getenv("INTAKE_BASE_URL") == "" {
		return msg + " (the embedded sandbox has no quota)"
	}
	cfg, _ := app.FromEnv(getenv)
	perDay := cfg.TurnsPerDay
	if perDay == 0 {
		perDay = 100
	}
	if turns <= perDay {
		return msg + fmt.Sprintf(": within a day's %d turns if the key's quota is unspent", perDay)
	}
	return msg + fmt.Sprintf(": more than a day's %d turns; the run stops when today's quota is spent (about %d days' quota in all)", perDay, (turns+perDay-1)/perDay)
}

// progress is a bar on a terminal, a line a vignette elsewhere.
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

func (p *progress) step(done, total int, r *scenarios.Result) {
	mark := "ok"
	switch {
	case r.Error != "":
		mark = "error"
	case r.Final != r.Gold.Class:
		mark = fmt.Sprintf("%s, gold %s", orNone(r.Final), r.Gold.Class)
	}
	if !p.tty {
		fmt.Fprintf(p.w, "[%d/%d] %s: %s\n", done, total, r.VignetteID, mark)
		return
	}
	const width = 30
	filled := width * done / max(total, 1)
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s  ", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, time.Since(p.start).Round(time.Second))
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func orNone(c scenarios.Class) string {
	if c == scenarios.NoClass {
		return "no decision"
	}
	return string(c)
}

func printSummary(w io.Writer, r *scenarios.Report) {
	s := r.Summary
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "class\tscored\taccuracy\tunder-triage\tover-triage\tsimulator-limited")
	for _, c := range scenarios.Classes {
		cs, ok := s.PerClass[c]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\n", c, cs.N, pct(cs.Accuracy), pct(cs.UnderTriage), pct(cs.OverTriage), cs.SimulatorLimited)
	}
	fmt.Fprintf(tw, "all\t%d\t%s\t%s\t%s\t%d\n", s.Scored, pct(s.Accuracy), pct(s.UnderTriage), pct(s.OverTriage), s.SimulatorLimited)
	_ = tw.Flush()
	fmt.Fprintf(w, "simulator coverage: %s of %d engine questions understood", pct(s.Coverage), s.Questions)
	if v := s.Provenance.VoiceProfile; v != "" {
		fmt.Fprintf(w, " (engine voice %s)", v)
	}
	fmt.Fprintln(w)
	if s.SimulatorLimited > 0 {
		fmt.Fprintf(w, "%d results are simulator-limited (a question the patient did not understand) and are not in the rates above:\n", s.SimulatorLimited)
		for _, x := range r.Results {
			if x.SimulatorLimited {
				fmt.Fprintf(w, "  %s (repeat %d): %d of %d questions understood\n", x.VignetteID, x.Repeat, x.Understood, x.Questions)
			}
		}
	}
}

func printComparison(w io.Writer, c scenarios.Comparison) {
	if len(c.Regressions) == 0 {
		fmt.Fprintln(w, "no vignette regressed against the baseline")
	}
	for _, r := range c.Regressions { // under-triage first, as Compare orders them
		what := "REGRESSED"
		if r.UnderTriage {
			what = "REGRESSED (under-triaged)"
		}
		fmt.Fprintf(w, "%s %s: %s -> %s (gold %s)\n", what, r.VignetteID, orNone(r.Base.Final), orNone(r.Head.Final), r.Gold)
	}
	fmt.Fprintf(w, "McNemar exact p = %.4g\n", c.PValue)
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func readReport(path string) (*scenarios.Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the baseline: %w", err)
	}
	var r scenarios.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("the baseline %s is not a scenario report: %w", path, err)
	}
	return &r, nil
}

func writeReport(path string, r *scenarios.Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
