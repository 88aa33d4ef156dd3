// Package scenarioruns runs scenario suites inside the app as durable jobs
// (bff.ScenarioService): a clinician starts a run, a replica claims it and
// plays its items, as many at once as the key's budget can feed, at a
// priority below live patients,
// recording every step, and a restart resumes it where it stood without
// driving the engine twice. It also estimates a run's cost against the
// key's daily quota, scores and compares runs, and records adjudications.
package scenarioruns

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/services/handoffs"
	"github.com/clinical-intake/intake-web/bff/services/play"
)

// Targets: where runs play.
const (
	TargetSandbox = "sandbox" // an embedded sandbox with its limits off
	TargetService = "service" // the configured key, within its budget
)

// Limits of a run.
const (
	MaxRepeats  = 10
	MaxLabel    = 100
	MaxItems    = 2000 // vignettes × repeats
	MaxNote     = 2000
	listedRuns  = 200
	defaultIdle = 5 * time.Second
)

// Deps are what the service needs.
type Deps struct {
	Store bff.ScenarioRunStore
	Audit bff.AuditStore
	// Client is the client runs play through: the app's own (the key,
	// paced with live patients) or an embedded sandbox's with its limits
	// off (Target says which).
	Client *intakeapi.Client
	Target string
	// TurnsToday reports the key's turns spent today and its daily quota
	// (limit <= 0: none). nil when Target is the sandbox.
	TurnsToday func(ctx context.Context) (used, limit int, err error)
	// Reserve is the turns of each day's quota kept for patients: a run
	// waits for the next day rather than spend them.
	Reserve int
	// PerMinute is the key's requests a minute (<= 0: no limit): with the
	// run's expected turns it bounds the items played at once (Parallel)
	// and the finish estimate.
	PerMinute int
	// Parallel is the most items a run plays at once (the operator's
	// ceiling, SCENARIO_PARALLEL); 0 or 1: one at a time.
	Parallel int
	// Replica names this process in leases; Shared says other replicas
	// use the same store (without, a run's lease left by a previous
	// process is taken back at once). With Shared, Replica must be this
	// run of the process's own (the app adds a suffix to the replica's
	// name), or a replica restarted under the same name would renew the
	// lease of the run its dead process held and never play it again.
	Replica string
	Shared  bool
	Lease   time.Duration // 0: 30 s
	Idle    time.Duration // how often an idle replica looks for runs; 0: 5 s
	Now     bff.Clock
	Logger  *slog.Logger
}

// Service implements bff.ScenarioService; Serve plays the runs.
type Service struct {
	d      Deps
	now    bff.Clock
	log    *slog.Logger
	suites []*scenarios.Suite // the built-in suite, then its files
	wake   chan struct{}
	busy   atomic.Bool // a run is being played
}

var _ bff.ScenarioService = (*Service)(nil)

