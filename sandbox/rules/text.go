package rules

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// message is one patient message prepared for matching: split into clauses
// (so "no fever but a cough" keeps the negation on "fever" only), lowercased,
// apostrophes dropped ("don't" → "dont") and number words turned into digits.
type message struct {
	raw     string
	turn    int // 1 for the first patient message of the session
	lx      *lexicon
	clauses [][]string
	tokens  []string // every clause's tokens, in order
	// question[i] is true when clause i ended with a question mark: "back
	// pain? no, my chest" (complaintMention).
	question []bool
	// words[i] are clause i's words as typed (lowercased, apostrophes
	// dropped), before spelling and rewrites: "her" is still "her", not the
	// "my" that matching reads (speaker.go).
	words [][]string
	// lemmas[i][k] is the lemma of clauses[i][k] when it is an inflection
	// of a vocabulary word ("coughing" → "cough", "bitten" → "bite"), else
	// the token itself: the findings reader matches either (findings.go).
	lemmas [][]string
	// findings are what the message says (findings.go), read once at
	// parse for a patient message.
	findings []finding
	// bits has the bit of every vocabulary word (lexicon.wordID) the
	// message holds, as a token or a lemma: a phrase whose first word
	// matches none is not looked for (mayHave).
	bits []uint64
	// complaint, when set, marks in each clause the tokens that name the
	// committed protocol's complaint (Protocol.complaintWords): a phrase
	// found only in them is not read, so "a pressure in my chest" does not
	// also say "pressing on it hurts". Only volunteered facts set it.
	complaint [][]bool
}

// parse prepares a patient message for matching.
func (lx *lexicon) parse(raw string) message {
	m := message{raw: raw, lx: lx}
	text := apostrophes.Replace(raw)
	shouting := !strings.ContainsFunc(text, unicode.IsLower)
	var cur, typed []string
	flush := func() {
		if len(cur) > 0 {
			m.clauses = append(m.clauses, lx.wordsToDigits(lx.rewrite(cur)))
			m.lemmas = append(m.lemmas, lx.lemmatise(m.clauses[len(m.clauses)-1]))
			m.tokens = append(m.tokens, m.clauses[len(m.clauses)-1]...)
			m.question = append(m.question, false)
			m.words = append(m.words, typed)
		}
		cur, typed = nil, nil
	}
	for rest := text; rest != ""; {
		part := rest
		if end := strings.IndexFunc(rest, isClauseBreak); end < 0 {
			rest = ""
		} else {
			part, rest = rest[:end], rest[end:]
		}
		asTyped := strings.FieldsFunc(part, notWordRune)
		words := make([]string, len(asTyped))
		for k, w := range asTyped {
			words[k] = strings.ToLower(w)
		}
		for k, w := range words {
			if w == "and" && len(typed) > 0 && k+1 < len(words) && lx.binomials[typed[len(typed)-1]+" "+words[k+1]] {
				continue // one expression: "black and blue", "pins and needles"
			}
			if lx.clauseWords[w] || (len(typed) > 0 && lx.clauseWordsInside[w]) {
				flush()
				continue
			}
			typed = append(typed, w)
			if n, unit, ok := numberWithUnit(w); ok {
				cur = append(cur, n, unit) // "28wks" is "28 wks"
				continue
			}
			if to, ok := lx.abbreviations[asTyped[k]]; ok && !shouting {
				cur = append(cur, to...) // "CP" is chest pain, "sob" a sob
				continue
			}
			if to, ok := lx.spelling[w]; ok {
				cur = append(cur, to...)
				continue
			}
			cur = append(cur, lx.correct(w))
		}
		// The breaks after the part: a question mark among them marks the
		// clause just ended as a question.
		breaks := len(rest) - len(strings.TrimLeftFunc(rest, isClauseBreak))
		if lx.inList(words, rest, breaks) {
			rest = rest[breaks:]
			continue // "red, hot, swollen": one clause
		}
		flush()
		if n := len(m.question); n > 0 && strings.Contains(rest[:breaks], "?") {
			m.question[n-1] = true
		}
		rest = rest[breaks:]
	}
	if lx.spell != nil {
		m.bits = make([]uint64, len(lx.wordID)/64+1)
		for _, cl := range slices.Concat(m.clauses, m.lemmas) {
			for _, t := range cl {
				if id, ok := lx.wordID[t]; ok {
					m.bits[id/64] |= 1 << (id % 64)
				}
			}
		}
	}
	return m
}

