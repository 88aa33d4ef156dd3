package scenarios

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
// Otherwise the question is read by meaning (Read) and answered
// (AnswerReading).
func (p *Patient) Answer(question string, choices []string) (Said, bool) {
	if p.said >= p.max {
		return Said{}, false
	}
	if said, ok := p.byAsks(question, choices); ok {
		p.said++
		return said, true
	}
	return p.AnswerReading(Read(p.u, question), choices)
}

// byAsks answers from the first fact one of whose asks the question's words
// match.
func (p *Patient) byAsks(question string, choices []string) (Said, bool) {
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
	return Said{}, false
}

// Reading is how the patient read one engine message, before any fact of a
// vignette: the concepts it asks about, each with its question, its
// alternative and its margin. It depends only on the message, so one
// reading serves every vignette the message is asked in, and a reading a
// person has confirmed can stand in for the automatic one
// (AnswerReading).
type Reading struct {
	Asked []Asked `json:"asked,omitempty"`
}

// Read reads a message with u (nil reads nothing).
func Read(u Understander, message string) Reading {
	if u == nil {
		return Reading{}
	}
	return Reading{Asked: u.Understand(message)}
}

// Margin is the least margin of the concepts read; 0 when none.
func (r Reading) Margin() int {
	if len(r.Asked) == 0 {
		return 0
	}
	m := r.Asked[0].Margin
	for _, a := range r.Asked[1:] {
		m = min(m, a.Margin)
	}
	return m
}

// Trusted reports whether the reading found a concept and every concept
// won its words by at least concepts.MinMargin.
func (r Reading) Trusted() bool {
	return len(r.Asked) > 0 && r.Margin() >= concepts.MinMargin
}

// AnswerReading answers one engine message as read (r), with the choices
// it offered; ok is false at the turn limit, as for Answer.
//
// A message read as no concept gets the vignette's answer for unknown
// questions (not understood), and so does one read below the margin (low
// margin): either way the result is simulator-limited. Otherwise, for each
// concept asked the first fact stated by that concept answers. An open
// question (the main problem, "tell me more", "anything else?") gets the
// complaint, or the offered quick reply that clearly names it; age and sex
// come from the demographics when no fact states them. A question worded
// as the opposite of its concept turns the answer's leading yes or no (and
// a chosen Yes/No quick reply), so the answer keeps its meaning.
//
// The answer has the shape an engine reads (docs/scenarios.md, "Answer
// shapes"): one sentence per question, in the order asked; a question of
// one concept gets its fact's answer; a question of alternatives ("A, or
// B, or C?") one yes or no: "yes" naming what applies when any does,
// "no" when none does. Concepts asked together in one alternative ("a
// stiff neck along with a fever") say yes only when all do. Concepts
// understood that no fact covers get the vignette's default.
func (p *Patient) AnswerReading(r Reading, choices []string) (Said, bool) {
	if p.said >= p.max {
		return Said{}, false
	}
	p.said++
	if len(r.Asked) == 0 {
		return Said{Text: p.unknown, Why: Why{Kind: WhyNotUnderstood}}, true
	}
	if !r.Trusted() {
		why := Why{Kind: WhyLowMargin, Margin: r.Margin()}
		why.Concepts, why.Cue = conceptsAndCues(r.Asked)
		return Said{Text: p.unknown, Why: why}, true
	}
	said := p.byConcept(r.Asked, choices)
	said.Why.Margin = r.Margin()
	return said, true
}

func conceptsAndCues(asked []Asked) ([]string, string) {
	var ids, cues []string
	for _, a := range asked {
		ids = append(ids, a.Concept)
		if a.Cue != "" {
			cues = append(cues, a.Cue)
		}
	}
	return ids, strings.Join(cues, "; ")
}

