package concepts

import (
	"slices"
	"strings"
)

// Understand returns the concepts a message asks about, in the order asked,
// at most one Match per concept; empty when none.
func (u *Understanding) Understand(message string) []Match {
	texts := splitSentences(message)
	sents := make([]sentence, len(texts))
	asks := make([]bool, len(texts))
	for i, t := range texts {
		s := &sents[i]
		s.text = t
		var punct []bool
		s.words, punct = words(t, u.spell)
		s.words, punct, s.leadIn = u.dropLeadIn(s.words, punct)
		s.clause = u.clauses(s.words, punct)
		s.question = strings.HasSuffix(strings.TrimRight(t, "\"'”’) "), "?")
		asks[i] = u.asks(s)
		if asks[i] && i > 0 && u.isTag(s.words) {
			asks[i-1] = true
		}
	}
	var out []Match
	for i := range sents {
		if !asks[i] {
			continue
		}
		cs, text := u.match(&sents[i]), sents[i].text
		// A question that points back ("Is either of those sore?") is read
		// with the sentence before it when it finds nothing alone, or when
		// the two together say more than it does: "Press the bone on the
		// outer edge of your foot. Is either tender?" asks about the
		// foot's bones, not tenderness in general.
		if i > 0 && u.refersBack(&sents[i]) && !sents[i-1].leadIn && !u.startsWith(sents[i-1].words, u.leadIns) {
			joined := joinSentences(&sents[i-1], &sents[i], asks[i-1])
			if jc := u.match(&joined); len(cs) == 0 || len(jc) > 0 && mostSpecific(jc).more(mostSpecific(cs)) {
				cs, text = jc, joined.text
			}
		}
		for _, c := range cs {
			id := u.concepts[c.rule.concept].ID
			if slices.ContainsFunc(out, func(m Match) bool { return m.Concept == id }) {
				continue
			}
			out = append(out, Match{Concept: id, Inverse: c.inverse, Cue: c.rule.cue, Text: text})
		}
	}
	return out
}

// dropLeadIn drops a lead-in that is a clause of its own at the start of a
// sentence ("OK, and have you noticed …", "Thanks, next: …"): its words
// ("ok", "thanks") acknowledge and ask about nothing, so no cue may use them.
// A sentence that is only a lead-in is kept whole.
func (u *Understanding) dropLeadIn(ws []string, punct []bool) ([]string, []bool, bool) {
	for _, p := range u.leadIns {
		if n := len(p); n < len(ws) && punct[n] && phraseAt(ws, 0, p) {
			rest := slices.Clone(punct[n:])
			rest[0] = false
			return ws[n:], rest, true
		}
	}
	return ws, punct, false
}

// refersBack reports whether a sentence points back to the one before it
// ("Does that hurt?", "Is there a harsh sound?").
func (u *Understanding) refersBack(s *sentence) bool {
	return slices.ContainsFunc(s.words, func(w string) bool { return u.anaphors[w] })
}

// joinSentences reads two sentences as one, the second a new clause: a
// question split over two sentences ("Press on the bones of your ankle.
// Does that hurt?").
func joinSentences(a, b *sentence, aRead bool) sentence {
	j := sentence{text: a.text + " " + b.text, question: b.question, prevRead: aRead}
	j.words = append(slices.Clone(a.words), b.words...)
	j.clause = slices.Clone(a.clause)
	next := 0
	if n := len(a.clause); n > 0 {
		next = a.clause[n-1] + 1
	}
	for _, c := range b.clause {
		j.clause = append(j.clause, c+next)
	}
	j.tail = next
	return j
}

