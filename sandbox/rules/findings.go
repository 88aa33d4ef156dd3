package rules

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Findings: what a patient message says, before any decision. Every patient
// message is read, clause by clause, into findings from the vocabulary in
// language/findings.json: a symptom or sign (pain, cough, fever,
// breathlessness, neck stiffness, a swollen calf, a long flight, …) with
// the body site it is at, whether it is affirmed, hedged, denied, past or
// hypothetical (negation.go), and the qualifiers its message gives it
// (severe, sudden, persistent). Decisions are rules over findings
// (findingRule): a protocol is recognised from its "recognise" rules, and an
// emergency category from its "findings" rules, over the findings of every
// message so far (a syndrome such as sepsis may be told across several
// messages). docs/protocols.md ("Findings") documents the vocabulary and the
// rules.

const findingsFile = "language/findings.json"

// findingsData is findings.json.
type findingsData struct {
	Comment string `json:"comment"`
	// Except: a clause holding one of these is read for no finding ("the
	// spots on my dog").
	Except     []string            `json:"except"`
	Sites      []siteData          `json:"sites"`
	Qualifiers map[string][]string `json:"qualifiers"`
	Findings   []findingData       `json:"findings"`
}

// siteData is one body site: the words that name it, and phrases in which
// those words do not name it ("back of my leg", "came back").
type siteData struct {
	ID     string   `json:"id"`
	Words  []string `json:"words"`
	Except []string `json:"except,omitempty"`
}

// findingData is one symptom or sign of the vocabulary.
type findingData struct {
	ID    string `json:"id"`
	Label string `json:"label"` // clinician-facing
	// Terms say the finding: phrases (docs/protocols.md, phrase syntax), or
	// "a~b" for every piece in one clause in any order ("breath~hard":
	// "it is hard to get my breath").
	Terms []string `json:"terms"`
	// Sited are terms that also name the site ("headache": pain at the
	// head), by site id.
	Sited map[string][]string `json:"sited,omitempty"`
	// WordNet lists the WordNet synsets whose words also say the finding,
	// picked by hand per finding; each word of Not is left out (a sense a
	// patient would not mean). The words come from language/wordnet.json.
	WordNet []wordnetRef `json:"wordnet,omitempty"`
	// Except: a clause holding one of these is not read for this finding.
	Except []string `json:"except,omitempty"`
	// ExceptFindings: a clause in which one of these findings is read is
	// not read for this one: "my acne itches" is the acne's itch, not a
	// rash; "I feel depressed when I see my hair falling out" is about the
	// hair, not low mood said as the complaint.
	ExceptFindings []string `json:"except_findings,omitempty"`
	// State: a state that lasts once begun (pregnant, taking warfarin,
	// a recent operation): said of last week it still holds, so an
	// emergency category's history markers ("last week") do not leave it
	// out; only its own past tense does ("when I was pregnant").
	State bool `json:"state,omitempty"`
	// SiteAfter: the finding is at the site named after it in its clause,
	// when one is: pain spreading is at where it goes ("on the left side
	// going down my arm" spreads to the arm, not the side).
	SiteAfter bool `json:"site_after,omitempty"`
	// Animals: the finding is read in a clause about an animal too, which
	// is read for no other ("the dog's going to my sister's" is a pet given
	// away, a farewell; "the spots on my dog" are not the patient's rash).
	Animals bool `json:"animals,omitempty"`
}

type wordnetRef struct {
	Synset string   `json:"synset"`
	Not    []string `json:"not,omitempty"`
}

// vocabulary is findings.json, prepared.
type vocabulary struct {
	sites      []*siteDef
	findings   []*findingDef
	byID       map[string]*findingDef
	qualifiers map[string][][]string
	qualBit    map[string]uint32 // a bit per qualifier, for finding.quals
	// first indexes the terms by their first word, for one pass per
	// clause; prefix terms and terms whose first word is an alternation are
	// in rest.
	first map[string][]*termDef
	rest  []*termDef
	// except: a clause holding one is read for no finding but those
	// read in a clause about an animal (animals).
	except  [][]string
	animals bool // some finding is read in a clause about an animal
}

type siteDef struct {
	id     string
	words  [][]string
	except [][]string
	firsts []firstWord // each word's first word, for a quick look
}

