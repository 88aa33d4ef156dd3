package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
)

// flipSuite is a vignette the enginetest.ExactWords engine escalates as written and
// one it sends home, with the service that plays them (a sandbox without
// limits on loopback, at INTAKE_BASE_URL for the command).
func flipSuite(t *testing.T) (suite string, getenv func(string) string) {
	t.Helper()
	const opening = "I have been feeling terrible since yesterday morning and my whole family is worried about me"
	cfg := sandbox.DefaultConfig()
	key := sandbox.GenerateKey(cfg.KeyPrefix)
	cfg.Keys, cfg.Engine, cfg.Logger = []string{key}, enginetest.ExactWords{Words: opening}, slog.New(slog.DiscardHandler)
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
