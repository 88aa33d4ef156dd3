package concepts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Understanding is the vocabulary and its cues, read-only after Load; safe
// for concurrent use.
type Understanding struct {
	concepts []Concept
	index    map[string]int

	spell          map[string]string
	fillers        map[string]bool
	questionWords  map[string]bool
	clauseWords    map[string]bool
	requests       [][]string
	leadIns        [][]string
	contextOpeners [][]string
	anaphors       map[string]bool
	plurals        map[string]bool // plural reference words: they, them, those
	speaker        map[string]bool // words for the engine itself: I, we, us
	pronouns       map[string]bool // subject pronouns: "that" before one is no reference
	embedded       map[string]bool // words that open an embedded question: whether, if, any
	cessation      [][]string      // the thing asked about has stopped: "stopped", "cleared up"
	afterGone      map[string]bool // "gone" before one of these has ceased: "gone now"
	auxDo          map[string]bool // "do" first in a question: an auxiliary
	whWords        map[string]bool // how, when, where, what, which, who, why
	determiners    map[string]bool // the, your, this: a definite noun phrase follows
	subordinators  map[string]bool // when, while, because: a subordinate clause follows
	notAlternative [][]string      // "or not", "more or less": no alternative
	anyWords       map[string]bool // a question opened by one lists alternatives with "and" too
	relPronouns    map[string]bool // that, which, who: may open a relative clause
	subjects       map[string]bool // you, he, they: a subject after a noun may open a reduced relative clause
	gerunds        map[string]bool // being, having: a negator next to one negates its phrase only
	complements    map[string]bool // say, possible, case: "that" after one opens a complement clause
	pastVerbs      map[string]bool // came, began: verbs a relative pronoun may be followed by
	adverbs        map[string]bool // never, still: may come between a relative pronoun and its verb
	prepositions   map[string]bool // in, with, along: a noun phrase after one is a place, a time or a circumstance
	circumstances  map[string]bool // with, along, since: a definite noun phrase after one is given
	tags           [][]string
	auxiliaries    map[string]bool // a tag's verb ("haven't you?"); what makes an alternative a clause
	tagSubjects    map[string]bool // a tag's subject
	negators       [][]string
	normalWords    [][]string
	difficulty     [][]string
	absence        [][]string
	notPolarity    [][]string
	contrast       [][]string          // "rather than", "instead of": what follows is set against the question
	normalYes      map[int]bool        // concepts whose yes is the normal state
	areas          []area              // body areas and systems, in cues.yaml's order
	partOf         map[string][]string // area → the wider areas it is part of
	causes         map[string]bool     // areas that say how, not where

	// The compiled cues: word patterns, terms (phrases of patterns), groups
	// (alternative terms) and rules (groups of one concept).
	pats    []string           // a word, or a stem followed by "*"
	exact   map[string][]int32 // word → patterns equal to it
	prefix  map[string][]int32 // stem → patterns with that stem
	maxStem int
	terms   [][]int32 // a term's patterns, in order
	groups  [][]int32 // a group's alternative terms
	rules   []rule
}

// rule is one compiled rule of cues.yaml.
type rule struct {
	concept  int // index in concepts
	cue      string
	required []int32 // groups that must all occur
	optional []int32 // groups that count when they occur
	not      []int32 // terms that veto the rule
	inverse  bool
	fixed    bool // negators and normal words do not change its polarity
}

type vocabularyFile struct {
	Version  int `yaml:"version"`
	Concepts []struct {
		ID    string `yaml:"id"`
		Kind  Kind   `yaml:"kind"`
		Means string `yaml:"means"`
		Yes   string `yaml:"yes"`
	} `yaml:"concepts"`
}