// clauses numbers the clauses of a sentence's words: a new clause starts at
// a clause word after "and", "or", "but" or a clause mark.
func (u *Understanding) clauses(ws []string, punct []bool) []int {
	c := make([]int, len(ws))
	n := 0
	for i, w := range ws {
		if i > 0 && u.clauseWords[w] {
			switch {
			case punct[i], ws[i-1] == "and", ws[i-1] == "or", ws[i-1] == "but":
				n++
			}
		}
		c[i] = n
	}
	return c
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
	context bool         // its required words all lie in a context clause
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
// when it lies wholly in a context clause, or when another concept's most
// specific candidate claims some of its words and is more specific; of each
// concept's remaining candidates the most specific (the first of equals)
// counts, its polarity decided last.
func (u *Understanding) match(s *sentence) []candidate {
	st := &sentenceState{u: u, s: s, pats: map[int32][]int{}, terms: map[int32][]span{}, groups: map[int32][]span{}}
	st.context = len(s.clause) > 0 && s.clause[len(s.clause)-1] > 0 && u.startsWith(s.words, u.contextOpeners)
	for i, w := range s.words {
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
	var all []*candidate
	for ri := range u.rules {
		if c, ok := st.try(&u.rules[ri]); ok && !c.context {
			all = append(all, c)
		}
	}
	top := map[int]*candidate{} // each concept's most specific candidate
	for _, c := range all {
		if t, ok := top[c.rule.concept]; !ok || c.more(t) {
			top[c.rule.concept] = c
		}
	}
	best := map[int]*candidate{}
	var order []int
	for _, c := range all {
		dominated := false
		for _, o := range top {
			if o.rule.concept != c.rule.concept && o.more(c) && o.overlaps(c) {
				dominated = true
				break
			}
		}
		if dominated {
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
	pol := u.polarityWords(s)
	for i := range out {
		out[i].inverse = u.inverse(s, &out[i], out, pol)
	}
	slices.SortStableFunc(out, func(a, b candidate) int {
		if a.clause != b.clause {
			return a.clause - b.clause
		}
		return a.first - b.first
	})
	return out
}

// polarity holds the positions of a sentence's polarity words, those inside
// a not_polarity phrase ("or not", "than normal") left out.
type polarity struct {
	negators, difficulty, absence, normal []int
}

func (u *Understanding) polarityWords(s *sentence) polarity {
	var skip []int
	for i := range s.words {
		for _, p := range u.notPolarity {
			if phraseAt(s.words, i, p) {
				for j := range p {
					skip = append(skip, i+j)
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
	return polarity{
		negators:   find(u.negators),
		difficulty: find(u.difficulty),
		absence:    find(u.absence),
		normal:     find(u.normalWords),
	}
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
	// A match wholly in a context clause, or wholly in the first sentence of
	// a joined pair (already read on its own), asks nothing here.
	c.context = true
	for cl := range c.clauses {
		c.clause = max(c.clause, cl)
		if (cl != 0 || !st.context) && (cl >= st.s.tail || !st.s.prevRead) {
			c.context = false
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
	slices.Sort(bestPos)
	c.claimed = bestPos
	return c, true
}

// scope reports whether word i lies in the clauses of a match: its own, or
// those of the asking sentence of a joined pair.
func (s *sentence) scope(clauses map[int]bool, i int) bool {
	return clauses[s.clause[i]] || s.tail > 0 && s.clause[i] >= s.tail
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
// (its clauses, and the asking sentence of a joined pair) that no match
// claimed and that are not nearer to another match of the sentence ("a
// stiff neck, or a rash that doesn't fade": the "doesn't" is the rash's):
//   - a normal word ("Is your urine clear?", "Are you peeing OK?") asks
//     about the normal state: inverse unless the concept's yes is the
//     normal state (normal_yes);
//   - else a negator ("not", "never", "can't", "no") flips the rule;
//   - else an absence word ("without", "free of") flips a rule that is not
//     inverse ("Can you stand without feeling dizzy?"), and a difficulty
//     word ("hard", "trouble", "too") flips an inverse rule, one worded as
//     an ability ("Do you have trouble opening your mouth?");
//   - else the rule's own polarity.
//
// Rules marked fixed keep their own; only yes_no concepts are ever inverse.
func (u *Understanding) inverse(s *sentence, c *candidate, all []candidate, pol polarity) bool {
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
	free := func(ps []int) bool {
		for _, p := range ps {
			if !s.scope(c.clauses, p) {
				continue
			}
			mine := true
			for i := range all {
				o := &all[i]
				if slices.Contains(o.claimed, p) || o.rule != r && dist(o, p) < dist(c, p) {
					mine = false
					break
				}
			}
			if mine {
				return true
			}
		}
		return false
	}
	switch {
	case free(pol.normal):
		return !u.normalYes[r.concept]
	case free(pol.negators):
		return !r.inverse
	case !r.inverse && free(pol.absence):
		return true
	case r.inverse && free(pol.difficulty):
		return false
	}
	return r.inverse
}
