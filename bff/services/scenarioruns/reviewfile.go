package scenarioruns

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// reviewFile is a release's reviewed readings as a file (YAML): what a
// team keeps under version control (docs/scenarios.md).
type reviewFile struct {
	Release string       `yaml:"release"`
	Reviews []fileReview `yaml:"reviews"`
}

type fileReview struct {
	Question string                   `yaml:"question"`
	Decision scenarios.ReviewDecision `yaml:"decision"`
	Concept  string                   `yaml:"concept,omitempty"`
	Inverse  bool                     `yaml:"inverse,omitempty"`
	Note     string                   `yaml:"note,omitempty"`
	By       string                   `yaml:"by"`
	At       time.Time                `yaml:"at"`
}

// ExportReviews implements bff.ReadingService.
func (s *Service) ExportReviews(ctx context.Context, release string) ([]byte, error) {
	inForce, err := s.reviewsOf(ctx, release)
	if err != nil {
		return nil, err
	}
	if len(inForce) == 0 {
		return nil, bff.Errorf(bff.ENOTFOUND, "Release %s has no reviewed readings.", release)
	}
	f := reviewFile{Release: release}
	for _, rv := range inForce {
		f.Reviews = append(f.Reviews, fileReview{Question: rv.Question, Decision: rv.Decision, Concept: rv.Concept,
			Inverse: rv.Inverse, Note: rv.Note, By: rv.By, At: rv.At.UTC()})
	}
	slices.SortFunc(f.Reviews, func(a, b fileReview) int { return cmp.Compare(a.Question, b.Question) })
	var buf bytes.Buffer
	buf.WriteString("# Reviewed readings of engine release " + release + " (intake-web scenarios readings export).\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&f); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// ImportReviews implements bff.ReadingService. Every review is checked
// before any is added; a question need not have been asked here yet (a
// file carries a team's reviews to a new database).
func (s *Service) ImportReviews(ctx context.Context, actor string, data []byte) (string, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", 0, bff.Invalid("file", "The file is not YAML: %s.", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", 0, bff.Invalid("file", "line 1: the file must be a mapping with release and reviews.")
	}
	top := doc.Content[0]
	var release string
	if v := valueOf(top, "release"); v != nil {
		if err := v.Decode(&release); err != nil || strings.TrimSpace(release) == "" {
			return "", 0, fieldErr(top, "release", "the engine release, as text")
		}
	} else {
		return "", 0, fieldErr(top, "release", "the engine release is required")
	}
	reviews := valueOf(top, "reviews")
	if reviews == nil || reviews.Kind != yaml.SequenceNode || len(reviews.Content) == 0 {
		return "", 0, fieldErr(top, "reviews", "a list of at least one review is required")
	}
	f := reviewFile{Release: strings.TrimSpace(release)}
	for _, n := range reviews.Content {
		fr, err := decodeReview(n)
		if err != nil {
			return "", 0, err
		}
		f.Reviews = append(f.Reviews, fr)
	}
	var out []*bff.ReadingReview
	seen := map[string]int{}
	for i, fr := range f.Reviews {
		n := reviews.Content[i]
		rv, err := s.fileReview(f.Release, fr, n)
		if err != nil {
			return "", 0, err
		}
		if l, ok := seen[rv.Question]; ok {
			return "", 0, fieldErr(n, "question", fmt.Sprintf("the question is reviewed twice (first on line %d)", l))
		}
		seen[rv.Question] = n.Line
		out = append(out, rv)
	}
	for _, rv := range out {
		if err := s.addReview(ctx, actor, rv, "imported: ", rv.Question, "as recorded"); err != nil {
			return "", 0, err
		}
	}
	return f.Release, len(out), nil
}

// fileReview checks one review of a file (node n) as the page checks a
// decision, and makes it a review of release.
func (s *Service) fileReview(release string, fr fileReview, n *yaml.Node) (*bff.ReadingReview, error) {
	q := scenarios.NormalQuestion(fr.Question)
	switch {
	case q == "":
		return nil, fieldErr(n, "question", "the question is required")
	case !fr.Decision.Valid():
		return nil, fieldErr(n, "decision", "must be confirmed, corrected or unanswerable")
	case fr.Decision == scenarios.ReviewCorrected && fr.Concept == "":
		return nil, fieldErr(n, "concept", "a corrected reading names the concept it asks about")
	case fr.Decision != scenarios.ReviewCorrected && (fr.Concept != "" || fr.Inverse):
		return nil, fieldErr(n, "concept", "only a corrected reading names a concept")
	case utf8.RuneCountInString(strings.TrimSpace(fr.Note)) > MaxNote:
		return nil, fieldErr(n, "note", fmt.Sprintf("at most %d characters", MaxNote))
	case strings.TrimSpace(fr.By) == "":
		return nil, fieldErr(n, "by", "who decided is required")
	case fr.At.IsZero():
		return nil, fieldErr(n, "at", "when it was decided is required (2026-11-28T09:30:00Z)")
	}
	reading, err := decidedReading(fr.Decision, fr.Concept, fr.Inverse, q)
	if err != nil {
		return nil, fieldErr(n, "concept", "not a concept of the vocabulary")
	}
	return &bff.ReadingReview{Release: release, Question: q, Concept: fr.Concept, Inverse: fr.Inverse, Note: strings.TrimSpace(fr.Note),
		Reviewed: scenarios.Reviewed{Decision: fr.Decision, Reading: reading, By: strings.TrimSpace(fr.By), At: fr.At.UTC()}}, nil
}

// decodeReview reads one review of a file field by field, so that a value
// of the wrong kind is named by its line and field.
func decodeReview(n *yaml.Node) (fileReview, error) {
	var fr fileReview
	if n.Kind != yaml.MappingNode {
		return fr, bff.Invalid("reviews", "line %d: reviews: each review is a mapping of question, decision, concept, inverse, note, by and at.", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		var err error
		switch k {
		case "question":
			err = v.Decode(&fr.Question)
		case "decision":
			err = v.Decode(&fr.Decision)
		case "concept":
			err = v.Decode(&fr.Concept)
		case "inverse":
			err = v.Decode(&fr.Inverse)
		case "note":
			err = v.Decode(&fr.Note)
		case "by":
			err = v.Decode(&fr.By)
		case "at":
			err = v.Decode(&fr.At)
		default:
			return fr, bff.Invalid(k, "line %d: %s: not a field of a review (question, decision, concept, inverse, note, by, at).", n.Content[i].Line, k)
		}
		if err != nil || v.Kind != yaml.ScalarNode {
			rule := map[string]string{"inverse": "true or false", "at": "a time such as 2026-11-28T09:30:00Z"}[k]
			return fr, bff.Invalid(k, "line %d: %s: must be %s.", v.Line, k, cmp.Or(rule, "text"))
		}
	}
	return fr, nil
}

// valueOf is the value of key in mapping m (nil: absent).
func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// fieldErr is EINVALID naming the line of field in mapping m (the
// mapping's own line when the field is absent) and the field.
func fieldErr(m *yaml.Node, field, rule string) error {
	line := m.Line
	if v := valueOf(m, field); v != nil {
		line = v.Line
	}
	return bff.Invalid(field, "line %d: %s: %s.", line, field, rule)
}
