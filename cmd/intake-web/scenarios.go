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
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacer"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
	"github.com/clinical-intake/intake-web/bff/services/play"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/cmd/intake-web/app"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

const scenariosUsage = `usage: intake-web scenarios run [-suite FILE] [-repeats N] [-parallel N] [-voice NAME] [-voice-file FILE]
                               [-vary LIST] [-seed N] [-baseline FILE] [-json FILE] [-junit FILE] [-fail-on LIST]

Plays a scenario suite (the built-in one without -suite) against the intake
service: INTAKE_BASE_URL and INTAKE_API_KEY, or an embedded sandbox with its
limits off when INTAKE_BASE_URL is unset (-voice chooses its engine's
wording: plain or conversational; -voice-file a wording of your own, in the
shape intake-sandbox -voice-template prints). Plays as many vignettes at once as the
key's requests a minute (PACER_PER_MINUTE) can feed, at most -parallel
(one at the spec's 6 a minute). -vary plays each vignette again under
each named variation of how the patient speaks (all, or a list of: ` + "%s" + `),
and the report gives the flips. Prints a summary table; writes the JSON
report to -json and JUnit XML to -junit. Exits 1 on what -fail-on names
(under-triage, flip, regression; default regression: a vignette regressed
against -baseline, a report of an earlier run), 2 on a usage or suite error.`

// scenariosCommand runs `intake-web scenarios ...` and returns the exit
// status.
func scenariosCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintf(stderr, scenariosUsage+"\n", strings.Join(variations.Names(), ", "))
		return 2
	}
	fs := flag.NewFlagSet("scenarios run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suiteFile := fs.String("suite", "", "a suite file (YAML, docs/scenarios.md); default the built-in suite")
	repeats := fs.Int("repeats", 1, "runs of each vignette (1-20)")
	baseline := fs.String("baseline", "", "the JSON report of an earlier run to compare with")
	jsonOut := fs.String("json", "", "write the JSON report to this file")
	parallel := fs.Int("parallel", app.DefaultScenarioParallel, "the most vignettes played at once (1-2000); within it, as many as the key's requests a minute can feed")
	vary := fs.String("vary", "", "variations to play besides each vignette as written: all, or a comma-separated list of "+strings.Join(variations.Names(), ", "))
	seed := fs.Uint64("seed", 1, "the seed of the variations' random parts (typos)")
	junitOut := fs.String("junit", "", "write JUnit XML to this file (a test case per vignette and variation)")
	failOn := fs.String("fail-on", "regression", "what makes the exit status 1: a comma-separated list of under-triage, flip (a downward flip), regression (against -baseline)")
	voice := fs.String("voice", "", "the embedded sandbox engine's voice: "+strings.Join(rules.Voices(), " or ")+" (default "+rules.VoicePlain+"); the real service words its own")
	voiceFile := fs.String("voice-file", "", "the embedded sandbox engine worded by this voice file instead (the shape intake-sandbox -voice-template prints): a wording nobody has played yet")
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
	if (*voice != "" || *voiceFile != "") && getenv("INTAKE_BASE_URL") != "" {
		fmt.Fprintln(stderr, "intake-web scenarios: -voice and -voice-file choose the embedded sandbox's wording; the service at INTAKE_BASE_URL words its own")
		return 2
	}
	if *voice != "" && *voiceFile != "" {
		fmt.Fprintln(stderr, "intake-web scenarios: -voice and -voice-file both choose the engine's wording: give one")
		return 2
	}
	voiceName, eng, err := sandboxEngine(*voice, *voiceFile)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	names, err := variations.Parse(*vary)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios: -vary:", err)
		return 2
	}
	fail, err := parseFailOn(*failOn)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios: -fail-on:", err)
		return 2
	}
	if fail.flip && len(names) == 0 {
		fmt.Fprintln(stderr, "intake-web scenarios: -fail-on flip needs -vary: nothing is varied, so nothing can flip")
		return 2
	}
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "fail-on" })
	if fail.regression && *baseline == "" && explicit {
		fmt.Fprintln(stderr, "intake-web scenarios: -fail-on regression needs -baseline: the report to compare with")
		return 2
	}
	suite, err := loadSuite(*suiteFile)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", scenarios.ProblemList(err))
		return 2
	}
	var base *scenarios.Report
	if *baseline != "" {
		if base, err = readReport(*baseline); err != nil {
			fmt.Fprintln(stderr, "intake-web scenarios:", err)
			return 2
		}
	}
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, closeUpstream, where, err := scenarioClient(ctx, cfg, voiceName, eng)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	defer closeUpstream()

	plays := play.Plays(suite, names, *seed)
	runs := len(plays) * *repeats
	fmt.Fprintf(stderr, "%s: %d vignettes, %d plays with variations, x %d = %d runs against %s\n", suite.Name, len(suite.Vignettes), len(plays), *repeats, runs, where)
	fmt.Fprintln(stderr, estimate(suite, *repeats, cfg))
	if len(names) > 0 {
		fmt.Fprintln(stderr, estimatePerVariation(plays, *repeats))
	}
	width := cliParallel(suite, cfg, *parallel)
	fmt.Fprintf(stderr, "playing up to %d vignettes at once\n", width)
	started := time.Now()
	bar := newProgress(stderr)
	results, err := play.Run(ctx, client, suite, play.Options{
		RunID: fmt.Sprintf("%s-%d", suite.Name, started.UnixNano()), Repeats: *repeats, Parallel: width,
		Variations: names, Seed: *seed,
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
	if report.Flips != nil {
		printFlips(stdout, report.Flips)
	}
	if report.Consistency != nil {
		printConsistency(stdout, report.Consistency)
	}
	if *junitOut != "" {
		props := [][2]string{{"target", where}, {"release", report.Summary.Provenance.Release}, {"variations", strings.Join(names, ",")},
			{"seed", strconv.FormatUint(*seed, 10)}, {"repeats", strconv.Itoa(*repeats)}}
		if werr := writeJUnit(*junitOut, report, scenarios.JUnit{Suite: suite.Name, Time: started, Properties: props}); werr != nil {
			fmt.Fprintln(stderr, "intake-web scenarios:", werr)
			return 2
		}
	}
	status := 0
	if base != nil {
		cmp := scenarios.Compare(base.Results, results, nil)
		printComparison(stdout, cmp)
		if fail.regression && cmp.Regressed() {
			fmt.Fprintln(stderr, "intake-web scenarios: failing: a vignette regressed against the baseline")
			status = 1
		}
	}
	if fail.underTriage {
		if n := underTriaged(report); n > 0 {
			fmt.Fprintf(stderr, "intake-web scenarios: failing: %d plays under-triaged\n", n)
			status = 1
		}
	}
	if fail.flip && report.Flips != nil {
		down := 0
		for _, f := range report.Flips.Flips {
			if f.Direction == scenarios.FlipDown {
				down++
			}
		}
		if down > 0 {
			fmt.Fprintf(stderr, "intake-web scenarios: failing: %d downward flips\n", down)
			status = 1
		}
	}
	if err != nil {
		return 2
	}
	return status
}

// failOn is what makes the exit status 1.
type failOn struct{ underTriage, flip, regression bool }

func parseFailOn(s string) (failOn, error) {
	var f failOn
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "under-triage":
			f.underTriage = true
		case "flip":
			f.flip = true
		case "regression":
			f.regression = true
		case "":
		default:
			return f, fmt.Errorf("unknown condition %q: must be a comma-separated list of under-triage, flip, regression", strings.TrimSpace(w))
		}
	}
	return f, nil
}