type findingDef struct {
	id, label string
	state     bool
	siteAfter bool     // findingData.SiteAfter
	animals   bool     // findingData.Animals
	wordnet   []string // the words its WordNet synsets added
	terms     []*termDef
	except    [][]string
	// exceptFindings: findingData.ExceptFindings.
	exceptFindings []string
}

// termDef is one term: its pieces (one, or several for "a~b"), the site it
// names (Sited) and the finding it says.
type termDef struct {
	pieces [][]string
	site   string
	def    *findingDef
	first  firstWord // its first word, for a quick look
}

// Polarity of a finding beyond the matcher's: past ("used to", "years ago")
// and hypothetical ("what if") findings are not current.
type finding struct {
	id     string
	turn   int // the message it was read from, 1 for the first
	clause int
	at     []int // positions of the term's tokens in the clause
	pol    polarity
	sites  []string
	siteAt []int  // positions of the site words it took, in the clause
	quals  uint32 // a bit per qualifier (vocabulary.qualBit)
	state  bool   // findingData.State
}

// positive is true for a finding affirmed or hedged: "I think I might have
// a temperature" counts, as a hedged emergency escalates.
func (f finding) positive() bool { return f.pol == affirmed || f.pol == uncertain }

func loadFindings(data []byte, lx *lexicon, wn *wordnetData) (*vocabulary, error) {
	var d findingsData
	if data == nil {
		data = []byte("{}")
	}
	if err := decodeStrict(data, &d); err != nil {
		return nil, fmt.Errorf("rules: %s: %w", findingsFile, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("rules: %s: "+format, append([]any{findingsFile}, args...)...))
	}
	v := &vocabulary{byID: map[string]*findingDef{}, qualifiers: map[string][][]string{}, first: map[string][]*termDef{}}
	v.except = phrases(lx, d.Except, bad)
	id := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	sites := map[string]bool{}
	for _, s := range d.Sites {
		if !id.MatchString(s.ID) || sites[s.ID] || len(s.Words) == 0 {
			bad("site %q needs a unique lowercase id and words", s.ID)
		}
		sites[s.ID] = true
		sd := &siteDef{id: s.ID, words: phrases(lx, s.Words, bad), except: phrases(lx, s.Except, bad)}
		for _, w := range sd.words {
			sd.firsts = append(sd.firsts, lx.firstWordOf(w[0]))
		}
		v.sites = append(v.sites, sd)
	}
	v.qualBit = map[string]uint32{}
	names := slices.Sorted(maps.Keys(d.Qualifiers))
	if len(names) > 32 {
		bad("%d qualifiers; at most 32", len(names))
	}
	for i, name := range names {
		v.qualifiers[name] = phrases(lx, d.Qualifiers[name], bad)
		v.qualBit[name] = 1 << i
	}
	for _, f := range d.Findings {
		if !id.MatchString(f.ID) || v.byID[f.ID] != nil || f.Label == "" {
			bad("finding %q needs a unique lowercase id and a label", f.ID)
			continue
		}
		def := &findingDef{id: f.ID, label: f.Label, except: phrases(lx, f.Except, bad), state: f.State, siteAfter: f.SiteAfter, animals: f.Animals, exceptFindings: f.ExceptFindings}
		v.animals = v.animals || f.Animals
		v.byID[f.ID] = def
		add := func(t, site string) {
			var pieces [][]string
			for _, piece := range strings.Split(t, "~") {
				toks, err := phrase(lx, piece)
				if err != nil {
					bad("finding %s term %q: %v", f.ID, t, err)
					return
				}
				pieces = append(pieces, toks)
			}
			def.terms = append(def.terms, &termDef{pieces: pieces, site: site, def: def})
		}
		for _, t := range f.Terms {
			add(t, "")
		}
		for site, terms := range f.Sited {
			if !sites[site] {
				bad("finding %s: unknown site %q", f.ID, site)
			}
			for _, t := range terms {
				add(t, site)
			}
		}
		for _, ref := range f.WordNet {
			words, ok := wn.Synsets[ref.Synset]
			if !ok {
				bad("finding %s: synset %s is not in %s (run go generate ./sandbox/rules)", f.ID, ref.Synset, wordnetFile)
				continue
			}
			for _, w := range ref.Not {
				if !slices.Contains(words, w) {
					bad("finding %s: synset %s has no word %q to leave out", f.ID, ref.Synset, w)
				}
			}
			for _, w := range words {
				if !slices.Contains(ref.Not, w) {
					add(w, "")
					def.wordnet = append(def.wordnet, w)
				}
			}
		}
		if len(def.terms) == 0 {
			bad("finding %s has no terms", f.ID)
		}
		v.findings = append(v.findings, def)
	}
	for _, f := range v.findings {
		for _, id := range f.exceptFindings {
			if v.byID[id] == nil || id == f.id {
				bad("finding %s except_findings: %q is not another finding", f.id, id)
			}
		}
		for _, t := range f.terms {
			w := t.pieces[0][0]
			t.first = lx.firstWordOf(w)
			if isCompiled(w) {
				v.rest = append(v.rest, t)
			} else {
				v.first[w] = append(v.first[w], t)
			}
		}
	}
	return v, errors.Join(errs...)
}

