package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits of a suite file.
const (
	MaxFileBytes      = 1 << 20 // 1 MiB
	MaxVignettes      = 500     // per file
	MaxOpeningChars   = 2000
	DefaultMaxTurns   = 15
	MaxMaxTurns       = 30
	maxAge            = 130
	bands             = "strong, mid, weak"
	sexes             = "female, male, other"
	knownDispositions = "urgent_escalation, clinician_review, self_care"
)

var idPattern = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// Problem is one rule a suite file breaks. Its text names the file, the
// vignette (by id and 1-based position) and the field, then the rule:
//
//	suite.yaml: vignette "chest-pain-arm" (3): gold.class: must be one of emergency, urgent, routine, self_care
type Problem struct {
	File     string // the name given to Load
	Vignette string // id, "" when the file itself is at fault or the id is empty
	Index    int    // 1-based position in the file, 0 when the file itself is at fault
	Field    string // e.g. "gold.class", "facts[2].asks"
	Rule     string // what is wrong, e.g. "required"
}

func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	b.WriteString(": ")
	if p.Index > 0 {
		b.WriteString("vignette ")
		if p.Vignette != "" {
			fmt.Fprintf(&b, "%q ", p.Vignette)
		}
		fmt.Fprintf(&b, "(%d): ", p.Index)
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Rule)
	return b.String()
}

// Load decodes and validates one suite file; name (the file's name) is used
// in errors and, without its extension, as the suite's name when the file
// has no `suite:` field. Decoding is strict: an unknown field is an error.
// The error is nil or an errors.Join of every *Problem found; MaxTurns is set to DefaultMaxTurns where it is 0.
func Load(name string, data []byte) (*Suite, error) {
	if len(data) > MaxFileBytes {
		return nil, &Problem{File: name, Rule: fmt.Sprintf("%d bytes, at most %d (1 MiB)", len(data), MaxFileBytes)}
	}
	s, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	vocab, err := Understanding()
	if err != nil {
		return nil, err
	}
	if err := validate(name, s, vocab); err != nil {
		return nil, err
	}
	for i := range s.Vignettes {
		if s.Vignettes[i].MaxTurns == 0 {
			s.Vignettes[i].MaxTurns = DefaultMaxTurns
		}
	}
	return s, nil
}

// LoadFile reads and loads a suite file (see Load). A missing file's error
// says so and matches fs.ErrNotExist; other read errors are wrapped.
func LoadFile(path string) (*Suite, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no suite file %s: %w", path, fs.ErrNotExist)
	} else if err != nil {
		return nil, fmt.Errorf("scenarios: open suite: %w", err)
	}
	defer f.Close()
	// Read one byte past the limit so Load can tell a file that is too big.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scenarios: read suite %s: %w", path, err)
	}
	return Load(path, data)
}

