package scenarios

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
)

// fallbackAnswer is said to a yes/no question understood that no fact
// covers when the vignette has no default, and to a question about a value
// (how long, where, how old) that the vignette does not give: a plain
// patient's reply, never a gold label.
const fallbackAnswer = "I'm not sure."

// unknownAnswer is said to a question the patient cannot place when the
// vignette does not say what it says then.
const unknownAnswer = "Sorry, I don't understand the question."

// Patient plays one vignette: it says the opening, then answers each of the
// engine's messages from the vignette's facts. It decides only from the
// question's text and the offered choices (never the engine's state), so
// the same replies always get the same answers, and it says why it said
// each message (Said.Why). A Patient is not safe for concurrent use; play
// one intake with one Patient.
type Patient struct {
	opening   string
	complaint string
	age       *int
	sex       string
	facts     []patientFact
	fallback  string
	unknown   string
	u         Understander
	max       int
	said      int // messages said so far, the opening included
}

type patientFact struct {
	n       int        // 1-based index in the vignette's facts
	concept string     // "" for a fact stated by asks only
	asks    [][]string // each ask's words, lower case; a trailing "*" is a prefix
	askText []string   // the asks as written, for Why
	answer  string
	choose  string // lower case
}

// Said is one patient message and why it was said.
type Said struct {
	Text string
	Why  Why
}

// NewPatient returns the simulated patient of v, about to say its opening.
// u places the engine's questions by meaning (concepts); nil leaves only
// the facts' asks, and every other question is not understood. It copies
// what it needs, so later changes to v do not affect it.
func NewPatient(v *Vignette, u Understander) *Patient {
	p := &Patient{opening: v.Opening, complaint: strings.TrimSpace(v.Complaint), age: v.AgeYears, sex: v.Sex,
		fallback: v.Default, unknown: v.Unknown, u: u, max: v.MaxTurns, said: 1}
	if p.complaint == "" {
		p.complaint = v.Opening
	}
	if p.max <= 0 {
		p.max = DefaultMaxTurns
	}
	if strings.TrimSpace(p.fallback) == "" {
		p.fallback = fallbackAnswer
	}
	if strings.TrimSpace(p.unknown) == "" {
		p.unknown = unknownAnswer
	}
	for i, f := range v.Facts {
		pf := patientFact{n: i + 1, concept: strings.TrimSpace(f.Concept), answer: f.Answer, choose: strings.ToLower(strings.TrimSpace(f.Choose))}
		for _, a := range f.Asks {
			if w := askWords(a); len(w) > 0 {
				pf.asks = append(pf.asks, w)
				pf.askText = append(pf.askText, a)
			}
		}
		p.facts = append(p.facts, pf)
	}
	return p
}

// Opening is the patient's first message: turn 1 of the limit.
func (p *Patient) Opening() Said { return Said{Text: p.opening, Why: Why{Kind: WhyOpening}} }

// Turns is how many messages the patient has said, the opening included.
func (p *Patient) Turns() int { return p.said }

// Answer replies to one engine message (question) that offered choices
// (nil when none). ok is false, and nothing is said, when the turn limit is
// reached: the opening and each earlier answer count one turn.
//
// Facts stated by asks come first, as they always have: the first fact one
// of whose asks matches the question's words answers (its Choose picks the
// first offered choice containing that text, returned exactly as offered;
// otherwise its Answer; with neither applicable, the default). An ask
// matches on whole words, case-insensitively: "pain" matches "Any pain?"
// but not "painful"; "pain*" matches both; a phrase ("chest pain")
// matches those words in that order, next to each other.
//
// Otherwise the question is understood by meaning (the Understander): for
// each concept it asks about, in order, the first fact stated by that
// concept answers. An open question (the main problem, "tell me more",
// "anything else?") gets the complaint, or the offered quick reply that
// names it; age and sex come from the demographics when no fact states
// them. A question worded as the opposite of its concept turns the
// answer's leading yes or no (and a chosen Yes/No quick reply), so the
// answer keeps its meaning. Two concepts asked at once are answered both,
// in one message, those that say yes first (an engine asking "A or B?"
// reads the first word). Concepts understood that no fact covers get the
// vignette's default; a question the patient cannot place at all gets
// its answer for unknown questions, marked not understood.
func (p *Patient) Answer(question string, choices []string) (Said, bool) {
	if p.said >= p.max {
		return Said{}, false
	}
	p.said++
	words := textWords(question)
	for _, f := range p.facts {
		ask, ok := f.matching(words)
		if !ok {
			continue
		}
		why := Why{Kind: WhyAsks, Ask: ask, Facts: []int{f.n}}
		if text, choice, _, ok := f.say(choices, false); ok {
			why.Choice = choice
			return Said{Text: text, Why: why}, true
		}
		return Said{Text: p.fallback, Why: why}, true // found, but nothing to say here
	}
	var asked []Asked
	if p.u != nil {
		asked = p.u.Understand(question)
	}
	if len(asked) == 0 {
		return Said{Text: p.unknown, Why: Why{Kind: WhyNotUnderstood}}, true
	}
	return p.byConcept(asked, choices), true
}

