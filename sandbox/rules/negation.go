package rules

import (
	"fmt"
	"slices"
)

// Negation and its scope, after NegEx (Chapman WW, Bridewell W, Hanbury P,
// Cooper GF, Buchanan BG. A simple algorithm for identifying negated
// findings and diseases in discharge summaries. J Biomed Inform
// 2001;34(5):301-310), with the lay triggers patients use. The word lists
// are lexicon.json's "negation" (docs/protocols.md, "Negation and its
// scope"):
//
//   - a pre-trigger ("no", "not", "never", "without", "nowhere near", "free
//     of") up to negationWindow words before a phrase, in its clause, denies
//     it; a post-trigger after it ("ruled out", "has gone", "not any more")
//     does too;
//   - a pseudo-trigger looks like one and is not ("not only", "no change",
//     "not helping", "wont stop"): its words trigger nothing, and "never …
//     before" ("I've never had a pain like this before") affirms;
//   - a word of degree between a trigger and the phrase ("nowhere near the
//     worst headache", "not that bad a cough") denies the degree, not the
//     finding;
//   - a terminator ("but", "however", "apart from", "which", "now") ends a
//     trigger's scope: "no fever now my chest hurts";
//   - a hedge ("maybe", "I think I might", "not sure") makes the phrase
//     uncertain;
//   - a past marker in the clause ("used to", "years ago", "as a child")
//     makes it past, and a hypothetical ("what if", "in case", "should I
//     worry if") hypothetical: neither is a current finding.
//
// A clause break (punctuation, "and", "but", …) ends every scope.

// negationData is lexicon.json's "negation".
type negationData struct {
	Comment      string   `json:"comment"`
	Pre          []string `json:"pre"`
	Post         []string `json:"post"`
	Pseudo       []string `json:"pseudo"`
	Terminators  []string `json:"terminators"`
	Past         []string `json:"past"`
	Hypothetical []string `json:"hypothetical"`
	// NeverBefore are the words after a phrase that make a "never" before
	// it affirm: "never had a pain like this before".
	NeverBefore []string `json:"never_before"`
	// Degree words between a trigger and the phrase make the trigger deny
	// the degree, not the finding: "nowhere near the worst headache",
	// "not that bad a cough".
	Degree []string `json:"degree"`
}

// negation is negationData, each phrase split into words.
type negation struct {
	pre, post, pseudo, terminators, past, hypothetical, neverBefore [][]string
	degree                                                          map[string]bool
}

func (lx *lexicon) loadNegation(d negationData) error {
	split := func(name string, in []string) [][]string {
		var out [][]string
		for _, s := range in {
			w := lx.normalisePhrase(s)
			if len(w) == 0 {
				continue
			}
			out = append(out, w)
		}
		return out
	}
	lx.neg = negation{
		pre: split("pre", d.Pre), post: split("post", d.Post), pseudo: split("pseudo", d.Pseudo),
		terminators: split("terminators", d.Terminators), past: split("past", d.Past),
		hypothetical: split("hypothetical", d.Hypothetical), neverBefore: split("never_before", d.NeverBefore),
		degree: map[string]bool{},
	}
	for _, w := range d.Degree {
		lx.neg.degree[w] = true
	}
	for _, t := range lx.neg.terminators {
		if len(t) == 1 && lx.negators[t[0]] {
			return fmt.Errorf("terminator %q is a negator", t[0])
		}
	}
	return nil
}

// Polarities beyond the matcher's three: a finding said of the past, or of
// a situation that has not happened.
const (
	past polarity = iota + uncertain + 1
	hypothetical
)

// scopePolarity is what clause cl says about the phrase at cl[start:end]:
// affirmed, negated, uncertain, past or hypothetical.
func (lx *lexicon) scopePolarity(cl []string, start, end int) polarity {
	from := max(0, start-negationWindow)
	before := cl[from:start]
	// A terminator ends the scope of every trigger before it.
	for _, t := range lx.neg.terminators {
		for i := len(before) - len(t); i >= 0; i-- {
			if matchAt(before, i, t) {
				before = before[i+len(t):]
				break
			}
		}
	}
	// Pseudo-triggers trigger nothing: blank their words (they may run
	// into the phrase: "no change in the pain").
	window := cl[from:]
	cloned := false
	blank := func(k int) {
		if !cloned {
			before, cloned = slices.Clone(before), true
		}
		before[k] = ""
	}
	for _, p := range lx.neg.pseudo {
		for i := 0; i < len(before) && i+len(p) <= len(window); i++ {
			if matchAt(window, i, p) {
				for k := i; k < i+len(p) && k < len(before); k++ {
					blank(k)
				}
			}
		}
	}
	after := cl[end:]
	if slices.Contains(before, "never") && slices.ContainsFunc(lx.neg.neverBefore, func(p []string) bool { return containsSeq(after, p) }) {
		for k, t := range before {
			if t == "never" {
				blank(k)
			}
		}
	}
	for _, h := range lx.neg.hypothetical {
		if containsSeq(cl[:start], h) {
			return hypothetical
		}
	}
	for _, h := range lx.hedges {
		if containsSeq(before, h) {
			return uncertain
		}
	}
	// The last trigger before the phrase denies it, unless a word of
	// degree stands between them.
	trigger := -1
	for _, p := range lx.neg.pre {
		for i := 0; i+len(p) <= len(before); i++ {
			if matchAt(before, i, p) {
				trigger = max(trigger, i+len(p)-1)
			}
		}
	}
	for i, t := range before {
		if lx.negators[t] {
			trigger = max(trigger, i)
		}
	}
	if trigger >= 0 && !slices.ContainsFunc(before[trigger+1:], func(t string) bool { return lx.neg.degree[t] }) {
		return negated
	}
	if len(after) > negationWindow {
		after = after[:negationWindow]
	}
	for _, p := range lx.neg.post {
		if containsSeq(after, p) {
			return negated
		}
	}
	for _, p := range lx.neg.past {
		if containsSeq(cl, p) {
			return past
		}
	}
	return affirmed
}