// New builds the service. The built-in suites are part of the binary; an
// error loading them is a fault of the build.
func New(d Deps) (*Service, error) {
	all, err := scenarios.Builtin()
	if err != nil {
		return nil, err
	}
	parts, err := scenarios.BuiltinParts()
	if err != nil {
		return nil, err
	}
	if d.Lease <= 0 {
		d.Lease = 30 * time.Second
	}
	if d.Idle <= 0 {
		d.Idle = defaultIdle
	}
	if d.Target == "" {
		d.Target = TargetService
	}
	s := &Service{d: d, now: d.Now, log: d.Logger, suites: append([]*scenarios.Suite{all}, parts...), wake: make(chan struct{}, 1)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Suites implements bff.ScenarioService.
func (s *Service) Suites() []bff.ScenarioSuite {
	out := make([]bff.ScenarioSuite, len(s.suites))
	for i, su := range s.suites {
		title := "Every built-in vignette"
		if i > 0 {
			title = "Built-in: " + strings.ReplaceAll(strings.TrimPrefix(su.Name, scenarios.BuiltinName+"/"), "_", " and ")
		}
		turns := 0
		for _, v := range su.Vignettes {
			turns += ExpectedTurns(v)
		}
		n := len(su.Vignettes)
		out[i] = bff.ScenarioSuite{Name: su.Name, Title: title, Vignettes: n, AtOnce: min(s.parallel(turns, n), n)}
	}
	return out
}

// form checks f and returns the suite it names or carries and what each
// repeat of the run plays (in the suite's order; see planned).
func (s *Service) form(f bff.ScenarioRunForm) (*scenarios.Suite, []play.Vignette, error) {
	if f.Repeats < 1 || f.Repeats > MaxRepeats {
		return nil, nil, bff.Invalid("repeats", "Repeats must be a whole number from 1 to %d.", MaxRepeats)
	}
	if utf8.RuneCountInString(f.Label) > MaxLabel {
		return nil, nil, bff.Invalid("label", "The label can be at most %d characters.", MaxLabel)
	}
	var suite *scenarios.Suite
	if len(f.Upload) > 0 {
		name := f.UploadName
		if name == "" {
			name = "upload.yaml"
		}
		su, err := scenarios.Load(name, f.Upload)
		if head := scenarios.NotLoaded(err); head != "" {
			e := bff.Invalid("upload", "%s. Correct the file and upload it again.", head)
			e.Cause = err
			return nil, nil, e
		} else if err != nil {
			return nil, nil, err
		}
		suite = su
	} else {
		for _, su := range s.suites {
			if su.Name == f.Suite {
				suite = su
			}
		}
		if suite == nil {
			return nil, nil, bff.Invalid("suite", "Choose one of the suites listed, or upload a suite file.")
		}
	}
	if err := checkVariations(f.Variations); err != nil {
		return nil, nil, err
	}
	plays := play.Plays(suite, f.Variations, VariationSeed)
	if n := len(plays) * f.Repeats; n > MaxItems {
		return nil, nil, bff.Invalid("repeats", "A run can play at most %d vignettes (this one would play %d): fewer repeats, or a smaller suite.", MaxItems, n)
	}
	return suite, plays, nil
}

// planned checks f and returns its suite, what each repeat plays in play
// order, and the run's estimate. The latest runs are read once for both
// the urgent-first order and the estimate (history).
func (s *Service) planned(ctx context.Context, f bff.ScenarioRunForm) (*scenarios.Suite, []play.Vignette, *bff.ScenarioRunEstimate, error) {
	suite, plays, err := s.form(f)
	if err != nil {
		return nil, nil, nil, err
	}
	h, err := s.history(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if f.UrgentFirst {
		flipped, err := h.flipped(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		plays = play.Order(plays, flipped)
	}
	est, err := s.estimate(ctx, h, suite, plays, f.Repeats)
	if err != nil {
		return nil, nil, nil, err
	}
	return suite, plays, est, nil
}

// StartRun implements bff.ScenarioService.
func (s *Service) StartRun(ctx context.Context, clinician string, f bff.ScenarioRunForm) (*bff.ScenarioRun, *bff.ScenarioRunEstimate, error) {
	suite, plays, est, err := s.planned(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	if err := playable(suite, est); err != nil {
		return nil, nil, err
	}
	r, err := s.start(ctx, clinician, suite, plays, f.Repeats, est, func(r *bff.ScenarioRun) { r.Label = strings.TrimSpace(f.Label) })
	if err != nil {
		return nil, nil, err
	}
	return r, est, nil
}

// start records a run of plays × repeats, estimated est and set by with,
// audits it as started under clinician and wakes this replica to play it:
// every run, a replay too, starts here.
func (s *Service) start(ctx context.Context, clinician string, suite *scenarios.Suite, plays []play.Vignette, repeats int,
	est *bff.ScenarioRunEstimate, with func(*bff.ScenarioRun)) (*bff.ScenarioRun, error) {
	now := s.now().UTC()
	r := &bff.ScenarioRun{
		ID: newRunID(), Suite: suite, SuiteName: suite.Name, Repeats: repeats, Target: s.d.Target,
		StartedBy: clinician, State: bff.RunQueued, Items: len(plays) * repeats,
		Estimate: est.Turns, CreatedAt: now, UpdatedAt: now,
	}
	with(r)
	items := make([]*bff.ScenarioItem, 0, r.Items)
	for rep := 1; rep <= repeats; rep++ {
		for _, p := range plays {
			items = append(items, &bff.ScenarioItem{RunID: r.ID, Seq: len(items), VignetteID: p.Vignette.ID, Title: p.Vignette.Title,
				Repeat: rep, Variation: p.Variation, State: bff.ItemPending, UpdatedAt: now})
		}
	}
	if err := s.d.Store.CreateScenarioRun(ctx, r, items); err != nil {
		return nil, err
	}
	detail := fmt.Sprintf("run %s of %s (%d vignettes × %d)", r.ID, suite.Name, len(suite.Vignettes), repeats)
	if r.ReplayOf != "" {
		detail += fmt.Sprintf(", a replay of run %s for the question %s", r.ReplayOf, shortQuote(r.ReplayQuestion))
	}
	s.audit(ctx, clinician, bff.AuditScenarioStart, detail)
	select { // this replica looks for it at once
	case s.wake <- struct{}{}:
	default:
	}
	return r, nil
}

// playable refuses a run that could never finish: an item starts only when
// the day's turns left to runs cover its turn limit (mustWait).
func playable(suite *scenarios.Suite, est *bff.ScenarioRunEstimate) error {
	if est.Unlimited || est.NoQuota {
		return nil
	}
	if est.PerDay == 0 {
		return bff.Errorf(bff.ECONFLICT, "Runs cannot spend any of the key's turns: the turns kept for patients (SCENARIO_PATIENT_RESERVE) take the whole daily quota.")
	}
	for i := range suite.Vignettes {
		if n := maxTurns(&suite.Vignettes[i]); n > est.PerDay {
			return bff.Invalid("suite", "Vignette %s may take %d turns, more than the %d a day runs may spend: it could never start.", suite.Vignettes[i].ID, n, est.PerDay)
		}
	}
	return nil
}

// Estimate implements bff.ScenarioService.
func (s *Service) Estimate(ctx context.Context, f bff.ScenarioRunForm) (*bff.ScenarioRunEstimate, error) {
	_, _, est, err := s.planned(ctx, f)
	return est, err
}

// Runs implements bff.ScenarioService.
func (s *Service) Runs(ctx context.Context) ([]*bff.ScenarioRun, error) {
	return s.d.Store.ScenarioRuns(ctx, listedRuns)
}

// Run implements bff.ScenarioService.
func (s *Service) Run(ctx context.Context, id string) (*bff.ScenarioRun, []*bff.ScenarioItem, error) {
	r, err := s.d.Store.ScenarioRun(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	items, err := s.d.Store.ScenarioItems(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return r, items, nil
}

// Report implements bff.ScenarioService.
func (s *Service) Report(ctx context.Context, id string) (*scenarios.Report, error) {
	results, err := s.results(ctx, id)
	if err != nil {
		return nil, err
	}
	return scenarios.NewReport(results), nil
}

// results are a run's finished items' results, in play order.
func (s *Service) results(ctx context.Context, id string) ([]scenarios.Result, error) {
	_, items, err := s.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	return bff.ScenarioResults(items), nil
}

// Item implements bff.ScenarioService.
func (s *Service) Item(ctx context.Context, runID string, seq int) (*bff.ScenarioRun, *bff.ScenarioItem, error) {
	r, err := s.d.Store.ScenarioRun(ctx, runID)
	if err != nil {
		return nil, nil, err
	}
	it, err := s.d.Store.ScenarioItem(ctx, runID, seq)
	if err != nil {
		return nil, nil, err
	}
	if len(it.Handoff) > 0 {
		// Decoded as the app decodes every stored handoff.
		if it.Decoded, err = handoffs.Decode(&bff.StoredHandoff{IntakeID: it.EncounterID, JSON: it.Handoff}); err != nil {
			s.log.Warn("a scenario item's handoff does not decode", "run", runID, "seq", seq, "err", err)
		}
	}
	return r, it, nil
}

// Progress implements bff.ScenarioService.
func (s *Service) Progress(ctx context.Context, id string) (*bff.ScenarioRunProgress, error) {
	// Polled by every open run page: one run and the items in flight,
	// never all the run's items.
	r, err := s.d.Store.ScenarioRun(ctx, id)
	if err != nil {
		return nil, err
	}
	p := &bff.ScenarioRunProgress{Run: r}
	if r.State.Ended() || r.Played >= r.Items {
		return p, nil
	}
	if p.Playing, err = s.d.Store.PlayingScenarioItems(ctx, id, MaxItems); err != nil {
		return nil, err
	}
	return p, nil
}

// CancelRun implements bff.ScenarioService.
func (s *Service) CancelRun(ctx context.Context, clinician, id string) error {
	if err := s.d.Store.CancelScenarioRun(ctx, id, "Cancelled by "+clinician+".", s.now().UTC()); err != nil {
		if bff.ErrorCode(err) == bff.ECONFLICT {
			return bff.Errorf(bff.ECONFLICT, "This run has already ended.")
		}
		return err
	}
	s.audit(ctx, clinician, bff.AuditScenarioCancel, "run "+id)
	return nil
}

// Compare implements bff.ScenarioService.
func (s *Service) Compare(ctx context.Context, base, head string) (*scenarios.Comparison, error) {
	if base == head {
		return nil, bff.Invalid("head", "Choose two different runs to compare.")
	}
	b, err := s.results(ctx, base)
	if err != nil {
		return nil, err
	}
	h, err := s.results(ctx, head)
	if err != nil {
		return nil, err
	}
	adj, err := s.Adjudications(ctx)
	if err != nil {
		return nil, err
	}
	c := scenarios.Compare(b, h, adj)
	return &c, nil
}

// Adjudications implements bff.ScenarioService.
func (s *Service) Adjudications(ctx context.Context) (map[string]scenarios.Adjudication, error) {
	all, err := s.d.Store.ScenarioAdjudications(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]scenarios.Adjudication, len(all))
	for _, a := range all { // oldest first: a later verdict replaces an earlier one
		out[a.VignetteID] = a.Adjudication
	}
	return out, nil
}

// Adjudicate implements bff.ScenarioService.
func (s *Service) Adjudicate(ctx context.Context, clinician, base, head, vignette string, v scenarios.Verdict, note string) (*bff.ScenarioAdjudication, error) {
	if v != scenarios.GoldWrong && v != scenarios.EngineWrong {
		return nil, bff.Invalid("verdict", "Choose whether the gold label or the engine is wrong.")
	}
	note = strings.TrimSpace(note)
	if note == "" || utf8.RuneCountInString(note) > MaxNote {
		return nil, bff.Invalid("note", "Say why, in 1 to %d characters.", MaxNote)
	}
	if _, err := s.d.Store.ScenarioRun(ctx, base); err != nil {
		return nil, err
	}
	hr, err := s.d.Store.ScenarioRun(ctx, head)
	if err != nil {
		return nil, err
	}
	var gold scenarios.Class
	found := false
	for _, x := range hr.Suite.Vignettes {
		if x.ID == vignette {
			gold, found = x.Gold.Class, true
		}
	}
	if !found {
		return nil, bff.Invalid("vignette", "That vignette is not in the run compared.")
	}
	a := &bff.ScenarioAdjudication{
		Adjudication: scenarios.Adjudication{VignetteID: vignette, Verdict: v, Gold: gold, Note: note, By: clinician, At: s.now().UTC()},
		BaseRun:      base, HeadRun: head,
	}
	if err := s.d.Store.AddScenarioAdjudication(ctx, a); err != nil {
		return nil, err
	}
	s.audit(ctx, clinician, bff.AuditAdjudicate, fmt.Sprintf("%s vs %s: %s %s", base, head, vignette, v))
	return a, nil
}

// audit records a clinician's action; a failure is logged, never shown
// (the action itself is done).
func (s *Service) audit(ctx context.Context, actor, action, detail string) {
	if s.d.Audit == nil {
		return
	}
	if err := s.d.Audit.AddAudit(ctx, &bff.AuditEntry{At: s.now().UTC(), Actor: actor, Action: action, Detail: detail}); err != nil {
		s.log.Error("audit a scenario action", "action", action, "err", err)
	}
}

func newRunID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "sr_" + hex.EncodeToString(b)
}
