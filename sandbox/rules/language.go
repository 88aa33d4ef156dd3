package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
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
	// Abbreviations are clinical shorthand read as its words ("CP" →
	// "chest pain", "L" → "left", "PMH" → "history of"), keyed in capitals:
	// a word is one only when typed in capitals in a message that is not
	// all capitals, the guard against ordinary words ("sob", "l").
	Abbreviations map[string]string `json:"abbreviations"`
	// Rewrites replace a word sequence ("unable to" → "cant").
	Rewrites [][2]string `json:"rewrites"`
	// Fillers may sit between the words of a phrase (up to maxFillers), so
	// "my throat is really very sore" matches the phrase "throat is sore".
	Fillers []string `json:"fillers"`
	// ClauseWordsInside end a clause between two words, not as a whole
	// reply: "n" is "and" in text speech, and "no" said alone.
	ClauseWordsInside []string `json:"clause_words_inside"`
	// Binomials are expressions "a and b" read as one: "black and blue" is
	// a bruise, not two clauses.
	Binomials []string `json:"binomials"`
	// ListWords are describing words that, with only a comma between two
	// of them, are a list inside one clause: "a red, hot, swollen patch on
	// my forearm" is one clause, so each word is at the forearm.
	ListWords []string `json:"list_words"`
	// Negation is the scope of negation (negation.go).
	Negation negationData `json:"negation"`
}

// emergencyData is emergencies.json.
type emergencyData struct {
	Comment string              `json:"comment"`
	Sets    map[string][]string `json:"sets"`
	History []string            `json:"history"`
	Speaker speakerData         `json:"speaker"`
	// Categories are in order of precedence: when a message names several,
	// the first one's reply and advice are said (the most serious
	// instruction first), and every one is in the clinician's notes.
	Categories []EmergencyCategory `json:"categories"`
}

// EmergencyCategory is one kind of life-threatening problem recognised in
// any message, before anything else. Its patient-facing sentences come in
// two forms: for the patient speaking of themselves, and for someone
// speaking of another person (a relative or a bystander: speaker.go).
type EmergencyCategory struct {
	ID     string `json:"id"`
	Label  string `json:"label"`  // clinician-facing
	Note   string `json:"note"`   // clinician-facing, in safety_notes and the assessment
	Reply  string `json:"reply"`  // patient-facing, before the call to emergency services
	Advice string `json:"advice"` // patient-facing, after it
	// ReplySomeoneElse and AdviceSomeoneElse are Reply and Advice for
	// someone speaking of another person ("help them sit upright", not
	// "sit upright").
	ReplySomeoneElse  string `json:"reply_someone_else"`
	AdviceSomeoneElse string `json:"advice_someone_else"`
	// SomeoneElseOnly: only another person can be in this state (nobody
	// types "I am not breathing"), so the category is heard only when the
	// message speaks of someone else, and has no Reply or Advice.
	SomeoneElseOnly bool `json:"someone_else_only,omitempty"`
	// Unnamed is who a message that names nobody speaks of for this
	// category: "" (the patient) or "someone_else" ("collapsed in the
	// kitchen": a person who has collapsed is not the one typing).
	Unnamed string `json:"unnamed,omitempty"`
	// CallNow: the reply says "call emergency services now" only, without
	// "or go to the nearest emergency department" (urgent_call_now):
	// someone in this state must not be driven or walk in.
	CallNow bool `json:"call_now,omitempty"`
	// WhenAll: the category is also heard when a message names every
	// category of one of these lists ("collapsed" and "not breathing
	// properly" together are a cardiac arrest).
	WhenAll  [][]string `json:"when_all,omitempty"`
	Patterns []string   `json:"patterns"`
	Except   []string   `json:"except"` // a clause holding one of these is not read for this category
	// NamesComplaint: a message that is one of these and nothing else
	// ("Breathing difficulty") names a complaint, as a quick-reply title
	// does, and is not heard by the patterns: the protocol it names asks
	// its red flags first. A message that says more ("real trouble
	// breathing", "difficulty breathing, getting worse") is.
	NamesComplaint []string `json:"names_complaint,omitempty"`
	// SparedBy: conditions over findings (findings.go) that, met by a
	// positive finding of the message, say the patterns' words mean
	// something else: "I think I've poisoned myself" beside undercooked
	// chicken is food poisoning, not the poisoning category. The rules over
	// findings still apply (an overdose told in the same message is one).
	SparedBy []string `json:"spared_by,omitempty"`
	// Findings are rules over the findings of every message so far
	// (findings.go): the combinations the guidance names ("an infection
	// with new confusion, mottled skin or no urine" is suspected sepsis).
	Findings []findingRule `json:"findings,omitempty"`

	patterns  [][][]string  // pattern → parts → tokens
	firsts    [][]firstWord // pattern → parts → its first word, for a quick look
	except    [][]string    // Except and the history markers
	ownExcept [][]string    // Except
	names     [][]string    // NamesComplaint
	sparedBy  []condition   // SparedBy
	whenAll   [][]*EmergencyCategory
}