func decode(name string, data []byte) (*Suite, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Suite
	var typeErr *yaml.TypeError
	if err := dec.Decode(&s); errors.Is(err, io.EOF) {
		return nil, &Problem{File: name, Rule: "empty file"}
	} else if errors.As(err, &typeErr) {
		return nil, typeProblems(name, data, typeErr)
	} else if err != nil {
		return nil, &Problem{File: name, Rule: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Problem{File: name, Rule: "more than one YAML document"}
	}
	return &s, nil
}

// typeProblems turns the decoder's errors (unknown fields, wrong types),
// which carry only a line, into Problems naming the vignette on that line.
func typeProblems(name string, data []byte, te *yaml.TypeError) error {
	type span struct {
		line int
		id   string
	}
	var spans []span
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && len(doc.Content) == 1 {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value != "vignettes" {
				continue
			}
			for _, item := range root.Content[i+1].Content {
				sp := span{line: item.Line}
				for k := 0; k+1 < len(item.Content); k += 2 {
					if item.Content[k].Value == "id" {
						sp.id = item.Content[k+1].Value
					}
				}
				spans = append(spans, sp)
			}
		}
	}
	var errs []error
	for _, msg := range te.Errors {
		p := &Problem{File: name, Rule: msg}
		var line int
		if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
			for i, sp := range spans {
				if sp.line <= line {
					p.Index, p.Vignette = i+1, sp.id
				}
			}
		}
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

func validate(name string, s *Suite, vocab Understander) error {
	var errs []error
	if len(s.Vignettes) == 0 {
		errs = append(errs, &Problem{File: name, Field: "vignettes", Rule: "at least one vignette"})
	}
	if len(s.Vignettes) > MaxVignettes {
		errs = append(errs, &Problem{File: name, Field: "vignettes", Rule: fmt.Sprintf("%d vignettes, at most %d", len(s.Vignettes), MaxVignettes)})
	}
	seen := map[string]int{}
	for i := range s.Vignettes {
		v := &s.Vignettes[i]
		bad := func(field, format string, args ...any) {
			errs = append(errs, &Problem{File: name, Vignette: v.ID, Index: i + 1, Field: field, Rule: fmt.Sprintf(format, args...)})
		}
		switch {
		case v.ID == "":
			bad("id", "required")
		case !idPattern.MatchString(v.ID):
			bad("id", "must be 1 to 64 of a-z, 0-9, _ and -")
		case seen[v.ID] > 0:
			bad("id", "duplicate of vignette (%d)", seen[v.ID])
		default:
			seen[v.ID] = i + 1
		}
		if strings.TrimSpace(v.Opening) == "" {
			bad("opening", "required")
		} else if n := len([]rune(v.Opening)); n > MaxOpeningChars {
			bad("opening", "%d characters, at most %d", n, MaxOpeningChars)
		}
		switch v.Sex {
		case "", "female", "male", "other":
		default:
			bad("sex", "must be one of %s, or left out", sexes)
		}
		for j, n := range v.Neutral {
			switch {
			case n != "sex" && n != "age":
				bad(fmt.Sprintf("neutral[%d]", j+1), "must be sex or age, got %q", n)
			case n == "sex" && v.Sex != "female" && v.Sex != "male":
				bad(fmt.Sprintf("neutral[%d]", j+1), "sex can be swapped only when sex is female or male")
			case n == "age" && (v.AgeYears == nil || *v.AgeYears < 18):
				bad(fmt.Sprintf("neutral[%d]", j+1), "age can be swapped only for an adult's age_years (18 or more)")
			}
		}
		if v.AgeYears != nil && (*v.AgeYears < 0 || *v.AgeYears > maxAge) {
			bad("age_years", "must be 0 to %d", maxAge)
		}
		if v.MaxTurns < 0 || v.MaxTurns > MaxMaxTurns {
			bad("max_turns", "must be 1 to %d (0 or left out: %d)", MaxMaxTurns, DefaultMaxTurns)
		}
		for j, f := range v.Facts {
			field := fmt.Sprintf("facts[%d]", j+1)
			if len(f.Asks) == 0 && strings.TrimSpace(f.Concept) == "" {
				bad(field, "needs concept or asks")
			}
			if c := strings.TrimSpace(f.Concept); c != "" && !vocab.Known(c) {
				bad(field+".concept", "%q is not in the concept vocabulary (docs/scenarios.md lists them)", c)
			}
			for k, a := range f.Asks {
				if strings.TrimSpace(a) == "" {
					bad(fmt.Sprintf("%s.asks[%d]", field, k+1), "must not be empty")
				}
			}
			if strings.TrimSpace(f.Answer) == "" && strings.TrimSpace(f.Choose) == "" {
				bad(field, "needs answer or choose")
			}
		}
		switch v.Gold.Class {
		case "":
			bad("gold.class", "required: one of %s", classNames())
		case Emergency, Urgent, Routine, SelfCare:
		default:
			bad("gold.class", "must be one of %s", classNames())
		}
		for j, d := range v.Gold.Dispositions {
			switch d {
			case "urgent_escalation", "clinician_review", "self_care":
			default:
				bad(fmt.Sprintf("gold.dispositions[%d]", j+1), "must be one of %s", knownDispositions)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(v.Gold.Scores)) {
			switch v.Gold.Scores[key] {
			case "strong", "mid", "weak":
			default:
				bad("gold.scores."+key, "must be one of %s", bands)
			}
		}
	}
	return errors.Join(errs...)
}

// classNames lists Classes for error messages.
func classNames() string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
