package rules

import (
	"slices"
	"strings"
	"unicode"

	"github.com/clinical-intake/intake-web/sandbox/rules/internal/spell"
)

// Spelling tolerance and lemmas (docs/protocols.md, "Words it has not
// seen").
//
// A word a patient typed that the engine does not know is corrected to the
// vocabulary word it is one slip away from: "tounge" is "tongue", "stomack"
// "stomach", "amoxicilin" "amoxicillin". The distance is Damerau-Levenshtein
// (an insertion, a deletion, a substitution or two neighbouring letters
// swapped count one each): at most 1 for a word of 4 to 7 letters, 2 from 8.
// The guard, because a wrong correction is worse than none ("bleeding" made
// "breeding", "tight" made "night"): a word is never corrected when it
//
//   - has three letters or fewer, or holds a digit;
//   - is a negation, a hedge, a yes or no word, a filler or a clause word;
//   - is itself a word of the vocabulary, or an inflection of one
//     ("coughing");
//   - is an English word: language/wordnet.json lists every word of the
//     British English word list and WordNet within the correction distance
//     of a vocabulary word ("breeding", "night", "sweat"), generated with
//     the vocabulary it was checked against;
//   - has two vocabulary words equally near that keep as much of its start
//     ("brak": "break" or "brake"), or none; of two equally near, the one
//     that keeps more of the start wins ("breathles" is "breathless", not
//     "breathes": slips fall more often at a word's end).
//
// Only words of that generated vocabulary are targets, so a word added to
// the protocols later is not a target until the file is generated again
// (TestWordNetFileIsCurrent says so).

// speller corrects words to the vocabulary.
type speller struct {
	// deletes maps every string made by deleting one letter from a target
	// word (or none) to the targets it came from (symmetric delete lookup:
	// Garbe, SymSpell), so a lookup costs a few map reads.
	deletes map[string][]string
	known   map[string]bool // English words near a target: never corrected
}

func newSpeller(targets, english []string) *speller {
	sp := &speller{deletes: make(map[string][]string, 10*len(targets)), known: make(map[string]bool, len(english))}
	for _, w := range english {
		sp.known[w] = true
	}
	for _, t := range targets {
		for _, d := range spell.Deletions(t, 1) {
			sp.deletes[d] = append(sp.deletes[d], t)
		}
	}
	return sp
}

// correct returns the vocabulary word w is a slip away from, or w.
func (lx *lexicon) correct(w string) string {
	if lx.spell == nil {
		return w
	}
	sp := lx.spell()
	if !lx.correctable(sp, w) {
		return w
	}
	n := spell.MaxEdits(len(w))
	// One deletion on each side meets every word one edit away, and most
	// two away (two slips in a long word, letters out of order: "tounge",
	// which reordered accepts), for an index a fifth of the size.
	best, bestD, tie := "", n+2, false
	// The word and each string made by deleting one of its letters, in
	// one buffer: a map lookup with string(buf) does not allocate.
	buf := make([]byte, 0, len(w))
	var seen []string
	for i := -1; i < len(w); i++ {
		buf = buf[:0]
		if i < 0 {
			buf = append(buf, w...)
		} else {
			buf = append(append(buf, w[:i]...), w[i+1:]...)
		}
		for _, t := range sp.deletes[string(buf)] {
			if slices.Contains(seen, t) {
				continue
			}
			seen = append(seen, t)
			dist := spell.Damerau(w, t)
			if dist > min(n, spell.MaxEdits(len(t))) && !reordered(w, t) {
				continue
			}
			switch {
			case dist < bestD:
				best, bestD, tie = t, dist, false
			case dist == bestD && t != best:
				// Equally near: the one that keeps more of the word's
				// start ("breathles" is "breathless", not "breathes"),
				// else neither.
				switch a, b := commonPrefix(w, t), commonPrefix(w, best); {
				case a > b:
					best, tie = t, false
				case a == b:
					tie = true
				}
			}
		}
	}
	if best == "" || tie {
		return w
	}
	return best
}

// commonPrefix is how many leading bytes a and b share.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// reordered is true when w has t's letters in another order, the first
// one in place ("tounge" for "tongue"): a slip of the fingers, not
// another word, even two edits away.
func reordered(w, t string) bool {
	if len(w) != len(t) || len(w) < 5 || w[0] != t[0] {
		return false
	}
	a, b := []byte(w), []byte(t)
	slices.Sort(a)
	slices.Sort(b)
	return string(a) == string(b)
}

// correctable applies the guard.
func (lx *lexicon) correctable(sp *speller, w string) bool {
	if len(w) <= 3 || strings.ContainsFunc(w, unicode.IsDigit) {
		return false
	}
	if lx.vocab[w] || sp.known[w] || lx.negators[w] || lx.clauseWords[w] || lx.clauseWordsInside[w] ||
		lx.fillers[w] || lx.yesWords[w] || lx.noWords[w] || lx.spelling[w] != nil {
		return false
	}
	if _, ok := lx.numbers[w]; ok {
		return false
	}
	for _, h := range lx.hedges {
		if len(h) == 1 && h[0] == w {
			return false
		}
	}
	return lx.lemma(w) == w
}

// The guard above reads lemma(w) == w as "not an inflection of a
// vocabulary word": "coughing" is never corrected.

// Lemmas: an inflected word is read as the vocabulary word it inflects,
// by WordNet's detachment rules (morphy: "coughs", "coughing", "coughed" →
// "cough"; "worse" stays) and its exception lists for irregular forms
// ("threw" → "throw", "bled" → "bleed"), kept in language/wordnet.json for
// the vocabulary's words.
var detachments = [][2]string{
	{"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"},
	{"es", "e"}, {"es", ""}, {"s", ""}, {"ied", "y"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
}

// lemma is the vocabulary word w inflects, or w. Nouns and verbs only: a
// comparative rule would make "number" a form of "numb".
func (lx *lexicon) lemma(w string) string {
	if l, ok := lx.lemmaX[w]; ok {
		return l
	}
	var buf [64]byte
	for _, d := range detachments {
		if stem, ok := strings.CutSuffix(w, d[0]); ok && len(stem) >= 2 && len(stem)+len(d[1]) <= len(buf) {
			// A lookup with string(bytes) does not allocate.
			c := append(append(buf[:0], stem...), d[1]...)
			if lx.vocab[string(c)] {
				return string(c)
			}
			// A doubled last consonant: "stopped", "swollen" is listed.
			if n := len(stem); n >= 3 && stem[n-1] == stem[n-2] && d[1] == "" && lx.vocab[stem[:n-1]] {
				return stem[:n-1]
			}
		}
	}
	return w
}

// lemmatise is the lemma of every token, once the vocabulary is built.
func (lx *lexicon) lemmatise(toks []string) []string {
	if lx.spell == nil {
		return toks
	}
	var out []string // toks itself while no lemma differs
	for i, t := range toks {
		if l := lx.lemma(t); l != t {
			if out == nil {
				out = slices.Clone(toks)
			}
			out[i] = l
		}
	}
	if out == nil {
		return toks
	}
	return out
}
