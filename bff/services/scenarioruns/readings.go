package scenarioruns

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

var _ bff.ReadingService = (*Service)(nil)

// Readings implements bff.ReadingService.
func (s *Service) Readings(ctx context.Context, release string) (*bff.ReadingsPage, error) {
	rels, err := s.d.Store.ReadingReleases(ctx)
	if err != nil {
		return nil, err
	}
	p := &bff.ReadingsPage{Release: release, Releases: rels}
	at := slices.IndexFunc(rels, func(r bff.ReadingRelease) bool { return r.Release == release })
	if release == "" && len(rels) > 0 {
		at, p.Release = 0, rels[0].Release
	}
	if at < 0 && release == "" { // no run has recorded readings yet
		return p, s.withConcepts(p)
	}
	if at < 0 {
		return nil, bff.Errorf(bff.ENOTFOUND, "No run has recorded readings of that release.")
	}
	if at+1 < len(rels) {
		p.Previous = rels[at+1].Release
	}
	read, err := s.d.Store.ScenarioReadings(ctx, p.Release)
	if err != nil {
		return nil, err
	}
	inForce, err := s.reviewsOf(ctx, p.Release)
	if err != nil {
		return nil, err
	}
	offered := map[string]*bff.ReadingReview{}
	if p.Previous != "" {
		if offered, err = s.reviewsOf(ctx, p.Previous); err != nil {
			return nil, err
		}
	}
	p.Questions = questions(read)
	for _, q := range p.Questions {
		q.Review = inForce[q.Question]
		if q.Review == nil {
			q.Suggestion = offered[q.Question]
		} else {
			p.Reviewed++
		}
	}
	slices.SortStableFunc(p.Questions, func(a, b *bff.ReadingQuestion) int {
		if (a.Review == nil) != (b.Review == nil) {
			if a.Review == nil {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.Plays, a.Plays)
	})
	return p, s.withConcepts(p)
}

// withConcepts lists the vocabulary's concepts on p, to choose from.
func (s *Service) withConcepts(p *bff.ReadingsPage) error {
	vocab, err := scenarios.Vocabulary()
	if err != nil {
		return err
	}
	for _, c := range vocab {
		p.Concepts = append(p.Concepts, c.ID)
	}
	return nil
}

// questions merges the runs' readings of one release by question: the
// first recorded reading, with the plays, vignettes, voices and runs of
// all.
func questions(read []*bff.ScenarioReading) []*bff.ReadingQuestion {
	var out []*bff.ReadingQuestion
	at := map[string]*bff.ReadingQuestion{}
	for _, r := range read {
		q := at[r.Question]
		if q == nil {
			q = &bff.ReadingQuestion{QuestionRead: r.QuestionRead}
			q.Plays, q.Vignettes, q.Voices = 0, nil, nil
			at[r.Question] = q
			out = append(out, q)
		}
		q.Plays += r.Plays
		q.Runs = append(q.Runs, r.RunID)
		for _, v := range r.Vignettes {
			if !slices.Contains(q.Vignettes, v) {
				q.Vignettes = append(q.Vignettes, v)
			}
		}
		for _, v := range r.Voices {
			if !slices.Contains(q.Voices, v) {
				q.Voices = append(q.Voices, v)
			}
		}
	}
	for _, q := range out {
		slices.Sort(q.Vignettes)
	}
	return out
}

// reviewsOf is the decision in force for each question of release: the
// latest.
func (s *Service) reviewsOf(ctx context.Context, release string) (map[string]*bff.ReadingReview, error) {
	all, err := s.d.Store.ReadingReviews(ctx, release)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*bff.ReadingReview, len(all))
	for _, rv := range all {
		out[rv.Question] = rv
	}
	return out, nil
}

// ReviewReading implements bff.ReadingService.
func (s *Service) ReviewReading(ctx context.Context, clinician string, f bff.ReadingReviewForm) (*bff.ReadingReview, error) {
	note := strings.TrimSpace(f.Note)
	if utf8.RuneCountInString(note) > MaxNote {
		return nil, bff.Invalid("note", "The note can be at most %d characters.", MaxNote)
	}
	if !f.Decision.Valid() {
		return nil, bff.Invalid("decision", "Confirm the reading, choose another concept, or say the vignettes cannot answer it.")
	}
	read, err := s.d.Store.ScenarioReadings(ctx, f.Release)
	if err != nil {
		return nil, err
	}
	if len(read) == 0 {
		return nil, bff.Errorf(bff.ENOTFOUND, "No run has recorded readings of that release.")
	}
	i := slices.IndexFunc(read, func(r *bff.ScenarioReading) bool { return r.Question == f.Question })
	if i < 0 {
		return nil, bff.Invalid("question", "That question was not asked by release %s.", f.Release)
	}
	q := read[i].QuestionRead
	rv := &bff.ReadingReview{Release: f.Release, Question: f.Question, Note: note,
		Reviewed: scenarios.Reviewed{Decision: f.Decision, By: clinician, At: s.now().UTC()}}
	if rv.Reading, err = decidedReading(f.Decision, f.Concept, f.Inverse, q.Example); err != nil {
		return nil, err
	}
	if f.Decision == scenarios.ReviewCorrected {
		rv.Concept, rv.Inverse = f.Concept, f.Inverse
	}
	return rv, s.addReview(ctx, clinician, rv, "", q.Example, automatic(q))
}