type cuesFile struct {
	Version        int               `yaml:"version"`
	Spellings      map[string]string `yaml:"spellings"`
	Fillers        []string          `yaml:"fillers"`
	QuestionWords  []string          `yaml:"question_words"`
	ClauseWords    []string          `yaml:"clause_words"`
	Requests       []string          `yaml:"requests"`
	LeadIns        []string          `yaml:"lead_ins"`
	ContextOpeners []string          `yaml:"context_openers"`
	Anaphors       []string          `yaml:"anaphors"`
	Plurals        []string          `yaml:"plural_anaphors"`
	Speaker        []string          `yaml:"speaker"`
	Pronouns       []string          `yaml:"pronouns"`
	Embedded       []string          `yaml:"embedded"`
	Cessation      []string          `yaml:"cessation"`
	AfterGone      []string          `yaml:"after_gone"`
	AuxiliaryDo    []string          `yaml:"auxiliary_do"`
	WhWords        []string          `yaml:"wh_words"`
	Determiners    []string          `yaml:"determiners"`
	Subordinators  []string          `yaml:"subordinators"`
	NotAlternative []string          `yaml:"not_alternative"`
	AnyWords       []string          `yaml:"any_words"`
	Relatives      []string          `yaml:"relatives"`
	Subjects       []string          `yaml:"subjects"`
	Gerunds        []string          `yaml:"gerunds"`
	Complements    []string          `yaml:"complements"`
	PastVerbs      []string          `yaml:"past_verbs"`
	Adverbs        []string          `yaml:"adverbs"`
	Prepositions   []string          `yaml:"prepositions"`
	Circumstances  []string          `yaml:"circumstances"`
	Macros         map[string]string `yaml:"macros"`
	Tags           []string          `yaml:"tags"`
	Auxiliaries    []string          `yaml:"auxiliaries"`
	TagSubjects    []string          `yaml:"tag_subjects"`
	Negators       []string          `yaml:"negators"`
	NormalWords    []string          `yaml:"normal_words"`
	Difficulty     []string          `yaml:"difficulty"`
	Absence        []string          `yaml:"absence"`
	NotPolarity    []string          `yaml:"not_polarity"`
	Contrast       []string          `yaml:"contrast"`
	NormalYes      []string          `yaml:"normal_yes"`
	Areas          yaml.Node         `yaml:"areas"`
	Causes         []string          `yaml:"causes"`
	Cues           yaml.Node         `yaml:"cues"`
}

// decodeYAML decodes one YAML document, refusing unknown fields.
func decodeYAML(name string, data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty file", name)
	} else if err != nil {
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: more than one YAML document", name)
	}
	return nil
}

// groupLine is a section line of vocabulary.yaml: "# --- head ---".
var groupLine = regexp.MustCompile(`^#\s*---+\s*(.*?)\s*-*$`)

// vocabularyGroups is the group of each concept of vocabulary.yaml, in
// order: the text of the last section line in the comments above it, or
// the group of the concept before. The file has been decoded already, so
// a file that does not parse here has no groups.
func vocabularyGroups(vocabulary []byte) []string {
	var doc yaml.Node
	if yaml.Unmarshal(vocabulary, &doc) != nil || len(doc.Content) != 1 {
		return nil
	}
	root := doc.Content[0]
	var out []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "concepts" {
			continue
		}
		group := ""
		for _, item := range root.Content[i+1].Content {
			for _, line := range strings.Split(item.HeadComment, "\n") {
				if m := groupLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
					group = m[1]
				}
			}
			out = append(out, group)
		}
	}
	return out
}