// read lists the findings of message m: every term of the vocabulary found
// in a clause (words or their lemmas), with its polarity, its sites and
// its qualifiers. A finding takes the site nearest to it in its clause, or
// the site its term names; without one, it takes the site of an adjacent
// clause that names only a site ("a pain in my chest and left arm"), else
// of the nearest clause before it that names a site ("I twisted my foot.
// It hurts when I walk.").
func (v *vocabulary) read(m message) []finding {
	var out []finding
	// What the message may hold, looked at once: the sites and the terms
	// starting with an alternation whose first word it has.
	var sites []*siteDef
	for _, s := range v.sites {
		if slices.ContainsFunc(s.firsts, m.mayHaveFirst) {
			sites = append(sites, s)
		}
	}
	var rest []*termDef
	for _, t := range v.rest {
		if m.mayHaveFirst(t.first) {
			rest = append(rest, t)
		}
	}
	clauseSites := make([][]siteOcc, len(m.clauses))
	for c, cl := range m.clauses {
		lem := m.lemmas[c]
		for _, s := range sites {
			// The words of an exception ("back of my leg", "came back")
			// are not read as the site; the rest of the clause still is.
			read := cl
			if m.clauseHolds(c, s.except) {
				read = maskPhrases(m.lx, cl, s.except)
			}
			for i := range read {
				for _, w := range s.words {
					if at := m.lx.matchedAtLemma(read, lem, i, w); at != nil {
						clauseSites[c] = append(clauseSites[c], siteOcc{s.id, at})
					}
				}
			}
		}
		clauseSites[c] = longestSites(clauseSites[c])
	}
	found := make([][]finding, len(m.clauses))
	for c, cl := range m.clauses {
		animal := m.clauseHolds(c, v.except)
		if animal && !v.animals {
			continue
		}
		lem := m.lemmas[c]
		type seenKey struct {
			def   *findingDef
			start int
		}
		var seen []seenKey
		try := func(t *termDef, i int) {
			if animal && !t.def.animals {
				return // the spots on the dog are not the patient's
			}
			at := m.lx.matchedAtLemma(cl, lem, i, t.pieces[0])
			if at == nil {
				return
			}
			for _, piece := range t.pieces[1:] {
				var more []int
				for k := range cl {
					if more = m.lx.matchedAtLemma(cl, lem, k, piece); more != nil {
						break
					}
				}
				if more == nil {
					return
				}
				at = append(at, more...)
			}
			if m.clauseHolds(c, t.def.except) {
				return
			}
			start, end := slices.Min(at), slices.Max(at)+1
			key := seenKey{t.def, start}
			if slices.Contains(seen, key) {
				return
			}
			seen = append(seen, key)
			pol := m.lx.scopePolarity(cl, start, end)
			if pol == affirmed && m.deniedQuestion(c) {
				pol = negated
			}
			f := finding{id: t.def.id, turn: m.turn, clause: c, at: at, pol: pol, state: t.def.state}
			if t.site != "" {
				f.sites = []string{t.site}
			} else if len(clauseSites[c]) > 0 {
				best := -1
				after := t.def.siteAfter && slices.ContainsFunc(clauseSites[c], func(s siteOcc) bool { return slices.Min(s.at) >= end })
				for _, s := range clauseSites[c] {
					d := distance(s.at, start, end)
					if slices.ContainsFunc(s.at, func(k int) bool { return slices.Contains(at, k) }) {
						continue // the term's own word
					}
					if after && slices.Min(s.at) < end {
						continue // where it spreads to, not from
					}
					switch {
					case best < 0 || d < best:
						best = d
						f.sites, f.siteAt = []string{s.id}, slices.Clone(s.at)
					case d == best && !slices.Contains(f.sites, s.id):
						f.sites = append(f.sites, s.id)
						f.siteAt = append(f.siteAt, s.at...)
					}
				}
			}
			found[c] = append(found[c], f)
		}
		for i, tok := range cl {
			for _, t := range v.first[tok] {
				try(t, i)
			}
			if lem[i] != tok {
				for _, t := range v.first[lem[i]] {
					try(t, i)
				}
			}
			for _, t := range rest {
				try(t, i)
			}
		}
	}
	// A finding whose except_findings are read in its clause is not read.
	for c := range found {
		found[c] = slices.DeleteFunc(found[c], func(f finding) bool {
			return slices.ContainsFunc(v.byID[f.id].exceptFindings, func(id string) bool {
				return slices.ContainsFunc(found[c], func(o finding) bool { return o.id == id && o.positive() })
			})
		})
	}
	// Sites from neighbouring clauses, then qualifiers.
	for c := range found {
		for k := range found[c] {
			f := &found[c][k]
			if len(f.sites) > 0 {
				continue
			}
			for _, n := range []int{c - 1, c + 1} {
				if n >= 0 && n < len(found) && len(found[n]) == 0 && len(clauseSites[n]) > 0 {
					for _, s := range clauseSites[n] {
						if !slices.Contains(f.sites, s.id) {
							f.sites = append(f.sites, s.id)
						}
					}
				}
			}
			for n := c - 1; n >= 0 && len(f.sites) == 0; n-- {
				for _, s := range clauseSites[n] {
					if !slices.Contains(f.sites, s.id) {
						f.sites = append(f.sites, s.id)
					}
				}
			}
		}
	}
	// Severity belongs to its clause ("a bad cough, a slight headache");
	// onset and persistence to the message ("it came on suddenly: my arm
	// went weak").
	quals := make([]uint32, len(m.clauses))
	var msgQuals uint32
	for c := range m.clauses {
		for name, ps := range v.qualifiers {
			if m.clauseHolds(c, ps) {
				quals[c] |= v.qualBit[name]
				msgQuals |= v.qualBit[name]
			}
		}
	}
	severe := v.qualBit[qualSevere]
	for c := range found {
		for _, f := range found[c] {
			f.quals = msgQuals&^severe | quals[c]&severe
			out = append(out, f)
		}
	}
	return out
}

