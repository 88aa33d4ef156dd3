package concepts

import (
	"slices"
	"strings"
)

// Understand returns the concepts a message asks about, in the order asked,
// at most one Match per concept; empty when none. Each match says which
// question of the message asked it (Question), whether it is asked with
// the others of that question or as an alternative to them (Alt), and how
// clearly its concept won (Margin).
func (u *Understanding) Understand(message string) []Match {
	texts := joinContinuations(splitSentences(message, func(w string) bool { return u.questionWords[u.spelled(w)] }))
	sents := make([]sentence, len(texts))
	asks := make([]bool, len(texts))
	for i, t := range texts {
		s := &sents[i]
		*s = u.prepare(t)
		s.ifSo = i > 0 && s.ifSo
		asks[i] = s.tagged || u.asks(s) && !setOff(t)
		s.announce = asks[i] && u.announces(s)
		if asks[i] && i > 0 && u.isTag(s.words) {
			asks[i-1] = true
		}
	}
	// An announcement ("I need to check one thing about bleeding.") frames
	// the question after it: it asks nothing when a later sentence asks.
	// So does a statement of what the engine means to ask, embedded
	// question and all ("I need to ask about how it began.", "I'd like to
	// know how much weight your foot can take."), when a later sentence
	// asks it directly, with a question mark: the direct question is what
	// is asked, the statement names its topic.
	for i := range sents {
		if sents[i].announce && slices.ContainsFunc(sents[i+1:], func(s sentence) bool { return !s.announce && u.asks(&s) }) {
			asks[i] = false
		}
		if asks[i] && u.intends(&sents[i]) && slices.ContainsFunc(sents[i+1:], func(s sentence) bool { return s.question && !s.announce }) {
			asks[i] = false
		}
	}
	var out []Match
	question := map[[2]int]int{} // (sentence, its question) → the message's question
	for i := range sents {
		if !asks[i] {
			continue
		}
		cs, read := u.match(&sents[i]), &sents[i]
		// A question that points back ("Is either of those sore?") is read
		// with the sentence before it when it finds nothing alone, or when
		// the two together say more than it does: "Press the bone on the
		// outer edge of your foot. Is either tender?" asks about the
		// foot's bones, not tenderness in general.
		// So is a question that finds nothing alone: the statement or
		// instruction before it completes it ("Touch your chin to your
		// chest — does your neck hurt?"), though a concept wholly in it
		// still needs a reference word in the question.
		// When the sentence before is a statement that asks nothing and
		// the one before that an instruction or statement too ("Try four
		// steps on it. Limping is OK. Is it true you cannot do it?"), the
		// question is read with both, as one context.
		if i > 0 && (len(cs) == 0 || u.refersBack(&sents[i])) && !sents[i-1].leadIn && !u.startsWith(sents[i-1].words, u.leadIns) {
			bare := len(cs) == 0
			joined := joinSentences(&sents[i-1], &sents[i], asks[i-1])
			joined.bare = bare
			if jc := u.match(&joined); len(cs) == 0 || len(jc) > 0 && (mostSpecific(jc).more(mostSpecific(cs)) || u.adds(jc, cs)) {
				cs, read = jc, &joined
			}
			if i > 1 && !asks[i-1] && !asks[i-2] && !sents[i-2].leadIn && !u.startsWith(sents[i-2].words, u.leadIns) {
				two := u.prepare(strings.TrimRight(sents[i-2].text, ". ") + ", " + lowerFirst(sents[i-1].text))
				wide := joinSentences(&two, &sents[i], false)
				wide.bare = bare
				if wc := u.match(&wide); len(wc) > 0 && (len(cs) == 0 || mostSpecific(wc).more(mostSpecific(cs))) {
					cs, read = wc, &wide
				}
			}
		}
		for _, c := range cs {
			id := u.concepts[c.rule.concept].ID
			if slices.ContainsFunc(out, func(m Match) bool { return m.Concept == id }) {
				continue
			}
			key := [2]int{i, read.group(c.clause)}
			q, ok := question[key]
			if !ok {
				q = len(question)
				question[key] = q
			}
			alt := read.alt[c.first]
			// A question opened by "If so," asks only when the one before
			// it holds: one question, its concepts asked together with the
			// last alternative before it ("Is the pain constant? If so, is
			// it worse when you move?").
			if n := len(out); sents[i].ifSo && n > 0 && out[n-1].Question != q {
				if !ok {
					delete(question, key)
				}
				q, alt = out[n-1].Question, out[n-1].Alt
				question[key] = q
			}
			out = append(out, Match{Concept: id, Inverse: c.inverse, Cue: c.rule.cue, Text: read.text,
				Question: q, Alt: alt, Margin: c.margin})
		}
	}
	return out
}

// prepare reads one sentence's words and structure.
func (u *Understanding) prepare(t string) sentence {
	s := sentence{text: t}
	var punct []byte
	s.words, punct = words(t, u.spell)
	s.words, punct = u.privatives(s.words, punct)
	s.ifSo = u.conditional(s.words, punct)
	s.words, punct, s.leadIn = u.dropLeadIn(s.words, punct)
	s.words, punct, s.tagged = u.dropTag(s.words, punct)
	s.punct = punct
	s.rel = u.relatives(s.words, punct)
	s.clause, s.conn = u.clauses(s.words, punct, s.rel)
	s.question = strings.HasSuffix(strings.TrimRight(t, "\"'”’) "), "?")
	return s
}

// conditional reports whether a sentence opens with a condition that is
// the answer to the question before it: "if" and "so" or "yes", a subject
// and its auxiliary with nothing else ("if you do", "if there is"), or
// "that is the case", set off by a comma ("If so, does it get worse when
// you move?"). Such a question narrows the one before it.
func (u *Understanding) conditional(ws []string, punct []byte) bool {
	i := 0
	if len(ws) > 0 && (ws[0] == "and" || ws[0] == "but") {
		i++
	}
	if i >= len(ws) || ws[i] != "if" {
		return false
	}
	j := i + 1
	for j < len(ws) && punct[j] == 0 {
		j++
	}
	if j >= len(ws) {
		return false
	}
	cond := ws[i+1 : j]
	switch {
	case len(cond) == 1:
		return cond[0] == "so" || cond[0] == "yes"
	case len(cond) == 2:
		return (u.pronouns[cond[0]] || cond[0] == "there" || cond[0] == "that") && u.auxiliaries[cond[1]]
	}
	return len(cond) <= 4 && slices.Equal(cond[len(cond)-2:], []string{"the", "case"})
}

// adds reports whether a joined reading finds every rule of the question's
// own and more: the question points back for one of its alternatives ("Is
// one of them swollen, or have you coughed up blood?" after "Think about
// your calves.").
// Every concept it adds is a yes/no concept with words in the question
// ("It helps to know what brings the pain on. Does it come on when you
// walk?" asks no main problem).
func (u *Understanding) adds(joined, own []candidate) bool {
	added := 0
	for _, j := range joined {
		if slices.ContainsFunc(own, func(c candidate) bool { return j.rule == c.rule }) {
			continue
		}
		if !j.inQuestion || u.concepts[j.rule.concept].Kind != YesNo {
			return false
		}
		added++
	}
	return added > 0 && !slices.ContainsFunc(own, func(c candidate) bool {
		return !slices.ContainsFunc(joined, func(j candidate) bool { return j.rule == c.rule })
	})
}

// dropLeadIn drops a lead-in that is a clause of its own at the start of a
// sentence ("OK, and have you noticed …", "Thanks, next: …"): its words
// ("ok", "thanks") acknowledge and ask about nothing, so no cue may use them.
// A sentence that is only a lead-in is kept whole.
func (u *Understanding) dropLeadIn(ws []string, punct []byte) ([]string, []byte, bool) {
	for _, p := range u.leadIns {
		if n := len(p); n < len(ws) && punct[n] != 0 && phraseAt(ws, 0, p) {
			rest := slices.Clone(punct[n:])
			rest[0] = 0
			return ws[n:], rest, true
		}
	}
	return ws, punct, false
}

// dropTag drops a confirmation tag that ends a sentence after a comma or a
// dash ("…, haven't you?", "… — correct?", "…, yes?"): the statement before
// it asks whether it holds, in its own polarity, and the tag's words (its
// "haven't", its "no") say nothing of the concepts. A sentence that is
// only a tag is kept whole (it makes the sentence before it ask).
func (u *Understanding) dropTag(ws []string, punct []byte) ([]string, []byte, bool) {
	k := len(ws) - 1
	for k > 0 && punct[k] == 0 {
		k--
	}
	if k <= 0 {
		return ws, punct, false
	}
	tail := ws[k:]
	if u.isTag(tail) || len(tail) == 2 && u.auxiliaries[tail[0]] && u.tagSubjects[tail[1]] {
		return ws[:k], punct[:k], true
	}
	return ws, punct, false
}

// spelled is w read through the spellings.
func (u *Understanding) spelled(w string) string {
	if c, ok := u.spell[w]; ok {
		return c
	}
	return w
}

// refersBack reports whether a sentence points back to the one before it
// ("Does that hurt?", "Is there a harsh sound?").
func (u *Understanding) refersBack(s *sentence) bool {
	for i, w := range s.words {
		if u.anaphors[w] && s.rel[i] != i {
			return true
		}
	}
	return false
}

// relatives marks the relative clauses of a sentence's words (cues.yaml,
// RELATIVE CLAUSES): rel[i] is the position of the relative pronoun that
// opens the relative clause word i lies in, or -1. A relative clause runs
// from its pronoun to the next clause mark or "or": "vomit that looks like
// coffee grounds, or black stools", "weakness that you have never had
// before".
func (u *Understanding) relatives(ws []string, punct []byte) []int {
	rel := make([]int, len(ws))
	for i := range rel {
		rel[i] = -1
	}
	for i := 1; i+1 < len(ws); i++ {
		if !u.relative(ws, punct, i) {
			continue
		}
		// (a clause inside it is its own from its pronoun on: "you began
		// a medicine you were not taking before")
		for j := i; j < len(ws) && (j == i || punct[j] == 0 && ws[j] != "or"); j++ {
			rel[j] = i
		}
	}
	return rel
}

