package fhir_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/fhir"
	"github.com/clinical-intake/intake-web/bff/fhir/fhirtest"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// TestSandboxHandoffs maps handoffs the sandbox's real rules engine wrote
// (a closed PHQ-2 intake, an urgent one, an open one and an expired one)
// and validates each document. With FHIR_EXAMPLE_OUT set, it writes the
// closed intake's document there (docs/fhir.md's example).
func TestSandboxHandoffs(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	eng, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	key := sandbox.GenerateKey("cis")
	cfg := sandbox.DefaultConfig()
	cfg.Keys, cfg.Engine, cfg.Now = []string{key}, eng, clock
	cfg.RPM, cfg.TurnsPerDay, cfg.IntakesPerDay, cfg.FragmentDelay, cfg.Build = 0, 0, 0, 0, "example"
	sb, err := sandbox.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	client, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	age := 30
	run := func(messages ...string) string {
		t.Helper()
		in, _, err := client.CreateIntake(ctx, intakeapi.NewIntake{AgeYears: &age, Sex: intakeapi.SexFemale})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range messages {
			if _, _, err := client.Turn(ctx, in.EncounterID, m, ""); err != nil {
				t.Fatalf("%q: %v", m, err)
			}
			mu.Lock()
			now = now.Add(25 * time.Second) // a turn takes 20 to 40 s
			mu.Unlock()
		}
		return in.EncounterID
	}
	document := func(id, status string) (*fhirtest.Bundle, []byte, *bff.Handoff) {
		t.Helper()
		h, meta, err := client.Handoff(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		d := intakeapi.DomainHandoff(h)
		in := &bff.Intake{ID: id, Status: status, CreatedAt: clock(), ExpiresAt: clock().Add(2 * time.Hour)}
		doc, err := fhir.Document(fhir.Input{Handoff: d, Intake: in, FetchedAt: clock(), Release: meta.Release})
		if err != nil {
			t.Fatal(err)
		}
		return fhirtest.CheckDocument(t, doc), doc, d
	}

	closed := run("I've been feeling low nearly every day for weeks", "no", "no", "no", "Several days", "yes")
	b, doc, h := document(closed, bff.StatusClosed)
	if !h.Terminal || len(h.Scores) != 1 || b.Composition()["status"] != "final" || len(observations(b, "55758-7")) != 1 {
		t.Fatalf("closed PHQ-2 intake: terminal %v, scores %v", h.Terminal, h.Scores)
	}
	if out := os.Getenv("FHIR_EXAMPLE_OUT"); out != "" {
		if err := os.WriteFile(out, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// docs/fhir.md's example is this document: the same but for the ids a
	// run draws at random, so a change of the mapping or of the engine
	// (its version, its hashes) shows up here until the example is
	// regenerated.
	if want := docsExample(t); normaliseIDs(string(doc)) != normaliseIDs(want) {
		t.Errorf("docs/fhir.md's example is not what the code writes today: regenerate it (docs/fhir.md says how)")
	}

	urgent := run("I have crushing chest pain")
	if b, _, h := document(urgent, bff.StatusClosed); !h.Urgent || len(b.Resources("Flag")) != 1 {
		t.Fatalf("urgent intake: urgent %v", h.Urgent)
	}

	open := run("I have had a sore throat for 3 days")
	if b, _, h := document(open, bff.StatusOpen); h.Terminal || b.Composition()["status"] != "preliminary" {
		t.Fatalf("open intake: terminal %v", h.Terminal)
	}

	expired := run("I have had a sore throat for 3 days")
	mu.Lock()
	now = now.Add(3 * time.Hour)
	mu.Unlock()
	if sum, _, err := client.Summary(ctx, expired); err != nil || sum.Status != bff.StatusExpired {
		t.Fatalf("the intake did not expire: %v %v", sum, err)
	}
	if b, _, _ := document(expired, bff.StatusExpired); b.Composition()["status"] != "final" || b.Resources("QuestionnaireResponse")[0]["status"] != "stopped" {
		t.Fatal("expired intake")
	}
}

// docsExample is the JSON of docs/fhir.md's "Example" section.
func docsExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/fhir.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, example, ok := strings.Cut(doc, "\n## Example\n")
	if !ok {
		t.Fatal("docs/fhir.md has no Example section")
	}
	_, example, ok = strings.Cut(example, "```json\n")
	example, _, ok2 := strings.Cut(example, "\n```")
	if !ok || !ok2 {
		t.Fatal("docs/fhir.md's Example has no json block")
	}
	return example
}

var randomIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b(enc|aud)_[0-9a-f_]+`)

// normaliseIDs replaces the ids a run draws at random (UUIDs made from the
// encounter id, encounter and audit ids) by their first appearance's rank,
// so two runs compare equal when only those differ.
func normaliseIDs(s string) string {
	seen := map[string]string{}
	return strings.TrimSpace(randomIDs.ReplaceAllStringFunc(s, func(id string) string {
		if r, ok := seen[id]; ok {
			return r
		}
		seen[id] = fmt.Sprintf("<id %d>", len(seen))
		return seen[id]
	}))
}