const qualSevere = "severe"

func distance(at []int, start, end int) int {
	d := 1 << 30
	for _, k := range at {
		switch {
		case k < start:
			d = min(d, start-k)
		case k >= end:
			d = min(d, k-end+1)
		default:
			d = 0
		}
	}
	return d
}

// longestSites drops a site occurrence whose words lie inside a longer one
// ("behind my eyes" is the head, not the eyes).
func longestSites(in []siteOcc) []siteOcc {
	var out []siteOcc
	for i, s := range in {
		inside := false
		for j, o := range in {
			if i != j && len(o.at) > len(s.at) && slices.Min(o.at) <= slices.Min(s.at) && slices.Max(o.at) >= slices.Max(s.at) {
				inside = true
			}
		}
		if !inside {
			out = append(out, s)
		}
	}
	return out
}

// siteOcc is a site named in a clause, at the positions of its words.
type siteOcc struct {
	id string
	at []int
}

// maskPhrases returns cl with the words of every occurrence of phrases
// blanked, so they are not read again.
func maskPhrases(lx *lexicon, cl []string, phrases [][]string) []string {
	if len(phrases) == 0 {
		return cl
	}
	out := slices.Clone(cl)
	for _, p := range phrases {
		for i := range cl {
			for _, k := range lx.matchedAt(cl, i, p) {
				out[k] = ""
			}
		}
	}
	return out
}