// underTriaged counts the scored plays, varied or not, that ended less
// urgent than their gold class (or undecided).
func underTriaged(r *scenarios.Report) int {
	n := 0
	for _, x := range r.Results {
		if o := scenarios.Assess(x); o.Scored() && o.Triage == scenarios.TriageUnder {
			n++
		}
	}
	return n
}

// estimatePerVariation says what each variation adds: its plays and the
// turns they are expected to take (scenarioruns.ExpectedTurns).
func estimatePerVariation(plays []play.Vignette, repeats int) string {
	type cost struct{ plays, turns int }
	per := map[string]*cost{}
	var order []string
	for _, p := range plays {
		name := cmp.Or(p.Variation, "unvaried")
		if per[name] == nil {
			per[name] = &cost{}
			order = append(order, name)
		}
		per[name].plays += repeats
		per[name].turns += scenarioruns.ExpectedTurns(*p.Vignette) * repeats
	}
	var b strings.Builder
	b.WriteString("per variation (plays, about turns):")
	for _, n := range order {
		fmt.Fprintf(&b, " %s %d/%d;", n, per[n].plays, per[n].turns)
	}
	return strings.TrimSuffix(b.String(), ";")
}

func printFlips(w io.Writer, f *scenarios.FlipReport) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "variation\tgold class\tcompared\tdown\tup\tdown rate\tflip rate")
	for _, r := range f.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Variation, cmp.Or(string(r.Class), "all"), r.Compared, r.Down, r.Up, pct(r.DownRate), pct(r.FlipRate))
	}
	_ = tw.Flush()
	if f.NotCompared > 0 {
		fmt.Fprintf(w, "%d varied plays not compared (a play failed or was simulator-limited)\n", f.NotCompared)
	}
	for _, x := range f.Flips {
		fmt.Fprintf(w, "FLIP %s %s under %s: %s -> %s (gold %s)\n", strings.ToUpper(string(x.Direction)), x.VignetteID, x.Variation, orNone(x.Base), orNone(x.Varied), x.Gold)
	}
}