// numberWithUnit splits a number run into its unit ("28wks", "5days",
// "34yo", "10mins") so the number and the unit are read as if spaced.
func numberWithUnit(w string) (n, unit string, ok bool) {
	i := strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) })
	if i <= 0 {
		return "", "", false
	}
	switch w[i:] {
	case "wks", "wk", "weeks", "week", "yo", "yrs", "yr", "years", "mins", "min", "minutes", "hrs", "hr", "hours", "days", "day", "months", "mths":
		return w[:i], w[i:], true
	}
	return "", "", false
}

// firstWord is a phrase's first word read once for message.mayHaveFirst:
// its word id, or the ids of its alternatives, or open when a prefix or a
// range may match any word.
type firstWord struct {
	open bool
	id   int // -1: an alternation (bits) or a word with no id (open)
	bits []uint64
}

// firstWordOf reads p (a normalised phrase word) for mayHaveFirst.
func (lx *lexicon) firstWordOf(p string) firstWord {
	if isCompiled(p) {
		a := lx.compiledAt(p)
		return firstWord{open: a.open, id: -1, bits: a.bits}
	}
	if id, ok := lx.wordID[p]; ok {
		return firstWord{id: id}
	}
	return firstWord{open: true, id: -1}
}

// union is a firstWord that a message may have when it may have a or b.
func (a firstWord) union(b firstWord) firstWord {
	out := firstWord{open: a.open || b.open, id: -1}
	if out.open {
		return out
	}
	for _, w := range []firstWord{a, b} {
		if w.id >= 0 {
			w.bits = make([]uint64, w.id/64+1)
			w.bits[w.id/64] = 1 << (w.id % 64)
		}
		for len(out.bits) < len(w.bits) {
			out.bits = append(out.bits, 0)
		}
		for i, x := range w.bits {
			out.bits[i] |= x
		}
	}
	return out
}

// mayHaveFirst is mayHave for a first word read at load time: no map is
// looked up.
func (m message) mayHaveFirst(w firstWord) bool {
	switch {
	case m.bits == nil || w.open:
		return true
	case w.id >= 0:
		return w.id/64 < len(m.bits) && m.bits[w.id/64]&(1<<(w.id%64)) != 0
	}
	for i, b := range w.bits {
		if i < len(m.bits) && b&m.bits[i] != 0 {
			return true
		}
	}
	return false
}

// mayHave is false when no token of m can match the phrase word p, so a
// phrase starting with p need not be looked for: one bit test, or one AND
// of two bit sets for an alternation (the message's words and the
// alternation's, by word id).
func (m message) mayHave(p string) bool {
	if m.bits == nil {
		return true
	}
	if isCompiled(p) {
		a := m.lx.compiledAt(p)
		if a.open {
			return true
		}
		for i, w := range a.bits {
			if i < len(m.bits) && w&m.bits[i] != 0 {
				return true
			}
		}
		return false
	}
	id, ok := m.lx.wordID[p]
	if !ok {
		return true
	}
	return id/64 < len(m.bits) && m.bits[id/64]&(1<<(id%64)) != 0
}

// inList is true when the part just read (words) ends with a list word,
// only one comma follows it, and the next part begins with a list word: "a
// red, hot, swollen patch" is one clause.
func (lx *lexicon) inList(words []string, rest string, breaks int) bool {
	if len(words) == 0 || !lx.listWords[words[len(words)-1]] || strings.TrimSpace(rest[:breaks]) != "," {
		return false
	}
	next := strings.FieldsFunc(rest[breaks:], notWordRune)
	if len(next) == 0 {
		return false
	}
	after := rest[breaks:]
	if end := strings.IndexFunc(after, isClauseBreak); end >= 0 {
		after = after[:end]
	}
	first := strings.FieldsFunc(after, notWordRune)
	return len(first) > 0 && lx.listWords[strings.ToLower(first[0])]
}

