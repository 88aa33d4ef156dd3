package scenarioruns

import (
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
)

// A replay plays exactly the items of the run whose transcripts asked the
// question, each once, as a new run linked to the old one, estimated and
// audited as any run started; a question no item asked is refused.
func TestReplayPlaysOnlyTheItemsThatAskedTheQuestion(t *testing.T) {
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Audit: db, Client: releaseClient(t, "rel-1"), Target: TargetSandbox})
	run, items := playOnce(t, s, db, smallSuite(t, 6))

	page, err := s.Readings(t.Context(), "rel-1")
	if err != nil {
		t.Fatal(err)
	}
	// A question some vignettes asked and others did not.
	var question string
	var want []string
	for _, q := range page.Questions {
		if len(q.Vignettes) > 0 && len(q.Vignettes) < len(items) {
			question, want = q.Question, q.Vignettes
			break
		}
	}
	if question == "" {
		t.Fatal("every question was asked by every vignette: no subset to replay")
	}
	plan, err := s.PlanReplay(t.Context(), run.ID, "rel-1", question)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Plays != len(want) || plan.Estimate == nil || plan.Estimate.Intakes != len(want) {
		t.Fatalf("plan: %d plays, estimate %+v; want %d (%v)", plan.Plays, plan.Estimate, len(want), want)
	}
	r, est, err := s.StartReplay(t.Context(), "dr.ada", run.ID, "rel-1", question)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReplayOf != run.ID || r.ReplayQuestion != question || est == nil {
		t.Fatalf("replay run: of %q for %q (estimate %v); want of %s for %q", r.ReplayOf, r.ReplayQuestion, est, run.ID, question)
	}
	got, err := db.ScenarioItems(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range got {
		ids = append(ids, it.VignetteID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("replay plays %v; want only the vignettes that asked %q: %v", ids, question, want)
	}
	stored := runState(t, db, r.ID)
	if stored.ReplayOf != run.ID || stored.Items != len(want) {
		t.Fatalf("stored replay: of %q, %d items", stored.ReplayOf, stored.Items)
	}
	audit, err := db.Audit(t.Context(), 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(audit, func(e *bff.AuditEntry) bool {
		return e.Action == bff.AuditScenarioStart && e.Actor == "dr.ada" && strings.Contains(e.Detail, "a replay of run "+run.ID)
	}) {
		t.Fatalf("the replay was not audited as a run started: %+v", audit)
	}

	_, err = s.PlanReplay(t.Context(), run.ID, "rel-1", "is the moon made of cheese?")
	if e, ok := err.(*bff.Error); !ok || e.Code != bff.EINVALID || e.Field != "question" {
		t.Fatalf("replay of a question nobody asked: %v; want EINVALID question", err)
	}
	_, err = s.PlanReplay(t.Context(), "sr_none", "rel-1", question)
	if e, ok := err.(*bff.Error); !ok || e.Code != bff.ENOTFOUND {
		t.Fatalf("replay of no run: %v; want ENOTFOUND", err)
	}
}
