package safety

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// Log is a hazard log: every hazard the system can contribute to, with its
// controls. It is versioned as a whole by its store: every change is a new
// version, and a release decision names the version it was made on.
type Log struct {
	// System names what the log is about ("intake-web with the sandbox's
	// rules engine").
	System  string   `yaml:"system" json:"system"`
	Hazards []Hazard `yaml:"hazards" json:"hazards"`
}

// Status is where a hazard stands.
type Status string

// The statuses.
const (
	StatusOpen        Status = "open"        // its risk is still being reduced or evidenced
	StatusClosed      Status = "closed"      // its residual risk is accepted
	StatusTransferred Status = "transferred" // handed to the deploying organisation (DCB0160)
)

// Hazard is one potential source of harm: what causes it, what it leads
// to, its risk before (Initial) and after (Residual) its controls.
type Hazard struct {
	ID          string     `yaml:"id" json:"id"` // "H1": letters, digits and "-", at most 20, unique
	Title       string     `yaml:"title" json:"title"`
	Description string     `yaml:"description" json:"description"`
	Causes      []string   `yaml:"causes" json:"causes"`
	Effects     []string   `yaml:"effects" json:"effects"`
	Initial     Assessment `yaml:"initial" json:"initial"`
	Controls    []Control  `yaml:"controls" json:"controls"`
	Residual    Assessment `yaml:"residual" json:"residual"`
	Owner       string     `yaml:"owner" json:"owner"`
	Status      Status     `yaml:"status" json:"status"`
}

// Control is a measure that reduces a hazard's risk, and what evidences
// that it works.
type Control struct {
	ID          string     `yaml:"id" json:"id"` // "C1.1": unique in the log
	Title       string     `yaml:"title" json:"title"`
	Description string     `yaml:"description,omitempty" json:"description,omitempty"`
	Evidence    []Evidence `yaml:"evidence" json:"evidence"`
}

// Kind is what a piece of evidence checks.
type Kind string

// The kinds of evidence.
const (
	// Accuracy: at least Min of the selected scored plays correct.
	Accuracy Kind = "accuracy"
	// UnderTriage: at most Max of the selected scored plays under-triaged.
	UnderTriage Kind = "under_triage"
	// FlipRate: at most Max of the selected vignettes flipped down (less
	// urgent, or undecided) by the named variations (every variation
	// played, when none is named).
	FlipRate Kind = "flip_rate"
	// Reviewed: no selected play is provisional: no answer that changed
	// the outcome rests on a reading nobody reviewed (issue 35).
	Reviewed Kind = "reviewed_readings"
	// Vignettes: every scored play of every selected vignette correct.
	Vignettes Kind = "vignettes"
	// Test: an automated test of the app, by name (and package); recorded
	// for the reader, not evaluated against runs.
	Test Kind = "test"
)

// Kinds lists the kinds of evidence.
func Kinds() []Kind { return []Kind{Accuracy, UnderTriage, FlipRate, Reviewed, Vignettes, Test} }

// Evidence is one thing that shows a control works: a rule over an engine
// release's scenario runs, or a named test.
type Evidence struct {
	Kind Kind `yaml:"kind" json:"kind"`
	// The plays it looks at: the vignettes of Class, those whose id matches
	// one of Vignettes (an id, or a pattern with *: "chest-*"), those with
	// one of Tags; every vignette when all three are empty. A vignette's
	// tags are its gold class ("emergency", "urgent", "routine",
	// "self_care").
	Class     scenarios.Class `yaml:"class,omitempty" json:"class,omitempty"`
	Vignettes []string        `yaml:"vignettes,omitempty" json:"vignettes,omitempty"`
	Tags      []string        `yaml:"tags,omitempty" json:"tags,omitempty"`
	// Variations, for FlipRate: the variations whose flips count (none:
	// every variation played).
	Variations []string `yaml:"variations,omitempty" json:"variations,omitempty"`
	// Min (Accuracy) and Max (UnderTriage, FlipRate) are fractions, 0-1.
	Min *float64 `yaml:"min,omitempty" json:"min,omitempty"`
	Max *float64 `yaml:"max,omitempty" json:"max,omitempty"`
	// Test and Package name an automated test (Kind Test).
	Test    string `yaml:"test,omitempty" json:"test,omitempty"`
	Package string `yaml:"package,omitempty" json:"package,omitempty"`
}

// Tags of a vignette, as evidence selects by them: its gold class.
func tagsOf(r scenarios.Result) []string { return []string{string(r.Gold.Class)} }

// Selects reports whether the evidence looks at result r's vignette.
func (e Evidence) Selects(r scenarios.Result) bool {
	if e.Class == "" && len(e.Vignettes) == 0 && len(e.Tags) == 0 {
		return true
	}
	if e.Class != "" && r.Gold.Class == e.Class {
		return true
	}
	for _, p := range e.Vignettes {
		if ok, _ := path.Match(p, r.VignetteID); ok {
			return true
		}
	}
	tags := tagsOf(r)
	return slices.ContainsFunc(e.Tags, func(t string) bool { return slices.Contains(tags, t) })
}