// relative reports whether ws[i] opens a relative clause: a relative
// pronoun after a noun (no complement-taking word, pronoun, auxiliary or
// question word) and before a verb, or before a subject and its verb, with
// no "so" or "such" before it in its clause.
func (u *Understanding) relative(ws []string, punct []byte, i int) bool {
	w, prev := ws[i], ws[i-1]
	// A reduced relative clause, its pronoun left out: a subject after a
	// noun, before its verb ("any medicine you were not taking before",
	// "symptoms you have not had before").
	if u.subjects[w] && punct[i] == 0 && !u.function(prev) && !u.complements[prev] && !u.clauseWords[prev] && !u.subordinators[prev] &&
		!strings.HasSuffix(prev, "ing") && !strings.HasSuffix(prev, "ed") && !u.pastVerbs[prev] && !u.requestWord(prev) {
		next := ws[i+1]
		return u.auxiliaries[next] || u.adverbs[next] || u.pastVerbs[next]
	}
	if !u.relPronouns[w] || u.complements[prev] || u.auxiliaries[prev] || u.pronouns[prev] || u.speaker[prev] || u.questionWords[prev] || u.relPronouns[prev] {
		return false
	}
	for k := i - 1; k >= 0; k-- {
		if ws[k] == "so" || ws[k] == "such" {
			return false
		}
		if punct[k] != 0 {
			break
		}
	}
	verb := func(v string, s bool) bool {
		return u.auxiliaries[v] || u.adverbs[v] || u.pastVerbs[v] || len(v) > 4 && strings.HasSuffix(v, "ed") ||
			s && len(v) > 3 && strings.HasSuffix(v, "s") && !strings.HasSuffix(v, "ss") && !strings.HasSuffix(v, "us")
	}
	next := ws[i+1]
	switch {
	case verb(next, w == "that" || w == "who"):
		return true
	case u.pronouns[next] && next != "it" && i+2 < len(ws):
		return verb(ws[i+2], true)
	}
	return false
}

// joinSentences reads two sentences as one, the second a new clause: a
// question split over two sentences ("Press on the bones of your ankle.
// Does that hurt?").
func joinSentences(a, b *sentence, aRead bool) sentence {
	j := sentence{text: a.text + " " + b.text, question: b.question, prevRead: aRead}
	j.words = append(slices.Clone(a.words), b.words...)
	j.punct = append(slices.Clone(a.punct), b.punct...)
	j.rel = slices.Clone(a.rel)
	for _, r := range b.rel {
		if r >= 0 {
			r += len(a.words)
		}
		j.rel = append(j.rel, r)
	}
	j.clause = slices.Clone(a.clause)
	next := 0
	if n := len(a.clause); n > 0 {
		next = a.clause[n-1] + 1
	}
	for _, c := range b.clause {
		j.clause = append(j.clause, c+next)
	}
	j.conn = slices.Clone(a.conn)
	for len(j.conn) < next {
		j.conn = append(j.conn, ".")
	}
	j.conn = append(j.conn, b.conn...)
	if next < len(j.conn) {
		j.conn[next] = "." // a sentence boundary: a new question
	}
	j.tail = next
	return j
}

// clauses numbers the clauses of a sentence's words: a new clause starts at
// a clause word after "and", "or", "but" or a clause mark. conn says what
// started each clause: "" for the first, else the word before it ("and",
// "or", "but"), else "," for a mark ("Is it swollen, or can you see bone?"
// is two clauses, the second started by "or"), and "when" for the clause
// after a first clause opened by a subordinator: the two are one question
// ("When you stand up, do you feel faint?"). A relative pronoun starts no
// clause (", which can happen with allergies" says something of the noun
// before it).
func (u *Understanding) clauses(ws []string, punct []byte, rel []int) ([]int, []string) {
	c := make([]int, len(ws))
	conn := []string{""}
	n := 0
	for i, w := range ws {
		if i > 0 && u.clauseWords[w] && rel[i] != i {
			switch {
			case ws[i-1] == "and", ws[i-1] == "or", ws[i-1] == "but":
				n++
				conn = append(conn, ws[i-1])
			case punct[i] != 0 && n == 0 && u.subordinators[ws[0]]:
				n++
				conn = append(conn, "when")
			case punct[i] != 0 && listGoesOnToOr(ws[i:]):
				// an item of a list of clauses going on to "or": an
				// alternative ("Have you lost feeling in an arm, had
				// trouble speaking, or lost any vision?")
				n++
				conn = append(conn, "or")
			case punct[i] != 0:
				n++
				conn = append(conn, ",")
			}
		}
		c[i] = n
	}
	return c, conn
}

// listGoesOnToOr reports whether an "or" comes in ws before any "and" or
// "but": the clause starting ws is an item of a list of alternatives.
func listGoesOnToOr(ws []string) bool {
	for i, w := range ws {
		switch w {
		case "and", "but":
			return false
		case "or":
			return i+1 < len(ws) && ws[i+1] != "not"
		}
	}
	return false
}

// asks reports whether a sentence asks something: a question mark, a
// question word first, or a request frame anywhere.
func (u *Understanding) asks(s *sentence) bool {
	if s.question {
		return true
	}
	if len(s.words) > 0 && u.questionWords[s.words[0]] {
		return true
	}
	for i := range s.words {
		for _, p := range u.requests {
			if phraseAt(s.words, i, p) {
				return true
			}
		}
	}
	return false
}

// announces reports whether an asking sentence asks only by a request
// frame about the asking itself: the frame opens the sentence or the
// sentence has no "?", and no embedded question follows the frame ("I
// need to check one thing about bleeding.", "I'd like to gently ask you
// something important.", "Can I ask you a few questions about your
// cough?"), where "I'd like to know if you've had a fever." and "Can I ask
// if you've been sick?" ask.
func (u *Understanding) announces(s *sentence) bool {
	for i := range s.words {
		for _, p := range u.requests {
			if !phraseAt(s.words, i, p) || s.question && i > 0 {
				continue
			}
			return !slices.ContainsFunc(s.words[i+len(p):], func(w string) bool { return u.embedded[w] })
		}
	}
	return false
}

// intends reports whether a sentence without a question mark asks only by
// the engine's statement of what it means to ask: a request frame opened
// by a speaker word ("I'd like to know …", "I need to ask about …"), not
// one addressed to the patient ("Tell me …", "Let me know …").
func (u *Understanding) intends(s *sentence) bool {
	if s.question || len(s.words) == 0 || u.questionWords[s.words[0]] {
		return false
	}
	for i := range s.words {
		for _, p := range u.requests {
			if phraseAt(s.words, i, p) {
				return u.speaker[p[0]]
			}
		}
	}
	return false
}

// discourse reports whether a sentence's first clause is the speaker
// talking about the conversation ("Before I go on, …", "Just so I know,
// …", "If I may ask, …"): it holds a speaker word and no embedded question
// after it, and another clause follows. Like a context opener's clause, it
// asks nothing and gives no concept its words.
func (u *Understanding) discourse(s *sentence) bool {
	asked := false // a later clause of two words or more opens with a question word
	for i := 1; i+1 < len(s.words); i++ {
		if s.clause[i] > 0 && s.clause[i] != s.clause[i-1] && s.clause[i+1] == s.clause[i] && u.questionWords[s.words[i]] {
			asked = true
		}
	}
	if !asked {
		return false
	}
	for i, w := range s.words {
		if s.clause[i] != 0 {
			return false
		}
		if u.speaker[w] {
			for j := i + 1; j < len(s.words) && s.clause[j] == 0; j++ {
				if u.embedded[s.words[j]] {
					return false
				}
			}
			return true
		}
	}
	return false
}

// privatives reads a word that says the absence of another ("painless")
// as "without" and that word, when the word itself is not a cue's and its
// stem is: "Is peeing painless?" asks "Is peeing without pain?". Words of
// the cues ("breathless", "hopeless") stay as they are.
func (u *Understanding) privatives(ws []string, punct []byte) ([]string, []byte) {
	var out []string
	var op []byte
	for i, w := range ws {
		stem, ok := strings.CutSuffix(w, "less")
		if ok && len(stem) >= 4 && !u.wholeCueWord(w) && u.cueWord(stem) {
			out = append(out, "without", stem)
			op = append(op, punct[i], 0)
			continue
		}
		out = append(out, w)
		op = append(op, punct[i])
	}
	return out, op
}

// wholeCueWord reports whether a cue names w as a whole word (exactly, or
// as a stem followed by "*").
func (u *Understanding) wholeCueWord(w string) bool {
	return len(u.exact[w]) > 0 || len(u.prefix[w]) > 0
}

// cueWord reports whether some cue pattern matches w.
func (u *Understanding) cueWord(w string) bool {
	if len(u.exact[w]) > 0 {
		return true
	}
	for l := 1; l <= len(w) && l <= u.maxStem; l++ {
		if len(u.prefix[w[:l]]) > 0 {
			return true
		}
	}
	return false
}

func (u *Understanding) isTag(ws []string) bool {
	for _, t := range u.tags {
		if len(t) == len(ws) && phraseAt(ws, 0, t) {
			return true
		}
	}
	return false
}

func (u *Understanding) startsWith(ws []string, ps [][]string) bool {
	for _, p := range ps {
		if phraseAt(ws, 0, p) {
			return true
		}
	}
	return false
}

// phraseAt reports whether the words of p occur at ws[i:], consecutively.
func phraseAt(ws []string, i int, p []string) bool {
	if i+len(p) > len(ws) {
		return false
	}
	for j, pw := range p {
		if !wordMatches(ws[i+j], pw) {
			return false
		}
	}
	return true
}

// wordMatches compares a word with a pattern: equal, or a pattern ending in
// "*" whose stem begins the word.
func wordMatches(w, pattern string) bool {
	if stem, wild := strings.CutSuffix(pattern, "*"); wild {
		return strings.HasPrefix(w, stem)
	}
	return w == pattern
}