// findingRule is a decision over findings (docs/protocols.md, "Rules over
// findings"): every condition of All, and at least Min (default 1) of Any
// when Any is given, each met by a positive finding, and none of None. A
// condition is "id" (or one of "a|b"), "id@site" (at that site, or one of
// "a|b"; "none" among them for no site at all), "id@!site" (not at it),
// then ":qualifier" or ":!qualifier" as often as needed:
// "pain@chest:severe", "low_mood@none|mind". "-id" is the finding said and
// denied: a cough is the cough protocol unless "-fever" ("a cough but no
// temperature": the protocol is cough with fever).
type findingRule struct {
	All  []string `json:"all,omitempty"`
	Any  []string `json:"any,omitempty"`
	Min  int      `json:"min,omitempty"`
	None []string `json:"none,omitempty"`
	// Note says, for the clinician, what the rule found and its source
	// ("Suspected sepsis (NICE NG51): an infection with new confusion").
	Note string `json:"note,omitempty"`
	// Alone (protocols only): the rule recognises the protocol only when
	// no other protocol is recognised by the message ("a fever" alone is
	// the cough and fever protocol; with a sore throat it is the sore
	// throat's).
	Alone bool `json:"alone,omitempty"`
	// YieldsTo (protocols only): the rule recognises the protocol unless
	// one of these protocols is recognised by the message too (a cough is
	// part of a sore throat or breathlessness, not beside a back pain).
	YieldsTo []string `json:"yields_to,omitempty"`
	// Except (emergency categories only), when given, replaces the
	// category's except phrases for this rule: a clause holding one is not
	// read (the bleeding category leaves out clauses about stools, which
	// its rule for black stools reads). History markers always apply.
	Except []string `json:"except,omitempty"`
	// Scope (emergency categories only): "message" when every finding
	// must come from one message ("took", "tablets" and "too many" are an
	// overdose told together); "nearby" when every finding must come from
	// one message and within nearbyClauses consecutive clauses of it ("I
	// took lots of my tablets", not "I took the dog out … lots of rain …
	// my pills need renewing"); by default the whole conversation so far.
	Scope string `json:"scope,omitempty"`

	all, anyOf, none []condition
	uses             map[string]bool // every finding id its conditions name
	except           [][]string      // Except, normalised
}

// condition is one parsed condition of a findingRule.
type condition struct {
	denied    bool // "-id": the finding said and denied ("no temperature")
	ids       []string
	sites     []string
	notSites  []string
	noSite    bool
	quals     uint32 // every bit must be set
	notQuals  uint32 // no bit may be set
	anySite   bool
	rawString string
}

func parseCondition(s string, v *vocabulary) (condition, error) {
	c := condition{rawString: s}
	parts := strings.Split(s, ":")
	head := parts[0]
	for _, q := range parts[1:] {
		q2, not := strings.CutPrefix(q, "!")
		bit, ok := v.qualBit[q2]
		if !ok {
			return c, fmt.Errorf("condition %q: unknown qualifier %q", s, q2)
		}
		if not {
			c.notQuals |= bit
		} else {
			c.quals |= bit
		}
	}
	head, c.denied = strings.CutPrefix(head, "-")
	ids, site, hasSite := strings.Cut(head, "@")
	c.ids = strings.Split(ids, "|")
	for _, id := range c.ids {
		if v.byID[id] == nil {
			return c, fmt.Errorf("condition %q: unknown finding %q", s, id)
		}
	}
	switch {
	case !hasSite:
		c.anySite = true
	default:
		not := strings.HasPrefix(site, "!")
		for _, x := range strings.Split(strings.TrimPrefix(site, "!"), "|") {
			if x == "none" && !not {
				c.noSite = true
				continue
			}
			if !slices.ContainsFunc(v.sites, func(sd *siteDef) bool { return sd.id == x }) {
				return c, fmt.Errorf("condition %q: unknown site %q", s, x)
			}
			if not {
				c.notSites = append(c.notSites, x)
			} else {
				c.sites = append(c.sites, x)
			}
		}
	}
	return c, nil
}

// meets is true when f is a positive finding that satisfies c (a denied
// one for "-id").
func (c condition) meets(f finding) bool {
	if !slices.Contains(c.ids, f.id) || f.positive() == c.denied || (c.denied && f.pol != negated) {
		return false
	}
	atSite := slices.ContainsFunc(f.sites, func(s string) bool { return slices.Contains(c.sites, s) })
	switch {
	case c.noSite && len(c.sites) == 0 && len(f.sites) > 0:
		return false
	case c.noSite && len(f.sites) > 0 && !atSite:
		return false
	case !c.noSite && len(c.sites) > 0 && !atSite:
		return false
	case len(c.notSites) > 0 && slices.ContainsFunc(f.sites, func(s string) bool { return slices.Contains(c.notSites, s) }):
		return false
	}
	return f.quals&c.quals == c.quals && f.quals&c.notQuals == 0
}