func printConsistency(w io.Writer, c *scenarios.ConsistencyReport) {
	fmt.Fprintf(w, "consistency over up to %d repeats: mean agreement with the modal class %s, pass^k %s of %d vignettes\n", c.K, pct(c.All.MeanAgreement), pct(c.All.PassK), c.All.N)
	for _, k := range scenarios.Classes {
		if s, ok := c.PerClass[k]; ok {
			fmt.Fprintf(w, "  %s: agreement %s, pass^k %s (%d)\n", k, pct(s.MeanAgreement), pct(s.PassK), s.N)
		}
	}
}

func writeJUnit(path string, r *scenarios.Report, j scenarios.JUnit) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := scenarios.WriteJUnit(f, r, j); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sandboxEngine is the embedded sandbox's engine: in the named voice, or
// worded by a voice file (named by its path). It is loaded even when
// INTAKE_BASE_URL is set and no sandbox starts: a bad voice is said before
// anything is played.
func sandboxEngine(voice, file string) (string, *rules.Engine, error) {
	if file == "" {
		voice = cmp.Or(voice, rules.VoicePlain)
		eng, err := rules.NewVoice(voice)
		return voice, eng, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil, fmt.Errorf("-voice-file: %w", err)
	}
	eng, err := rules.NewVoiceOverlay(file, data)
	if err != nil {
		return "", nil, fmt.Errorf("-voice-file: %w", err)
	}
	return file, eng, nil
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
func scenarioClient(ctx context.Context, cfg app.Config, voice string, eng *rules.Engine) (*intakeapi.Client, func(), string, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.UpstreamURL == "" {
		client, closeSandbox, err := app.LimitlessSandbox(ctx, log, eng)
		if err != nil {
			return nil, nil, "", err
		}
		return client, closeSandbox, "an embedded sandbox (limits off, voice " + voice + ")", nil
	}
	p := pacer.New(pacer.Config{Rules: cfg.KeyRules(), Logger: log})
	client, err := intakeapi.New(intakeapi.Config{BaseURL: cfg.UpstreamURL, APIKey: cfg.APIKey, Gate: p, Logger: log})
	if err != nil {
		return nil, nil, "", err
	}
	return client, func() {}, cfg.UpstreamURL, nil
}

// cliParallel is how many vignettes the command plays at once: ceiling
// against the embedded sandbox (its limits are off), else what the key's
// requests a minute can feed (scenarioruns.Parallel, as the app's runs).
func cliParallel(s *scenarios.Suite, cfg app.Config, ceiling int) int {
	if cfg.UpstreamURL == "" {
		return ceiling
	}
	perMinute := cmp.Or(cfg.PacerPerMinute, pacing.DefaultPerMinute)
	turns := 0
	for _, v := range s.Vignettes {
		turns += scenarioruns.ExpectedTurns(v)
	}
	return scenarioruns.Parallel(perMinute, (turns+len(s.Vignettes)-1)/max(len(s.Vignettes), 1), ceiling)
}

// estimate says how many requests the run needs and whether a day's quota
// covers it (the service's 100 turns unless PACER_TURNS_PER_DAY says
// otherwise). Each vignette is expected to take what the app's estimate
// expects of it when no earlier run says (scenarioruns.ExpectedTurns).
func estimate(s *scenarios.Suite, repeats int, cfg app.Config) string {
	turns := 0
	for _, v := range s.Vignettes {
		turns += scenarioruns.ExpectedTurns(v)
	}
	turns *= repeats
	intakes := len(s.Vignettes) * repeats
	msg := fmt.Sprintf("estimate: %d intakes and about %d turns", intakes, turns)
	if cfg.UpstreamURL == "" {
		return msg + " (the embedded sandbox has no quota)"
	}
	perDay := cmp.Or(cfg.TurnsPerDay, pacing.DefaultTurnsPerDay)
	if perDay < 0 {
		return msg + ": the key has no daily quota (PACER_TURNS_PER_DAY < 0)"
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
	if t := c.Clustered; t != nil {
		fmt.Fprintf(w, "with repeats: %s over %d vignettes, correct %s -> %s, p = %.4g\n", t.Method, t.Clusters, pct(t.BaseCorrect), pct(t.HeadCorrect), t.PValue)
	}
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