// span is one occurrence of a term: the positions of its words.
type span struct {
	first int
	pos   []int
}

// candidate is a rule that matched a sentence.
type candidate struct {
	rule    *rule
	first   int   // position of its first required word
	claimed []int // positions of the words it matched, sorted
	groups  int   // groups matched, optional ones included
	inverse bool
	clauses map[int]bool // the clauses its required words lie in
	spans   int          // how many
	clause  int          // the last of them
	// fromContext: a required word lies in context (a context clause, or
	// the sentence a joined question points back to); inQuestion: one lies
	// in the question.
	fromContext, inQuestion bool
	margin                  int // groups more than its strongest rival (see match)
}

// more reports whether a is more specific than b: more groups, then fewer
// clauses, then more words.
func (a *candidate) more(b *candidate) bool {
	if a.groups != b.groups {
		return a.groups > b.groups
	}
	if a.spans != b.spans {
		return a.spans < b.spans
	}
	return len(a.claimed) > len(b.claimed)
}

// mostSpecific is the most specific of candidates (at least one).
func mostSpecific(cs []candidate) *candidate {
	best := &cs[0]
	for i := range cs[1:] {
		if cs[i+1].more(best) {
			best = &cs[i+1]
		}
	}
	return best
}

// subsumes reports whether a claims every word b claims and more: b is
// then no rival of a ("burning up" is fever, not the "burning" of a
// pain's character).
func (a *candidate) subsumes(b *candidate) bool {
	return len(a.claimed) > len(b.claimed) && !slices.ContainsFunc(b.claimed, func(p int) bool { return !slices.Contains(a.claimed, p) })
}

func (a *candidate) overlaps(b *candidate) bool {
	for _, p := range a.claimed {
		if slices.Contains(b.claimed, p) {
			return true
		}
	}
	return false
}

// sentenceState caches one sentence's pattern and term occurrences.
type sentenceState struct {
	u       *Understanding
	s       *sentence
	context bool // its first clause sets the context of a later question
	pats    map[int32][]int
	terms   map[int32][]span
	groups  map[int32][]span
}

func (st *sentenceState) term(t int32) []span {
	if sp, ok := st.terms[t]; ok {
		return sp
	}
	pats := st.u.terms[t]
	var out []span
	for _, start := range st.pats[pats[0]] {
		pos := []int{start}
		at := start
		ok := true
		for _, p := range pats[1:] {
			next := -1
			for j := at + 1; j < len(st.s.words) && j <= at+3; j++ {
				if slices.Contains(st.pats[p], j) {
					next = j
					break
				}
				if !st.u.fillers[st.s.words[j]] {
					break
				}
			}
			if next < 0 {
				ok = false
				break
			}
			pos = append(pos, next)
			at = next
		}
		if ok {
			out = append(out, span{first: start, pos: pos})
		}
	}
	st.terms[t] = out
	return out
}

// group returns the occurrences of a group's alternatives, in the order
// they occur.
func (st *sentenceState) group(g int32) []span {
	present := false
	for _, t := range st.u.groups[g] {
		if _, ok := st.pats[st.u.terms[t][0]]; ok {
			present = true
			break
		}
	}
	if !present {
		return nil // most groups: not cached, cheaper to look again
	}
	if sp, ok := st.groups[g]; ok {
		return sp
	}
	var out []span
	for _, t := range st.u.groups[g] {
		if _, ok := st.pats[st.u.terms[t][0]]; ok {
			out = append(out, st.term(t)...)
		}
	}
	slices.SortStableFunc(out, func(a, b span) int { return a.first - b.first })
	st.groups[g] = out
	return out
}

// match returns the concepts a sentence's cues find, ordered by where they
// are asked: every rule that matches is a candidate; a candidate is dropped
// when a required word lies in context (a context clause, or the sentence
// a joined question points back to, unless another required word lies in
// the question), or when a more specific candidate of another concept
// claims some of its words; of each concept's remaining candidates the
// most specific (the first of equals) counts. A concept that only names
// the topic of another concept's question is dropped too (topics). Then
// each one's margin and polarity are decided.
func (u *Understanding) match(s *sentence) []candidate {
	st := &sentenceState{u: u, s: s, pats: map[int32][]int{}, terms: map[int32][]span{}, groups: map[int32][]span{}}
	st.context = len(s.clause) > 0 && s.clause[len(s.clause)-1] > 0 && (u.startsWith(s.words, u.contextOpeners) || s.tail == 0 && u.discourse(s))
	for i, w := range s.words {
		if i == 0 && u.auxDo[w] {
			continue // "Do you …": the question's auxiliary, not the verb do
		}
		for _, p := range u.exact[w] {
			st.pats[p] = append(st.pats[p], i)
		}
		for l := 1; l <= len(w) && l <= u.maxStem; l++ {
			for _, p := range u.prefix[w[:l]] {
				st.pats[p] = append(st.pats[p], i)
			}
		}
	}
	if len(st.pats) == 0 {
		return nil
	}
	// Context may resolve a reference, never add a concept: a candidate
	// with a required word in context stands only when the question holds
	// a reference word it does not claim itself ("Thinking about how the
	// headache started, was it sudden?"; not "Before I go on, is it
	// possible …", whose "it … before" is no reference), and one wholly in
	// context only when no candidate is in the question ("Open your mouth
	// wide. Is that hard to do?"; not "You mentioned chest pain. Does it
	// spread?").
	var raw, all []*candidate
	for ri := range u.rules {
		if c, ok := st.try(&u.rules[ri]); ok {
			raw = append(raw, c)
		}
	}
	for _, c := range raw {
		// (A word of a relative clause in context restricts its head
		// there; no question borrows it: "Some people notice numbness
		// that they have not had before. Have you noticed anything like
		// that?" asks about the numbness, not whether it happened
		// before.)
		if c.fromContext && c.inQuestion && slices.ContainsFunc(c.claimed, func(p int) bool { return st.inContext(p) && s.rel[p] >= 0 }) {
			continue
		}
		if !c.fromContext || st.reference(c) || s.bare && c.inQuestion {
			all = append(all, c)
		}
	}
	if s.prevRead || slices.ContainsFunc(all, func(c *candidate) bool { return c.inQuestion }) {
		// (A sentence pointed back to that asked was read on its own.)
		all = slices.DeleteFunc(all, func(c *candidate) bool { return !c.inQuestion })
	}
	all = u.dropContrast(s, all)
	all = u.dropAsides(s, all)
	top := map[int]*candidate{} // each concept's most specific candidate
	for _, c := range all {
		if t, ok := top[c.rule.concept]; !ok || c.more(t) {
			top[c.rule.concept] = c
		}
	}
	s.alt = u.alternatives(s)
	// Every other placing of a rule's words within one alternative of one
	// clause, beside the closest one: "Any vomiting of blood, or bloody
	// stools?" places gi_bleeding on "bloody stools" and on "vomiting of
	// blood" too.
	var placings []placing
	for _, c := range all {
		if len(c.rule.required) > 1 {
			placings = append(placings, st.placings(c.rule)...)
		}
	}
	best := map[int]*candidate{}
	var order []int
	for _, c := range all {
		// Another concept's candidate that claims some of the same words
		// and is more specific drops it, when it is that concept's best
		// or lies in one clause (a reading across two clauses is weak).
		// (One whose words lie in a later question too does not drop one
		// wholly in an earlier question, whose words it takes as what a
		// reference points back to: "Have you been sick, and if so, was
		// there any blood in it?" asks about vomiting, then about
		// bleeding.)
		if slices.ContainsFunc(all, func(o *candidate) bool {
			return o.rule.concept != c.rule.concept && (o == top[o.rule.concept] || o.spans == 1) && o.more(c) && o.overlaps(c) &&
				!st.earlier(c.claimed, o.claimed)
		}) {
			continue
		}
		// So does another concept's rule placed on all of its words and
		// more, in one alternative of one clause: a concept named as the
		// object or complement of another's word ("vomiting OF blood", "a
		// cough WITH blood in it", "faint ON getting up") is the more
		// specific concept, never the head word's.
		if slices.ContainsFunc(placings, func(p placing) bool {
			return p.rule.concept != c.rule.concept && len(p.rule.required) > c.groups && !slices.ContainsFunc(c.claimed, func(i int) bool { return !slices.Contains(p.pos, i) })
		}) {
			continue
		}
		ci := c.rule.concept
		if b, seen := best[ci]; !seen {
			best[ci] = c
			order = append(order, ci)
		} else if c.more(b) {
			best[ci] = c
		}
	}
	out := make([]candidate, 0, len(order))
	for _, ci := range order {
		out = append(out, *best[ci])
	}
	out, contested := u.absorb(st, out, all, placings)
	out = u.dropRestrictions(s, out, all)
	out, topics := u.dropTopics(s, out, all)
	// In a question about a value opened by a question word, a yes/no
	// concept dropped before (its words another's) is a topic too, not a
	// rival ("How long has the chest pain been going on?").
	for _, o := range all {
		if u.concepts[o.rule.concept].Kind == YesNo && slices.ContainsFunc(out, func(c candidate) bool {
			return u.concepts[c.rule.concept].Kind == Value && s.group(c.clause) == s.group(o.clause) && u.opensWithQuestionWord(s, s.group(c.clause))
		}) {
			if topics == nil {
				topics = map[int]bool{}
			}
			topics[o.rule.concept] = true
		}
	}
	pol := u.polarityWords(s)
	read := make([]*candidate, len(out))
	for i := range out {
		read[i] = &out[i]
	}
	// A concept's score is its best candidate's groups, and one more when
	// another of its rules matched too (two cues agree on it). Its margin
	// is its score less that of its strongest rival: another concept with
	// a candidate on some of its words that it does not subsume, that
	// lies in no more clauses, and that is not a topic of the question.
	score := func(ci int) int {
		n, rules := 0, 0
		for _, o := range all {
			if o.rule.concept == ci {
				n = max(n, o.groups)
				rules++
			}
		}
		if rules > 1 {
			n++
		}
		return n
	}
	// A concept read by another of its rules in another alternative of the
	// question ("You can't open your mouth, or one side of your throat is
	// swollen": trismus twice) is read there too: a polarity word belongs
	// to the reading it stands before ("can't" to "open your mouth", not to
	// "one side"), and readings of one concept in opposite polarities ("Can
	// you open your mouth, or is one side swollen?") cannot be answered
	// with one yes or no: the margin is nil.
	owners := slices.Clone(read)
	var siblings []*candidate
	for k, o := range all {
		// (Of a concept's readings on the same words and in the same
		// alternatives, the most specific, the first of equals: "trouble
		// controlling your bladder" is one reading, whichever of its rules
		// claims the "trouble".)
		if slices.ContainsFunc(all, func(o2 *candidate) bool {
			return o2 != o && o2.rule.concept == o.rule.concept && o2.overlaps(o) && (o2.more(o) || !o.more(o2) && slices.Index(all, o2) < k) &&
				!slices.ContainsFunc(o.claimed, func(q int) bool {
					return !slices.ContainsFunc(o2.claimed, func(p int) bool { return s.alt[p] == s.alt[q] })
				})
		}) {
			continue
		}
		if slices.ContainsFunc(read, func(c *candidate) bool {
			return c.rule.concept == o.rule.concept && c.rule != o.rule && slices.ContainsFunc(o.claimed, func(q int) bool {
				return !slices.ContainsFunc(c.claimed, func(p int) bool { return s.alt[p] == s.alt[q] })
			})
		}) {
			owners = append(owners, o)
			siblings = append(siblings, o)
		}
	}
	for _, c := range read {
		c.inverse = u.inverse(s, c, owners, pol)
		mine := score(c.rule.concept)
		c.margin = mine
		for _, o := range siblings {
			if o.rule.concept == c.rule.concept && u.inverse(s, o, owners, pol) != c.inverse {
				mine, c.margin = 0, 0
			}
		}
		for _, o := range all {
			if o.rule.concept != c.rule.concept && !topics[o.rule.concept] && o.overlaps(c) && !c.subsumes(o) && o.spans <= c.spans &&
				!straddles(o, c, read) && !acrossAlternatives(s, o) {
				c.margin = min(c.margin, mine-score(o.rule.concept))
			}
		}
		if contested[c.rule.concept] {
			c.margin = 0
		}
	}
	// In the order asked: by clause, then by where each concept is first
	// named in its clause by any of its readings ("weakness, numbness,
	// confusion or problems with your sight" names the weakness first,
	// though its most specific reading is the sight).
	earliest := func(c *candidate) int {
		first := c.first
		for _, o := range all {
			if o.rule.concept == c.rule.concept && o.clause == c.clause && o.first < first && !st.inContext(o.first) {
				first = o.first
			}
		}
		return first
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		if a.clause != b.clause {
			return a.clause - b.clause
		}
		return earliest(&a) - earliest(&b)
	})
	return out
}

