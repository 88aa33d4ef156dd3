package rules

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// The plain voice's quick replies of a yes/no question: a red flag's (a
// clear answer is needed) and every other's. voice.go reads them too.
var (
	defaultYesNoChoices = []string{"Yes", "No", "Not sure"}
	redFlagYesNoChoices = []string{"Yes", "No"}
)

// libraryFiles are the protocols, the language files (language.go) and
// urgency.json (urgency.go).
//
//go:embed protocols/*.json language/*.json urgency.json
var libraryFiles embed.FS

// library is the validated protocol set, sorted by id, with the emergency
// categories.
type library struct {
	protocols   []*Protocol
	outside     *outsideScreen // outside every protocol (outside.go); nil in a test's library without outside.json
	emergencies []*EmergencyCategory
	speaker     *speakerWords // who a message speaks of (speaker.go)
	vocab       *vocabulary   // the findings vocabulary (findings.go)
	history     [][]string    // emergencies.json's history markers
	hash        string        // sha256 over the sorted files' names and bytes
}

// Facts every protocol may use without asking for them itself.
const (
	factAge       = "age"
	factSex       = "sex"
	factPregnancy = "pregnancy"
)

func loadLibrary(fsys fs.FS, lx *lexicon) (*library, error) {
	names, err := fs.Glob(fsys, "protocols/*.json")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, errors.New("rules: protocol library is empty")
	}
	sort.Strings(names)
	h := sha256.New()
	lib := &library{}
	seen := map[string]bool{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		// Name and bytes both count: renaming a protocol changes the library.
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
		p, err := decodeProtocol(data)
		if err != nil {
			return nil, fmt.Errorf("rules: %s: %w", name, err)
		}
		if want := "protocols/" + p.ID + ".json"; name != want {
			return nil, fmt.Errorf("rules: %s: file must be named %s", name, want)
		}
		if seen[p.ID] {
			return nil, fmt.Errorf("rules: %s: duplicate id %s", name, p.ID)
		}
		seen[p.ID] = true
		if err := p.prepare(lx); err != nil {
			return nil, fmt.Errorf("rules: %s: %w", name, err)
		}
		lib.protocols = append(lib.protocols, p)
	}
	// The language files count too: a new synonym or emergency pattern
	// changes what the library recognises.
	langNames, err := fs.Glob(fsys, "language/*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(langNames)
	var findingsData, wordnetBytes, outsideBytes []byte
	for _, name := range langNames {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
		if name == emergenciesFile {
			em, err := loadEmergencies(data, lx)
			if err != nil {
				return nil, err
			}
			lib.emergencies, lib.speaker, lib.history = em.categories, em.speaker, em.history
		}
		switch name {
		case findingsFile:
			findingsData = data
		case wordnetFile:
			wordnetBytes = data
		case outsideFile:
			outsideBytes = data
		}
	}
	// A library without the findings files (a test's) reads no findings
	// and corrects no spelling.
	wn := &wordnetData{}
	if wordnetBytes != nil {
		if wn, err = loadWordNet(wordnetBytes); err != nil {
			return nil, err
		}
	}
	if lib.vocab, err = loadFindings(findingsData, lx, wn); err != nil {
		return nil, err
	}
	var ruleErrs []error
	// A library without findings.json (a test's) has no rules over
	// findings: they are not prepared, and never hold.
	for _, c := range lib.emergencies {
		if findingsData == nil {
			break
		}
		for _, sp := range c.SparedBy {
			cond, err := parseCondition(sp, lib.vocab)
			if err != nil {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: %s: category %s spared_by: %w", emergenciesFile, c.ID, err))
			}
			c.sparedBy = append(c.sparedBy, cond)
		}
		for i := range c.Findings {
			if err := c.Findings[i].prepare(lx, lib.vocab); err != nil {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: %s: category %s findings rule %d: %w", emergenciesFile, c.ID, i, err))
			}
			if c.Findings[i].Alone {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: %s: category %s findings rule %d: alone is for protocols", emergenciesFile, c.ID, i))
			}
		}
	}
	for _, p := range lib.protocols {
		if findingsData == nil {
			break
		}
		for _, sp := range p.SparedBy {
			cond, err := parseCondition(sp, lib.vocab)
			if err != nil {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: protocols/%s.json: spared_by: %w", p.ID, err))
			}
			p.sparedBy = append(p.sparedBy, cond)
		}
		for i := range p.Recognise {
			r := &p.Recognise[i]
			if err := r.prepare(lx, lib.vocab); err != nil {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: protocols/%s.json: recognise rule %d: %w", p.ID, i, err))
			}
			for _, y := range r.YieldsTo {
				if !slices.ContainsFunc(lib.protocols, func(o *Protocol) bool { return strings.Split(o.ID, ".v")[0] == y && o != p }) {
					ruleErrs = append(ruleErrs, fmt.Errorf("rules: protocols/%s.json: recognise rule %d: yields_to %q is not another protocol (an id without its version)", p.ID, i, y))
				}
			}
			if r.Scope != "" || (r.Alone && len(r.YieldsTo) > 0) {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: protocols/%s.json: recognise rule %d: scope is for emergency categories, and alone already yields to every protocol", p.ID, i))
			}
		}
		p.asksFindings = map[string]bool{}
		qs := make([]*Question, 0, len(p.redFlags)+len(p.Questions))
		for i := range p.redFlags {
			qs = append(qs, &p.redFlags[i])
		}
		for i := range p.Questions {
			qs = append(qs, &p.Questions[i])
		}
		for _, q := range qs {
			if len(q.Findings) > 0 && q.Kind != kindYesNo {
				ruleErrs = append(ruleErrs, fmt.Errorf("rules: protocols/%s.json: question %s: findings are for yes_no questions", p.ID, q.Fact))
			}
			for _, s := range q.Findings {
				c, err := parseCondition(s, lib.vocab)
				if err != nil {
					ruleErrs = append(ruleErrs, fmt.Errorf("rules: protocols/%s.json: question %s: %w", p.ID, q.Fact, err))
					continue
				}
				q.findings = append(q.findings, c)
				for _, id := range c.ids {
					p.asksFindings[id] = true
				}
			}
		}
	}
	if err := errors.Join(ruleErrs...); err != nil {
		return nil, err
	}
	if outsideBytes != nil && findingsData != nil {
		if lib.outside, err = loadOutside(outsideBytes, lx, lib); err != nil {
			return nil, err
		}
	}
	lx.finishVocabulary(wn)
	// So does the split of escalations into same-day and emergency.
	switch data, err := fs.ReadFile(fsys, urgencyFile); {
	case errors.Is(err, fs.ErrNotExist):
		// A library without it escalates every red flag as an emergency.
	case err != nil:
		return nil, err
	default:
		fmt.Fprintf(h, "%s\x00%d\x00", urgencyFile, len(data))
		h.Write(data)
		if err := loadUrgency(data, lib); err != nil {
			return nil, err
		}
	}
	lib.hash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return lib, nil
}