func isClauseBreak(r rune) bool {
	switch r {
	case '.', ',', ';', ':', '!', '?', '\n', '(', ')':
		return true
	}
	return false
}

func notWordRune(r rune) bool {
	return !(unicode.IsLetter(r) || unicode.IsDigit(r))
}

// rewrite replaces the lexicon's word sequences ("unable to" → "cant"),
// left to right.
func (lx *lexicon) rewrite(toks []string) []string {
	if len(lx.rewrites) == 0 {
		return toks
	}
	out := make([]string, 0, len(toks))
next:
	for i := 0; i < len(toks); {
		for _, rw := range lx.rewrites {
			if i+len(rw.from) <= len(toks) && slices.Equal(toks[i:i+len(rw.from)], rw.from) {
				out = append(out, rw.to...)
				i += len(rw.from)
				continue next
			}
		}
		out = append(out, toks[i])
		i++
	}
	return out
}

// The replacers of parse and normalisePhrase, built once: they are
// immutable and safe for concurrent use.
var (
	apostrophes  = strings.NewReplacer("’", "", "'", "", "`", "")
	patternMarks = strings.NewReplacer("*", markStar, "|", markOr)
)

// Markers that carry pattern syntax through parse, which keeps only letters
// and digits.
const (
	markStar = "qqstarqq"
	markOr   = "qqorqq"
	markNum  = "qqnumqq"
	markTo   = "qqtoqq"
)

// normalisePhrase prepares a keyword from the protocol library the same way
// patient text is prepared, so both sides compare equal. Pattern syntax
// survives: a trailing "*" (a prefix match), "a|b" (either word, each
// normalised on its own) and "#10-36" (a number in that range).
func (lx *lexicon) normalisePhrase(s string) []string {
	toks, _ := lx.normalisePhraseClauses(s)
	return toks
}

// normalisePhraseClauses is normalisePhrase, with how many clauses the
// phrase spans (a phrase must sit in one: library.go phrase).
func (lx *lexicon) normalisePhraseClauses(s string) ([]string, int) {
	if strings.ContainsRune(s, '#') {
		s = numberSlot.ReplaceAllString(s, markNum+"${1}"+markTo+"${2}")
	}
	s = patternMarks.Replace(s)
	m := lx.parse(s)
	toks := m.tokens
	for i, t := range toks {
		alts := strings.Split(t, markOr)
		for j, a := range alts {
			switch {
			case strings.HasPrefix(a, markNum):
				a = "#" + strings.Replace(strings.TrimPrefix(a, markNum), markTo, "-", 1)
			case strings.HasSuffix(a, markStar):
				a = strings.TrimSuffix(a, markStar) + "*"
			default:
				if to, ok := lx.spelling[a]; ok && len(to) == 1 {
					a = to[0]
				}
				if lx.vocab != nil {
					lx.vocab[a] = true
					lx.idOf(a)
				}
			}
			alts[j] = a
		}
		toks[i] = strings.Join(alts, "|")
		if lx.compiled != nil && strings.ContainsAny(toks[i], "|*#") {
			toks[i] = lx.compileToken(toks[i])
		}
	}
	return toks, len(m.clauses)
}

