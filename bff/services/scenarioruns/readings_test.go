package scenarioruns

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/adapters/sqlite"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/sandbox"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// releaseClient is a client of a limitless sandbox reporting release.
func releaseClient(t *testing.T, release string) *intakeapi.Client {
	t.Helper()
	eng, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	sc := sandbox.DefaultConfig()
	sc.Keys, sc.Engine, sc.Logger, sc.Release = []string{sandbox.GenerateKey(sc.KeyPrefix)}, eng, slog.New(slog.DiscardHandler), release
	sc.RPM, sc.TurnsPerDay, sc.IntakesPerDay, sc.FragmentDelay = 0, 0, 0, 0
	sb, err := sandbox.Start(t.Context(), sc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Close)
	c, err := intakeapi.New(intakeapi.Config{BaseURL: sb.URL, APIKey: sc.Keys[0], Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// playOnce starts a run of suite on s and serves it to its end.
func playOnce(t *testing.T, s *Service, db *sqlite.DB, suite []byte) (*bff.ScenarioRun, []*bff.ScenarioItem) {
	t.Helper()
	r, _, err := s.StartRun(t.Context(), "dr.ada", bff.ScenarioRunForm{Upload: suite, UploadName: "small.yaml", Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	serveUntil(t, s, func() bool { return runState(t, db, r.ID).State == bff.RunDone })
	run, items, err := s.Run(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	return run, items
}

// answersTo are the answers of items' results to the question (normal text).
func answersTo(items []*bff.ScenarioItem, question string) []scenarios.Answer {
	var out []scenarios.Answer
	for _, it := range items {
		if it.Result == nil {
			continue
		}
		for _, a := range it.Result.Answers {
			if a.Question != "" && scenarios.NormalQuestion(a.Question) == question {
				out = append(out, a)
			}
		}
	}
	return out
}

// A run records every question it asked; a question reviewed as one the
// vignettes cannot answer is answered so in the next run against the same
// release, with the reviewer in its why; the decision is audited with the
// reading before and after; and another release neither applies it nor
// hides it: it is offered there as a suggestion.
func TestReviewedReadingsWinPerRelease(t *testing.T) {
	db := mustOpenDB(t)
	suite := smallSuite(t, 1)
	s := newService(t, Deps{Store: db, Audit: db, Client: releaseClient(t, "rel-1"), Target: TargetSandbox})

	_, items := playOnce(t, s, db, suite)
	page, err := s.Readings(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if page.Release != "rel-1" || len(page.Questions) == 0 || page.Reviewed != 0 {
		t.Fatalf("readings page after one run: release %q, %d questions, %d reviewed", page.Release, len(page.Questions), page.Reviewed)
	}
	var q *bff.ReadingQuestion
	for _, c := range page.Questions {
		if c.Kind == scenarios.ReadingConcept && q == nil {
			q = c
		}
	}
	if q == nil {
		t.Fatal("no question read by concept")
	}
	if got := answersTo(items, q.Question); len(got) == 0 || got[0].Why.Reviewed() {
		t.Fatalf("before any review the answers to %q: %+v", q.Question, got)
	}

	if _, err := s.ReviewReading(t.Context(), "dr.ada", bff.ReadingReviewForm{Release: "rel-1", Question: q.Question,
		Decision: scenarios.ReviewUnanswerable, Note: "asks two things"}); err != nil {
		t.Fatal(err)
	}
	entries, err := db.Audit(t.Context(), 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	audited := false
	for _, e := range entries {
		if e.Action == bff.AuditReadingReview && e.Actor == "dr.ada" && !e.At.IsZero() &&
			strings.Contains(e.Detail, "before automatic: concept") && strings.Contains(e.Detail, "after not answerable") {
			audited = true
		}
	}
	if !audited {
		t.Fatalf("the review is not audited with who, before and after: %+v", entries)
	}

	_, items = playOnce(t, s, db, suite)
	got := answersTo(items, q.Question)
	if len(got) == 0 {
		t.Fatalf("the second run did not ask %q", q.Question)
	}
	for _, a := range got {
		if a.Why.Kind != scenarios.WhyNotUnderstood || a.Why.ReviewedBy != "dr.ada" || !strings.Contains(a.Reason, "reviewed by dr.ada on ") {
			t.Fatalf("the reviewed reading was not used: %+v", a)
		}
	}

	// Another release: not applied, offered.
	other := newService(t, Deps{Store: db, Audit: db, Client: releaseClient(t, "rel-2"), Target: TargetSandbox})
	_, items = playOnce(t, other, db, suite)
	for _, a := range answersTo(items, q.Question) {
		if a.Why.Reviewed() {
			t.Fatalf("rel-1's review was applied to rel-2: %+v", a)
		}
	}
	page, err = s.Readings(t.Context(), "rel-2")
	if err != nil {
		t.Fatal(err)
	}
	if page.Previous != "rel-1" || page.Reviewed != 0 {
		t.Fatalf("rel-2's page: previous %q, %d reviewed", page.Previous, page.Reviewed)
	}
	offered := false
	for _, c := range page.Questions {
		if c.Question == q.Question {
			offered = c.Review == nil && c.Suggestion != nil && c.Suggestion.Decision == scenarios.ReviewUnanswerable
		}
	}
	if !offered {
		t.Fatal("rel-1's review is not offered as a suggestion on rel-2's page")
	}
}

// Bad decisions are refused naming the field, and nothing is recorded.
func TestReviewReadingRefusesBadInput(t *testing.T) {
	db := mustOpenDB(t)
	s := newService(t, Deps{Store: db, Audit: db, Client: releaseClient(t, "rel-1"), Target: TargetSandbox})
	playOnce(t, s, db, smallSuite(t, 1))
	page, err := s.Readings(t.Context(), "rel-1")
	if err != nil {
		t.Fatal(err)
	}
	q := page.Questions[0].Question
	for _, c := range []struct {
		f     bff.ReadingReviewForm
		field string
	}{
		{bff.ReadingReviewForm{Release: "rel-1", Question: "never asked?", Decision: scenarios.ReviewConfirmed}, "question"},
		{bff.ReadingReviewForm{Release: "rel-1", Question: q, Decision: "maybe"}, "decision"},
		{bff.ReadingReviewForm{Release: "rel-1", Question: q, Decision: scenarios.ReviewCorrected, Concept: "no_such"}, "concept"},
		{bff.ReadingReviewForm{Release: "rel-1", Question: q, Decision: scenarios.ReviewConfirmed, Note: strings.Repeat("x", MaxNote+1)}, "note"},
	} {
		_, err := s.ReviewReading(t.Context(), "dr.ada", c.f)
		if e, ok := err.(*bff.Error); !ok || e.Field != c.field {
			t.Errorf("%+v: %v, want a refusal naming %s", c.f, err, c.field)
		}
	}
	if _, err := s.ReviewReading(t.Context(), "dr.ada", bff.ReadingReviewForm{Release: "rel-9", Question: q, Decision: scenarios.ReviewConfirmed}); bff.ErrorCode(err) != bff.ENOTFOUND {
		t.Errorf("a release with no readings: %v", err)
	}
	if rvs, _ := db.ReadingReviews(t.Context(), "rel-1"); len(rvs) != 0 {
		t.Fatalf("refused reviews were recorded: %+v", rvs)
	}
}
