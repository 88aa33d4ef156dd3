package concepts

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentence is one sentence of a message: its text as written and its
// normalised words.
type sentence struct {
	text     string   // as written, trimmed, with its closing punctuation
	words    []string // normalised words
	punct    []byte   // the clause mark just before each word: 0 for none, ':' for a colon, '-' for a dash (either may open a list), '(' and ')' for brackets, ',' for a comma
	rel      []int    // each word's relative clause: the position of its relative pronoun, or -1 (see relatives)
	clause   []int    // clause index of each word
	conn     []string // what started each clause: "" (the first), "and", "or", "but", "when" (after a subordinate first clause) or "," (a mark)
	alt      []int    // each word's alternative within its question (see alternatives)
	question bool     // ends with "?"
	tail     int      // in a joined pair, the first clause of the asking sentence; else 0
	prevRead bool     // in a joined pair, the first sentence asked and was read on its own
	bare     bool     // in a joined pair, the asking sentence found no concept alone
	leadIn   bool     // it started with a lead-in clause ("OK, and …"), dropped from words
	tagged   bool     // it ended with a confirmation tag (", haven't you?"), dropped from words: it asks
	announce bool     // it asks only by a request frame about the asking itself (see announces)
	ifSo     bool     // it opens with a condition that is the question before it ("If so, …": see conditional)
}

// group is the question a clause belongs to: a clause started by "or"
// belongs to the question before it (an alternative of it), so does the
// main clause after a subordinate one ("When you stand, do you feel
// faint?"), any other clause starts a new one ("Any fever, and how long has it been going
// on?" asks two questions, "Is it swollen, or can you see bone?" one).
func (s *sentence) group(clause int) int {
	g := 0
	for c := 1; c <= clause && c < len(s.conn); c++ {
		if s.conn[c] != "or" && s.conn[c] != "when" {
			g++
		}
	}
	return g
}

// isApostrophe reports the characters dropped inside words: "can't" is
// "cant", "I'd" is "id".
func isApostrophe(r rune) bool {
	switch r {
	case '\'', '’', '‘', '`', '´', 'ʼ':
		return true
	}
	return false
}

// clausePunct are the marks that may end a clause inside a sentence (a
// clause break also needs a question word after it: see splitClauses).
func clausePunct(r rune) bool {
	switch r {
	case ',', ':', '(', ')', '–', '—':
		return true
	}
	return false
}

// words splits s into lower-case words of letters and digits, apostrophes
// dropped, every other character a separator, and maps each word through
// spell (spelling variants and typos) when it is not nil. An "'s" that ends
// a word is read as the word "is" after it: it is "is", "has" or a
// possessive, the word before it carries the meaning ("How long's the
// cough been there?" asks how long; "the baby's temperature" is a
// temperature), and a contracted verb still makes a clause ("or one side
// of your throat's swollen").
// punct[i] is the clause mark just before word i: 0 for none, ':' for a
// colon, '-' for a dash, '(' or ')' for a bracket, ',' for a comma (any
// other over a comma, when several).
func words(s string, spell map[string]string) (out []string, punct []byte) {
	var b strings.Builder
	var pending byte
	flush := func() {
		if b.Len() == 0 {
			return
		}
		w := b.String()
		b.Reset()
		if c, ok := spell[w]; ok {
			w = c
		}
		out = append(out, w)
		punct = append(punct, pending)
		pending = 0
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case isApostrophe(r) && b.Len() > 0 && i+1 < len(rs) && (rs[i+1] == 's' || rs[i+1] == 'S') &&
			(i+2 == len(rs) || !unicode.IsLetter(rs[i+2]) && !unicode.IsDigit(rs[i+2])):
			i++ // "'s": the word ends, and "is" follows
			flush()
			out = append(out, "is")
			punct = append(punct, 0)
		case isApostrophe(r):
			// dropped: the word goes on
		default:
			flush()
			switch {
			case r == ':':
				pending = ':'
			case r == '–' || r == '—':
				pending = '-'
			case r == '(' || r == ')':
				pending = byte(r)
			case clausePunct(r) && pending == 0:
				pending = ','
			}
		}
	}
	flush()
	return out, punct
}