// lexicon holds the word lists of the text understanding. It is built once by
// New and shared read-only, so the engine keeps no mutable package state.
type lexicon struct {
	// clauseWords end a clause: a negation never reaches across them.
	clauseWords map[string]bool
	// negators flip a keyword found after them in the same clause. "cant"
	// and "cannot" are missing on purpose: "I can't swallow" affirms a symptom.
	negators map[string]bool
	// hedges mark a keyword as uncertain; checked before negators because
	// "not sure" contains "not".
	hedges [][]string
	// Plain answers: leading phrases decide first ("no idea" is not a "no"),
	// then a leading yes/no word, then what the message contains.
	leadingUnsure [][]string
	yesWords      map[string]bool
	noWords       map[string]bool
	containsNo    [][]string
	containsYes   [][]string
	notUnderstood [][]string
	firmNo        [][]string
	numbers       map[string]int // number words: "three" → 3, "thirty" → 30

	// From lexicon.json.
	spelling map[string][]string
	// abbreviations are clinical shorthand read as its words, keyed as
	// typed in capitals ("CP" → chest pain, "L" → left): only a word typed
	// in capitals, in a message that is not all capitals, is one, so "sob"
	// (crying) and "l" stay ordinary words.
	abbreviations map[string][]string
	rewrites      []rewrite
	fillers       map[string]bool
	// clauseWordsInside end a clause only between two words: "n" is "and"
	// in "not making sense n her smile is wonky", and "no" alone.
	clauseWordsInside map[string]bool
	// binomials are "a b" for the expressions "a and b" that do not join
	// two clauses: "black and blue", "pins and needles", "on and off".
	binomials map[string]bool
	// listWords are describing words a comma between two of which does not
	// end a clause ("red, hot, swollen").
	listWords map[string]bool
	neg       negation

	// vocab is every word of every phrase normalised while the library
	// loads; once it has loaded, spell and lemmas are built from it
	// (spelling.go) and patient text is corrected and lemmatised.
	vocab       map[string]bool
	compiled    []*compiledToken  // phrase words with pattern syntax, by key (compileToken)
	compiledKey map[string]string // the key of each pattern
	wordID      map[string]int    // every phrase word's id, for message.bits
	// spell builds the speller on first use, so an engine that never
	// reads a patient message does not pay for it; nil until the library
	// has loaded (finishVocabulary).
	spell  func() *speller
	lemmaX map[string]string // irregular forms: "threw" → "throw"
	// unlisted are the vocabulary words the generated wordnet.json was not
	// computed for: not correction targets until it is generated again
	// (TestWordNetFileIsCurrent).
	unlisted []string
}

type rewrite struct{ from, to []string }

// maxFillers is how many filler words may sit between two words of a
// phrase: "my throat is really very sore" still says "throat sore".
const maxFillers = 3