// dropContrast drops a reading of what a question sets its concept against
// ("Does your pee look cloudy rather than clear?", "cloudy instead of
// clear"): a candidate with a word after a contrast marker, when another
// candidate of its concept lies wholly before the marker in the same
// clause, is the contrast, not the question.
func (u *Understanding) dropContrast(s *sentence, all []*candidate) []*candidate {
	for i := range s.words {
		for _, p := range u.contrast {
			if !phraseAt(s.words, i, p) {
				continue
			}
			before := func(c *candidate) bool {
				return !slices.ContainsFunc(c.claimed, func(q int) bool { return q >= i || s.clause[q] != s.clause[i] })
			}
			all = slices.DeleteFunc(all, func(c *candidate) bool {
				return slices.ContainsFunc(c.claimed, func(q int) bool { return q > i }) &&
					slices.ContainsFunc(all, func(o *candidate) bool { return o != c && o.rule.concept == c.rule.concept && before(o) })
			})
		}
	}
	return all
}

// dropAsides drops a candidate whose words all lie in a comparison set off
// by a comma or a dash, when another concept of the question lies outside
// it: the comparison describes that one ("Did it hit all at once, like a
// blow, or …": no blow is asked about). Alone, the words after "like" are
// an example of what is asked ("Did anything happen, like a fall?"), and a
// rule that claims the "like" itself ("like being hit") reads it.
func (u *Understanding) dropAsides(s *sentence, all []*candidate) []*candidate {
	// A remark in brackets says something of what is asked ("any weakness
	// or numbness (new for you), …"): a candidate wholly inside is no
	// question when another concept of the question lies outside.
	for i := range s.words {
		if s.punct[i] != '(' {
			continue
		}
		end := i + 1
		for end < len(s.words) && s.punct[end] != ')' && s.punct[end] != '(' {
			end++
		}
		inside := func(c *candidate) bool {
			return !slices.ContainsFunc(c.claimed, func(q int) bool { return q < i || q >= end })
		}
		all = slices.DeleteFunc(all, func(c *candidate) bool {
			return inside(c) && slices.ContainsFunc(all, func(o *candidate) bool {
				return o.rule.concept != c.rule.concept && !inside(o) && s.group(o.clause) == s.group(c.clause)
			})
		})
	}
	for i, w := range s.words {
		if w != "like" || i == 0 || s.punct[i] == 0 {
			continue
		}
		end := i + 1
		for end < len(s.words) && s.punct[end] == 0 {
			end++
		}
		outside := func(c *candidate) bool {
			return slices.ContainsFunc(c.claimed, func(q int) bool { return q <= i || q >= end })
		}
		all = slices.DeleteFunc(all, func(c *candidate) bool {
			return !outside(c) && slices.ContainsFunc(all, func(o *candidate) bool {
				return o.rule.concept != c.rule.concept && outside(o) && s.group(o.clause) == s.group(s.clause[i])
			})
		})
	}
	return all
}

// absorb decides between two yes/no concepts of one question when one of
// them (a) is read only on words the other's rules read too: "vomit" is
// vomiting's word, and gi_bleeding's ("blood in your vomit"). When the
// other (b) says more (words a's rules cannot read) and is read in a's own
// alternative too, a names part of b and is not asked ("vomit that looks
// like coffee grounds" is gi_bleeding, not vomiting as well); otherwise
// the two compete for a's words, and when a's words are narrowed by a
// modifier the patient cannot read ("vomit that looks dark") one yes or no
// cannot be trusted: a's margin is nil (contested). What a rule can read
// is every placing of its required groups in the question, in any
// alternative, outside context; b is read in an alternative when one of
// its candidates or of its rules' placings there claims a word.
func (u *Understanding) absorb(st *sentenceState, out []candidate, all []*candidate, placings []placing) ([]candidate, map[int]bool) {
	if len(out) < 2 {
		return out, nil
	}
	s := st.s
	type key struct{ concept, question int }
	reach := map[key][]int{}
	get := func(ci, g int) []int {
		k := key{ci, g}
		if p, ok := reach[k]; ok {
			return p
		}
		var ps []int
		for _, o := range all {
			if o.rule.concept == ci {
				ps = append(ps, st.reach(o.rule, g)...)
			}
		}
		reach[k] = ps
		return ps
	}
	within := func(ps, set []int) bool {
		return !slices.ContainsFunc(ps, func(p int) bool { return !slices.Contains(set, p) })
	}
	var contested map[int]bool
	drop := make([]bool, len(out))
	for i := range out {
		a := &out[i]
		if u.concepts[a.rule.concept].Kind != YesNo {
			continue
		}
		g := s.group(a.clause)
		for j := range out {
			b := &out[j]
			if i == j || drop[j] || u.concepts[b.rule.concept].Kind != YesNo || s.group(b.clause) != g ||
				!within(a.claimed, get(b.rule.concept, g)) || within(b.claimed, get(a.rule.concept, g)) {
				continue
			}
			// b's own words (not a's) in the alternative of a's word p
			own := func(p int) bool {
				mine := func(q int) bool {
					return !slices.Contains(a.claimed, q) && s.alt[q] == s.alt[p] && s.group(s.clause[q]) == g && !st.inContext(q)
				}
				return slices.ContainsFunc(all, func(o *candidate) bool {
					return o.rule.concept == b.rule.concept && slices.ContainsFunc(o.claimed, mine)
				}) || slices.ContainsFunc(placings, func(pl placing) bool {
					return pl.rule.concept == b.rule.concept && slices.ContainsFunc(pl.pos, mine)
				})
			}
			switch {
			case !slices.ContainsFunc(a.claimed, func(p int) bool { return !own(p) }):
				drop[i] = true
			case u.modified(s, a, all):
				if contested == nil {
					contested = map[int]bool{}
				}
				contested[a.rule.concept] = true
			default:
				continue
			}
			break
		}
	}
	kept := make([]candidate, 0, len(out))
	for i, c := range out {
		if !drop[i] {
			kept = append(kept, c)
		}
	}
	return kept, contested
}

// modified reports whether c's words are followed, in its alternative, by
// a modifier no reading claims a word of: a relative clause, a
// prepositional phrase or a participle ("vomit that looks dark", "vomit
// with dark bits in it", "vomit resembling grounds"). Its words then name
// something narrower than c, which the patient cannot read.
func (u *Understanding) modified(s *sentence, c *candidate, all []*candidate) bool {
	last := c.claimed[len(c.claimed)-1]
	g, alt := s.group(s.clause[last]), s.alt[last]
	prep := false
	for q := last + 1; q < len(s.words) && s.group(s.clause[q]) == g && s.alt[q] == alt; q++ {
		w := s.words[q]
		if u.prepositions[w] {
			prep = true
			continue
		}
		if slices.ContainsFunc(all, func(o *candidate) bool { return slices.Contains(o.claimed, q) }) || u.function(w) {
			continue
		}
		if s.rel[q] >= 0 || prep || q == last+1 && strings.HasSuffix(w, "ing") {
			return true
		}
	}
	return false
}