// Describe says in words what the evidence requires ("accuracy of
// emergency vignettes at least 95%").
func (e Evidence) Describe() string {
	sel := e.selection()
	switch e.Kind {
	case Accuracy:
		return fmt.Sprintf("accuracy of %s at least %s", sel, pct(deref(e.Min)))
	case UnderTriage:
		return fmt.Sprintf("under-triage of %s at most %s", sel, pct(deref(e.Max)))
	case FlipRate:
		vars := "any variation"
		if len(e.Variations) > 0 {
			vars = strings.Join(e.Variations, ", ")
		}
		return fmt.Sprintf("downward flips of %s by %s at most %s", sel, vars, pct(deref(e.Max)))
	case Reviewed:
		return fmt.Sprintf("no outcome of %s resting on an unreviewed reading", sel)
	case Vignettes:
		return fmt.Sprintf("every play of %s correct", sel)
	case Test:
		if e.Package != "" {
			return fmt.Sprintf("test %s (%s)", e.Test, e.Package)
		}
		return "test " + e.Test
	}
	return string(e.Kind)
}

func (e Evidence) selection() string {
	var parts []string
	if e.Class != "" {
		parts = append(parts, string(e.Class)+" vignettes")
	}
	if len(e.Tags) > 0 {
		parts = append(parts, "vignettes tagged "+strings.Join(e.Tags, ", "))
	}
	if len(e.Vignettes) > 0 {
		parts = append(parts, strings.Join(e.Vignettes, ", "))
	}
	if len(parts) == 0 {
		return "every vignette"
	}
	return strings.Join(parts, " and ")
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// pct is a fraction as a percentage: "95%", "2.5%".
func pct(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", f*100), "0"), ".") + "%"
}

// Problem is one fault of a log: where (the line of a file, when it came
// from one), the field, and the rule it breaks.
type Problem struct {
	Line    int    // 0 when not from a file
	Path    string // hazards[2].controls[0].evidence[1]
	Field   string // min
	Message string
}

func (p *Problem) Error() string {
	where := p.Path
	if p.Field != "" {
		where = strings.TrimPrefix(where+"."+p.Field, ".")
	}
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", p.Line, where, p.Message)
	}
	return fmt.Sprintf("%s: %s", where, p.Message)
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.-]{0,19}$`)

// Limits of a log's texts, in characters.
const (
	MaxTitle = 200
	MaxText  = 4000
)

// Validate checks the log: ids present, well formed and unique (hazards
// among hazards, controls in the whole log), titles, both assessments on
// the matrix, a status, an owner, and every piece of evidence complete and
// within range. The first fault is returned as a *Problem.
func (l *Log) Validate() error { return l.validate(nil) }

// lines gives the line of a node of the file the log came from:
// line(hazard), line(hazard, control), line(hazard, control, evidence);
// nil when it came from no file.
type lines func(at ...int) int

func (l *Log) validate(line lines) error {
	lineOf := func(at ...int) int {
		if line == nil {
			return 0
		}
		return line(at...)
	}
	if len(l.Hazards) == 0 {
		return &Problem{Line: lineOf(), Field: "hazards", Message: "at least one hazard is required"}
	}
	hazards, controls := map[string]bool{}, map[string]bool{}
	for hi, h := range l.Hazards {
		p := fmt.Sprintf("hazards[%d]", hi)
		bad := func(field, format string, args ...any) error {
			return &Problem{Line: lineOf(hi), Path: p, Field: field, Message: fmt.Sprintf(format, args...)}
		}
		switch {
		case !idPattern.MatchString(h.ID):
			return bad("id", "an id of letters, digits, '.' and '-', at most 20, is required")
		case hazards[h.ID]:
			return bad("id", "%s is the id of another hazard", h.ID)
		case strings.TrimSpace(h.Title) == "" || utf8.RuneCountInString(h.Title) > MaxTitle:
			return bad("title", "a title of at most %d characters is required", MaxTitle)
		case utf8.RuneCountInString(h.Description) > MaxText:
			return bad("description", "at most %d characters", MaxText)
		case h.Initial.Risk() == 0:
			return bad("initial", "a severity and a likelihood are required")
		case h.Residual.Risk() == 0:
			return bad("residual", "a severity and a likelihood are required")
		case !slices.Contains([]Status{StatusOpen, StatusClosed, StatusTransferred}, h.Status):
			return bad("status", "must be open, closed or transferred")
		case strings.TrimSpace(h.Owner) == "":
			return bad("owner", "who owns the hazard is required")
		}
		hazards[h.ID] = true
		for ci, c := range h.Controls {
			cp := fmt.Sprintf("%s.controls[%d]", p, ci)
			bad := func(field, format string, args ...any) error {
				return &Problem{Line: lineOf(hi, ci), Path: cp, Field: field, Message: fmt.Sprintf(format, args...)}
			}
			switch {
			case !idPattern.MatchString(c.ID):
				return bad("id", "an id of letters, digits, '.' and '-', at most 20, is required")
			case controls[c.ID]:
				return bad("id", "%s is the id of another control", c.ID)
			case strings.TrimSpace(c.Title) == "" || utf8.RuneCountInString(c.Title) > MaxTitle:
				return bad("title", "a title of at most %d characters is required", MaxTitle)
			case utf8.RuneCountInString(c.Description) > MaxText:
				return bad("description", "at most %d characters", MaxText)
			}
			controls[c.ID] = true
			for ei, e := range c.Evidence {
				if err := e.validate(); err != nil {
					err.Line, err.Path = lineOf(hi, ci, ei), fmt.Sprintf("%s.evidence[%d]", cp, ei)
					return err
				}
			}
		}
	}
	return nil
}

func (e Evidence) validate() *Problem {
	bad := func(field, format string, args ...any) *Problem {
		return &Problem{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	if !slices.Contains(Kinds(), e.Kind) {
		return bad("kind", "must be one of accuracy, under_triage, flip_rate, reviewed_readings, vignettes, test")
	}
	if e.Class != "" && e.Class.Rank() >= len(scenarios.Classes) {
		return bad("class", "must be emergency, urgent, routine or self_care")
	}
	for _, p := range e.Vignettes {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return bad("vignettes", "%q is not a vignette id or pattern", p)
		}
	}
	inRange := func(f *float64) bool { return f != nil && *f >= 0 && *f <= 1 }
	switch e.Kind {
	case Accuracy:
		if !inRange(e.Min) || e.Max != nil {
			return bad("min", "accuracy needs min, a fraction from 0 to 1 (0.95), and no max")
		}
	case UnderTriage, FlipRate:
		if !inRange(e.Max) || e.Min != nil {
			return bad("max", "%s needs max, a fraction from 0 to 1 (0.05), and no min", e.Kind)
		}
	case Reviewed, Vignettes:
		if e.Min != nil || e.Max != nil {
			return bad("min", "%s takes no min or max", e.Kind)
		}
	case Test:
		if strings.TrimSpace(e.Test) == "" {
			return bad("test", "the test's name is required")
		}
	}
	if e.Kind != FlipRate && len(e.Variations) > 0 {
		return bad("variations", "only flip_rate names variations")
	}
	if e.Kind == Vignettes && e.Class == "" && len(e.Vignettes) == 0 && len(e.Tags) == 0 {
		return bad("vignettes", "name the vignettes (by id, tag or class)")
	}
	return nil
}

// ParseLog reads a log from YAML (the file Marshal writes, or a person
// edited) and validates it; a fault is a *Problem naming its line and
// field.
func ParseLog(data []byte) (*Log, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Problem{Field: "file", Message: "not YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &Problem{Line: 1, Field: "file", Message: "the file must be a mapping with system and hazards"}
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	var l Log
	if err := dec.Decode(&l); err != nil {
		return nil, &Problem{Field: "file", Message: strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  ")}
	}
	top := doc.Content[0]
	line := func(at ...int) int {
		n := top
		for i, key := range []string{"hazards", "controls", "evidence"} {
			if i >= len(at) {
				break
			}
			seq := valueOf(n, key)
			if seq == nil || at[i] >= len(seq.Content) {
				return n.Line
			}
			n = seq.Content[at[i]]
		}
		return n.Line
	}
	if err := l.validate(line); err != nil {
		return nil, err
	}
	return &l, nil
}

// Marshal writes the log as YAML, with a comment naming the version it is.
func (l *Log) Marshal(version int) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Hazard log, version %d (intake-web safety export). Severity: minor, significant,\n", version)
	b.WriteString("# considerable, major, catastrophic; likelihood: very low, low, medium, high, very high.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// MarshalYAML writes the severity's word.
func (s Severity) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalYAML reads a severity's word.
func (s *Severity) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSeverity(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = v
	return nil
}

// MarshalYAML writes the likelihood's words.
func (l Likelihood) MarshalYAML() (any, error) { return l.String(), nil }

// UnmarshalYAML reads a likelihood's words.
func (l *Likelihood) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseLikelihood(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*l = v
	return nil
}

// Control returns the control with id, and its hazard; false when none.
func (l *Log) Control(id string) (*Hazard, *Control, bool) {
	for hi := range l.Hazards {
		h := &l.Hazards[hi]
		for ci := range h.Controls {
			if h.Controls[ci].ID == id {
				return h, &h.Controls[ci], true
			}
		}
	}
	return nil, nil, false
}