// byConcept answers the concepts asked (at least one).
func (p *Patient) byConcept(asked []Asked, choices []string) Said {
	why := Why{Kind: WhyConcept}
	var cues []string
	for _, a := range asked {
		why.Concepts = append(why.Concepts, a.Concept)
		if a.Cue != "" {
			cues = append(cues, a.Cue)
		}
	}
	why.Cue = strings.Join(cues, "; ")
	for _, a := range asked {
		if a.Kind == concepts.Open {
			why.Kind = WhyOpen
			if c := namingChoice(p.u, choices, p.complaint); c != "" {
				why.Choice = c
				return Said{Text: c, Why: why}
			}
			return Said{Text: p.complaint, Why: why}
		}
	}
	var yes, other []string
	demographics := false
	for _, a := range asked {
		f := p.factFor(a.Concept)
		if f == nil {
			if text, ok := p.fromDemographics(a.Concept, choices); ok {
				other = append(other, text)
				demographics = true
			}
			continue
		}
		why.Facts = append(why.Facts, f.n)
		text, choice, turned, ok := f.say(choices, a.Inverse)
		if !ok {
			continue
		}
		if choice != "" {
			why.Choice = choice
		}
		why.Inverted = why.Inverted || turned
		if leadingYesNo(text) == "yes" {
			yes = append(yes, text)
		} else {
			other = append(other, text)
		}
	}
	parts := append(yes, other...)
	switch {
	case len(parts) == 0 && !slices.ContainsFunc(asked, func(a Asked) bool { return a.Kind == concepts.YesNo }):
		// A value the vignette does not give (how old, how long, where):
		// its default is for yes/no questions, and "no" answers none of
		// these.
		why.Kind = WhyNotKnown
		return Said{Text: fallbackAnswer, Why: why}
	case len(parts) == 0:
		why.Kind = WhyDefault
		return Said{Text: p.fallback, Why: why}
	case len(why.Facts) == 0 && demographics:
		why.Kind = WhyDemographics
	}
	return Said{Text: strings.Join(parts, " "), Why: why}
}

func (p *Patient) factFor(concept string) *patientFact {
	for i := range p.facts {
		if p.facts[i].concept == concept {
			return &p.facts[i]
		}
	}
	return nil
}

// fromDemographics answers age and sex from the vignette's demographics.
func (p *Patient) fromDemographics(concept string, choices []string) (string, bool) {
	switch {
	case concept == "age" && p.age != nil:
		return "I'm " + strconv.Itoa(*p.age) + ".", true
	case concept == "sex" && p.sex != "":
		word := map[string]string{"female": "female", "male": "male", "other": "intersex"}[p.sex]
		for _, c := range choices {
			if slices.Contains(textWords(c), word) {
				return c, true
			}
		}
		return "I'm " + word + ".", true
	}
	return "", false
}

// say is what fact f says to a question with these choices: the offered
// choice containing its Choose, else its Answer. For an inverse question it
// turns a Yes/No Choose and the Answer's leading yes or no, and turned says
// it did. ok is false when it has nothing to say here.
func (f *patientFact) say(choices []string, inverse bool) (text, choice string, turned, ok bool) {
	if f.choose != "" {
		want := f.choose
		yn := yesNo(want)
		if inverse && yn != "" {
			want, turned = map[string]string{"yes": "no", "no": "yes"}[yn], true
		}
		for _, c := range choices {
			if strings.Contains(strings.ToLower(c), want) {
				return c, c, turned, true
			}
		}
	}
	if strings.TrimSpace(f.answer) == "" {
		return "", "", false, false
	}
	if inverse && leadingYesNo(f.answer) != "" {
		return turnYesNo(f.answer), "", true, true
	}
	return f.answer, "", false, true
}