// requestWord reports whether w is a word of a request frame ("tell",
// "know", "wondering"): a subject after one opens no relative clause.
func (u *Understanding) requestWord(w string) bool {
	for _, p := range u.requests {
		if slices.Contains(p, w) {
			return true
		}
	}
	return false
}

// function reports whether w is a word of grammar, not of content.
func (u *Understanding) function(w string) bool {
	return u.fillers[w] || u.determiners[w] || u.auxiliaries[w] || u.pronouns[w] || u.speaker[w] || u.relPronouns[w] ||
		u.adverbs[w] || u.questionWords[w] || u.anaphors[w] || w == "or" || w == "and" || w == "but"
}

// reach returns every position r's required groups can be placed on in
// question g, outside context: each occurrence of each group, with the
// occurrences of the other groups closest to it.
func (st *sentenceState) reach(r *rule, g int) []int {
	var out []int
	for k, gr := range r.required {
		for _, anchor := range st.group(gr) {
			pos := slices.Clone(anchor.pos)
			ok := true
			for j, o := range r.required {
				if j == k {
					continue
				}
				sp, found := nearest(st.group(o), anchor.first, pos)
				if !found {
					ok = false
					break
				}
				pos = append(pos, sp.pos...)
			}
			if ok && !slices.ContainsFunc(pos, func(p int) bool { return st.s.group(st.s.clause[p]) != g || st.inContext(p) }) {
				out = append(out, pos...)
			}
		}
	}
	return out
}

// dropRestrictions drops what restricts another concept's question rather
// than being asked: a concept read wholly inside a relative clause when
// another concept is read on the clause's head, the words before it in its
// alternative, or before it in its question when a clause mark sets it off
// ("weakness, numbness or loss of vision, which is new for you?" asks
// about the weakness, not whether it is the first time); and a concept
// read wholly in a list's frame, the words before a colon or a dash that
// opens a list, when another concept is read in the list ("Have you
// noticed any of the following that are new for you: weakness, …?").
func (u *Understanding) dropRestrictions(s *sentence, out []candidate, all []*candidate) []candidate {
	if len(out) < 2 {
		return out
	}
	read := func(ci int) bool {
		return slices.ContainsFunc(out, func(o candidate) bool { return o.rule.concept == ci })
	}
	restricts := func(c *candidate) bool {
		g := s.group(c.clause)
		// another concept read, by any of its candidates
		other := func(in func(o *candidate, q int) bool) bool {
			return slices.ContainsFunc(all, func(o *candidate) bool {
				return o.rule.concept != c.rule.concept && read(o.rule.concept) &&
					slices.ContainsFunc(o.claimed, func(q int) bool { return s.group(s.clause[q]) == g && in(o, q) })
			})
		}
		// (A head named by a definite noun phrase is given, and what the
		// clause says of it asked: "Is the breathlessness something that
		// came on suddenly?")
		if rc := s.rel[c.claimed[0]]; rc >= 0 && !slices.ContainsFunc(c.claimed, func(q int) bool { return s.rel[q] != rc }) &&
			other(func(o *candidate, q int) bool {
				return q < rc && (s.punct[rc] != 0 || s.alt[q] == s.alt[rc]) && !u.definite(s, o, out)
			}) {
			return true
		}
		// (So does a subordinate clause after its main clause: "any chest
		// pain when you cough?" asks about the pain, "blood, or dark bits,
		// when you've been sick?" about the blood.)
		if sc := u.trailingSubordinate(s, c.claimed[0]); sc >= 0 && !slices.ContainsFunc(c.claimed, func(q int) bool { return u.trailingSubordinate(s, q) != sc }) &&
			other(func(o *candidate, q int) bool { return q < sc && !u.definite(s, o, out) }) {
			return true
		}
		for k := c.claimed[len(c.claimed)-1] + 1; k < len(s.words) && s.group(s.clause[k]) == g; k++ {
			if s.punct[k] == ':' || s.punct[k] == '-' && s.words[k] != "or" && s.words[k] != "and" && s.words[k] != "but" {
				return other(func(_ *candidate, q int) bool { return q >= k })
			}
		}
		return false
	}
	kept := make([]candidate, 0, len(out))
	for i := range out {
		if !restricts(&out[i]) {
			kept = append(kept, out[i])
		}
	}
	return kept
}

// trailingSubordinate is the position of the subordinator ("when",
// "while", "after") that opens the subordinate clause word p lies in, after
// other words of its clause, or -1: the clause runs to the next clause mark
// or "or".
func (u *Understanding) trailingSubordinate(s *sentence, p int) int {
	for q := p; q > 0 && s.clause[q] == s.clause[p]; q-- {
		if q < p && (s.punct[q+1] != 0 || s.words[q] == "or") {
			return -1
		}
		if u.subordinators[s.words[q]] && s.clause[q-1] == s.clause[q] && s.rel[q] < 0 {
			return q
		}
	}
	return -1
}

// straddles reports whether o's words are all read already, some as c's
// and some as another reading's: o is then no rival of c, only two
// readings' words taken together ("Is one calf painful, or are you
// coughing blood?": pain made worse by coughing is not asked).
func straddles(o, c *candidate, read []*candidate) bool {
	other := false
	for _, p := range o.claimed {
		switch {
		case slices.Contains(c.claimed, p):
		case slices.ContainsFunc(read, func(d *candidate) bool {
			return d != c && d.rule.concept != o.rule.concept && slices.Contains(d.claimed, p)
		}):
			other = true
		default:
			return false
		}
	}
	return other
}

// acrossAlternatives reports whether o's words lie in two clauses that are
// alternatives of each other ("Is it cold or blue, or has it lost
// feeling?": "blue" and "feeling" are not "feeling blue"): o is then no
// rival.
func acrossAlternatives(s *sentence, o *candidate) bool {
	if o.spans < 2 {
		return false
	}
	for cl := range o.clauses {
		if cl > 0 && cl < len(s.conn) && s.conn[cl] == "or" && o.clauses[cl-1] {
			return true
		}
	}
	return false
}

// goesOn reports whether a phrase ending in "or not" at i is followed by
// more words of its clause: then it is no "or not" ("muddled, or not your
// usual self"), where "… or not?" and "whether or not you're sure" are.
func (s *sentence) goesOn(i int, p []string) bool {
	end := i + len(p)
	return len(p) == 2 && p[0] == "or" && p[1] == "not" && end < len(s.words) && s.punct[end] == 0 && s.clause[end] == s.clause[i]
}

// alternatives numbers each word's alternative within its question: an
// "or" starts the next alternative ("Have you thrown up blood, or had
// black poo?"), and so does a comma in a list that goes on to an "or"
// ("sweaty, clammy or sick"); "and", "with" and a comma before "and" keep
// the alternative ("a stiff neck along with a fever, or a rash": the stiff
// neck and the fever are asked together, the rash instead). "or not",
// "more or less" and the like start none (not_polarity, alternatives_not).
func (u *Understanding) alternatives(s *sentence) []int {
	alt := make([]int, len(s.words))
	skip := make([]bool, len(s.words))
	for i := range s.words {
		for _, p := range u.notAlternative {
			if phraseAt(s.words, i, p) && !s.goesOn(i, p) {
				for j := range p {
					skip[i+j] = true
				}
			}
		}
	}
	n, group, anyList := 0, -1, false
	or := func(x string) bool { return x == "or" || anyList && x == "and" }
	for i, w := range s.words {
		if g := s.group(s.clause[i]); g != group {
			n, group, anyList = 0, g, u.anyWords[w]
		}
		switch {
		case or(w) && !skip[i]:
			n++
		case s.punct[i] != 0 && i > 0 && s.clause[i] == s.clause[i-1] && !u.prepositions[w] && !u.subordinators[w]:
			for _, x := range s.words[i:] {
				if or(x) {
					n++
					break
				}
				if x == "and" {
					break
				}
			}
		}
		alt[i] = n
	}
	return alt
}

// dropTopics drops the concepts that only name what another concept's
// question is about: in a question about a value (how long, when, how it
// came on) opened by a question word, every yes/no concept ("How long
// have you had the cough and fever?"); and a yes/no concept whose words
// follow a determiner ("the breathlessness", "your chest") when another
// concept, not so introduced, is asked in the same alternative and either
// shares some of its words ("Does pressing on your chest where it hurts
// make the pain worse?") or, the topic being one group of words, comes
// after it ("Does your cough keep you awake at night?"; "burning up or
// getting the chills" asks both). A question of topics alone keeps them.
func (u *Understanding) dropTopics(s *sentence, cs []candidate, all []*candidate) ([]candidate, map[int]bool) {
	topic := make([]bool, len(cs))
	for i, c := range cs {
		if u.concepts[c.rule.concept].Kind != YesNo {
			continue
		}
		g := s.group(c.clause)
		for j, o := range cs {
			if j == i || s.group(o.clause) != g {
				continue
			}
			if u.concepts[o.rule.concept].Kind == Value && u.opensWithQuestionWord(s, g) {
				topic[i] = true
			}
			// (o is read in c's alternative by any of its candidates: "Has
			// your vomit contained anything like coffee grounds, or have
			// your stools turned black?")
			oc := &cs[j]
			for _, a := range all {
				if a.rule.concept == o.rule.concept && s.alt[a.first] == s.alt[c.first] && s.group(a.clause) == g && (s.alt[oc.first] != s.alt[c.first] || a.first < oc.first) {
					oc = a
				}
			}
			first := oc.first
			// (A noun phrase of more words is the topic when nothing opens
			// a subordinate clause before the other concept: "Is the chest
			// pain accompanied by sweating?", not "Is your neck stiff while
			// you have a fever?")
			np := c.groups == 1 || u.nounPhrase(s, &cs[i]) && !slices.ContainsFunc(s.words[c.claimed[len(c.claimed)-1]+1:max(first, c.claimed[len(c.claimed)-1]+1)], func(w string) bool { return u.subordinators[w] })
			if u.definite(s, &cs[i], cs) && !u.definite(s, oc, cs) && s.alt[c.first] == s.alt[first] &&
				(np && c.claimed[0] < first || c.overlaps(&o) || c.first > first && u.allDefinite(s, &cs[i], cs)) {
				topic[i] = true
			}
			// Named by a definite noun phrase after a preposition, it is
			// the circumstance of every alternative of the question:
			// "Are you sweating, or feeling sick, along with the chest
			// pain?"
			if u.circumstance(s, &cs[i], cs) && !u.definite(s, &o, cs) {
				topic[i] = true
			}
			// Named wholly by the definite subject of its question, it is
			// the topic of every alternative: "Has the breathlessness come
			// on over minutes, or gradually over days?"
			// (The other concept asked in its clause, not in one
			// subordinate to it or of its own: "Is your neck stiff while
			// you have a temperature?" asks about both.)
			if u.subject(s, &cs[i]) && !u.definite(s, &o, cs) && slices.ContainsFunc(o.claimed, func(q int) bool {
				return s.clause[q] == s.clause[c.first] && u.trailingSubordinate(s, q) < 0 && s.rel[q] < 0
			}) {
				topic[i] = true
			}
		}
	}
	var out []candidate
	dropped := map[int]bool{}
	for i, c := range cs {
		if !topic[i] {
			out = append(out, c)
		} else {
			dropped[c.rule.concept] = true
		}
	}
	if len(out) == 0 {
		return cs, nil
	}
	return out, dropped
}