// byConcept answers the concepts asked (at least one).
func (p *Patient) byConcept(asked []Asked, choices []string) Said {
	why := Why{Kind: WhyConcept}
	why.Concepts, why.Cue = conceptsAndCues(asked)
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
	var parts []string
	var from answerSources
	for i := 0; i < len(asked); {
		j := i + 1
		for j < len(asked) && asked[j].Question == asked[i].Question {
			j++
		}
		if text := p.answerQuestion(asked[i:j], choices, &why, &from); text != "" {
			parts = append(parts, text)
		}
		i = j
	}
	// A value not known is said only when nothing else is: "I'm not sure"
	// before a yes or no ("I'm not sure. Yes, …") reads as a contradiction,
	// and an engine reading the first words takes it as the answer.
	if known := slices.DeleteFunc(slices.Clone(parts), func(s string) bool { return s == fallbackAnswer }); len(known) > 0 {
		parts = known
	}
	switch {
	case len(parts) == 0:
		why.Kind = WhyNotKnown
		return Said{Text: fallbackAnswer, Why: why}
	case from.facts == 0 && from.demographics == 0 && from.defaults > 0:
		why.Kind = WhyDefault
	case from.facts == 0 && from.defaults == 0 && from.demographics > 0:
		why.Kind = WhyDemographics
	case from.facts == 0 && from.defaults == 0 && from.demographics == 0:
		why.Kind = WhyNotKnown
	}
	return Said{Text: sentences(parts), Why: why}
}

// answerSources counts what the parts of an answer came from.
type answerSources struct{ facts, defaults, demographics int }

// conceptAnswer is what the patient says of one concept of a question.
type conceptAnswer struct {
	alt   int
	text  string
	yesNo string // "yes", "no", or "" when the text says neither
	plain bool   // the text is a bare yes or no
}

// answerQuestion answers one question of a message: asked holds its
// concepts (asked in the same question, in order).
func (p *Patient) answerQuestion(asked []Asked, choices []string, why *Why, from *answerSources) string {
	var yn []conceptAnswer
	var values []string
	for _, a := range asked {
		f := p.factFor(a.Concept)
		var text string
		switch {
		case f != nil:
			why.Facts = append(why.Facts, f.n)
			t, choice, turned, ok := f.say(choices, a.Inverse)
			if !ok {
				if a.Kind == concepts.YesNo {
					text = p.fallback
					from.defaults++
				}
				break
			}
			text = t
			from.facts++
			if choice != "" {
				why.Choice = choice
			}
			why.Inverted = why.Inverted || turned
		case a.Kind == concepts.YesNo:
			text = p.fallback
			from.defaults++
		default:
			if t, ok := p.fromDemographics(a.Concept, choices); ok {
				text = t
				from.demographics++
			}
		}
		if text == "" {
			if a.Kind != concepts.YesNo {
				values = append(values, fallbackAnswer)
			}
			continue
		}
		if a.Kind == concepts.YesNo {
			yn = append(yn, conceptAnswer{alt: a.Alt, text: text, yesNo: leadingYesNo(text), plain: yesNo(text) != ""})
		} else {
			values = append(values, text)
		}
	}
	var out []string
	if s := alternativesAnswer(yn); s != "" {
		out = append(out, s)
	}
	for _, v := range values {
		if v != fallbackAnswer || len(out) == 0 && len(values) == 1 {
			out = append(out, v)
		}
	}
	if len(out) == 0 && len(values) > 0 {
		out = append(out, fallbackAnswer)
	}
	return strings.Join(out, "; ")
}

