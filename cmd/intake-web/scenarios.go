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

	"github.com/clinical-intake/intake-web/bff"
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
                               [-vary LIST] [-seed N] [-baseline FILE] [-json FILE] [-junit FILE] [-fail-on LIST] [-dry-run]
       intake-web scenarios readings export|import ... (intake-web scenarios readings -h)

Plays a scenario suite (the built-in one without -suite) against the intake
service: INTAKE_BASE_URL and INTAKE_API_KEY, or an embedded sandbox with its
limits off when INTAKE_BASE_URL is unset (-voice chooses its engine's
wording: plain, conversational or a held-out round's, as intake-sandbox -h lists; -voice-file a wording of your own, in the
shape intake-sandbox -voice-template prints). Plays enough vignettes at once to use
the key's requests a minute (PACER_PER_MINUTE), at most -parallel
(three at the spec's 6 a minute). -vary plays each vignette again under
each named variation of how the patient speaks (all, or a list of: ` + "%s" + `),
and the report gives the flips. Says first what the run will cost (the
estimate the app's Scenarios page gives; -dry-run stops there, nothing
played). Prints a summary table; writes the JSON
report to -json and JUnit XML to -junit. Exits 1 on what -fail-on names
(under-triage, flip, regression; default regression: a vignette regressed
against -baseline, a report of an earlier run), 2 on a usage or suite error.`

// scenariosCommand runs `intake-web scenarios ...` and returns the exit
// status.
func scenariosCommand(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	usage := func() { fmt.Fprintf(stderr, scenariosUsage+"\n", strings.Join(variations.Names(), ", ")) }
	switch {
	case len(args) > 0 && slices.Contains([]string{"-h", "-help", "--help"}, args[0]):
		usage()
		return 0
	case len(args) == 0:
		usage()
		return 2
	case args[0] == "readings":
		return readingsCommand(args[1:], stdout, stderr, getenv)
	case args[0] != "run":
		fmt.Fprintf(stderr, "intake-web scenarios: unknown verb %q\n", args[0])
		usage()
		return 2
	}
	fs := flag.NewFlagSet("scenarios run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		usage()
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	suiteFile := fs.String("suite", "", "a suite file (YAML, docs/scenarios.md); default the built-in suite")
	repeats := fs.Int("repeats", 1, fmt.Sprintf("runs of each vignette (1-%d)", scenarioruns.MaxRepeats))
	baseline := fs.String("baseline", "", "the JSON report of an earlier run to compare with")
	jsonOut := fs.String("json", "", "write the JSON report to this file")
	parallel := fs.Int("parallel", app.DefaultScenarioParallel, "the most vignettes played at once (1-2000); within it, enough to use the key's requests a minute")
	vary := fs.String("vary", "", "variations to play besides each vignette as written: all, or a comma-separated list of "+strings.Join(variations.Names(), ", "))
	seed := fs.Uint64("seed", 1, "the seed of the variations' random parts (typos)")
	junitOut := fs.String("junit", "", "write JUnit XML to this file (a test case per vignette and variation)")
	failOn := fs.String("fail-on", "regression", "what makes the exit status 1: a comma-separated list of under-triage, flip (a downward flip), regression (against -baseline)")
	voice := fs.String("voice", "", "the embedded sandbox engine's voice: "+strings.Join(rules.Voices(), " or ")+" (default "+rules.VoicePlain+"); the real service words its own")
	voiceFile := fs.String("voice-file", "", "the embedded sandbox engine worded by this voice file instead (the shape intake-sandbox -voice-template prints): a wording nobody has played yet")
	dryRun := fs.Bool("dry-run", false, "say what the run would cost (intakes, turns, days of the key's quota) and stop: nothing is played")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "intake-web scenarios run: unexpected argument %q: every input is a flag (intake-web scenarios run -h)\n", fs.Arg(0))
		return 2
	}
	if *repeats < 1 || *repeats > scenarioruns.MaxRepeats {
		fmt.Fprintf(stderr, "intake-web scenarios: -repeats must be from 1 to %d\n", scenarioruns.MaxRepeats)
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
	cfg, err := fromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	plays := play.Plays(suite, names, *seed)
	now := time.Now()
	est := scenarioruns.Estimate(plays, *repeats, nil, cliBudget(cfg, *parallel, now))
	fmt.Fprintln(stderr, playsLine(suite, names, len(plays), *repeats, target(cfg, voiceName)))
	fmt.Fprintln(stderr, estimateLine(est, now))
	if len(est.PerVariation) > 0 {
		fmt.Fprintln(stderr, perVariationLine(est))
	}
	if *dryRun {
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, closeUpstream, err := scenarioClient(ctx, cfg, eng)
	if err != nil {
		fmt.Fprintln(stderr, "intake-web scenarios:", err)
		return 2
	}
	defer closeUpstream()

	width := est.Parallel
	fmt.Fprintln(stderr, "playing", atOnce(width))
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
		props := [][2]string{{"target", target(cfg, voiceName)}, {"release", report.Summary.Provenance.Release}, {"variations", strings.Join(names, ",")},
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
			fmt.Fprintf(stderr, "intake-web scenarios: failing: %s under-triaged\n", plural(n, "play", "plays"))
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
			fmt.Fprintf(stderr, "intake-web scenarios: failing: %s\n", plural(down, "downward flip", "downward flips"))
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

// perVariationLine says what each variation adds: its intakes and the
// turns they are expected to take (the estimate's PerVariation).
func perVariationLine(e *bff.ScenarioRunEstimate) string {
	var b strings.Builder
	b.WriteString("per variation (intakes/about turns):")
	for i, c := range e.PerVariation {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %d/%d", cmp.Or(c.Variation, "unvaried"), c.Intakes, c.Turns)
	}
	return b.String()
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
func scenarioClient(ctx context.Context, cfg app.Config, eng *rules.Engine) (*intakeapi.Client, func(), error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.UpstreamURL == "" {
		return app.LimitlessSandbox(ctx, log, eng)
	}
	p := pacer.New(pacer.Config{Rules: cfg.KeyRules(), Logger: log})
	client, err := intakeapi.New(intakeapi.Config{BaseURL: cfg.UpstreamURL, APIKey: cfg.APIKey, Gate: p, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	return client, func() {}, nil
}

// target is where the command plays, in words.
func target(cfg app.Config, voice string) string {
	if cfg.UpstreamURL == "" {
		return "an embedded sandbox (limits off, voice " + voice + ")"
	}
	return cfg.UpstreamURL
}

// cliBudget is the command's scenarioruns.Budget: against the embedded
// sandbox its limits are off (ceiling items at once); against a service,
// the key's limits as configured (PACER_PER_MINUTE, PACER_TURNS_PER_DAY or
// the service's defaults), today's spend unknown (taken as none: the line
// says so) and no turns kept for patients (the command is not the app).
func cliBudget(cfg app.Config, ceiling int, now time.Time) scenarioruns.Budget {
	if cfg.UpstreamURL == "" {
		return scenarioruns.Budget{Unlimited: true, Parallel: ceiling}
	}
	return scenarioruns.Budget{PerMinute: cmp.Or(cfg.PacerPerMinute, pacing.DefaultPerMinute), Parallel: ceiling,
		Limit: cmp.Or(cfg.TurnsPerDay, pacing.DefaultTurnsPerDay), Now: now}
}

// playsLine says what the run plays: the suite's vignettes, with the
// variations each again (a variation that does not fit a vignette skips
// it), times the repeats.
func playsLine(s *scenarios.Suite, vary []string, plays, repeats int, where string) string {
	what := plural(len(s.Vignettes), "vignette", "vignettes")
	if len(vary) > 0 {
		what += fmt.Sprintf(" as written and %s under %s", plural(plays-len(s.Vignettes), "varied play", "varied plays"), strings.Join(vary, ", "))
	}
	return fmt.Sprintf("%s: %s, x %s = %s against %s", s.Name, what, plural(repeats, "repeat", "repeats"), plural(plays*repeats, "play", "plays"), where)
}

// estimateLine says what the run is expected to cost (scenarioruns.Estimate,
// as the app's Scenarios page) and whether a day's quota covers it.
func estimateLine(e *bff.ScenarioRunEstimate, now time.Time) string {
	msg := fmt.Sprintf("estimate: %s and about %s (at most %d)", plural(e.Intakes, "intake", "intakes"), plural(e.Turns, "turn", "turns"), e.MaxTurns)
	took := ""
	if !e.Finish.IsZero() {
		took = "; about " + hoursMinutes(e.Finish.Sub(now)) + " at the key's pace"
	}
	switch {
	case e.Unlimited:
		return msg + " (the embedded sandbox has no quota)"
	case e.NoQuota:
		return msg + ": the key has no daily quota (PACER_TURNS_PER_DAY < 0)" + took
	case e.Days <= 1:
		return msg + fmt.Sprintf(": within a day's %d turns if the key's quota is unspent", e.PerDay) + took
	}
	return msg + fmt.Sprintf(": more than a day's %d turns; the run stops when today's quota is spent (about %d days' quota in all)", e.PerDay, e.Days)
}

// hoursMinutes is d rounded up to the minute, as "2 h 05 min" or "7 min".
func hoursMinutes(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%d min", max(m, 1))
	}
	return fmt.Sprintf("%d h %02d min", m/60, m%60)
}

// atOnce is how many vignettes play at once, in words.
func atOnce(n int) string {
	if n <= 1 {
		return "one vignette at a time"
	}
	return fmt.Sprintf("up to %d vignettes at once", n)
}

// plural is n and the word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
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

// printSummary prints the scores by gold class. A rate over nothing
// scored is "-", not 0.0% (which would say every play was wrong), and a
// line under the table says why.
func printSummary(w io.Writer, r *scenarios.Report) {
	s := r.Summary
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "class\tscored\taccuracy\tunder-triage\tover-triage\tsimulator-limited")
	unscored := false
	for _, c := range scenarios.Classes {
		cs, ok := s.PerClass[c]
		if !ok {
			continue
		}
		unscored = unscored || cs.N == 0
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\n", c, cs.N, rate(cs.N, cs.Accuracy), rate(cs.N, cs.UnderTriage), rate(cs.N, cs.OverTriage), cs.SimulatorLimited)
	}
	unscored = unscored || s.Scored == 0
	fmt.Fprintf(tw, "all\t%d\t%s\t%s\t%s\t%d\n", s.Scored, rate(s.Scored, s.Accuracy), rate(s.Scored, s.UnderTriage), rate(s.Scored, s.OverTriage), s.SimulatorLimited)
	_ = tw.Flush()
	if unscored {
		fmt.Fprintln(w, "-: nothing scored (the suite has no vignette of that gold class, or each play of it failed or was simulator-limited), so no rate")
	}
	fmt.Fprintf(w, "simulator coverage: %s of %d engine questions understood", pct(s.Coverage), s.Questions)
	if v := s.Provenance.VoiceProfile; v != "" {
		fmt.Fprintf(w, " (engine voice %s)", v)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "readings: %s\n", s.Readings)
	fmt.Fprintf(w, "answers resting on: %s\n", s.Basis)
	if s.Provisional > 0 {
		fmt.Fprintf(w, "provisional: in %d results an answer that changed the outcome rests on a reading nobody reviewed\n", s.Provisional)
	}
	if s.SimulatorLimited > 0 {
		fmt.Fprintf(w, "%d results are simulator-limited (a question the patient did not understand, or read below the margin) and are not in the rates above:\n", s.SimulatorLimited)
		for _, x := range r.Results {
			if x.SimulatorLimited {
				fmt.Fprintf(w, "  %s (repeat %d): %d of %d questions understood\n", x.VignetteID, x.Repeat, x.Understood, x.Questions)
			}
		}
	}
}

func printComparison(w io.Writer, c scenarios.Comparison) {
	scope := func(s scenarios.Scope) string {
		out := fmt.Sprintf("%d plays as written, %d scored", s.Plays, s.Scored)
		if s.Varied > 0 {
			out += fmt.Sprintf("; %d varied plays (%s) left out, %d flipped down against its plays as written", s.Varied, strings.Join(s.Variations, ", "), s.FlippedDown())
		}
		return out
	}
	fmt.Fprintf(w, "against the baseline: %d vignettes paired, as written, each judged by this run's gold label\n", c.Paired)
	fmt.Fprintf(w, "  baseline: %s\n  this run: %s\n", scope(c.BaseScope), scope(c.HeadScope))
	if f := c.BaseScope.Flips; f != nil {
		for _, x := range f.Flips {
			if x.Direction == scenarios.FlipDown {
				fmt.Fprintf(w, "  baseline FLIP DOWN %s under %s: %s -> %s (gold %s)\n", x.VignetteID, x.Variation, orNone(x.Base), orNone(x.Varied), x.Gold)
			}
		}
	}
	for _, g := range c.GoldChanges { // the suite changed, not the engine
		fmt.Fprintf(w, "GOLD CHANGED %s: %s -> %s; the engine answered %s -> %s\n", g.VignetteID, g.BaseGold, g.Gold, orNone(g.Base.Final), orNone(g.Head.Final))
	}
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

// rate is pct of a rate over n results, "-" over none.
func rate(n int, f float64) string {
	if n == 0 {
		return "-"
	}
	return pct(f)
}

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
