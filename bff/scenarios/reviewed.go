package scenarios

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
)

// NormalQuestion is an engine message as readings and reviews key it: lower
// case, typographic quotes and dashes made plain, runs of white space one
// space, trimmed. Two messages with the same normal text are one question:
// a reading reviewed for one stands for the other.
func NormalQuestion(message string) string {
	r := strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`, "–", "-", "—", "-")
	return strings.Join(strings.FieldsFunc(strings.ToLower(r.Replace(message)), unicode.IsSpace), " ")
}

// ReleaseOf is the release named by a response's x-service-release header
// as the handoff's provenance names it: without build metadata after a
// "+" ("sandbox-2026.08+dev" is "sandbox-2026.08"), which identifies a
// build of the release, not another release.
func ReleaseOf(header string) string {
	r, _, _ := strings.Cut(header, "+")
	return r
}

// ReviewDecision is what a reviewer decided about the patient's reading of
// one engine question.
type ReviewDecision string

// The decisions.
const (
	// ReviewConfirmed: the automatic reading is right (a reading below the
	// margin is then trusted).
	ReviewConfirmed ReviewDecision = "confirmed"
	// ReviewCorrected: the question asks about another concept.
	ReviewCorrected ReviewDecision = "corrected"
	// ReviewUnanswerable: not a question the vignettes can answer: the
	// patient says it does not understand.
	ReviewUnanswerable ReviewDecision = "unanswerable"
)

// Valid reports whether d is one of the decisions.
func (d ReviewDecision) Valid() bool {
	return d == ReviewConfirmed || d == ReviewCorrected || d == ReviewUnanswerable
}

// Reviewed is a reading a person decided on: what the patient uses for
// the question instead of the automatic understanding.
type Reviewed struct {
	Decision ReviewDecision `json:"decision"`
	// Reading is what the patient answers from (empty for
	// ReviewUnanswerable).
	Reading Reading   `json:"reading"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// Reviews gives the reviewed reading of an engine question (its
// NormalQuestion) for the engine release that asked it. A reading reviewed
// for one release never stands for another: a new release words and means
// its questions anew. Implementations are safe for concurrent use.
type Reviews interface {
	Reviewed(release, question string) (Reviewed, bool)
}

// ReviewMap is Reviews in memory: release → normal question → reading.
type ReviewMap map[string]map[string]Reviewed

// Reviewed implements Reviews.
func (m ReviewMap) Reviewed(release, question string) (Reviewed, bool) {
	r, ok := m[release][question]
	return r, ok
}

// ConfirmedReading is the automatic reading r trusted as it is: a reviewer
// confirmed it, so a margin below concepts.MinMargin no longer stops it.
func ConfirmedReading(r Reading) Reading {
	out := Reading{Asked: slices.Clone(r.Asked)}
	for i := range out.Asked {
		out.Asked[i].Margin = max(out.Asked[i].Margin, concepts.MinMargin)
	}
	return out
}

// CorrectedReading is the reading of a question a reviewer said asks about
// concept (of kind), in its own sense or, inverse, the opposite one.
func CorrectedReading(concept string, kind concepts.Kind, inverse bool) Reading {
	return Reading{Asked: []Asked{{Concept: concept, Kind: kind, Inverse: inverse, Cue: "reviewed", Margin: concepts.MinMargin}}}
}

// AnswerFrom answers one engine message like Answer, except that a reading
// reviewed for this release and this question (rv, may be nil) is used
// before the automatic understanding; facts stated by asks still come
// first, since they are the vignette's own words. The answer's Why then
// says who reviewed it and when.
func (p *Patient) AnswerFrom(rv Reviews, release, question string, choices []string) (Said, bool) {
	if rv == nil || release == "" {
		return p.Answer(question, choices)
	}
	r, ok := rv.Reviewed(release, NormalQuestion(question))
	if !ok {
		return p.Answer(question, choices)
	}
	if p.said >= p.max {
		return Said{}, false
	}
	if said, ok := p.byAsks(question, choices); ok {
		p.said++
		return said, true
	}
	said, ok := p.AnswerReading(r.Reading, choices)
	if ok {
		said.Why.ReviewedBy, said.Why.ReviewedOn = r.By, r.At.UTC().Format(time.DateOnly)
	}
	return said, ok
}

// QuestionRead is one distinct engine question of a run, as the patient
// read it: collected from the results' answers (QuestionsRead).
type QuestionRead struct {
	Release string `json:"release"`
	// Voices are the engine voices (provenance) it was asked in.
	Voices []string `json:"voices,omitempty"`
	// Question is its NormalQuestion; Example the message as the engine
	// worded it the first time, Answer what the patient said to it.
	Question string      `json:"question"`
	Example  string      `json:"example"`
	Answer   string      `json:"answer"`
	Kind     ReadingKind `json:"kind"`
	Concepts []string    `json:"concepts,omitempty"`
	Cue      string      `json:"cue,omitempty"`
	Margin   int         `json:"margin"`
	// ReviewedBy and ReviewedOn: it was answered on a reviewed reading.
	ReviewedBy string `json:"reviewed_by,omitempty"`
	ReviewedOn string `json:"reviewed_on,omitempty"`
	// Plays is how many plays asked it; Vignettes which, sorted.
	Plays     int      `json:"plays"`
	Vignettes []string `json:"vignettes"`
}

// QuestionsRead collects the distinct engine questions of results by
// release and normal text, in the order first asked. A reading by a fact's
// asks belongs to its vignette, not to the question, and is left out.
func QuestionsRead(results []Result) []QuestionRead {
	var out []QuestionRead
	at := map[[2]string]int{}
	for _, r := range results {
		seen := map[int]bool{}
		for _, a := range r.Answers {
			if a.Why.Kind == WhyOpening || a.Question == "" || a.Why.Reading() == ReadingAsks {
				continue
			}
			k := [2]string{r.Provenance.Release, NormalQuestion(a.Question)}
			i, ok := at[k]
			if !ok {
				i = len(out)
				at[k] = i
				out = append(out, QuestionRead{Release: k[0], Question: k[1], Example: a.Question, Answer: a.Message,
					Kind: a.Why.Reading(), Concepts: a.Why.Concepts, Cue: a.Why.Cue, Margin: a.Why.Margin,
					ReviewedBy: a.Why.ReviewedBy, ReviewedOn: a.Why.ReviewedOn})
			}
			q := &out[i]
			if v := r.Provenance.VoiceProfile; v != "" && !slices.Contains(q.Voices, v) {
				q.Voices = append(q.Voices, v)
			}
			if !slices.Contains(q.Vignettes, r.VignetteID) {
				q.Vignettes = append(q.Vignettes, r.VignetteID)
			}
			if !seen[i] {
				seen[i] = true
				q.Plays++
			}
		}
	}
	for i := range out {
		slices.Sort(out[i].Vignettes)
	}
	return out
}