func decodeProtocol(data []byte) (*Protocol, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Protocol
	if err := dec.Decode(&p); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the protocol object")
	}
	return &p, nil
}

// prepare validates the protocol and normalises its phrases.
func (p *Protocol) prepare(lx *lexicon) error {
	versionedID := regexp.MustCompile(`^[a-z][a-z0-9_]*\.v[0-9]+$`)
	factName := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if !versionedID.MatchString(p.ID) {
		bad("id %q is not a versioned id such as name.v1", p.ID)
	}
	if p.Title == "" || p.PatientTerm == "" {
		bad("title and patient_term are required")
	}
	p.title = lx.normalisePhrase(p.Title)
	p.shownTitle, p.shownTerm = p.Title, p.PatientTerm
	if len(p.Triggers) == 0 && len(p.Recognise) == 0 {
		bad("no triggers and no recognise rules")
	}
	for _, t := range p.Triggers {
		if ex, ok := strings.CutPrefix(t, "!"); ok {
			if strings.ContainsAny(ex, "+~") {
				bad("trigger %q: an exception is one phrase", t)
			}
			toks, err := phrase(lx, ex)
			if err != nil {
				bad("trigger %q: %v", t, err)
			}
			p.triggerExcept = append(p.triggerExcept, toks)
			continue
		}
		var parts [][][]string
		for _, part := range strings.Split(t, "+") {
			var pieces [][]string
			for _, piece := range strings.Split(part, "~") {
				toks, err := phrase(lx, piece)
				if err != nil {
					bad("trigger %q: %v", t, err)
				}
				pieces = append(pieces, toks)
			}
			parts = append(parts, pieces)
		}
		p.triggers = append(p.triggers, parts)
	}
	if len(p.triggers) == 0 && len(p.Recognise) == 0 {
		bad("no triggers other than exceptions, and no recognise rules")
	}
	p.anyFirst = lx.firstWordOf(p.title[0])
	for _, parts := range p.triggers {
		for _, pieces := range parts {
			for _, piece := range pieces {
				p.anyFirst = p.anyFirst.union(lx.firstWordOf(piece[0]))
			}
		}
	}

	facts := map[string]string{factAge: "builtin", factSex: "builtin", factPregnancy: "builtin"}
	define := func(fact, kind string) {
		if !factName.MatchString(fact) {
			bad("fact %q is not a lowercase name", fact)
		}
		if facts[fact] != "" {
			bad("fact %q is defined twice", fact)
		}
		facts[fact] = kind
	}
	if n := len(p.RedFlags); n < 2 || n > 4 {
		bad("%d red flags; want 2 to 4", n)
	}
	for i := range p.RedFlags {
		rf := &p.RedFlags[i]
		define(rf.Fact, "red_flag")
		q, err := rf.prepare(lx)
		if err != nil {
			errs = append(errs, err)
		}
		p.redFlags = append(p.redFlags, q)
	}
	if n := len(p.Questions); n < 3 || n > 6 {
		bad("%d questions; want 3 to 6", n)
	}
	for i := range p.Questions {
		q := &p.Questions[i]
		define(q.Fact, q.Kind)
		if q.Label == "" || q.Ask == "" || q.AskAgain == "" || q.AskAgain == q.Ask {
			bad("question %q needs label, ask and ask_again (the question in other words)", q.Fact)
		}
		q.keywords = phrases(lx, q.Keywords, bad)
		q.noKeywords = phrases(lx, q.NoKeywords, bad)
		if (len(q.NoKeywords) > 0 || q.YesFromDays != nil) && q.Kind != kindYesNo {
			bad("question %q: no_keywords and yes_from_days are for yes_no questions", q.Fact)
		}
		switch q.Kind {
		case kindYesNo:
			if len(q.Keywords) == 0 {
				bad("question %q: yes_no questions need keywords", q.Fact)
			}
			if q.Choices == nil {
				q.Choices = slices.Clone(defaultYesNoChoices)
			}
		case kindDuration:
		case kindChoice:
			if len(q.Options) < 2 {
				bad("question %q: choice questions need 2 or more options", q.Fact)
			}
			q.Choices = nil
			for j := range q.Options {
				o := &q.Options[j]
				o.match = phrases(lx, append([]string{o.Label}, o.Match...), bad)
				q.Choices = append(q.Choices, o.Label)
			}
		default:
			bad("question %q: unknown kind %q", q.Fact, q.Kind)
		}
		// Every quick reply must be understood as an answer to its question.
		for _, c := range q.Choices {
			if _, ok := q.interpret(lx.parse(c)); !ok {
				bad("question %q: choice %q is not understood as an answer", q.Fact, c)
			}
		}
	}

	used := map[string]bool{}
	scoreKey := ""
	if s := p.Score; s != nil {
		scoreKey = s.Key
		if s.Key == "" || s.Name == "" || s.Source == "" {
			bad("score needs key, name and source")
		}
		if len(s.Components) == 0 {
			bad("score %q has no components", s.Key)
		}
		for _, c := range s.Components {
			used[c.Fact] = true
			if facts[c.Fact] == "" {
				bad("score %q: component %q uses unknown fact %q", s.Key, c.Label, c.Fact)
			}
			if c.Label == "" || (len(c.In) == 0 && c.Min == nil && c.Max == nil) {
				bad("score %q: component %q needs a label and a test", s.Key, c.Label)
			}
		}
		var names []string
		for i, b := range s.Bands {
			names = append(names, b.Band)
			if i > 0 && b.Min >= s.Bands[i-1].Min {
				bad("score %q: bands must be ordered by falling min", s.Key)
			}
			if b.Meaning == "" {
				bad("score %q: band %q needs its published meaning", s.Key, b.Band)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{engine.BandMid, engine.BandStrong, engine.BandWeak}) {
			bad("score %q: bands must be strong, mid and weak", s.Key)
		}
		if len(s.Bands) == 3 && s.Bands[2].Min > -100 {
			bad("score %q: the lowest band must start at -100 or below so every total has a band", s.Key)
		}
	}

	if len(p.Dispositions) == 0 || len(p.Dispositions[len(p.Dispositions)-1].When) != 0 {
		bad("the last disposition rule must be unconditional")
	}
	for i, d := range p.Dispositions {
		switch d.Disposition {
		case engine.DispositionSelfCare, engine.DispositionReview, engine.DispositionEscalate:
		default:
			bad("disposition rule %d: unknown disposition %q", i, d.Disposition)
		}
		if d.Reason == "" {
			bad("disposition rule %d needs a reason", i)
		}
		if i < len(p.Dispositions)-1 && len(d.When) == 0 {
			bad("disposition rule %d is unconditional but not last", i)
		}
		for _, c := range d.When {
			switch {
			case c.Score != "":
				if c.Score != scoreKey || len(c.Bands) == 0 {
					bad("disposition rule %d: unknown score %q or no bands", i, c.Score)
				}
			case c.Fact != "":
				used[c.Fact] = true
				if facts[c.Fact] == "" {
					bad("disposition rule %d: unknown fact %q", i, c.Fact)
				}
				if len(c.In) == 0 && c.Min == nil && c.Max == nil {
					bad("disposition rule %d: fact %q has no test", i, c.Fact)
				}
			default:
				bad("disposition rule %d: a condition needs a fact or a score", i)
			}
		}
	}
	for _, q := range p.Questions {
		if !used[q.Fact] {
			bad("question %q: its fact is not used by the score or any disposition rule", q.Fact)
		}
	}

	t := p.SOAP
	for name, text := range map[string]string{"subjective": t.Subjective, "objective": t.Objective, "assessment": t.Assessment} {
		if text == "" {
			bad("soap.%s is empty", name)
		}
		checkPlaceholders(text, "soap."+name, bad)
	}
	for _, d := range p.Dispositions {
		if t.Plan[d.Disposition] == "" {
			bad("soap.plan has no text for %s", d.Disposition)
		}
	}
	for d, text := range p.Advice {
		if t.Plan[d] == "" || text == "" {
			bad("advice for %q: not a disposition of this protocol, or empty", d)
		}
	}
	for _, d := range p.Dispositions {
		if d.Disposition == engine.DispositionSelfCare && p.Advice[engine.DispositionSelfCare] == "" {
			bad("advice.self_care is required: a self-care outcome must tell the patient what to do")
		}
	}
	if t.Plan[engine.DispositionEscalate] == "" {
		bad("soap.plan has no text for %s (red flags escalate)", engine.DispositionEscalate)
	}
	for d, text := range t.Plan {
		checkPlaceholders(text, "soap.plan."+d, bad)
	}
	return errors.Join(errs...)
}

func checkPlaceholders(text, where string, bad func(string, ...any)) {
	known := placeholders()
	for _, ph := range regexp.MustCompile(`\{[a-z_]+\}`).FindAllString(text, -1) {
		if !slices.Contains(known, ph) {
			bad("%s: unknown placeholder %s", where, ph)
		}
	}
}

func phrase(lx *lexicon, s string) ([]string, error) {
	toks, clauses := lx.normalisePhraseClauses(s)
	if len(toks) == 0 {
		return nil, fmt.Errorf("phrase %q is empty once normalised", s)
	}
	if clauses != 1 {
		return nil, fmt.Errorf("phrase %q spans %d clauses; drop and/but/punctuation", s, clauses)
	}
	// A clause word at an edge ("crying and") ends a clause of its own
	// and would leave the rest ("crying") to match every clause: read
	// between two words, the phrase must still be one clause.
	if _, n := lx.normalisePhraseClauses("x " + s + " x"); n != 1 {
		return nil, fmt.Errorf("phrase %q begins or ends with a clause word (and, but, …); it would match as %q", s, strings.Join(toks, " "))
	}
	return toks, nil
}

func phrases(lx *lexicon, in []string, bad func(string, ...any)) [][]string {
	var out [][]string
	for _, s := range in {
		toks, err := phrase(lx, s)
		if err != nil {
			bad("%v", err)
			continue
		}
		out = append(out, toks)
	}
	return out
}