func load(vocabulary, cues []byte) (*Understanding, error) {
	var vf vocabularyFile
	if err := decodeYAML("vocabulary.yaml", vocabulary, &vf); err != nil {
		return nil, err
	}
	if strconv.Itoa(vf.Version) != Version {
		return nil, fmt.Errorf("vocabulary.yaml: version %d, but the package is version %s", vf.Version, Version)
	}
	groups := vocabularyGroups(vocabulary)
	u := &Understanding{index: map[string]int{}}
	for i, c := range vf.Concepts {
		where := fmt.Sprintf("vocabulary.yaml: concept %d (%q)", i+1, c.ID)
		switch {
		case c.ID == "":
			return nil, fmt.Errorf("%s: no id", where)
		case c.Kind != Open && c.Kind != YesNo && c.Kind != Value:
			return nil, fmt.Errorf("%s: kind %q is not open, yes_no or value", where, c.Kind)
		case c.Kind == YesNo && c.Yes == "":
			return nil, fmt.Errorf("%s: a yes_no concept needs `yes`", where)
		case strings.TrimSpace(c.Means) == "":
			return nil, fmt.Errorf("%s: no `means`", where)
		}
		if _, dup := u.index[c.ID]; dup {
			return nil, fmt.Errorf("%s: id used twice", where)
		}
		u.index[c.ID] = len(u.concepts)
		group := ""
		if i < len(groups) {
			group = groups[i]
		}
		u.concepts = append(u.concepts, Concept{ID: c.ID, Kind: c.Kind, Means: c.Means, Yes: c.Yes, Group: group})
	}

	var cf cuesFile
	if err := decodeYAML("cues.yaml", cues, &cf); err != nil {
		return nil, err
	}
	if strconv.Itoa(cf.Version) != Version {
		return nil, fmt.Errorf("cues.yaml: version %d, but the vocabulary is version %s", cf.Version, Version)
	}
	u.spell = map[string]string{}
	for from, to := range cf.Spellings {
		f, _ := words(from, nil)
		t, _ := words(to, nil)
		if len(f) != 1 || len(t) != 1 {
			return nil, fmt.Errorf("cues.yaml: spellings: %q: %q: each side must be one word", from, to)
		}
		u.spell[f[0]] = t[0]
	}
	var err error
	set := func(list []string, field string) (map[string]bool, error) {
		m := map[string]bool{}
		for _, s := range list {
			w, _ := words(s, u.spell)
			if len(w) != 1 {
				return nil, fmt.Errorf("cues.yaml: %s: %q must be one word", field, s)
			}
			m[w[0]] = true
		}
		return m, nil
	}
	if u.fillers, err = set(cf.Fillers, "fillers"); err != nil {
		return nil, err
	}
	if u.questionWords, err = set(cf.QuestionWords, "question_words"); err != nil {
		return nil, err
	}
	if u.clauseWords, err = set(cf.ClauseWords, "clause_words"); err != nil {
		return nil, err
	}
	if u.anaphors, err = set(cf.Anaphors, "anaphors"); err != nil {
		return nil, err
	}
	if u.plurals, err = set(cf.Plurals, "plural_anaphors"); err != nil {
		return nil, err
	}
	if u.speaker, err = set(cf.Speaker, "speaker"); err != nil {
		return nil, err
	}
	if u.pronouns, err = set(cf.Pronouns, "pronouns"); err != nil {
		return nil, err
	}
	if u.embedded, err = set(cf.Embedded, "embedded"); err != nil {
		return nil, err
	}
	if u.afterGone, err = set(cf.AfterGone, "after_gone"); err != nil {
		return nil, err
	}
	if u.auxDo, err = set(cf.AuxiliaryDo, "auxiliary_do"); err != nil {
		return nil, err
	}
	if u.whWords, err = set(cf.WhWords, "wh_words"); err != nil {
		return nil, err
	}
	if u.determiners, err = set(cf.Determiners, "determiners"); err != nil {
		return nil, err
	}
	if u.subordinators, err = set(cf.Subordinators, "subordinators"); err != nil {
		return nil, err
	}
	if u.anyWords, err = set(cf.AnyWords, "any_words"); err != nil {
		return nil, err
	}
	if u.relPronouns, err = set(cf.Relatives, "relatives"); err != nil {
		return nil, err
	}
	if u.subjects, err = set(cf.Subjects, "subjects"); err != nil {
		return nil, err
	}
	if u.gerunds, err = set(cf.Gerunds, "gerunds"); err != nil {
		return nil, err
	}
	if u.complements, err = set(cf.Complements, "complements"); err != nil {
		return nil, err
	}
	if u.pastVerbs, err = set(cf.PastVerbs, "past_verbs"); err != nil {
		return nil, err
	}
	if u.adverbs, err = set(cf.Adverbs, "adverbs"); err != nil {
		return nil, err
	}
	if u.prepositions, err = set(cf.Prepositions, "prepositions"); err != nil {
		return nil, err
	}
	if u.circumstances, err = set(cf.Circumstances, "circumstances"); err != nil {
		return nil, err
	}
	if u.auxiliaries, err = set(cf.Auxiliaries, "auxiliaries"); err != nil {
		return nil, err
	}
	if u.tagSubjects, err = set(cf.TagSubjects, "tag_subjects"); err != nil {
		return nil, err
	}
	for _, l := range []struct {
		field string
		in    []string
		out   *[][]string
	}{
		{"requests", cf.Requests, &u.requests},
		{"lead_ins", cf.LeadIns, &u.leadIns},
		{"context_openers", cf.ContextOpeners, &u.contextOpeners},
		{"tags", cf.Tags, &u.tags},
		{"negators", cf.Negators, &u.negators},
		{"normal_words", cf.NormalWords, &u.normalWords},
		{"difficulty", cf.Difficulty, &u.difficulty},
		{"absence", cf.Absence, &u.absence},
		{"cessation", cf.Cessation, &u.cessation},
		{"not_alternative", cf.NotAlternative, &u.notAlternative},
		{"not_polarity", cf.NotPolarity, &u.notPolarity},
		{"contrast", cf.Contrast, &u.contrast},
	} {
		for _, s := range l.in {
			p, err := u.phrase(s)
			if err != nil {
				return nil, fmt.Errorf("cues.yaml: %s: %q: %v", l.field, s, err)
			}
			*l.out = append(*l.out, p)
		}
	}
	u.normalYes = map[int]bool{}
	for _, id := range cf.NormalYes {
		i, ok := u.index[id]
		if !ok {
			return nil, fmt.Errorf("cues.yaml: normal_yes: %q is not a concept of vocabulary.yaml", id)
		}
		if u.concepts[i].Kind != YesNo {
			return nil, fmt.Errorf("cues.yaml: normal_yes: %q is not a yes_no concept", id)
		}
		u.normalYes[i] = true
	}
	if err := u.compileAreas(&cf.Areas); err != nil {
		return nil, err
	}
	u.causes = map[string]bool{}
	for _, c := range cf.Causes {
		if !slices.ContainsFunc(u.areas, func(a area) bool { return a.id == c }) {
			return nil, fmt.Errorf("cues.yaml: causes: %q is not an area", c)
		}
		u.causes[c] = true
	}
	if err := u.compileCues(&cf.Cues, cf.Macros); err != nil {
		return nil, err
	}
	return u, nil
}