// splitSentences cuts a message into sentences at "?", "!", ";", a newline,
// a "." that ends a word (followed by a space or the end, so "37.5" and
// "0.5" stay whole), and a dash ("—", "–", or " - ") or a colon followed
// by a word for which asks is true: a question set off from the statement
// or instruction before it ("Feel your neck — are the glands up?", "You
// can't walk on it — is that right?", "A few questions about your chest
// pain: does it spread?"). Each sentence keeps its closing
// mark (the part before a dash keeps the dash); blank ones are dropped.
func splitSentences(msg string, asks func(word string) bool) []string {
	var out []string
	start := 0
	add := func(end int) {
		if t := strings.TrimSpace(msg[start:end]); t != "" {
			out = append(out, t)
		}
		start = end
	}
	for i := 0; i < len(msg); {
		r, size := utf8.DecodeRuneInString(msg[i:])
		end := i + size
		switch r {
		case '?', '!', ';', '\n', '…':
			// Several marks together ("?!", "...") close one sentence.
			for end < len(msg) && strings.ContainsRune("?!.;…\"'”’)", rune(msg[end])) {
				end++
			}
			add(end)
		case '—', '–', '-', ':':
			if r == '-' && (i == 0 || msg[i-1] != ' ' || end >= len(msg) || msg[end] != ' ') {
				break // a hyphen inside a word
			}
			if asks != nil && asks(nextWord(msg[end:])) {
				add(end) // the dash stays with the part before it: see setOff
			}
		case '.':
			next := end
			for next < len(msg) && strings.ContainsRune(".\"'”’)", rune(msg[next])) {
				next++
			}
			if abbreviation(msg[:i]) {
				break // "i.e.", "e.g.": no sentence ends
			}
			if next >= len(msg) || msg[next] == ' ' || msg[next] == '\n' || msg[next] == '\t' {
				end = next
				add(end)
			}
		}
		i = end
	}
	add(len(msg))
	return out
}

// abbreviation reports whether a "." after before ends an abbreviation of
// single letters ("i.e.", "e.g."), not a sentence.
func abbreviation(before string) bool {
	n := len(before)
	return n >= 3 && unicode.IsLetter(rune(before[n-1])) && before[n-2] == '.' && unicode.IsLetter(rune(before[n-3])) &&
		(n == 3 || !unicode.IsLetter(rune(before[n-4])))
}

// nextWord is the first word of s, lower case, apostrophes dropped.
func nextWord(s string) string {
	var b strings.Builder
	for _, r := range strings.TrimLeft(s, " \t") {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case isApostrophe(r):
		default:
			return b.String()
		}
	}
	return b.String()
}

// setOff reports whether a sentence was set off before a question by a dash
// or a colon ("Feel your neck —", "About your chest pain:"): it is that
// question's topic or instruction, and asks nothing itself unless a
// confirmation tag follows ("You can't walk on it — is that right?").
func setOff(text string) bool {
	return strings.HasSuffix(text, "—") || strings.HasSuffix(text, "–") || strings.HasSuffix(text, " -") || strings.HasSuffix(text, ":")
}

// continuations are the words that open a sentence continuing the question
// before it: an alternative ("Do you have a fever? Or do you feel very
// ill?") or an example of what it asks ("Is your breathing noisy? Like a
// high sound when you breathe in?").
var continuations = [][]string{{"or"}, {"like"}, {"for", "example"}, {"for", "instance"}, {"such", "as"}, {"say"}}

// joinContinuations joins a sentence opened by a continuation word to the
// question before it, as the clause it is: "Have you hurt yourself lately?
// Or made plans to?" is one question, "Have you hurt yourself lately, or
// made plans to?", answered with one yes or no. "Like," with a comma after
// it is a filler, not an example.
func joinContinuations(texts []string) []string {
	var out []string
	for _, t := range texts {
		if n := len(out); n > 0 && strings.HasSuffix(out[n-1], "?") && continues(t) {
			out[n-1] = strings.TrimRight(strings.TrimSuffix(out[n-1], "?"), " ") + ", " + lowerFirst(t)
			continue
		}
		out = append(out, t)
	}
	return out
}

func continues(t string) bool {
	ws := strings.Fields(strings.ToLower(t))
	for _, c := range continuations {
		if len(ws) <= len(c) {
			continue
		}
		last := ws[len(c)-1]
		if slices.Equal(ws[:len(c)-1], c[:len(c)-1]) && strings.TrimRight(last, ",") == c[len(c)-1] {
			return last == c[len(c)-1] || c[0] != "like" && c[0] != "say"
		}
	}
	return false
}

// lowerFirst is t with its first letter in lower case.
func lowerFirst(t string) string {
	r, n := utf8.DecodeRuneInString(t)
	return string(unicode.ToLower(r)) + t[n:]
}