func (r *findingRule) prepare(lx *lexicon, v *vocabulary) error {
	var errs []error
	r.except = phrases(lx, r.Except, func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) })
	parse := func(in []string) []condition {
		var out []condition
		for _, s := range in {
			c, err := parseCondition(s, v)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, c)
		}
		return out
	}
	r.all, r.anyOf, r.none = parse(r.All), parse(r.Any), parse(r.None)
	r.uses = map[string]bool{}
	for _, c := range slices.Concat(r.all, r.anyOf, r.none) {
		for _, id := range c.ids {
			r.uses[id] = true
		}
	}
	if len(r.all) == 0 && len(r.anyOf) == 0 {
		errs = append(errs, errors.New("a rule needs all or any"))
	}
	if r.Scope != "" && r.Scope != scopeMessage && r.Scope != scopeNearby {
		errs = append(errs, fmt.Errorf("rule scope %q is not %q or %q", r.Scope, scopeMessage, scopeNearby))
	}
	if r.Min > len(r.Any) {
		errs = append(errs, fmt.Errorf("rule min %d is more than its %d any conditions", r.Min, len(r.Any)))
	}
	return errors.Join(errs...)
}

// scopeMessage is findingRule.Scope for a rule read within one message;
// scopeNearby for one read within nearbyClauses consecutive clauses of one
// message.
const (
	scopeMessage  = "message"
	scopeNearby   = "nearby"
	nearbyClauses = 3
)

// holdsAt reports whether the rule holds over the findings of msgs (the
// conversation so far) with one finding at least from the last message,
// and the findings of the last message it used.
//
// A finding in a clause that holds one of except (the category's own
// exceptions: "food poisoning") is not read, nor one in a clause that
// holds a history marker ("years ago", "last week"), unless it is a state
// (findingData.State: "a positive test last week").
//
// Findings whose id is in leave are left out: the committed protocol asks
// about them.
func (r *findingRule) holdsAt(msgs []message, except, history [][]string, leave map[string]bool) ([]finding, bool) {
	last := msgs[len(msgs)-1]
	// The rule can only come to hold at the last message through one of
	// its findings: most messages ("yes", "34") name none.
	if !slices.ContainsFunc(last.findings, func(f finding) bool { return r.uses[f.id] && !leave[f.id] }) {
		return nil, false
	}
	if r.Except != nil {
		except = r.except
	}
	var fs []finding
	for _, m := range msgs {
		if (r.Scope == scopeMessage || r.Scope == scopeNearby) && m.turn != last.turn {
			continue
		}
		for _, f := range m.findings {
			if !r.uses[f.id] || leave[f.id] {
				continue
			}
			if !m.clauseHolds(f.clause, except) && (f.state || !m.clauseHolds(f.clause, history)) {
				fs = append(fs, f)
			}
		}
	}
	used, ok := r.holds(fs)
	if ok && r.Scope == scopeNearby {
		ok = false
		for c := range last.clauses {
			near := slices.DeleteFunc(slices.Clone(fs), func(f finding) bool { return f.clause < c || f.clause >= c+nearbyClauses })
			if used, ok = r.holds(near); ok {
				break
			}
		}
	}
	if !ok {
		return nil, false
	}
	used = slices.DeleteFunc(used, func(f finding) bool { return f.turn != last.turn })
	return used, len(used) > 0
}

// holds reports whether the rule holds over fs, and the findings that met
// its conditions (those of All, and every one of Any that met one).
func (r *findingRule) holds(fs []finding) ([]finding, bool) {
	if len(r.all) == 0 && len(r.anyOf) == 0 {
		return nil, false // not prepared: a library without findings
	}
	var used []finding
	for _, c := range r.none {
		if slices.ContainsFunc(fs, c.meets) {
			return nil, false
		}
	}
	for _, c := range r.all {
		k := slices.IndexFunc(fs, c.meets)
		if k < 0 {
			return nil, false
		}
		for _, f := range fs {
			if c.meets(f) {
				used = append(used, f)
			}
		}
	}
	if len(r.anyOf) > 0 {
		met := 0
		for _, c := range r.anyOf {
			hit := false
			for _, f := range fs {
				if c.meets(f) {
					used = append(used, f)
					hit = true
				}
			}
			if hit {
				met++
			}
		}
		if met < max(1, r.Min) {
			return nil, false
		}
	}
	return used, true
}
