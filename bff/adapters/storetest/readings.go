package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// testScenarioReadings: a run's readings round-trip, replace the run's
// earlier ones, are listed by release only, and releases come newest first.
func testScenarioReadings(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	mustCreateRun(t, db, newRun("sr_a", t0))
	mustCreateRun(t, db, newRun("sr_b", t0.Add(time.Hour)))
	if rels, err := db.ReadingReleases(ctx); err != nil || len(rels) != 0 {
		t.Fatalf("releases of a fresh store: %v, %v", rels, err)
	}
	q := func(release, question string, plays int) *bff.ScenarioReading {
		return &bff.ScenarioReading{QuestionRead: scenarios.QuestionRead{Release: release, Voices: []string{"plain"},
			Question: question, Example: "Any " + question + "?", Answer: "no", Kind: scenarios.ReadingConcept,
			Concepts: []string{"fever"}, Cue: "fever", Margin: 2, ReviewedBy: "dr_a", ReviewedOn: "2026-11-28",
			Plays: plays, Vignettes: []string{"cold", "flu"}}}
	}
	first := []*bff.ScenarioReading{q("r1", "any fever?", 3), q("r1", "any cough?", 1)}
	for _, r := range first {
		r.SeenAt = t0
	}
	if err := db.PutScenarioReadings(ctx, "sr_a", first); err != nil {
		t.Fatal(err)
	}
	// Put again: the run's readings are replaced, not added.
	again := []*bff.ScenarioReading{q("r1", "any fever?", 4)}
	again[0].SeenAt = t0
	if err := db.PutScenarioReadings(ctx, "sr_a", again); err != nil {
		t.Fatal(err)
	}
	later := []*bff.ScenarioReading{q("r2", "any fever?", 1), q("r1", "any rash?", 2)}
	for _, r := range later {
		r.SeenAt = t0.Add(time.Hour)
	}
	if err := db.PutScenarioReadings(ctx, "sr_b", later); err != nil {
		t.Fatal(err)
	}
	got, err := db.ScenarioReadings(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := []*bff.ScenarioReading{again[0], later[1]}
	if len(got) != len(want) {
		t.Fatalf("%d readings of r1, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].SeenAt.Equal(want[i].SeenAt) {
			t.Fatalf("reading %d seen at %v, want %v", i, got[i].SeenAt, want[i].SeenAt)
		}
		g, w := *got[i], *want[i]
		g.SeenAt, w.SeenAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("reading %d\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got, _ := db.ScenarioReadings(ctx, "r3"); len(got) != 0 {
		t.Fatalf("readings of a release never seen: %+v", got)
	}
	rels, err := db.ReadingReleases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 2 || rels[0].Release != "r2" || rels[1].Release != "r1" || !rels[1].FirstSeen.Equal(t0) {
		t.Fatalf("releases: %+v, want r2 then r1 (first seen %v)", rels, t0)
	}
}

// testReadingReviews: reviews round-trip in the order added, per release.
func testReadingReviews(t *testing.T, db bff.ScenarioRunStore) {
	ctx := context.Background()
	reading := scenarios.Reading{Asked: []scenarios.Asked{{Concept: "fever", Kind: "yes_no", Inverse: true, Cue: "reviewed", Question: 0, Margin: 1}}}
	var want []*bff.ReadingReview
	for i, rv := range []*bff.ReadingReview{
		{Release: "r1", Question: "any fever?", Reviewed: scenarios.Reviewed{Decision: scenarios.ReviewCorrected, Reading: reading, By: "dr_a", At: t0.Add(time.Hour)},
			Concept: "fever", Inverse: true, Note: "asks the opposite"},
		{Release: "r2", Question: "any fever?", Reviewed: scenarios.Reviewed{Decision: scenarios.ReviewConfirmed, Reading: reading, By: "dr_b", At: t0}},
		{Release: "r1", Question: "any fever?", Reviewed: scenarios.Reviewed{Decision: scenarios.ReviewUnanswerable, By: "dr_b", At: t0}},
	} {
		if err := db.AddReadingReview(ctx, rv); err != nil {
			t.Fatal(err)
		}
		if len(want) > 0 && rv.ID <= want[len(want)-1].ID {
			t.Fatalf("review %d got id %d after %d", i, rv.ID, want[len(want)-1].ID)
		}
		if rv.Release == "r1" {
			want = append(want, rv)
		}
	}
	got, err := db.ReadingReviews(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d reviews of r1, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := *got[i], *want[i]
		if !g.At.Equal(w.At) {
			t.Fatalf("review %d at %v, want %v", i, g.At, w.At)
		}
		g.At, w.At = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("review %d\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got, _ := db.ReadingReviews(ctx, "r3"); len(got) != 0 {
		t.Fatalf("reviews of a release with none: %+v", got)
	}
}