// baseLexicon holds the built-in word lists; loadLexicon adds the file's.
func baseLexicon() *lexicon {
	lx := &lexicon{}
	lx.clauseWords = map[string]bool{"but": true, "and": true, "though": true, "although": true, "however": true, "except": true}
	lx.negators = map[string]bool{
		"no": true, "not": true, "dont": true, "doesnt": true, "didnt": true,
		"havent": true, "hasnt": true, "hadnt": true, "isnt": true, "arent": true,
		"wasnt": true, "werent": true, "without": true, "never": true, "none": true,
		"nor": true, "neither": true, "denies": true, "aint": true,
	}
	lx.hedges = [][]string{
		{"not", "sure"}, {"dont", "know"}, {"not", "certain"}, {"no", "idea"},
		{"maybe"}, {"might"}, {"possibly"}, {"perhaps"}, {"unsure"}, {"dunno"},
		{"could", "be"}, {"cant", "tell"}, {"idk"}, {"do", "not", "know"},
	}
	lx.leadingUnsure = [][]string{
		{"no", "idea"}, {"not", "sure"}, {"im", "not", "sure"}, {"i", "am", "not", "sure"},
		{"i", "dont", "know"}, {"dont", "know"}, {"dunno"}, {"idk"}, {"unsure"}, {"im", "unsure"},
		{"maybe"}, {"perhaps"}, {"possibly"}, {"not", "certain"}, {"cant", "say"}, {"cant", "tell"},
		{"hard", "to", "say"}, {"i", "cant", "tell"}, {"i", "do", "not", "know"}, {"do", "not", "know"},
	}
	// A reply saying the question was not understood answers nothing: it
	// is asked again in other words, and a red flag never not understood
	// twice is treated as unclear (answerPending). Checked before the
	// negators, which would read "I don't understand" as a no.
	lx.notUnderstood = [][]string{
		{"dont", "understand"}, {"do", "not", "understand"}, {"didnt", "understand"}, {"did", "not", "understand"},
		{"dont", "get", "the", "question"}, {"dont", "get", "what", "you", "mean"}, {"what", "do", "you", "mean"},
		{"what", "does", "that", "mean"}, {"dont", "know", "what", "you", "mean"}, {"not", "understand", "the", "question"},
		{"dont", "follow"}, {"can", "you", "explain"}, {"say", "that", "again"}, {"pardon"},
	}
	// A firm no that starts with a yes word or no no word at all:
	// "definitely not" is not a yes, and "not at all" is no less a no than
	// "no" (softNo).
	lx.firmNo = [][]string{
		{"definitely", "not"}, {"absolutely", "not"}, {"certainly", "not"}, {"of", "course", "not"},
		{"surely", "not"}, {"not", "at", "all"}, {"not", "the", "case"}, {"no", "way"},
		{"not", "in", "the", "slightest"}, {"not", "a", "bit"}, {"not", "ever"}, {"definitely", "no"},
	}
	lx.yesWords = map[string]bool{
		"yes": true, "yeah": true, "yea": true, "yep": true, "yup": true, "ya": true,
		"y": true, "aye": true, "sure": true, "definitely": true, "absolutely": true,
		"correct": true, "indeed": true, "affirmative": true, "ok": true, "right": true,
	}
	lx.noWords = map[string]bool{
		"no": true, "nope": true, "nah": true, "n": true, "never": true, "none": true,
		"negative": true, "nothing": true,
	}
	lx.containsNo = [][]string{
		{"dont", "think", "so"}, {"not", "really"}, {"not", "at", "all"}, {"i", "dont"},
		{"i", "havent"}, {"i", "am", "not"}, {"im", "not"}, {"not", "that", "i"},
	}
	lx.containsYes = [][]string{
		{"i", "think", "so"}, {"i", "do"}, {"i", "have"}, {"i", "am"}, {"im"}, {"a", "bit"},
		{"a", "little"}, {"sometimes"}, {"probably"}, {"it", "is"}, {"it", "does"},
		{"i", "did"}, {"i", "was"}, {"true"}, {"thats", "right"}, {"that", "is", "right"}, {"quite", "right"}, {"youre", "right"}, {"correct"}, {"exactly"}, {"of", "course"},
		{"helps"}, {"helped"}, {"it", "works"}, {"it", "worked"},
	}
	lx.numbers = numberWords()
	return lx
}

// polarity is what a message says about a keyword.
type polarity int

const (
	absent polarity = iota
	affirmed
	negated
	uncertain
)

func (p polarity) String() string {
	switch p {
	case affirmed:
		return "affirmed"
	case negated:
		return "negated"
	case uncertain:
		return "uncertain"
	case past:
		return "past"
	case hypothetical:
		return "hypothetical"
	}
	return "absent"
}

// negationWindow is how many tokens before a keyword a negator or hedge may
// sit: "I don't think I have a fever" puts "dont" five tokens back.
const negationWindow = 6

// mention reports what the message says about phrase (already normalised).
// A phrase token ending in "*" matches any token it prefixes. The last
// occurrence wins: a patient correcting themselves is believed.
//
// A mention in a question the patient answers "no" to straight after is
// negated: "worst headache ever? nah, nowhere near".
func (m message) mention(phrase []string) polarity { return m.lastMention(phrase, true) }

// clauseMention is mention within clause c.
func (m message) clauseMention(c int, phrase []string) polarity {
	result := absent
	cl := m.clauses[c]
	for i := range cl {
		if _, ok := m.lx.matchLoose(cl, i, phrase); ok && !m.onlyComplaint(c, i, phrase) {
			result = m.lx.prefixPolarity(cl[:i])
		}
	}
	return result
}

// onlyComplaint is true when the complaint mask is set and every word of
// phrase's occurrence at clause c, token i, names the complaint.
func (m message) onlyComplaint(c, i int, phrase []string) bool {
	if m.complaint == nil {
		return false
	}
	for _, k := range m.lx.matchedAt(m.clauses[c], i, phrase) {
		if !m.complaint[c][k] {
			return false
		}
	}
	return true
}

