package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/pacing"
	"github.com/clinical-intake/intake-web/bff/services/scenarioruns"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// DefaultPatientReserve is the turns of each day's quota scenario runs
// leave to patients unless SCENARIO_PATIENT_RESERVE says otherwise.
const DefaultPatientReserve = 30

// DefaultScenarioParallel is the most items of a run played at once unless
// SCENARIO_PARALLEL says otherwise: the built-in suite's 61 vignettes fit.
const DefaultScenarioParallel = 64

// LimitlessSandbox starts an embedded sandbox with its limits off (no
// requests a minute, no daily quotas, no delay between fragments) and
// returns a client of it: where scenario runs play when the app's upstream
// is the embedded sandbox, since a run of the built-in suite takes
// hundreds of turns. eng is its engine (rules.NewVoice, or a voice file's
// rules.NewVoiceOverlay). close stops it.
func LimitlessSandbox(ctx context.Context, log *slog.Logger, eng *rules.Engine) (client *intakeapi.Client, close func(), err error) {
	sc := sandbox.DefaultConfig()
	sc.Keys, sc.Engine, sc.Logger = []string{sandbox.GenerateKey(sc.KeyPrefix)}, eng, log.With("component", "scenario-sandbox")
	sc.RPM, sc.TurnsPerDay, sc.IntakesPerDay, sc.FragmentDelay = 0, 0, 0, 0
	sb, err := sandbox.Start(ctx, sc)
	if err != nil {
		return nil, nil, err
	}
	client, err = intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: sc.Keys[0], Logger: log.With("component", "scenario-client")})
	if err != nil {
		sb.Close()
		return nil, nil, err
	}
	return client, sb.Close, nil
}

// newScenarios builds the scenario runs' service: on a limitless sandbox
// of its own when SCENARIO_TARGET is sandbox (the default with the
// embedded sandbox), else through the app's client and the key's budget.
func (a *App) newScenarios(ctx context.Context) error {
	cfg := a.cfg
	d := scenarioruns.Deps{
		Store: a.db, Audit: a.db, Client: a.client, Target: cfg.ScenarioTarget,
		Reserve: cfg.PatientReserve, PerMinute: cfg.PacerPerMinute, Parallel: cfg.ScenarioParallel, Replica: a.runName,
		Lease: cfg.TurnLease, Now: cfg.Now, Logger: a.log.With("component", "scenarios"),
	}
	d.Shared = a.db.shared != nil
	if d.Target == "" {
		d.Target = scenarioruns.TargetService
		if cfg.Embedded {
			d.Target = scenarioruns.TargetSandbox
		}
	}
	if d.PerMinute == 0 {
		d.PerMinute = pacing.DefaultPerMinute
	}
	if d.Parallel == 0 { // a Config not read from the environment
		d.Parallel = DefaultScenarioParallel
	}
	if d.Target == scenarioruns.TargetSandbox {
		eng, err := rules.NewVoice(cmp.Or(cfg.ScenarioVoice, rules.VoicePlain))
		if err != nil {
			return fmt.Errorf("load the scenario sandbox's protocol library: %w", err)
		}
		client, closeSandbox, err := LimitlessSandbox(ctx, a.log, eng)
		if err != nil {
			return fmt.Errorf("start the scenario sandbox: %w", err)
		}
		d.Client, a.closeScenarioSandbox = client, closeSandbox
	} else {
		limit := cfg.TurnsPerDay
		if limit == 0 {
			limit = pacing.DefaultTurnsPerDay
		}
		d.TurnsToday = func(ctx context.Context) (int, int, error) {
			_, used, err := a.budget.stats(ctx)
			return used, limit, err
		}
	}
	s, err := scenarioruns.New(d)
	if err != nil {
		return err
	}
	a.scenarios = s
	return nil
}