// unnamedSomeoneElse is EmergencyCategory.Unnamed for "someone else".
const unnamedSomeoneElse = "someone_else"

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
	lx.abbreviations = map[string][]string{}
	for from, to := range d.Abbreviations {
		if from == "" || strings.ContainsFunc(from, func(r rune) bool { return r < 'A' || r > 'Z' }) || strings.TrimSpace(to) == "" {
			return nil, fmt.Errorf("rules: %s: abbreviation %q: want capital letters A-Z, read as words", lexiconFile, from)
		}
		lx.abbreviations[from] = strings.Fields(strings.ToLower(to))
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
	lx.clauseWordsInside = map[string]bool{}
	for _, w := range d.ClauseWordsInside {
		lx.clauseWordsInside[w] = true
	}
	lx.listWords = map[string]bool{}
	for _, w := range d.ListWords {
		lx.listWords[w] = true
	}
	lx.binomials = map[string]bool{}
	for _, b := range d.Binomials {
		a, c, ok := strings.Cut(b, " and ")
		if !ok || strings.Contains(c, " ") || strings.Contains(a, " ") {
			return nil, fmt.Errorf("rules: %s: binomial %q is not \"word and word\"", lexiconFile, b)
		}
		lx.binomials[a+" "+c] = true
	}
	lx.vocab = map[string]bool{}
	lx.compiled = []*compiledToken{}
	lx.compiledKey = map[string]string{}
	lx.wordID = map[string]int{}
	if err := lx.loadNegation(d.Negation); err != nil {
		return nil, fmt.Errorf("rules: %s: negation: %w", lexiconFile, err)
	}
	return lx, nil
}

var numberSlot = regexp.MustCompile(`#(\d+)-(\d+)`)

// loadEmergencies validates emergencies.json and prepares its patterns.
func loadEmergencies(data []byte, lx *lexicon) (*emergencies, error) {
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
	byID := map[string]*EmergencyCategory{}
	for i := range d.Categories {
		c := &d.Categories[i]
		if c.ID == "" || byID[c.ID] != nil || c.Label == "" || c.Note == "" || len(c.Patterns)+len(c.Findings) == 0 {
			bad("category %d (%q) needs a unique id, label, note and patterns or findings", i, c.ID)
		}
		byID[c.ID] = c
		switch {
		case c.ReplySomeoneElse == "" || c.AdviceSomeoneElse == "":
			bad("category %s needs reply_someone_else and advice_someone_else: what to tell someone speaking of another person", c.ID)
		case c.SomeoneElseOnly && (c.Reply != "" || c.Advice != "" || c.Unnamed != ""):
			bad("category %s is someone_else_only: it has no reply or advice for the patient, and unnamed is implied", c.ID)
		case !c.SomeoneElseOnly && (c.Reply == "" || c.Advice == ""):
			bad("category %s needs reply and advice: what to tell the patient speaking of themselves", c.ID)
		}
		if c.Unnamed != "" && c.Unnamed != unnamedSomeoneElse {
			bad("category %s: unnamed %q is not %q", c.ID, c.Unnamed, unnamedSomeoneElse)
		}
		for _, pat := range c.Patterns {
			var parts [][]string
			var firsts []firstWord
			for _, part := range strings.Split(pat, "+") {
				toks, err := phrase(lx, expand(part))
				if err != nil {
					bad("category %s pattern %q: %v", c.ID, pat, err)
					toks = []string{""}
				}
				parts = append(parts, toks)
				firsts = append(firsts, lx.firstWordOf(toks[0]))
			}
			c.patterns = append(c.patterns, parts)
			c.firsts = append(c.firsts, firsts)
		}
		c.ownExcept = phrases(lx, c.Except, bad)
		c.names = phrases(lx, c.NamesComplaint, bad)
		c.except = append(slices.Clone(c.ownExcept), history...)
		out = append(out, c)
	}
	for _, c := range out {
		for _, ids := range c.WhenAll {
			var all []*EmergencyCategory
			for _, id := range ids {
				other := byID[id]
				if other == nil || other == c || len(other.WhenAll) > 0 {
					bad("category %s: when_all names %q, which is not another category heard by its own patterns", c.ID, id)
					continue
				}
				all = append(all, other)
			}
			if len(ids) < 2 {
				bad("category %s: when_all %q needs two categories or more", c.ID, ids)
			}
			c.whenAll = append(c.whenAll, all)
		}
	}
	sp, err := loadSpeaker(d.Speaker)
	if err != nil {
		bad("speaker: %v", err)
	}
	return &emergencies{categories: out, speaker: sp, history: history}, errors.Join(errs...)
}

// emergencies is emergencies.json, loaded: the categories in order of
// precedence, and the words that tell who a message speaks of.
type emergencies struct {
	categories []*EmergencyCategory
	speaker    *speakerWords
	history    [][]string // the history markers
}
