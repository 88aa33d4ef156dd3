package scenarioruns

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/sandbox/enginetest"
	"go.yaml.in/yaml/v3"
)

// pickSuite is the named built-in vignettes, in this order, as an upload.
func pickSuite(t *testing.T, ids ...string) []byte {
	t.Helper()
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	s := &scenarios.Suite{Name: "picked"}
	for _, id := range ids {
		i := slices.IndexFunc(all.Vignettes, func(v scenarios.Vignette) bool { return v.ID == id })
		if i < 0 {
			t.Fatalf("no built-in vignette %s", id)
		}
		s.Vignettes = append(s.Vignettes, all.Vignettes[i])
	}
	data, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRunPlaysVariations: a run with variations plays each vignette as
// written and under each variation, the report's flips compare them, an
// urgent-first run plays emergencies first and, once a run has flipped
// some, those next; the estimate splits its cost by variation.
func TestRunPlaysVariations(t *testing.T) {
	suite := pickSuite(t, "sore-throat-breathing-fine", "chest-infection-crb65-three", "toddler-swallowed-tablets")
	// An engine that escalates only on the toddler's opening as written:
	// a variation that changes it flips down, whatever the rules engine of
	// the day has learned to read.
	var picked scenarios.Suite
	if err := yaml.Unmarshal(suite, &picked); err != nil {
		t.Fatal(err)
	}
	eng := newEngineOn(t, enginetest.ExactWords{Words: picked.Vignettes[2].Opening})
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Audit: db, Client: eng.client(t), Target: TargetSandbox})
	form := bff.ScenarioRunForm{Upload: suite, Repeats: 1, Variations: []string{"typos", "lay"}, UrgentFirst: true}

	_, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Upload: suite, Repeats: 1, Variations: []string{"typos", "shouting"}})
	var e *bff.Error
	if !errors.As(err, &e) || e.Code != bff.EINVALID || e.Field != "variations" || !strings.Contains(e.Message, `"shouting"`) {
		t.Fatalf("an unknown variation: %v", err)
	}
	// A variation sent again and again is refused before anything is played.
	many := make([]string, 20000)
	for i := range many {
		many[i] = "typos"
	}
	if _, err := s.Estimate(t.Context(), bff.ScenarioRunForm{Upload: suite, Repeats: 1, Variations: many}); !errors.As(err, &e) ||
		e.Code != bff.EINVALID || e.Field != "variations" || !strings.Contains(e.Message, "twice") {
		t.Fatalf("a variation 20,000 times: %v", err)
	}
	est, err := s.Estimate(t.Context(), form)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.PerVariation) != 3 || est.PerVariation[0].Variation != "" || est.PerVariation[1].Variation != "typos" ||
		est.PerVariation[1].Intakes != 3 || est.Intakes != 9 {
		t.Fatalf("estimate %+v", est)
	}

	first, _, err := s.StartRun(t.Context(), "alice", form)
	if err != nil {
		t.Fatal(err)
	}
	serveUntil(t, s, func() bool { return runState(t, db, first.ID).State == bff.RunDone })
	_, items, err := s.Run(t.Context(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, it := range items {
		order = append(order, it.VignetteID+"/"+it.Variation)
		if it.Result == nil || it.Result.Variation != it.Variation {
			t.Errorf("item %d: result %+v", it.Seq, it.Result)
		}
	}
	want := []string{"toddler-swallowed-tablets/", "toddler-swallowed-tablets/typos", "toddler-swallowed-tablets/lay",
		"sore-throat-breathing-fine/", "sore-throat-breathing-fine/typos", "sore-throat-breathing-fine/lay",
		"chest-infection-crb65-three/", "chest-infection-crb65-three/typos", "chest-infection-crb65-three/lay"}
	if !slices.Equal(order, want) {
		t.Errorf("play order\n got %v\nwant %v", order, want)
	}
	// The varied opening reached the engine.
	if items[0].Turns[0].Message == items[1].Turns[0].Message {
		t.Errorf("the typos play said the same opening: %q", items[1].Turns[0].Message)
	}
	rep, err := s.Report(t.Context(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Runs != 3 {
		t.Errorf("the scores count %d results, want the 3 unvaried", rep.Summary.Runs)
	}
	if rep.Flips == nil || len(rep.Flips.Flips) == 0 {
		t.Fatalf("no flips: %+v", rep.Flips)
	}
	flipped := map[string]bool{}
	for _, f := range rep.Flips.Flips {
		flipped[f.VignetteID] = true
	}
	if !flipped["toddler-swallowed-tablets"] {
		t.Errorf("the toddler's typos play did not flip: %+v", rep.Flips.Flips)
	}
	// An urgent-first estimate reads the latest runs, and the played run's
	// items, once for both the order and the turns past plays took.
	counted := &countingStore{ScenarioRunStore: db}
	if _, err := newService(t, Deps{Store: counted, Target: TargetSandbox}).Estimate(t.Context(), form); err != nil {
		t.Fatal(err)
	}
	if counted.runs != 1 || counted.items != 1 {
		t.Errorf("an urgent-first estimate read the runs %d times and a run's items %d times, want once each", counted.runs, counted.items)
	}

	// The next urgent-first run: flipped emergencies, emergencies, flipped
	// others, the rest.
	second, _, err := s.StartRun(t.Context(), "alice", bff.ScenarioRunForm{Upload: suite, Repeats: 1, UrgentFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	_, items, err = s.Run(t.Context(), second.ID)
	if err != nil {
		t.Fatal(err)
	}
	order = order[:0]
	for _, it := range items {
		order = append(order, it.VignetteID)
	}
	want = []string{"toddler-swallowed-tablets", "sore-throat-breathing-fine", "chest-infection-crb65-three"}
	if flipped["chest-infection-crb65-three"] {
		want = []string{"toddler-swallowed-tablets", "chest-infection-crb65-three", "sore-throat-breathing-fine"}
	}
	if !slices.Equal(order, want) {
		t.Errorf("second run's order %v, want %v (flipped before: %v)", order, want, flipped)
	}
}

// countingStore counts the reads of the latest runs and of runs' items.
type countingStore struct {
	bff.ScenarioRunStore
	runs, items int
}

func (c *countingStore) ScenarioRuns(ctx context.Context, limit int) ([]*bff.ScenarioRun, error) {
	c.runs++
	return c.ScenarioRunStore.ScenarioRuns(ctx, limit)
}

func (c *countingStore) ScenarioItems(ctx context.Context, id string) ([]*bff.ScenarioItem, error) {
	c.items++
	return c.ScenarioRunStore.ScenarioItems(ctx, id)
}