// alternativesAnswer is one yes or no for the yes/no concepts of one
// question: the single concept's own answer; else "yes" naming what
// applies when every concept of some alternative says yes; else, when
// some say something other than yes or no, those words; else the no (a
// first denial with words of its own, or a bare "no"), with what does
// apply after "but" when an alternative held only in part.
func alternativesAnswer(as []conceptAnswer) string {
	switch len(as) {
	case 0:
		return ""
	case 1:
		return as[0].text
	}
	holds := map[int]bool{}
	for _, a := range as {
		if _, seen := holds[a.alt]; !seen {
			holds[a.alt] = true
		}
		holds[a.alt] = holds[a.alt] && a.yesNo == "yes"
	}
	var yes, partly, other []string
	var lead string
	for _, a := range as {
		switch {
		case a.yesNo == "yes" && holds[a.alt]:
			if lead == "" {
				lead = firstWord(a.text)
			}
			yes = appendBody(yes, a.text)
		case a.yesNo == "yes":
			partly = appendBody(partly, a.text)
		case a.yesNo == "":
			other = append(other, a.text)
		}
	}
	switch {
	case lead != "":
		if len(yes) == 0 {
			return lead
		}
		return lead + ", " + strings.Join(yes, ", and ")
	case len(other) > 0:
		return strings.Join(other, "; ")
	}
	no := ""
	for _, a := range as {
		if a.yesNo == "no" && (no == "" || !a.plain && yesNo(no) != "") {
			no = a.text
		}
	}
	if no == "" {
		no = "no"
	}
	if len(partly) > 0 {
		return firstWord(no) + ", but " + strings.Join(partly, ", and ")
	}
	return no
}

// appendBody appends the words of text after its leading yes or no (and
// the punctuation after it), unless they are empty or already said.
func appendBody(list []string, text string) []string {
	b := strings.TrimLeft(strings.TrimPrefix(text, firstWord(text)), " ,.;:-–—!")
	b = strings.TrimRight(b, " .!")
	if b == "" || slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, b) }) {
		return list
	}
	return append(list, b)
}

// firstWord is text's first word as written ("Yes" of "Yes, I have").
func firstWord(text string) string {
	t := strings.TrimSpace(text)
	i := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
	if i < 0 {
		return t
	}
	return t[:i]
}

// sentences joins the answers to a message's questions as sentences, in
// order: each after the first starts with a capital, each but the last
// ends with a full stop where it has no closing mark.
func sentences(parts []string) string {
	var b strings.Builder
	for i, s := range parts {
		s = strings.TrimSpace(s)
		if i > 0 {
			b.WriteString(" ")
			r, n := utf8.DecodeRuneInString(s)
			s = string(unicode.ToUpper(r)) + s[n:]
		}
		b.WriteString(s)
		if i < len(parts)-1 && !strings.ContainsAny(s[len(s)-1:], ".!?") {
			b.WriteString(".")
		}
	}
	return b.String()
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

// namingChoice is the offered choice that clearly names the patient's
// problem, or "" when none does: the patient then says the complaint in
// its own words. A choice is a candidate when it names the complaint
// (Understander.Names: every area it names is the complaint's, so never
// "Low back pain" for a knee); the candidates are scored by the areas they
// share with the complaint, an area counting less the more choices share
// it; the best is chosen when the next scores at most half of it
// (minChoiceMargin) and the offered choices cover every area the
// complaint names (Understander.Covered: a diabetic emergency that also
// mentions breathing is not "Shortness of breath" when the list has
// nothing for the diabetes).
func namingChoice(u Understander, choices []string, complaint string) string {
	if u == nil || len(choices) == 0 || !u.Covered(choices, complaint) {
		return ""
	}
	mine := u.Areas(complaint)
	shared := map[string]int{}
	for _, c := range choices {
		for _, a := range u.Areas(c) {
			shared[a]++
		}
	}
	best, bestScore, second := "", 0.0, 0.0
	for _, c := range choices {
		if !u.Names(c, complaint) {
			continue
		}
		score := 0.0
		for _, a := range u.Areas(c) {
			if slices.Contains(mine, a) {
				score += 1 / float64(shared[a])
			}
		}
		switch {
		case score > bestScore:
			best, bestScore, second = c, score, bestScore
		case score > second:
			second = score
		}
	}
	if bestScore == 0 || second > bestScore*minChoiceMargin {
		return ""
	}
	return best
}

// minChoiceMargin: a quick reply is picked only when the next candidate
// scores at most this share of the best one.
const minChoiceMargin = 0.5

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