// unmasked is m without its complaint mask: every word is read.
func (m message) unmasked() message {
	m.complaint = nil
	return m
}

// complaintMention is mention for naming a complaint, where an affirmed
// phrase in a question the patient answers "no" to straight after is
// negated: "back pain? no, it's my chest that hurts".
func (m message) complaintMention(phrase []string) polarity { return m.lastMention(phrase, true) }

// lastMention is the polarity of phrase's last mention in m's clauses; with
// denied, an affirmed mention in a question answered "no" straight after is
// negated.
func (m message) lastMention(phrase []string, denied bool) polarity {
	result := absent
	if !m.mayHave(phrase[0]) {
		return result
	}
	for c := range m.clauses {
		p := m.clauseMention(c, phrase)
		if p == affirmed && denied && m.deniedQuestion(c) {
			p = negated
		}
		if p != absent {
			result = p
		}
	}
	return result
}

// deniedQuestion is true when clause c is a question and the next clause
// starts with a no word.
func (m message) deniedQuestion(c int) bool {
	if !m.question[c] || c+1 >= len(m.clauses) || len(m.clauses[c+1]) == 0 {
		return false
	}
	next := m.clauses[c+1]
	for _, h := range m.lx.hedges {
		if startsWithSeq(next, h) {
			return false // "is it serious? no idea"
		}
	}
	return m.lx.noWords[next[0]]
}

// saysTogether is true when one clause affirms or hedges every piece, in any
// order and at any distance ("a heavy feeling in the middle of my chest"
// says heavy~chest). A single piece may be said anywhere in the message.
func (m message) saysTogether(pieces [][]string) bool {
	if len(pieces) == 1 {
		return said(m.complaintMention(pieces[0]))
	}
	for c := range m.clauses {
		if m.clauseSaysAll(c, pieces) {
			return true
		}
	}
	return false
}

// clauseSaysAll is true when clause c affirms or hedges every piece, and is
// not a question answered "no" straight after.
func (m message) clauseSaysAll(c int, pieces [][]string) bool {
	for _, p := range pieces {
		pol := m.clauseMention(c, p)
		if !said(pol) || (pol == affirmed && m.deniedQuestion(c)) {
			return false
		}
	}
	return true
}

// without is m with the clauses that hold one of except emptied, so nothing
// in them is read.
func (m message) without(except [][]string) message {
	if len(except) == 0 {
		return m
	}
	out := m
	out.clauses = slices.Clone(m.clauses)
	for c, cl := range out.clauses {
		if m.lx.holdsAny(cl, except) {
			out.clauses[c] = nil
		}
	}
	return out
}

// matchLoose matches phrase at tokens[i], letting up to maxFillers filler
// words sit between two of its words. It returns the index after the match.
func (lx *lexicon) matchLoose(tokens []string, i int, phrase []string) (int, bool) {
	return lx.match(tokens, nil, i, phrase, nil)
}

// matchedAtLemma is matchedAt where a word of phrase may also match a
// token's lemma (lemmas parallel to tokens): "coughing" says "cough".
func (lx *lexicon) matchedAtLemma(tokens, lemmas []string, i int, phrase []string) []int {
	var at []int
	if _, ok := lx.match(tokens, lemmas, i, phrase, &at); !ok {
		return nil
	}
	return at
}

// matchedAt is the positions of the tokens that phrase's words matched at
// tokens[i] (the filler words skipped between them are not among them); nil
// when phrase does not match there.
func (lx *lexicon) matchedAt(tokens []string, i int, phrase []string) []int {
	var at []int
	if _, ok := lx.match(tokens, nil, i, phrase, &at); !ok {
		return nil
	}
	return at
}

