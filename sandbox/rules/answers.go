package rules

import (
	"slices"
	"strconv"
	"strings"
)

func isDurationWord(t string) bool {
	switch t {
	case "for", "since", "past", "last", "over", "ago":
		return true
	}
	return false
}

// Fact values shared by every yes/no question.
const (
	valYes    = "yes"
	valNo     = "no"
	valUnsure = "unsure"
)

// answer is one captured fact.
type answer struct {
	value  string  // valYes, valNo, valUnsure, an option value, or a number
	num    float64 // set when hasNum: days for durations, years for age
	hasNum bool
	words  string // the patient's message that gave it
	turn   int    // which patient message that was (1 = the first); set for volunteered facts
	// from is what a volunteered fact was read from: the clauses, as typed,
	// that hold the words of the question the reading kept ("" when it was
	// read from the whole message, as a duration or an age is).
	from        string
	earlier     string // a hedged first reply to the same question, if it was asked again
	source      string // sourceAsked, sourceVolunteered or sourceDemographics
	unsureTwice bool   // recorded as unsure after two unclear replies
	approx      string // how to describe an approximate number ("within the past week")
}

const (
	sourceAsked        = "asked"
	sourceVolunteered  = "volunteered"
	sourceDemographics = "demographics"
)

func polarityValue(p polarity) string {
	switch p {
	case affirmed:
		return valYes
	case negated:
		return valNo
	}
	return valUnsure
}

func durationAnswer(days float64, approx string) answer {
	a := numberAnswer(days)
	a.approx = approx
	return a
}

func numberAnswer(n float64) answer {
	return answer{value: strconv.FormatFloat(n, 'f', -1, 64), num: n, hasNum: true}
}

// statedYesNo reads a yes/no question's answer from what m states: its
// keywords (negation-aware), its no_keywords, or a duration against
// yes_from_days. A volunteered duration must say it is one ("for a few
// weeks", "the past month"): a bare "several days" is more likely the
// answer to a how-often question. A Recent question is not volunteered by
// a clause said of the past.
func (q *Question) statedYesNo(m message, volunteered bool) (answer, bool) {
	if volunteered && q.Recent {
		m = m.without(m.lx.neg.past) // "I took an overdose two years ago"
	}
	if p := m.mentionAny(q.keywords); p != absent {
		return answer{value: polarityValue(p)}, true
	}
	if p := q.findingsSay(m); p != absent {
		return answer{value: polarityValue(p)}, true
	}
	for _, ph := range q.noKeywords {
		if said(m.mention(ph)) {
			return answer{value: valNo}, true
		}
	}
	if q.YesFromDays != nil && (!volunteered || slices.ContainsFunc(m.tokens, isDurationWord)) {
		if d, _, ok := duration(m.tokens); ok {
			if d >= *q.YesFromDays {
				return answer{value: valYes}, true
			}
			return answer{value: valNo}, true
		}
	}
	return answer{}, false
}

// findingsSay is what m's findings say about q's (Question.Findings): an
// affirmation or a denial beats a hedge; absent when none is said. A
// finding whose words all name the complaint (m's mask) is not read.
func (q *Question) findingsSay(m message) polarity {
	best := absent
	for _, f := range m.findings {
		if m.complaint != nil && !slices.ContainsFunc(f.at, func(k int) bool { return !m.complaint[f.clause][k] }) {
			continue
		}
		for _, c := range q.findings {
			pos, neg := c, c
			neg.denied = true
			switch {
			case pos.meets(f) && f.pol == affirmed:
				return affirmed
			case neg.meets(f):
				return negated
			case pos.meets(f):
				best = uncertain
			}
		}
	}
	return best
}

// interpret reads m as the reply to q, which was just asked. ok is false
// when the reply says nothing the question can use.
func (q *Question) interpret(m message) (answer, bool) {
	if m.notUnderstanding() {
		return answer{}, false // asked again in other words
	}
	switch q.Kind {
	case kindYesNo:
		if a, ok := q.statedYesNo(m, false); ok {
			return a, true
		}
		if p, ok := m.yesNo(); ok {
			return answer{value: polarityValue(p)}, true
		}
	case kindDuration:
		if d, approx, ok := duration(m.tokens); ok {
			return durationAnswer(d, approx), true
		}
		// A bare number answers "how many days".
		if len(m.tokens) == 1 {
			if n, ok := number(m.tokens[0]); ok {
				return numberAnswer(float64(n)), true
			}
		}
	case kindChoice:
		if o := q.matchOption(m); o != nil {
			return answer{value: o.Value}, true
		}
	case kindAge:
		if n, ok := answeredAge(m.tokens); ok {
			return numberAnswer(float64(n)), true
		}
	}
	if p, ok := m.yesNo(); ok && p == uncertain {
		return answer{value: valUnsure}, true
	}
	return answer{}, false
}

// volunteer reads m for an answer to q given before q was asked. It is
// stricter than interpret: a bare "yes" answers nothing here.
func (q *Question) volunteer(m message) (answer, bool) {
	switch q.Kind {
	case kindYesNo:
		return q.statedYesNo(m, true)
	case kindDuration:
		if d, approx, ok := duration(m.tokens); ok {
			return durationAnswer(d, approx), true
		}
	case kindChoice:
		// An option counts only beside one of the question's own keywords,
		// so "every day" in a reply about something else is not taken. The
		// keyword only says what the option is about, so it may be a word
		// of the complaint ("pain"); the option itself may not.
		if len(q.keywords) > 0 && m.unmasked().mentionAny(q.keywords) != absent {
			if o := q.matchOption(m); o != nil {
				return answer{value: o.Value}, true
			}
		}
	case kindAge:
		if n, ok := volunteeredAge(m.tokens); ok {
			return numberAnswer(float64(n)), true
		}
	}
	return answer{}, false
}

// matchOption picks the option whose longest phrase is affirmed in m, so
// "nearly every day" beats "every day".
func (q *Question) matchOption(m message) *Option {
	var best *Option
	bestLen := 0
	for i := range q.Options {
		o := &q.Options[i]
		for _, ph := range o.match {
			if len(ph) > bestLen && m.mention(ph) == affirmed {
				best, bestLen = o, len(ph)
			}
		}
	}
	return best
}

// occurrence is where a phrase was found: a clause of a message and the
// positions of the tokens its words matched.
type occurrence struct {
	clause int
	at     []int
}

// evidence lists the occurrences in m of every phrase q reads a volunteered
// answer from (its keywords and no_keywords, or its options), left out those
// that only m's complaint words make (message.onlyComplaint).
func (q *Question) evidence(m message) []occurrence {
	phrases := append(slices.Clone(q.keywords), q.noKeywords...)
	if q.Kind == kindChoice {
		phrases = nil
		for _, o := range q.Options {
			phrases = append(phrases, o.match...)
		}
	}
	var out []occurrence
	for c, cl := range m.clauses {
		for i := range cl {
			for _, ph := range phrases {
				if at := m.lx.matchedAt(cl, i, ph); at != nil && !m.onlyComplaint(c, i, ph) {
					out = append(out, occurrence{clause: c, at: at})
				}
			}
		}
	}
	return out
}

// typedClauses is the clauses of m that occurrences are in, as the patient
// typed them, in order, each once.
func (m message) typedClauses(occ []occurrence) string {
	var parts []string
	seen := map[int]bool{}
	for _, o := range occ {
		if !seen[o.clause] {
			seen[o.clause] = true
			parts = append(parts, strings.Join(m.words[o.clause], " "))
		}
	}
	return strings.Join(parts, " … ")
}