func (f *patientFact) matching(words []string) (string, bool) {
	for i, ask := range f.asks {
		if containsPhrase(words, ask) {
			return f.askText[i], true
		}
	}
	return "", false
}

// yesNo is "yes" or "no" for a whole text that is one of those words.
func yesNo(s string) string {
	w := textWords(s)
	if len(w) == 1 {
		return leadingYesNo(s)
	}
	return ""
}

// leadingYesNo is "yes" or "no" when text starts with such a word.
func leadingYesNo(text string) string {
	w := textWords(text)
	if len(w) == 0 {
		return ""
	}
	switch w[0] {
	case "yes", "yeah", "yep", "yup", "aye":
		return "yes"
	case "no", "nope", "nah":
		return "no"
	}
	return ""
}

// turnYesNo replaces the leading yes or no word of text by its opposite,
// keeping the rest ("yes, it goes into my jaw" → "no, it goes into my
// jaw"); text without one is returned as it is (its words carry the
// meaning).
func turnYesNo(text string) string {
	yn := leadingYesNo(text)
	if yn == "" {
		return text
	}
	i := strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) })
	j := i + strings.IndexFunc(text[i:], func(r rune) bool { return !unicode.IsLetter(r) })
	if j < i {
		j = len(text)
	}
	to := "No"
	if yn == "no" {
		to = "Yes"
	}
	if unicode.IsLower(rune(text[i])) {
		to = strings.ToLower(to)
	}
	return text[:i] + to + text[j:]
}

// namingChoice is the offered choice that names the patient's problem: the
// one sharing the most body areas or systems with the complaint ("Abdominal
// pain", "Stomach ache" or "Belly or abdomen" for "pain low down in my
// belly"), an area counting less the more of the choices share it, and a
// title that also names an area the complaint does not counting a little
// less ("Injury" before "Back problems" for a twisted ankle). "" when no
// choice shares an area, or two score the same: the patient then says the
// complaint in its own words.
func namingChoice(u Understander, choices []string, complaint string) string {
	if u == nil || len(choices) == 0 {
		return ""
	}
	mine := u.Areas(complaint)
	areas := make([][]string, len(choices))
	shared := map[string]int{}
	for i, c := range choices {
		areas[i] = u.Areas(c)
		for _, a := range areas[i] {
			shared[a]++
		}
	}
	best, bestScore, tie := "", 0.0, false
	for i, c := range choices {
		score := 0.0
		for _, a := range areas[i] {
			if slices.Contains(mine, a) {
				score += 1 / float64(shared[a])
			} else {
				score -= 0.25 / float64(shared[a]) // names something else too
			}
		}
		switch {
		case score > bestScore && score > 0:
			best, bestScore, tie = c, score, false
		case score == bestScore && score > 0:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// containsPhrase reports whether phrase occurs as consecutive words.
func containsPhrase(words, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(words); i++ {
		match := true
		for j, pw := range phrase {
			if !wordMatches(words[i+j], pw) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// wordMatches compares one question word with one pattern word; a pattern
// ending in "*" matches its stem followed by any letters (none included).
func wordMatches(w, pattern string) bool {
	stem, wild := strings.CutSuffix(pattern, "*")
	if !wild {
		return w == pattern
	}
	rest, ok := strings.CutPrefix(w, stem)
	if !ok {
		return false
	}
	for _, r := range rest {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// textWords splits text into lower-case words of letters and digits: every
// other character (spaces, punctuation, apostrophes) separates words, the
// same way for questions and asks.
func textWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// askWords splits an ask like textWords but keeps a "*" that ends a word.
func askWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '*'
	}) {
		// A "*" anywhere but at a word's end is not a pattern: drop it.
		stem, wild := strings.CutSuffix(w, "*")
		stem = strings.ReplaceAll(stem, "*", "")
		if stem == "" {
			continue // a lone "*" would match any word: ignored
		}
		if wild {
			stem += "*"
		}
		out = append(out, stem)
	}
	return out
}