// match is matchLoose, appending to at (when not nil) the position of each
// token a word of phrase matched; with lemmas, a word may match a token's
// lemma too. A blanked token ("") matches nothing.
func (lx *lexicon) match(tokens, lemmas []string, i int, phrase []string, at *[]int) (int, bool) {
	k := i
	for j, p := range phrase {
		skipped := 0
		for {
			if k >= len(tokens) {
				return 0, false
			}
			if tokens[k] != "" && (lx.tokenMatches(p, tokens[k]) || (lemmas != nil && lemmas[k] != tokens[k] && lx.tokenMatches(p, lemmas[k]))) {
				break
			}
			if j == 0 || skipped == maxFillers || !lx.fillers[tokens[k]] {
				return 0, false
			}
			skipped++
			k++
		}
		if at != nil {
			*at = append(*at, k)
		}
		k++
	}
	return k, true
}

// tokenMatches is the free tokenMatches for a phrase word normalised by
// this lexicon, whose alternatives, prefixes and ranges were read once
// (compileToken).
func (lx *lexicon) tokenMatches(p, t string) bool {
	if p == t {
		return true
	}
	if !isCompiled(p) {
		return false // a plain word, and not t
	}
	return lx.compiledAt(p).matches(t)
}

// compiledToken is a phrase word with pattern syntax, read once.
type compiledToken struct {
	words    map[string]bool
	prefixes []string
	ranges   [][2]int
	bits     []uint64 // the words' ids (lexicon.wordID)
	open     bool     // a prefix or a range: any word may match
	pattern  string   // as written: "a|b*"
}

func (a *compiledToken) matches(t string) bool {
	if a.words[t] {
		return true
	}
	for _, p := range a.prefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	if len(a.ranges) > 0 && isDigits(t) {
		if n, err := strconv.Atoi(t); err == nil {
			for _, r := range a.ranges {
				if n >= r[0] && n <= r[1] {
					return true
				}
			}
		}
	}
	return false
}