// opensWithQuestionWord reports whether question g of s opens with a wh-
// word ("How long …", "When did …").
func (u *Understanding) opensWithQuestionWord(s *sentence, g int) bool {
	for i, w := range s.words {
		if s.group(s.clause[i]) == g {
			// (a preposition may come first: "Since when …?", "For how
			// long …?")
			if u.prepositions[w] && i+1 < len(s.words) && s.group(s.clause[i+1]) == g {
				return u.whWords[s.words[i+1]]
			}
			// (or a request before it: "Could you tell me how long …?")
			for k := i; k < len(s.words) && s.group(s.clause[k]) == g; k++ {
				for _, p := range u.requests {
					if phraseAt(s.words, k, p) && k+len(p) < len(s.words) && u.whWords[s.words[k+len(p)]] {
						return true
					}
				}
			}
			return u.whWords[w]
		}
	}
	return false
}

// subject reports whether a candidate's words are the definite subject of
// its question, right after the auxiliary that opens it ("Has the
// breathlessness …", "Is your chest pain …").
func (u *Understanding) subject(s *sentence, c *candidate) bool {
	g := s.group(s.clause[c.first])
	start := slices.IndexFunc(s.clause, func(cl int) bool { return s.group(cl) == g })
	if start < 0 || start+2 > c.claimed[0] || !u.auxiliaries[s.words[start]] || !u.determiners[s.words[start+1]] || !u.nounPhrase(s, c) {
		return false
	}
	for q := start + 2; q < c.claimed[0]; q++ {
		if !u.fillers[s.words[q]] {
			return false
		}
	}
	return true
}

// circumstance reports whether a candidate is named by a definite noun
// phrase after a preposition ("along with the chest pain", "since the
// fall"): what the question's other concepts are asked about, given, not
// asked.
func (u *Understanding) circumstance(s *sentence, c *candidate, cs []candidate) bool {
	if !u.definite(s, c, cs) || !u.nounPhrase(s, c) {
		return false
	}
	p := c.claimed[0]
	for k := 1; k <= 3 && p-k >= 0; k++ {
		if u.circumstances[s.words[p-k]] {
			return true
		}
		if !u.determiners[s.words[p-k]] && !u.fillers[s.words[p-k]] {
			return false
		}
	}
	return false
}

// nounPhrase reports whether a candidate's words are next to each other, but
// for fillers: one noun phrase ("the chest pain", "the shortness of
// breath").
func (u *Understanding) nounPhrase(s *sentence, c *candidate) bool {
	for k := 1; k < len(c.claimed); k++ {
		for q := c.claimed[k-1] + 1; q <= c.claimed[k]; q++ {
			if s.punct[q] != 0 || q < c.claimed[k] && !u.fillers[s.words[q]] {
				return false
			}
		}
	}
	return true
}

// allDefinite reports whether every word of a candidate follows a
// determiner: it is named by a definite noun phrase ("the sore spot on
// your chest"), what another concept's question is about ("Worse when you
// press on the sore spot on your chest?" asks about tenderness).
func (u *Understanding) allDefinite(s *sentence, c *candidate, cs []candidate) bool {
	for _, q := range c.claimed {
		one := candidate{rule: c.rule, claimed: []int{q}}
		if !u.definite(s, &one, cs) {
			return false
		}
	}
	return true
}

// definite reports whether a candidate's words follow a determiner ("the",
// "your", "this"), with at most one word between, a word no other
// candidate claims ("the breathlessness start": "start" is not definite).
func (u *Understanding) definite(s *sentence, c *candidate, cs []candidate) bool {
	p := c.claimed[0]
	for k := 1; k <= 2 && p-k >= 0; k++ {
		if u.determiners[s.words[p-k]] && s.rel[p-k] != p-k {
			return true
		}
		if s.punct[p-k+1] != 0 || u.questionWords[s.words[p-k]] || slices.ContainsFunc(cs, func(o candidate) bool { return o.rule != c.rule && slices.Contains(o.claimed, p-k) }) {
			return false
		}
	}
	return false
}

// polarity holds the positions of a sentence's polarity words, those inside
// a not_polarity phrase ("or not", "than normal") or after a contrast
// marker ("rather than clear") left out.
type polarity struct {
	negators, difficulty, absence, normal, cessation []int
}

func (u *Understanding) polarityWords(s *sentence) polarity {
	var skip []int
	for i := range s.words {
		for _, p := range u.notPolarity {
			if phraseAt(s.words, i, p) && !s.goesOn(i, p) {
				for j := range p {
					skip = append(skip, i+j)
				}
			}
		}
		// What is set against the question says nothing of its polarity
		// ("cloudy rather than clear").
		for _, p := range u.contrast {
			if phraseAt(s.words, i, p) {
				for j := i; j < len(s.words) && s.clause[j] == s.clause[i]; j++ {
					skip = append(skip, j)
				}
			}
		}
	}
	find := func(list [][]string) []int {
		var out []int
		for i := range s.words {
			for _, p := range list {
				if phraseAt(s.words, i, p) && !slices.Contains(skip, i) {
					for j := range p {
						out = append(out, i+j)
					}
					break
				}
			}
		}
		return out
	}
	pol := polarity{
		negators:   find(u.negators),
		difficulty: find(u.difficulty),
		absence:    find(u.absence),
		normal:     find(u.normalWords),
		cessation:  find(u.cessation),
	}
	// "stop" before an -ing word ("stopped spreading", "unable to stop
	// being sick") and "gone" that ends its clause or is followed by an
	// adverb of time or degree ("Has the fever gone now?") say the thing
	// has ceased; "stop for breath", "gone numb" do not.
	for i, w := range s.words {
		next := ""
		if i+1 < len(s.words) && s.clause[i+1] == s.clause[i] {
			next = s.words[i+1]
		}
		switch {
		case (w == "stop" || w == "stops" || w == "stopping") && strings.HasSuffix(next, "ing") && len(next) > 4,
			w == "gone" && (next == "" || u.afterGone[next]):
			if !slices.Contains(skip, i) {
				pol.cessation = append(pol.cessation, i)
			}
		}
	}
	return pol
}

// try matches one rule: every required group occurs (the occurrences
// closest together, on different words), no veto term occurs in its
// clauses, and optional groups claim an occurrence in those clauses.
func (st *sentenceState) try(r *rule) (*candidate, bool) {
	for _, g := range r.required {
		if len(st.group(g)) == 0 {
			return nil, false
		}
	}
	occ := make([][]span, len(r.required))
	for i, g := range r.required {
		occ[i] = st.group(g)
	}
	var bestPos []int
	bestFirst, bestWidth := 0, -1
	for _, anchor := range occ[0] {
		pos := slices.Clone(anchor.pos)
		inner := len(anchor.pos) - 1 // words inside phrases: no distance
		ok := true
		for _, o := range occ[1:] {
			sp, found := nearest(o, anchor.first, pos)
			if !found {
				ok = false
				break
			}
			pos = append(pos, sp.pos...)
			inner += len(sp.pos) - 1
		}
		if !ok {
			continue
		}
		lo, hi := slices.Min(pos), slices.Max(pos)
		if w := hi - lo - inner; bestWidth < 0 || w < bestWidth {
			bestPos, bestFirst, bestWidth = pos, lo, w
		}
	}
	if bestWidth < 0 {
		return nil, false
	}
	// In a question read with the sentence before it, a placing that
	// reaches into the question is the question's reading, though one
	// wholly in the sentence before lies closer ("Press the outer edge of
	// your foot. Any tenderness there?": the foot's bone and the
	// tenderness, not the pressing).
	if st.s.tail > 0 && !slices.ContainsFunc(bestPos, func(p int) bool { return !st.inContext(p) }) {
		if pos, ok := st.placeInQuestion(r); ok {
			bestPos, bestFirst = pos, slices.Min(pos)
		}
	}
	// After a context clause, a placing wholly in the question is the
	// question's reading, though one reaching into the context lies
	// closer ("Other than the vomiting, any blood, for example in your
	// stools?").
	if st.context && slices.ContainsFunc(bestPos, st.inContext) {
		if pos, ok := st.placeOutside(r); ok {
			bestPos, bestFirst = pos, slices.Min(pos)
		}
	}
	c := &candidate{rule: r, first: bestFirst, groups: len(r.required), clauses: map[int]bool{}}
	for _, p := range bestPos {
		c.clauses[st.s.clause[p]] = true
	}
	c.spans = len(c.clauses)
	for _, t := range r.not {
		for _, sp := range st.term(t) {
			if st.s.scope(c.clauses, sp.first) {
				return nil, false
			}
		}
	}
	// Context may resolve a reference, never add a concept (see match).
	for _, p := range bestPos {
		c.clause = max(c.clause, st.s.clause[p])
		if st.inContext(p) {
			c.fromContext = true
		} else {
			c.inQuestion = true
		}
	}
	for _, g := range r.optional {
		var in []span
		for _, sp := range st.group(g) {
			if c.clauses[st.s.clause[sp.first]] {
				in = append(in, sp)
			}
		}
		if sp, found := nearest(in, bestFirst, bestPos); found {
			bestPos = append(bestPos, sp.pos...)
			c.groups++
		}
	}
	// A group claims the other items of a list it has one item of ("into
	// your arm, jaw, neck or back": spread claims every destination, where
	// a rule that wants only the neck claims one).
	for _, g := range slices.Concat(r.required, r.optional) {
		for _, sp := range st.group(g) {
			if len(sp.pos) == 1 && !slices.Contains(bestPos, sp.first) && st.listed(sp.first, bestPos) {
				bestPos = append(bestPos, sp.first)
			}
		}
	}
	slices.Sort(bestPos)
	c.claimed = bestPos
	return c, true
}

