package scenarios

import (
	"strings"
	"unicode"
)

// fallbackAnswer is said when a question matches no fact and the vignette
// has no default: a plain patient's reply, never a gold label.
const fallbackAnswer = "I'm not sure."

// Patient plays one vignette: it says the opening, then answers each of the
// engine's messages from the vignette's facts. It decides only from the
// question's text and the offered choices (never the engine's state), so
// the same replies always get the same answers. A Patient is not safe for
// concurrent use; play one intake with one Patient.
type Patient struct {
	opening  string
	facts    []patientFact
	fallback string
	max      int
	said     int // messages said so far, the opening included
}

type patientFact struct {
	asks   [][]string // each ask's words, lower case; a trailing "*" is a prefix
	answer string
	choose string // lower case
}

// NewPatient returns the simulated patient of v, about to say its opening.
// It copies what it needs, so later changes to v do not affect it.
func NewPatient(v *Vignette) *Patient {
	p := &Patient{opening: v.Opening, fallback: v.Default, max: v.MaxTurns, said: 1}
	if p.max <= 0 {
		p.max = DefaultMaxTurns
	}
	if strings.TrimSpace(p.fallback) == "" {
		p.fallback = fallbackAnswer
	}
	for _, f := range v.Facts {
		pf := patientFact{answer: f.Answer, choose: strings.ToLower(strings.TrimSpace(f.Choose))}
		for _, a := range f.Asks {
			if w := askWords(a); len(w) > 0 {
				pf.asks = append(pf.asks, w)
			}
		}
		p.facts = append(p.facts, pf)
	}
	return p
}

// Opening is the patient's first message: turn 1 of the limit.
func (p *Patient) Opening() string { return p.opening }

// Turns is how many messages the patient has said, the opening included.
func (p *Patient) Turns() int { return p.said }

// Answer replies to one engine message (question) that offered choices
// (nil when none). ok is false, and nothing is said, when the turn limit is
// reached: the opening and each earlier answer count one turn.
//
// The reply comes from the first fact one of whose asks matches the
// question: its Choose picks the first offered choice containing that text
// (case-insensitive, returned exactly as offered); otherwise its Answer.
// A fact with neither that applies, or no matching fact, gives the
// vignette's Default (or "I'm not sure." without one).
//
// An ask matches on whole words, case-insensitively: "pain" matches "Any
// pain?" but not "painful"; "pain*" matches both; a phrase ("chest pain")
// matches those words in that order, next to each other.
func (p *Patient) Answer(question string, choices []string) (reply string, ok bool) {
	if p.said >= p.max {
		return "", false
	}
	p.said++
	words := textWords(question)
	for _, f := range p.facts {
		if !f.matches(words) {
			continue
		}
		if f.choose != "" {
			for _, c := range choices {
				if strings.Contains(strings.ToLower(c), f.choose) {
					return c, true
				}
			}
		}
		if strings.TrimSpace(f.answer) != "" {
			return f.answer, true
		}
		break // the fact is found but has nothing to say here: the default
	}
	return p.fallback, true
}

func (f patientFact) matches(words []string) bool {
	for _, ask := range f.asks {
		if containsPhrase(words, ask) {
			return true
		}
	}
	return false
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