// phrase normalises one phrase of a cue: its words as a message's would be,
// a "*" kept at the end of a word (a prefix).
func (u *Understanding) phrase(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Fields(s) {
		stem, wild := strings.CutSuffix(f, "*")
		if strings.Contains(stem, "*") {
			return nil, fmt.Errorf("%q: a \"*\" may only end a word", f)
		}
		w, _ := words(stem, u.spell)
		if len(w) == 0 {
			return nil, fmt.Errorf("%q has no letters or digits", f)
		}
		if wild {
			w[len(w)-1] += "*"
		}
		out = append(out, w...)
	}
	if len(out) == 0 {
		return nil, errors.New("empty")
	}
	return out, nil
}

// area is one body area or system of cues.yaml's `areas`: the words that
// name it, each a phrase of patterns.
type area struct {
	id    string
	words [][]string
}

// compileAreas reads `areas`: a mapping of area id to a string of
// alternatives ("belly|tummy|stomach*|pass water"), in file order.
func (u *Understanding) compileAreas(n *yaml.Node) error {
	if n.Kind == 0 {
		return errors.New("cues.yaml: no `areas`")
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("cues.yaml: line %d: `areas` must map an area to its words", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		a := area{id: k.Value}
		if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
			return fmt.Errorf("cues.yaml: line %d: area %q: words must be alternatives joined by \"|\"", v.Line, a.id)
		}
		for _, alt := range strings.Split(v.Value, "|") {
			p, err := u.phrase(alt)
			if err != nil {
				return fmt.Errorf("cues.yaml: line %d: area %q: %w", v.Line, a.id, err)
			}
			a.words = append(a.words, p)
		}
		u.areas = append(u.areas, a)
	}
	// An area is part of another when at least half of its words are the
	// other's ("back": back and spine are bones and muscles too).
	u.partOf = map[string][]string{}
	for _, a := range u.areas {
		for _, b := range u.areas {
			shared := 0
			for _, w := range a.words {
				if slices.ContainsFunc(b.words, func(x []string) bool { return slices.Equal(x, w) }) {
					shared++
				}
			}
			if a.id != b.id && 2*shared >= len(a.words) && len(b.words) > len(a.words) {
				u.partOf[a.id] = append(u.partOf[a.id], b.id)
			}
		}
	}
	return nil
}