// isDigits is true for a word of digits only: a number slot reads no other
// (strconv.Atoi allocates its error for every word that is not one).
func isDigits(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// compiledMark begins the key of a compiled phrase word: no patient word
// holds it.
const compiledMark = '\x01'

// isCompiled is true for a phrase word that is a compiled token's key.
func isCompiled(p string) bool { return p != "" && p[0] == compiledMark }

// compiledAt is the compiled token of key p (isCompiled): its index is the
// number after the mark, so no map is looked up.
func (lx *lexicon) compiledAt(p string) *compiledToken {
	n := 0
	for i := 1; i < len(p); i++ {
		n = 10*n + int(p[i]-'0')
	}
	return lx.compiled[n]
}

// compileToken reads p's pattern syntax into lx.compiled, and returns the
// short key the phrase holds instead of p: a key of a few bytes is hashed
// and compared much faster than a long alternation.
func (lx *lexicon) compileToken(p string) string {
	if key, ok := lx.compiledKey[p]; ok {
		return key
	}
	key := string(compiledMark) + strconv.Itoa(len(lx.compiled))
	lx.compiledKey[p] = key
	a := &compiledToken{words: map[string]bool{}, pattern: p}
	for _, alt := range strings.Split(p, "|") {
		switch {
		case strings.HasPrefix(alt, "#"):
			lo, hi, _ := strings.Cut(alt[1:], "-")
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil {
				a.ranges = append(a.ranges, [2]int{l, h})
			}
		case strings.HasSuffix(alt, "*"):
			a.prefixes = append(a.prefixes, alt[:len(alt)-1])
		default:
			a.words[alt] = true
		}
	}
	a.open = len(a.prefixes) > 0 || len(a.ranges) > 0
	for w := range a.words {
		id := lx.idOf(w)
		for len(a.bits) <= id/64 {
			a.bits = append(a.bits, 0)
		}
		a.bits[id/64] |= 1 << (id % 64)
	}
	lx.compiled = append(lx.compiled, a)
	return key
}

// idOf is w's word id, given on first sight.
func (lx *lexicon) idOf(w string) int {
	id, ok := lx.wordID[w]
	if !ok {
		id = len(lx.wordID)
		lx.wordID[w] = id
	}
	return id
}

// tokenMatches compares one phrase word with one patient word: "a|b" is
// either, "word*" a prefix, "#10-36" a number in that range.
func tokenMatches(p, t string) bool {
	for p != "" {
		var alt string
		alt, p, _ = strings.Cut(p, "|")
		switch {
		case strings.HasPrefix(alt, "#"):
			if !isDigits(t) {
				continue
			}
			lo, hi, _ := strings.Cut(alt[1:], "-")
			n, err1 := strconv.Atoi(t)
			l, err2 := strconv.Atoi(lo)
			h, err3 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && err3 == nil && n >= l && n <= h {
				return true
			}
		case strings.HasSuffix(alt, "*"):
			if strings.HasPrefix(t, alt[:len(alt)-1]) {
				return true
			}
		case alt == t:
			return true
		}
	}
	return false
}

// mentionAny folds mention over several phrases: an affirmation or a
// negation beats uncertainty, uncertainty beats absence.
func (m message) mentionAny(phrases [][]string) polarity {
	best := absent
	for _, p := range phrases {
		switch pol := m.mention(p); {
		case pol == affirmed || pol == negated:
			return pol
		case pol == uncertain:
			best = uncertain
		}
	}
	return best
}

// matchAt matches phrase exactly (no fillers) at tokens[i].
func matchAt(tokens []string, i int, phrase []string) bool {
	for j, p := range phrase {
		if !tokenMatches(p, tokens[i+j]) {
			return false
		}
	}
	return true
}

// prefixPolarity is scopePolarity for a phrase after the words before (its
// clause up to it): the phrase matchers read negation and hedges from
// before a phrase, a hypothetical as a negation, and the past as said (the
// emergency categories leave past clauses out by their own markers).
func (lx *lexicon) prefixPolarity(before []string) polarity {
	switch p := lx.scopePolarity(before, len(before), len(before)); p {
	case hypothetical:
		return negated
	case past:
		return affirmed
	default:
		return p
	}
}

func containsSeq(tokens, seq []string) bool {
	for i := 0; i+len(seq) <= len(tokens); i++ {
		if matchAt(tokens, i, seq) {
			return true
		}
	}
	return false
}

func startsWithSeq(tokens, seq []string) bool {
	return len(tokens) >= len(seq) && matchAt(tokens, 0, seq)
}

// yesNo classifies a plain answer. ok is false when the message says neither.
func (m message) yesNo() (p polarity, ok bool) {
	lx := m.lx
	t := m.tokens
	if len(t) == 0 {
		return absent, false
	}
	if m.notUnderstanding() {
		return absent, false
	}
	for _, s := range lx.leadingUnsure {
		if startsWithSeq(t, s) {
			return uncertain, true
		}
	}
	if m.firmNo() {
		return negated, true
	}
	if lx.yesWords[t[0]] {
		return affirmed, true
	}
	if lx.noWords[t[0]] {
		return negated, true
	}
	for _, s := range lx.containsNo {
		if containsSeq(t, s) {
			return negated, true
		}
	}
	for _, h := range lx.hedges {
		if containsSeq(t, h) {
			return uncertain, true
		}
	}
	for _, w := range t {
		if lx.negators[w] {
			return negated, true
		}
	}
	for _, s := range lx.containsYes {
		if containsSeq(t, s) {
			return affirmed, true
		}
	}
	return absent, false
}

// softNo is a "no" that only leans: "not really", "I don't think so", as
// opposed to one that starts with a no word ("no", "nope").
func (m message) softNo() bool {
	p, ok := m.yesNo()
	return ok && p == negated && !m.lx.noWords[m.tokens[0]] && !m.firmNo()
}

// firmNo is true when m holds a firm no that does not start with a no
// word: "definitely not", "not at all", "that is not the case".
func (m message) firmNo() bool {
	return slices.ContainsFunc(m.lx.firmNo, func(s []string) bool { return containsSeq(m.tokens, s) })
}

// notUnderstanding is true when m says the question was not understood
// ("sorry, I don't understand the question"): no answer, not a no.
func (m message) notUnderstanding() bool {
	return slices.ContainsFunc(m.lx.notUnderstood, func(s []string) bool { return containsSeq(m.tokens, s) })
}