// placeInQuestion is the narrowest placing of r's required groups with a
// word outside context, anchored on each occurrence of each group.
func (st *sentenceState) placeInQuestion(r *rule) ([]int, bool) {
	var best []int
	bestWidth := -1
	for k, g := range r.required {
		for _, anchor := range st.group(g) {
			pos := slices.Clone(anchor.pos)
			ok := true
			for j, o := range r.required {
				if j == k {
					continue
				}
				sp, found := nearest(st.group(o), anchor.first, pos)
				if !found {
					ok = false
					break
				}
				pos = append(pos, sp.pos...)
			}
			if !ok || !slices.ContainsFunc(pos, func(p int) bool { return !st.inContext(p) }) {
				continue
			}
			if w := slices.Max(pos) - slices.Min(pos); bestWidth < 0 || w < bestWidth {
				best, bestWidth = pos, w
			}
		}
	}
	return best, bestWidth >= 0
}

// placeOutside is the narrowest placing of r's required groups wholly
// outside context, anchored on each occurrence of each group.
func (st *sentenceState) placeOutside(r *rule) ([]int, bool) {
	var best []int
	bestWidth := -1
	for k, g := range r.required {
		for _, anchor := range st.group(g) {
			if slices.ContainsFunc(anchor.pos, st.inContext) {
				continue
			}
			pos := slices.Clone(anchor.pos)
			ok := true
			for j, o := range r.required {
				if j == k {
					continue
				}
				var outside []span
				for _, sp := range st.group(o) {
					if !slices.ContainsFunc(sp.pos, st.inContext) {
						outside = append(outside, sp)
					}
				}
				sp, found := nearest(outside, anchor.first, pos)
				if !found {
					ok = false
					break
				}
				pos = append(pos, sp.pos...)
			}
			if !ok {
				continue
			}
			if w := slices.Max(pos) - slices.Min(pos); bestWidth < 0 || w < bestWidth {
				best, bestWidth = pos, w
			}
		}
	}
	return best, bestWidth >= 0
}

// placing is one placing of a rule's required words.
type placing struct {
	rule *rule
	pos  []int
}

// placings returns every placing of r's required groups that lies in one
// alternative of one question, outside context and not vetoed in its
// clauses: each occurrence of each group, with the occurrences of
// the other groups closest to it.
func (st *sentenceState) placings(r *rule) []placing {
	var out []placing
	for k, g := range r.required {
		for _, anchor := range st.group(g) {
			pos := slices.Clone(anchor.pos)
			ok := true
			for j, o := range r.required {
				if j == k {
					continue
				}
				sp, found := nearest(st.group(o), anchor.first, pos)
				if !found {
					ok = false
					break
				}
				pos = append(pos, sp.pos...)
			}
			if !ok || slices.ContainsFunc(pos, func(p int) bool {
				return st.s.group(st.s.clause[p]) != st.s.group(st.s.clause[pos[0]]) || st.s.alt[p] != st.s.alt[pos[0]] || st.inContext(p)
			}) {
				continue
			}
			vetoed := false
			for _, t := range r.not {
				vetoed = vetoed || slices.ContainsFunc(st.term(t), func(sp span) bool {
					return slices.ContainsFunc(pos, func(p int) bool { return st.s.clause[p] == st.s.clause[sp.first] })
				})
			}
			if !vetoed {
				slices.Sort(pos)
				out = append(out, placing{r, pos})
			}
		}
	}
	return out
}

// listed reports whether the word at i is an item of a list one of whose
// items is claimed: only commas, "and", "or" and fillers lie between.
func (st *sentenceState) listed(i int, claimed []int) bool {
	for _, p := range claimed {
		lo, hi := min(i, p), max(i, p)
		ok := st.s.clause[lo] == st.s.clause[hi]
		for j := lo + 1; j < hi && ok; j++ {
			w := st.s.words[j]
			ok = w == "and" || w == "or" || st.u.fillers[w]
		}
		for j := lo + 1; j <= hi && ok && hi-lo == 1; j++ {
			ok = st.s.punct[j] != 0 // neighbours: a comma between them
		}
		if ok {
			return true
		}
	}
	return false
}

// inContext reports whether word i is context, not question: in the
// sentence a joined question points back to, or in a first clause that
// sets the context (an opener's or the speaker's).
func (st *sentenceState) inContext(i int) bool {
	cl := st.s.clause[i]
	return st.s.tail > 0 && cl < st.s.tail || cl == 0 && st.context
}

// reference reports whether the question holds a reference word (an
// anaphor) that c does not claim: one its context words can resolve. A
// reference word before a subject pronoun opens a clause ("possible that
// you're pregnant") and refers to nothing.
func (st *sentenceState) reference(c *candidate) bool {
	ws := st.s.words
	for i, w := range ws {
		if !st.u.anaphors[w] || st.inContext(i) || slices.Contains(c.claimed, i) || i+1 < len(ws) && st.u.pronouns[ws[i+1]] || st.s.rel[i] == i {
			continue
		}
		// A plural pronoun refers to a plural noun, or to things joined by
		// "and" or "or" ("Looking at your throat, are your tonsils swollen,
		// or do they have white spots?": "they" are the tonsils, not the
		// throat).
		if st.u.plurals[w] && !slices.ContainsFunc(c.claimed, func(q int) bool { return st.inContext(q) && plural(ws[q]) }) &&
			!slices.ContainsFunc(c.claimed, func(q int) bool {
				return st.inContext(q) && slices.ContainsFunc(ws[q:i], func(x string) bool { return x == "and" || x == "or" }) && st.inContext(q+1)
			}) {
			continue
		}
		return true
	}
	return false
}

// earlier reports whether every position of a lies in a question before
// the last question of b, context apart.
func (st *sentenceState) earlier(a, b []int) bool {
	last := -1
	for _, p := range b {
		if !st.inContext(p) {
			last = max(last, st.s.group(st.s.clause[p]))
		}
	}
	return !slices.ContainsFunc(a, func(p int) bool { return st.inContext(p) || st.s.group(st.s.clause[p]) >= last })
}

