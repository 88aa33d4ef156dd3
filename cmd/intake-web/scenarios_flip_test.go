package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/engine"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
)

// wordsMatter is an engine for tests of what the command does with a
// flip, where the engine's language is not under test: it escalates when
// the opening message is exactly its words and sends everything else home.
// Any variation that changes the words is then a downward flip, whatever
// the rules engine of the day has learned to read (the test once relied on
// the rules engine missing a misspelt overdose, which it no longer does).
type wordsMatter struct{ words string }

func (e wordsMatter) Evaluate(_ context.Context, in engine.Input) (engine.Result, error) {
	r := engine.Result{
		SafetyStatus:       engine.SafetyCannotMissNegative,
		Disposition:        engine.DispositionSelfCare,
		DispositionLabel:   "Self-care advice",
		IntakeStatus:       engine.IntakeStatusComplete,
		ActiveProtocol:     "scripted.v1",
		CandidateProtocols: []string{"scripted.v1"},
		Scores:             []engine.Score{},
		SafetyNotes:        []string{},
		Terminal:           true,
		Reply:              "Thank you. This can be looked after at home.",
	}
	if len(in.Patient) == 0 {
		r.Terminal, r.Reply, r.Disposition, r.IntakeStatus = false, "", engine.DispositionContinue, "needs_presenting_complaint"
		return r, nil
	}
	r.SOAP.Subjective = "Patient reports: " + in.Patient[0]
	if in.Patient[0] == e.words {
		r.Reply = "This needs urgent attention. Please call emergency services now."
		r.Urgent, r.SafetyStatus = true, engine.SafetyCannotMissPositive
		r.Disposition, r.DispositionLabel = engine.DispositionEscalate, "Urgent escalation"
		r.SafetyNotes = []string{"Scripted red flag reported."}
	}
	return r, nil
}

func (wordsMatter) Identity() engine.Identity { return enginetest.Scripted{}.Identity() }

// flipSuite is a vignette the wordsMatter engine escalates as written and
// one it sends home, with the service that plays them (a sandbox without
// limits on loopback, at INTAKE_BASE_URL for the command).
func flipSuite(t *testing.T) (suite string, getenv func(string) string) {
	t.Helper()
	const opening = "I have been feeling terrible since yesterday morning and my whole family is worried about me"
	cfg := sandbox.DefaultConfig()
	key := sandbox.GenerateKey(cfg.KeyPrefix)
	cfg.Keys, cfg.Engine, cfg.Logger = []string{key}, wordsMatter{words: opening}, slog.New(slog.DiscardHandler)
	cfg.RPM, cfg.TurnsPerDay, cfg.IntakesPerDay, cfg.FragmentDelay = 0, 0, 0, 0
	sb, err := sandbox.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	env := map[string]string{
		"INTAKE_BASE_URL": sb.URL, "INTAKE_API_KEY": key,
		"PACER_PER_MINUTE": "-1", "PACER_TURNS_PER_DAY": "-1", "PACER_INTAKES_PER_DAY": "-1",
	}
	suite = filepath.Join(t.TempDir(), "flip.yaml")
	yaml := `suite: flip
vignettes:
  - id: words-matter
    title: Escalated only as written
    age_years: 40
    sex: female
    opening: "` + opening + `"
    default: "no"
    gold:
      class: emergency
  - id: home
    title: Sent home whatever its words
    age_years: 40
    sex: female
    opening: "I have a mild cold and a runny nose"
    default: "no"
    gold:
      class: self_care
`
	if err := os.WriteFile(suite, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return suite, func(k string) string { return env[k] }
}