func (u *Understanding) compileCues(n *yaml.Node, macros map[string]string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("cues.yaml line %d: `cues` must map each concept id to its rules", n.Line)
	}
	u.exact = map[string][]int32{}
	u.prefix = map[string][]int32{}
	patIDs := map[string]int32{}
	termIDs := map[string]int32{}
	groupIDs := map[string]int32{}
	pattern := func(p string) int32 {
		if id, ok := patIDs[p]; ok {
			return id
		}
		id := int32(len(u.pats))
		patIDs[p] = id
		u.pats = append(u.pats, p)
		if stem, wild := strings.CutSuffix(p, "*"); wild {
			u.prefix[stem] = append(u.prefix[stem], id)
			u.maxStem = max(u.maxStem, len(stem))
		} else {
			u.exact[p] = append(u.exact[p], id)
		}
		return id
	}
	term := func(words []string) int32 {
		key := strings.Join(words, " ")
		if id, ok := termIDs[key]; ok {
			return id
		}
		t := make([]int32, len(words))
		for i, w := range words {
			t[i] = pattern(w)
		}
		id := int32(len(u.terms))
		termIDs[key] = id
		u.terms = append(u.terms, t)
		return id
	}
	group := func(alts string) (int32, error) {
		var ts []int32
		var keys []string
		var list []string
		for _, a := range strings.Split(alts, "|") {
			name, ok := strings.CutPrefix(strings.TrimSpace(a), "@")
			if !ok {
				list = append(list, a)
				continue
			}
			m, ok := macros[name]
			if !ok {
				return 0, fmt.Errorf("no macro @%s", name)
			}
			list = append(list, strings.Split(m, "|")...)
		}
		for _, a := range list {
			p, err := u.phrase(a)
			if err != nil {
				return 0, err
			}
			ts = append(ts, term(p))
			keys = append(keys, strings.Join(p, " "))
		}
		key := strings.Join(keys, "|")
		if id, ok := groupIDs[key]; ok {
			return id, nil
		}
		id := int32(len(u.groups))
		groupIDs[key] = id
		u.groups = append(u.groups, ts)
		return id, nil
	}

	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		id := k.Value
		ci, ok := u.index[id]
		if !ok {
			return fmt.Errorf("cues.yaml line %d: cues for %q, which is not a concept of vocabulary.yaml", k.Line, id)
		}
		if seen[id] {
			return fmt.Errorf("cues.yaml line %d: %q has two entries", k.Line, id)
		}
		seen[id] = true
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("cues.yaml line %d: %s: a list of rules is needed", v.Line, id)
		}
		for ri, rn := range v.Content {
			r, err := u.compileRule(rn, group, term)
			if err != nil {
				return fmt.Errorf("cues.yaml line %d: %s, rule %d: %v", rn.Line, id, ri+1, err)
			}
			r.concept = ci
			u.rules = append(u.rules, r)
		}
	}
	for _, c := range u.concepts {
		if !seen[c.ID] {
			return fmt.Errorf("vocabulary.yaml: concept %q has no cues in cues.yaml", c.ID)
		}
	}
	return nil
}

// compileRule reads one rule: a cue string, or a mapping with `cue` and
// optional `inverse`, `fixed` and `not`.
func (u *Understanding) compileRule(n *yaml.Node, group func(string) (int32, error), term func([]string) int32) (rule, error) {
	var r rule
	switch n.Kind {
	case yaml.ScalarNode:
		r.cue = n.Value
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return r, fmt.Errorf("%s: a single value is needed", k.Value)
			}
			switch k.Value {
			case "cue":
				r.cue = v.Value
			case "inverse", "fixed":
				b, err := strconv.ParseBool(v.Value)
				if err != nil {
					return r, fmt.Errorf("%s: %q is not true or false", k.Value, v.Value)
				}
				if k.Value == "inverse" {
					r.inverse = b
				} else {
					r.fixed = b
				}
			case "not":
				for _, a := range strings.Split(v.Value, "|") {
					p, err := u.phrase(a)
					if err != nil {
						return r, fmt.Errorf("not: %v", err)
					}
					r.not = append(r.not, term(p))
				}
			default:
				return r, fmt.Errorf("unknown field %q (cue, inverse, fixed, not)", k.Value)
			}
		}
	default:
		return r, errors.New("a rule is a cue string or a mapping with `cue`")
	}
	if strings.TrimSpace(r.cue) == "" {
		return r, errors.New("no cue")
	}
	for _, g := range strings.Split(r.cue, "+") {
		g = strings.TrimSpace(g)
		opt := strings.HasPrefix(g, "?")
		g = strings.TrimSpace(strings.TrimPrefix(g, "?"))
		if g == "" {
			return r, fmt.Errorf("%q: an empty group", r.cue)
		}
		id, err := group(g)
		if err != nil {
			return r, fmt.Errorf("%q: %v", r.cue, err)
		}
		if opt {
			r.optional = append(r.optional, id)
		} else {
			r.required = append(r.required, id)
		}
	}
	if len(r.required) == 0 {
		return r, fmt.Errorf("%q: only optional groups", r.cue)
	}
	return r, nil
}