// plural reports whether a word looks like a plural noun: it ends in "s"
// but not "ss", "us" or "is" ("bumps", "tonsils"; not "glass", "this").
func plural(w string) bool {
	return len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

// scope reports whether word i lies in the clauses of a match: its own, or
// those of the asking sentence of a joined pair.
func (s *sentence) scope(clauses map[int]bool, i int) bool {
	// (a fronted subordinate clause is one question with its main clause:
	// "When you try to pass water, does nothing come out?")
	return clauses[s.clause[i]] || s.tail > 0 && s.clause[i] >= s.tail ||
		clauses[0] && s.clause[i] == 1 && len(s.conn) > 1 && s.conn[1] == "when"
}

// nearest returns the occurrence closest to at that uses none of the
// positions taken; of equally close ones, the longest.
func nearest(occ []span, at int, taken []int) (span, bool) {
	var best span
	bestD := -1
	for _, sp := range occ {
		if slices.ContainsFunc(sp.pos, func(p int) bool { return slices.Contains(taken, p) }) {
			continue
		}
		d := -1
		for _, p := range sp.pos {
			if x := abs(p - at); d < 0 || x < d {
				d = x
			}
		}
		if bestD < 0 || d < bestD || d == bestD && len(sp.pos) > len(best.pos) {
			best, bestD = sp, d
		}
	}
	return best, bestD >= 0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// inverse decides a match's polarity from the polarity words in its scope
// (its clauses, and the asking sentence of a joined pair) that no
// candidate claimed and that are not nearer to another candidate of the
// sentence ("a stiff neck, or a rash that doesn't fade": the "doesn't" is
// the rash's). Each kind of word turns the polarity once, however many of
// it there are, so kinds compose ("unable to stop being sick" is
// vomiting; "the fever has not gone" is fever):
//   - a normal word ("Is your urine clear?", "Are you peeing OK?") asks
//     about the normal state: inverse unless the concept's yes is the
//     normal state (normal_yes);
//   - a negator ("not", "never", "can't", "no") turns it;
//   - a cessation word ("stopped", "gone away", "cleared up", "stop"
//     before an -ing word) turns it: the thing has ceased;
//   - an absence word ("without", "free") turns a rule that is not
//     inverse ("Can you stand without feeling dizzy?", "pain-free");
//   - a difficulty or loss word ("hard", "trouble", "struggling",
//     "losing") turns a rule worded as an ability or a normal state: an
//     inverse rule, or any rule of a normal_yes concept ("Do you have
//     trouble opening your mouth?", "Are your legs losing strength?",
//     "Are you struggling to cope?").
//
// Rules marked fixed keep their own; only yes_no concepts are ever inverse.
func (u *Understanding) inverse(s *sentence, c *candidate, all []*candidate, pol polarity) bool {
	r := c.rule
	if u.concepts[r.concept].Kind != YesNo {
		return false
	}
	if r.fixed {
		return r.inverse
	}
	dist := func(o *candidate, p int) int {
		d := -1
		for _, q := range o.claimed {
			if x := abs(p - q); d < 0 || x < d {
				d = x
			}
		}
		return d
	}
	// owner is the candidate a polarity word at p belongs to: a word that
	// goes before what it says (a negator, an absence word: "no numbness
	// … and no bladder problems") belongs to the first candidate after it
	// in its clause; any other word, or one with no candidate after it
	// ("pain-free"), to the nearest.
	owner := func(p int, before bool) *candidate {
		var own *candidate
		if before {
			next := -1
			for _, o := range all {
				for _, q := range o.claimed {
					if q > p && s.clause[q] == s.clause[p] && (next < 0 || q < next) {
						next, own = q, o
					}
				}
			}
			if own != nil {
				return own
			}
		}
		// The nearest, one in the word's own clause first, and in that one
		// in its own alternative ("Is opening your mouth a struggle, or is
		// one side swollen?", "… that opening your mouth is difficult, or
		// that one side is swollen?": the struggle is the opening's).
		place := func(o *candidate) int {
			n := 0
			for _, q := range o.claimed {
				switch {
				case s.clause[q] == s.clause[p] && s.alt[q] == s.alt[p]:
					return 2
				case s.clause[q] == s.clause[p]:
					n = 1
				}
			}
			return n
		}
		for _, o := range all {
			if own == nil || place(o) > place(own) || place(o) == place(own) && dist(o, p) < dist(own, p) {
				own = o
			}
		}
		return own
	}
	free := func(ps []int, before bool) bool {
		for _, p := range ps {
			if !s.scope(c.clauses, p) || u.ruleWord(r, s.words[p]) || u.rulePhraseAt(r, s.words, p) || u.subordinate(s, c, p) {
				continue
			}
			// A polarity word in a relative clause says something of that
			// clause, not of a match outside it ("any weakness that was
			// not there before" is new weakness).
			if rc := s.rel[p]; rc >= 0 && !slices.ContainsFunc(c.claimed, func(q int) bool { return s.rel[q] == rc }) {
				continue
			}
			if slices.ContainsFunc(all, func(o *candidate) bool { return slices.Contains(o.claimed, p) }) {
				continue
			}
			// A polarity word in another alternative of the question says
			// nothing of this one ("a heart attack, angina or heart
			// failure": the failure is no negation of the angina), but
			// for a negation that governs a whole list (distributes).
			// (A question pointing back to the sentence before it speaks
			// of what that sentence named: "Open your mouth wide. Is that
			// hard?")
			o := owner(p, before)
			sameAlt := slices.ContainsFunc(c.claimed, func(q int) bool { return s.alt[q] == s.alt[p] && s.group(s.clause[q]) == s.group(s.clause[p]) }) ||
				s.tail > 0 && s.clause[p] >= s.tail && slices.ContainsFunc(c.claimed, func(q int) bool { return s.clause[q] < s.tail })
			if !sameAlt && !(before && u.distributes(s, o, c, p)) {
				continue
			}
			if o == c || o.rule == r || before && u.distributes(s, o, c, p) {
				return true
			}
		}
		return false
	}
	// The normal state asked, by a free normal word or one an inverse rule
	// claims ("Is your wee clear?"): other polarity words restate it ("Is
	// your urine clear, with no blood?", "clear, not cloudy"), unless a
	// negator comes right before the normal word ("Are you not feeling
	// well?").
	normal := r.inverse && !u.normalYes[r.concept] && slices.ContainsFunc(pol.normal, func(p int) bool { return slices.Contains(c.claimed, p) })
	// (For a concept whose yes is the normal state, a normal word restates
	// it, and the other polarity words decide: "Is the pain affecting your
	// ability to do your normal daily activities?")
	if !u.normalYes[r.concept] && (normal || free(pol.normal, false)) {
		inv := !u.normalYes[r.concept]
		for _, n := range pol.normal {
			if s.scope(c.clauses, n) && (slices.Contains(pol.negators, n-1) || slices.Contains(pol.negators, n-2)) {
				return !inv
			}
		}
		return inv
	}
	// A negator, or an absence word for a rule that is not inverse, turns
	// it once (together they restate one absence: "kept yourself safe,
	// without harming yourself, and with no plans"); a cessation word turns
	// it again ("unable to stop being sick").
	flip := free(pol.negators, true) || !r.inverse && free(u.nearReading(s, pol.absence, all), true)
	if free(pol.cessation, false) {
		flip = !flip
	}
	// A difficulty word turns an ability: an inverse rule wherever it
	// stands, a normal_yes concept's rule when it governs the rule's words
	// ("struggling to cope", not "someone to talk to when things are
	// hard").
	if r.inverse && free(pol.difficulty, false) || u.normalYes[r.concept] && free(slices.DeleteFunc(slices.Clone(pol.difficulty), func(p int) bool { return p > c.claimed[0] }), false) {
		flip = !flip
	}
	return r.inverse != flip
}

// nearReading keeps the absence words next to a reading's words (within
// two words before, three after): "without" says the absence of the noun
// phrase after it ("Can you stand without feeling dizzy?"), and one
// followed by words no reading claims says nothing of any concept ("Do
// painkillers you can buy without a prescription help?").
func (u *Understanding) nearReading(s *sentence, ps []int, all []*candidate) []int {
	// a reading's word, or a word of one of its rules ("without it
	// hurting": hurting is a word of the pressing's)
	claimed := func(q int) bool {
		return q >= 0 && q < len(s.words) && slices.ContainsFunc(all, func(o *candidate) bool {
			return slices.Contains(o.claimed, q) || u.ruleWord(o.rule, s.words[q])
		})
	}
	var out []int
	for _, p := range ps {
		// after it: its noun phrase's first word, or the one after a verb
		// in -ing ("without feeling dizzy", "without it making the pain
		// worse")
		q := p + 1
		for q < len(s.words) && (u.fillers[s.words[q]] || u.pronouns[s.words[q]] || u.adverbs[s.words[q]] || slices.Contains(ps, q) || s.words[q] == "from") {
			q++
		}
		after := claimed(q) || q < len(s.words) && strings.HasSuffix(s.words[q], "ing") && (claimed(q+1) || q+1 < len(s.words) && u.fillers[s.words[q+1]] && claimed(q+2))
		// before it: the word it ends ("pain-free")
		b := p - 1
		for b >= 0 && (u.fillers[s.words[b]] || slices.Contains(ps, b)) {
			b--
		}
		if after || claimed(b) && (q >= len(s.words) || !u.fillers[s.words[p]] && s.words[p] != "without") {
			out = append(out, p)
		}
	}
	return out
}

// distributes reports whether a negator or absence word that belongs to o
// governs c too: c reads the same concept in a later alternative of the
// same list, with no verb of its own ("No new weakness, numbness or
// trouble with speech?": the "no" is the speech's too). An alternative
// with its own verb is a clause of its own ("You can't open your mouth, or
// one side of your throat is swollen": the "can't" is not the swelling's).
func (u *Understanding) distributes(s *sentence, o, c *candidate, p int) bool {
	if o.rule.concept != c.rule.concept || o.first >= c.first || s.alt[o.first] > s.alt[c.first] || s.clause[o.first] != s.clause[c.first] {
		return false
	}
	// A negator next to "being" or "having" negates that gerund's phrase,
	// an item of the list, not the list ("being unable to swallow your
	// saliva, or drooling"; "not being able to walk, or …").
	for _, q := range []int{p - 1, p + 1} {
		if q >= 0 && q < len(s.words) && u.gerunds[s.words[q]] {
			return false
		}
	}
	// Nor does one reach an alternative opened by a preposition, a
	// complement of something before the list, not an item the negator
	// governs ("thoughts that life is not worth living, or of ending your
	// life": the "not" is the first thought's).
	start := c.first
	for start > 0 && s.alt[start-1] == s.alt[c.first] && s.clause[start-1] == s.clause[c.first] {
		start--
	}
	for q := start; q < c.first; q++ {
		if w := s.words[q]; u.prepositions[w] {
			return false
		} else if w != "or" && !u.fillers[w] {
			break
		}
	}
	for i, w := range s.words {
		if s.clause[i] == s.clause[c.first] && s.alt[i] == s.alt[c.first] && u.auxiliaries[w] {
			return false
		}
	}
	return true
}

// rulePhraseAt reports whether the word at p stands in one of r's own
// phrases (an alternative of one of its groups, of two words or more):
// the "no" of "with no let-up" is the phrase's meaning, constant pain,
// even where the match claimed another alternative ("constant").
func (u *Understanding) rulePhraseAt(r *rule, ws []string, p int) bool {
	for _, g := range slices.Concat(r.required, r.optional) {
		for _, t := range u.groups[g] {
			pt := u.terms[t]
			if len(pt) < 2 {
				continue
			}
			for j := max(0, p-len(pt)+1); j <= p && j+len(pt) <= len(ws); j++ {
				if slices.EqualFunc(ws[j:j+len(pt)], pt, func(w string, x int32) bool { return wordMatches(w, u.pats[x]) }) {
					return true
				}
			}
		}
	}
	return false
}

// ruleWord reports whether w is one of r's own words (a one-word
// alternative of one of its groups): such a word is the rule's meaning,
// not a polarity word, even where the match claimed another alternative
// ("heart attack, angina or heart failure": "failure" is no negator).
func (u *Understanding) ruleWord(r *rule, w string) bool {
	for _, g := range slices.Concat(r.required, r.optional) {
		for _, t := range u.groups[g] {
			if pt := u.terms[t]; len(pt) == 1 && wordMatches(w, u.pats[pt[0]]) {
				return true
			}
		}
	}
	return false
}

// subordinate reports whether the word at p lies in a subordinate clause
// ("when you're not doing anything") after every word of c: a polarity
// word there says something of that clause, not of c.
func (u *Understanding) subordinate(s *sentence, c *candidate, p int) bool {
	last := c.claimed[len(c.claimed)-1]
	if p < last {
		return false
	}
	for i := last + 1; i < p; i++ {
		if u.subordinators[s.words[i]] {
			return true
		}
	}
	return false
}