// decidedReading is the reading a decision gives a question worded
// example: the automatic one trusted (confirmed), concept's (corrected;
// EINVALID "concept" for one not in the vocabulary), or none.
func decidedReading(d scenarios.ReviewDecision, concept string, inverse bool, example string) (scenarios.Reading, error) {
	switch d {
	case scenarios.ReviewConfirmed:
		u, err := scenarios.Understanding()
		if err != nil {
			return scenarios.Reading{}, err
		}
		return scenarios.ConfirmedReading(scenarios.Read(u, example)), nil
	case scenarios.ReviewCorrected:
		vocab, err := scenarios.Vocabulary()
		if err != nil {
			return scenarios.Reading{}, err
		}
		for i := range vocab {
			if vocab[i].ID == concept {
				return scenarios.CorrectedReading(concept, vocab[i].Kind, inverse), nil
			}
		}
		return scenarios.Reading{}, bff.Invalid("concept", "Choose a concept of the vocabulary.")
	}
	return scenarios.Reading{}, nil
}

// addReview stores rv and audits it under actor with the decision it
// replaces (the automatic reading, said as auto, when there was none),
// quoting the question as example words it; how is "" for the page, or
// how it came ("imported: ").
func (s *Service) addReview(ctx context.Context, actor string, rv *bff.ReadingReview, how, example, auto string) error {
	before, err := s.reviewsOf(ctx, rv.Release)
	if err != nil {
		return err
	}
	was := "automatic: " + auto
	if b := before[rv.Question]; b != nil {
		was = describe(b)
	}
	if err := s.d.Store.AddReadingReview(ctx, rv); err != nil {
		return err
	}
	s.audit(ctx, actor, bff.AuditReadingReview, fmt.Sprintf("%srelease %s, question %s: before %s; after %s",
		how, rv.Release, shortQuote(example), was, describe(rv)))
	return nil
}

// automatic says how the patient read q on its own.
func automatic(q scenarios.QuestionRead) string {
	s := string(q.Kind)
	if len(q.Concepts) > 0 {
		s += " " + strings.Join(q.Concepts, " + ")
	}
	return s
}

// describe says a decision in a few words: "confirmed", "corrected to
// fever (opposite)", "not answerable".
func describe(rv *bff.ReadingReview) string {
	switch rv.Decision {
	case scenarios.ReviewCorrected:
		s := "corrected to " + rv.Concept
		if rv.Inverse {
			s += " (opposite)"
		}
		return s + " by " + rv.By
	case scenarios.ReviewUnanswerable:
		return "not answerable by the vignettes, by " + rv.By
	}
	return "confirmed by " + rv.By
}

func shortQuote(s string) string {
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:119]) + "…"
	}
	return "“" + s + "”"
}

// storedReviews are the reviewed readings a run plays with: each
// release's decisions read from the store the first time an engine
// message of that release is answered, then kept for the run (a decision
// made while the run plays applies from the next run). Safe for
// concurrent use by a run's items.
type storedReviews struct {
	s       *Service
	ctx     context.Context
	mu      sync.Mutex
	release map[string]map[string]scenarios.Reviewed
}

func (s *Service) runReviews(ctx context.Context) *storedReviews {
	return &storedReviews{s: s, ctx: ctx, release: map[string]map[string]scenarios.Reviewed{}}
}

// Reviewed implements scenarios.Reviews; a store that cannot be read
// leaves the automatic understanding (logged).
func (r *storedReviews) Reviewed(release, question string) (scenarios.Reviewed, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.release[release]
	if !ok {
		all, err := r.s.reviewsOf(r.ctx, release)
		if err != nil {
			r.s.log.Error("read the reviewed readings of a release", "release", release, "err", err)
			return scenarios.Reviewed{}, false
		}
		m = make(map[string]scenarios.Reviewed, len(all))
		for q, rv := range all {
			m[q] = rv.Reviewed
		}
		r.release[release] = m
	}
	rv, ok := m[question]
	return rv, ok
}

// recordReadings records the questions the run's finished items asked, as
// the patient read them, replacing what the run recorded before.
func (s *Service) recordReadings(ctx context.Context, runID string, items []*bff.ScenarioItem) error {
	now := s.now().UTC()
	var rs []*bff.ScenarioReading
	for _, q := range scenarios.QuestionsRead(bff.ScenarioResults(items)) {
		rs = append(rs, &bff.ScenarioReading{QuestionRead: q, SeenAt: now})
	}
	return s.d.Store.PutScenarioReadings(ctx, runID, rs)
}
