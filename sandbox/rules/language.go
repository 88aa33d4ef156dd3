package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The language files (embedded with the protocols in libraryFiles) hold the word knowledge that is not specific to one
// protocol: normalisation (lexicon.json) and the emergency categories
// (emergencies.json). They are data, hashed into directory_hash with the
// protocols, so a new synonym changes the library's identity.

const (
	lexiconFile     = "language/lexicon.json"
	emergenciesFile = "language/emergencies.json"
)

// lexiconData is lexicon.json.
type lexiconData struct {
	Comment string `json:"comment"`
	// Spelling maps one word (typo, contraction, third person) to its
	// canonical form, which may be several words ("wanna" → "want to").
	Spelling map[string]string `json:"spelling"`
	// Rewrites replace a word sequence ("unable to" → "cant").
	Rewrites [][2]string `json:"rewrites"`
	// Fillers may sit between the words of a phrase (up to maxFillers), so
	// "my throat is really very sore" matches the phrase "throat is sore".
	Fillers []string `json:"fillers"`
}

// emergencyData is emergencies.json.
type emergencyData struct {
	Comment    string              `json:"comment"`
	Sets       map[string][]string `json:"sets"`
	History    []string            `json:"history"`
	Categories []EmergencyCategory `json:"categories"`
}

// EmergencyCategory is one kind of life-threatening problem recognised in
// any message, before anything else.
type EmergencyCategory struct {
	ID       string   `json:"id"`
	Label    string   `json:"label"`  // clinician-facing
	Note     string   `json:"note"`   // clinician-facing, in safety_notes and the assessment
	Reply    string   `json:"reply"`  // patient-facing, before the call to emergency services
	Advice   string   `json:"advice"` // patient-facing, after it (optional)
	Patterns []string `json:"patterns"`
	Except   []string `json:"except"` // a clause holding one of these is not read for this category

	patterns [][][]string // pattern → parts → tokens
	except   [][]string
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// loadLexicon builds the lexicon from lexicon.json.
func loadLexicon(data []byte) (*lexicon, error) {
	var d lexiconData
	if err := decodeStrict(data, &d); err != nil {
		return nil, fmt.Errorf("rules: %s: %w", lexiconFile, err)
	}
	lx := baseLexicon()
	lx.spelling = map[string][]string{}
	for from, to := range d.Spelling {
		lx.spelling[from] = strings.Fields(to)
	}
	for _, rw := range d.Rewrites {
		lx.rewrites = append(lx.rewrites, rewrite{from: strings.Fields(rw[0]), to: strings.Fields(rw[1])})
	}
	lx.fillers = map[string]bool{}
	for _, f := range d.Fillers {
		if lx.negators[f] || lx.clauseWords[f] {
			return nil, fmt.Errorf("rules: %s: filler %q is a negator or clause word", lexiconFile, f)
		}
		lx.fillers[f] = true
	}
	return lx, nil
}

var numberSlot = regexp.MustCompile(`#(\d+)-(\d+)`)

// loadEmergencies validates emergencies.json and prepares its patterns.
func loadEmergencies(data []byte, lx *lexicon) ([]*EmergencyCategory, error) {
	var d emergencyData
	if err := decodeStrict(data, &d); err != nil {
		return nil, fmt.Errorf("rules: %s: %w", emergenciesFile, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("rules: %s: "+format, append([]any{emergenciesFile}, args...)...))
	}
	sets := map[string]string{}
	for name, words := range d.Sets {
		if !strings.HasPrefix(name, "@") {
			bad("set %q must start with @", name)
		}
		for _, w := range words {
			if strings.ContainsAny(w, " |@+") {
				bad("set %s: %q must be one word", name, w)
			}
		}
		sets[name] = strings.Join(words, "|")
	}
	expand := func(s string) string {
		return regexp.MustCompile(`@[a-z_]+`).ReplaceAllStringFunc(s, func(name string) string {
			if v, ok := sets[name]; ok {
				return v
			}
			bad("unknown set %s in %q", name, s)
			return name
		})
	}
	history := phrases(lx, d.History, bad)
	var out []*EmergencyCategory
	seen := map[string]bool{}
	for i := range d.Categories {
		c := &d.Categories[i]
		if c.ID == "" || seen[c.ID] || c.Label == "" || c.Note == "" || c.Reply == "" || len(c.Patterns) == 0 {
			bad("category %d (%q) needs a unique id, label, note, reply and patterns", i, c.ID)
		}
		seen[c.ID] = true
		for _, pat := range c.Patterns {
			var parts [][]string
			for _, part := range strings.Split(pat, "+") {
				toks, err := phrase(lx, expand(part))
				if err != nil {
					bad("category %s pattern %q: %v", c.ID, pat, err)
				}
				parts = append(parts, toks)
			}
			c.patterns = append(c.patterns, parts)
		}
		c.except = append(phrases(lx, c.Except, bad), history...)
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}
