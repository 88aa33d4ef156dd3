package rules

import (
	"slices"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// phase is what the engine asked last.
type phase int

const (
	phaseComplaint   phase = iota // nothing asked yet: the first message names the problem
	phaseMainProblem              // nothing matched: "what is the main problem?"
	phaseWhich                    // several matched: "which one is bothering you most?"
	phaseQuestion                 // a protocol is committed and pending is asked
	phaseDone
)

// session is the state of one intake, re-derived from the whole message
// list on every Evaluate: nothing survives between calls.
type session struct {
	e      *Engine
	demo   engine.Demographics
	msgs   []message
	phase  phase
	active *Protocol
	// candidates are the protocols considered, in the order first matched.
	candidates []*Protocol
	facts      map[string]answer
	asked      map[string]int // times each fact's question was asked
	misses     map[string]int // unclear or (red flag) unsure replies to it
	pending    *Question
	// hedged holds a hedged first reply ("maybe a little") to a question
	// asked again, so a soft second reply ("not really") is not taken as a
	// clean no.
	hedged map[string]string

	// Set by the turn being processed.
	prefix    string // "Sorry, I did not catch that." and the like
	committed bool   // the active protocol was committed on this turn

	// complaintAsks counts the complaint-stage questions asked, by phase
	// (phaseMainProblem, phaseWhich): each is asked at most twice.
	complaintAsks map[phase]int

	// Outcome, once terminal.
	disposition string
	reason      string
	emergency   *emergencyHit
	redFlag     *RedFlag
	// sameDay is where an urgent_escalation that is not an emergency sends
	// the patient (sameDayGP, sameDayED); "" for an emergency.
	sameDay string
	// unidentified: closed for clinician review because the main problem
	// was not identified after asking twice.
	unidentified bool
	// outside: the complaint is outside every protocol, and active is the
	// generic screen (outside.go); nil otherwise.
	outside *outsideHit
}

// emergencyHit is the first message that named an emergency, with every
// category it named in order of precedence (the order of emergencies.json:
// the first one's instruction is said), and who the message spoke of for
// each.
type emergencyHit struct {
	turn       int
	words      string
	categories []*EmergencyCategory
	speakers   []speaker
	// rules are the notes of the findings rules that named a category
	// ("Suspected sepsis (NICE NG51): …").
	rules []string
}

// saidOf is ", said of another person" when the message that named the
// first category spoke of someone else (a relative or bystander typing),
// else "": the clinician knows the patient did not type it.
func (h *emergencyHit) saidOf() string {
	if h.speakers[0] == speakerSomeoneElse {
		return ", said of another person"
	}
	return ""
}

// reply is the patient-facing reply and advice of the first category, for
// whoever the message spoke of.
func (h *emergencyHit) reply() (reply, advice string) {
	c := h.categories[0]
	if h.speakers[0] == speakerSomeoneElse {
		return c.ReplySomeoneElse, c.AdviceSomeoneElse
	}
	return c.Reply, c.Advice
}

func (h *emergencyHit) note() string {
	var notes []string
	for _, c := range h.categories {
		notes = append(notes, c.Note)
	}
	return strings.Join(append(notes, h.rules...), " ")
}

// emergencyLabel begins every category's note.
const emergencyLabel = "Emergency phrase: "

// findings are the categories' notes without their common label, for a line
// that already says "Emergency phrase".
func (h *emergencyHit) findings() string {
	var notes []string
	for _, c := range h.categories {
		notes = append(notes, strings.TrimPrefix(c.Note, emergencyLabel))
	}
	return strings.Join(append(notes, h.rules...), " ")
}

func newSession(e *Engine, in engine.Input) *session {
	s := &session{
		e:      e,
		demo:   in.Demographics,
		facts:  map[string]answer{},
		asked:  map[string]int{},
		misses: map[string]int{},
		hedged: map[string]string{},

		complaintAsks: map[phase]int{},
	}
	for i, raw := range in.Patient {
		m := e.lx.parse(raw)
		m.turn = i + 1
		m.findings = e.lib.vocab.read(m)
		s.msgs = append(s.msgs, m)
	}
	if a := in.Demographics.AgeYears; a != nil {
		ans := numberAnswer(float64(*a))
		ans.source = sourceDemographics
		s.facts[factAge] = ans
	}
	switch in.Demographics.Sex {
	case "female", "male", "intersex":
		s.facts[factSex] = answer{value: in.Demographics.Sex, source: sourceDemographics}
	}
	return s
}

// run replays every message in order and stops at a terminal state.
func (s *session) run() {
	for i := range s.msgs {
		s.prefix, s.committed = "", false
		s.turn(i)
		if s.phase == phaseDone {
			return
		}
	}
}

func (s *session) turn(i int) {
	m := s.msgs[i]
	var asked map[string]bool
	if s.active != nil {
		asked = s.active.asksFindings
	}
	if hit := s.e.lib.emergencyIn(s.msgs[:i+1], asked); hit != nil {
		if s.active == nil {
			if matches := s.match(m, s.e.lib.protocols); len(matches) == 1 {
				s.commit(matches[0])
			}
		}
		if s.active != nil && i > 0 {
			// An emergency said in answer to a question still answers it
			// (and may answer others): recorded, so the handoff shows the
			// red flag found as well as the emergency.
			s.answerPending(m)
			s.volunteer(m)
			s.redFlag = s.positiveRedFlag() // the emergency still decides
		}
		s.emergency = hit
		s.finish(engine.DispositionEscalate, hit.note())
		return
	}
	if s.active == nil {
		s.choose(m)
		if s.active == nil {
			// The main problem, or which of several, is asked at most
			// twice; a third reply that does not name it closes the intake.
			if s.complaintAsks[s.phase] == maxAsks {
				s.prefix = ""
				s.unidentified = true
				s.finish(engine.DispositionReview, s.unidentifiedReason())
				return
			}
			s.complaintAsks[s.phase]++
			return
		}
		// Everything said so far may already answer the committed
		// protocol's questions.
		for _, earlier := range s.msgs[:i+1] {
			s.volunteer(earlier)
		}
	} else {
		// A complaint named later, in any answer, is kept for the
		// clinician ("Also named"): read from its findings, so an answer
		// that names none costs nothing.
		if len(m.findings) > 0 {
			s.consider(s.matchFindings(m))
		}
		unclear := s.answerPending(m)
		if s.volunteer(m) > 0 && unclear {
			// The reply told us something else: say so rather than
			// "Sorry", and do not count it as a miss.
			s.prefix = s.e.replies.NotedOther
			s.misses[s.pending.Fact]--
		}
	}
	if rf := s.positiveRedFlag(); rf != nil {
		s.redFlag = rf
		s.sameDay = s.active.sameDayFlags[rf.Fact]
		s.finish(engine.DispositionEscalate, rf.SafetyNote)
		return
	}
	if next := s.next(); next != nil {
		s.pending = next
		s.asked[next.Fact]++
		return
	}
	if s.isOutside() {
		// Severe, sudden or getting worse quickly: the same day, not routine.
		if note, ok := s.outsideSevere(); ok {
			s.sameDay = sameDayGP
			s.finish(engine.DispositionEscalate, "Severe, sudden or worsening complaint outside every protocol: "+note)
			return
		}
	}
	rule := s.decide()
	s.sameDay = s.active.sameDayRule(rule)
	s.finish(rule.Disposition, rule.Reason)
}

// maxAsks is how many times a question is asked before its reply is taken
// as it is: a question recorded unclear, a red flag not excluded, or the
// main problem not identified.
const maxAsks = 2

// unidentifiedReason is the clinician-facing reason an intake closed without
// a main problem.
func (s *session) unidentifiedReason() string {
	if s.phase == phaseWhich {
		var titles []string
		for _, p := range s.candidates {
			titles = append(titles, strings.ToLower(p.Title))
		}
		return "Main problem not identified: asked twice which of the problems named matters most (" +
			strings.Join(titles, ", ") + ") without a clear answer. No protocol applied; red flags not screened."
	}
	return "Main problem not identified: asked twice, with the complaint titles offered, without a recognised answer. " +
		"No protocol applied; red flags not screened."
}

func (s *session) finish(disposition, reason string) {
	s.phase = phaseDone
	s.pending = nil
	s.disposition, s.reason = disposition, reason
}

// choose handles the complaint phase: commit when exactly one protocol fits.
func (s *session) choose(m message) {
	pool := s.e.lib.protocols
	if s.phase == phaseWhich {
		// Prefer the offered candidates; fall back to the whole library
		// when the patient names something else.
		if matches := s.match(m, s.candidates); len(matches) == 1 {
			s.commit(matches[0])
			return
		}
	}
	matches := s.match(m, pool)
	s.consider(matches)
	switch {
	case len(matches) == 1:
		s.commit(matches[0])
	case len(matches) == 0 && s.chooseOutside(m):
		// Said plainly, then screened (outside.go).
	case len(matches) > 1:
		// Every sentence counts: when the message already says a red flag
		// of one of them ("not feeling myself … my stools are black"),
		// that one is committed, and its red flag ends the intake.
		if p := s.redFlagged(m, matches); p != nil {
			s.commit(p)
			return
		}
		if s.phase == phaseWhich {
			s.prefix = s.e.replies.NotUnderstood
		}
		s.phase = phaseWhich
		s.candidates = matches
	case s.phase == phaseComplaint:
		s.phase = phaseMainProblem
	default:
		s.prefix = s.e.replies.NotUnderstood
	}
}

// redFlagged is the first of ps one of whose red flags m volunteers yes
// (an emergency one before a same-day one), or nil.
func (s *session) redFlagged(m message, ps []*Protocol) *Protocol {
	var sameDay *Protocol
	for _, p := range ps {
		for i := range p.redFlags {
			if a, ok := p.redFlags[i].volunteer(m); ok && a.value == valYes {
				if p.sameDayFlags[p.redFlags[i].Fact] == "" {
					return p
				}
				if sameDay == nil {
					sameDay = p
				}
			}
		}
	}
	return sameDay
}

// match lists the protocols whose title or a trigger the message affirms,
// or one of whose recognise rules its findings meet; a rule marked alone
// counts only when no other complaint is named: no other protocol is
// recognised and m names no complaint at a site outside every protocol
// ("toothache that wakes me at night, and I've been vomiting" is the
// toothache, with vomiting beside it, as "a headache and I've been
// vomiting" is the headache). A kind no protocol names (a pounding heart
// beside anxiety) is not a complaint of its own here.
//
// A rule that yields to other protocols (YieldsTo) counts unless one of
// them is recognised.
func (s *session) match(m message, pool []*Protocol) []*Protocol {
	var out, alone, yielding []*Protocol
	for _, p := range pool {
		switch recognition(m, p) {
		case recognisedAlone:
			alone = append(alone, p)
		case recognisedYielding:
			yielding = append(yielding, p)
		case recognised:
			out = append(out, p)
		}
	}
	for _, p := range yielding {
		if !slices.ContainsFunc(out, func(o *Protocol) bool { return p.yieldsTo(m, o) }) {
			out = append(out, p)
		}
	}
	if len(out) == 0 && len(alone) > 0 {
		if o := s.e.lib.outside; o != nil {
			if f, ok := o.outsideFinding(m); ok && o.claimedIDs[f.id] {
				return nil
			}
		}
		return alone
	}
	return out
}

// matchFindings lists the protocols one of whose recognise rules (not
// marked alone) m's findings meet.
func (s *session) matchFindings(m message) []*Protocol {
	var out []*Protocol
	for _, p := range s.e.lib.protocols {
		if slices.ContainsFunc(p.Recognise, func(r findingRule) bool {
			_, ok := r.holds(m.findings)
			return ok && !r.Alone
		}) {
			out = append(out, p)
		}
	}
	return out
}

// yieldsTo is true when every recognise rule of p that holds over m's
// findings yields to o.
func (p *Protocol) yieldsTo(m message, o *Protocol) bool {
	for i := range p.Recognise {
		r := &p.Recognise[i]
		if _, ok := r.holds(m.findings); ok && !r.Alone && !slices.Contains(r.YieldsTo, strings.Split(o.ID, ".v")[0]) {
			return false
		}
	}
	return true
}

const (
	notRecognised = iota
	recognisedAlone
	recognisedYielding
	recognised
)

// recognition is whether m names p: by its title or a trigger, or by a
// recognise rule over m's findings (recognisedAlone when only a rule
// marked alone holds).
func recognition(m message, p *Protocol) int {
	for _, sp := range p.sparedBy {
		if slices.ContainsFunc(m.findings, sp.meets) {
			return notRecognised // its words name something else
		}
	}
	if recognises(m, p) {
		return recognised
	}
	result := notRecognised
	for i := range p.Recognise {
		r := &p.Recognise[i]
		if _, ok := r.holds(m.findings); ok {
			switch {
			case r.Alone:
				result = max(result, recognisedAlone)
			case len(r.YieldsTo) > 0:
				result = max(result, recognisedYielding)
			default:
				return recognised
			}
		}
	}
	return result
}

// said is true for an affirmed or hedged mention: "I think I might be
// depressed" names the complaint as much as "I am depressed".
func said(p polarity) bool {
	return p == affirmed || p == uncertain
}

// recognises is true when m names p by its title or one of its triggers,
// leaving out the clauses p's exceptions hold ("feeling low in my belly" is
// not low mood).
func recognises(m message, p *Protocol) bool {
	if !m.mayHaveFirst(p.anyFirst) {
		return false // no word the title or a trigger starts with
	}
	m = m.without(p.triggerExcept)
	if said(m.complaintMention(p.title)) {
		return true
	}
	return slices.ContainsFunc(p.triggers, m.saysTrigger)
}

// saysTrigger is true when m says every part of a trigger ("a+b": each
// anywhere; "a~b": together in one clause).
func (m message) saysTrigger(parts [][][]string) bool {
	for _, pieces := range parts {
		if !m.saysTogether(pieces) {
			return false
		}
	}
	return true
}

// complaintWords marks, in each clause of m, the tokens that name p's
// complaint: the words of p's title, and of each trigger m says, in the
// clauses that say them (for "a~b", the clauses that say both), unless
// negated. Volunteered facts are not read from these words alone (session
// volunteer): "a pressure in my chest" names chest pain, and must not also
// answer "does pressing on it make it worse?".
func (p *Protocol) complaintWords(m message) [][]bool {
	mask := make([][]bool, len(m.clauses))
	for c, cl := range m.clauses {
		mask[c] = make([]bool, len(cl))
	}
	read := m.without(p.triggerExcept)
	mark := func(c int, phrase []string) {
		cl := read.clauses[c]
		for i := range cl {
			if at := read.lx.matchedAt(cl, i, phrase); at != nil && read.lx.prefixPolarity(cl[:i]) != negated {
				for _, k := range at {
					mask[c][k] = true
				}
			}
		}
	}
	if said(read.complaintMention(p.title)) {
		for c := range read.clauses {
			mark(c, p.title)
		}
	}
	for i := range p.Recognise {
		used, ok := p.Recognise[i].holds(m.findings)
		if !ok {
			continue
		}
		for _, f := range used {
			if f.turn != m.turn {
				continue
			}
			for _, k := range slices.Concat(f.at, f.siteAt) {
				mask[f.clause][k] = true
			}
		}
	}
	for _, parts := range p.triggers {
		if !read.saysTrigger(parts) {
			continue
		}
		for _, pieces := range parts {
			for c := range read.clauses {
				if len(pieces) > 1 && !read.clauseSaysAll(c, pieces) {
					continue
				}
				for _, piece := range pieces {
					mark(c, piece)
				}
			}
		}
	}
	return mask
}

func (s *session) consider(ps []*Protocol) {
	for _, p := range ps {
		known := false
		for _, c := range s.candidates {
			known = known || c == p
		}
		if !known {
			s.candidates = append(s.candidates, p)
		}
	}
}

func (s *session) commit(p *Protocol) {
	s.active = p
	s.consider([]*Protocol{p})
	s.phase = phaseQuestion
	s.committed = true
}

// answerPending records the reply to the question just asked, or sets a
// prefix so the question is asked again, in other words (AskAgain). A
// question gets one miss (a reply that answers other questions instead is
// not a miss):
//   - a reply not understood twice is recorded as unsure, and the patient
//     is told so (for a red flag: not excluded, and the urgent reply says why);
//   - a red flag answered unsure is asked again; if the second reply is only
//     a soft no ("not really") after a hedge ("maybe a little"), the red flag
//     stays unsure instead of silently becoming "no".
//
// It reports whether the reply was not understood and will be asked again.
func (s *session) answerPending(m message) (unclear bool) {
	q := s.pending
	if q == nil {
		return false
	}
	r := s.e.replies
	a, ok := q.interpret(m)
	retry := s.misses[q.Fact] < maxAsks-1 // a reply not understood: ask once more
	switch {
	case !ok && retry:
		s.prefix = r.NotUnderstood
		s.misses[q.Fact]++
		return true
	case !ok:
		a = answer{value: valUnsure, unsureTwice: true}
		if !s.isRedFlag(q.Fact) {
			s.prefix = r.NotedUnclear
		}
	case a.value == valUnsure && s.isRedFlag(q.Fact) && retry:
		s.prefix = r.NeedClearAnswer
		s.hedged[q.Fact] = m.raw
		s.misses[q.Fact]++
		return false
	case a.value == valNo && !retry && s.hedged[q.Fact] != "" && m.softNo():
		a = answer{value: valUnsure, unsureTwice: true}
	}
	a.words, a.earlier, a.source = m.raw, s.hedged[q.Fact], sourceAsked
	s.facts[q.Fact] = a
	return false
}

// volunteer records every still-open question that m already answers, and
// reports how many. Hedged red flags are not taken: they are asked outright
// instead.
//
// A fact is not read from words that only name the complaint
// (Protocol.complaintWords): in "a pressure in my chest", "pressure" is the
// chest pain, not an answer to "does pressing on it hurt?", so that question
// is asked. Two exceptions: a question the protocol marks
// answered_by_complaint ("it burns when I pee" is dysuria), and a red flag's
// yes: "my skin is peeling" names a rash and its cannot-miss sign at once,
// and a red flag only ever makes the outcome more urgent.
func (s *session) volunteer(m message) int {
	masked := m
	if s.active != nil {
		masked.complaint = s.active.complaintWords(m)
	}
	n := 0
	for _, q := range s.questions() {
		if _, done := s.facts[q.Fact]; done {
			continue
		}
		if s.isOutside() && m.turn <= s.outside.turn && s.isRedFlag(q.Fact) {
			// The words that took the intake outside every protocol
			// answer none of the screen's questions: an emergency said
			// there was heard by its category, and what is left is
			// history or a look-alike ("seizure free for years"). Asked.
			continue
		}
		read := masked
		if q.AnsweredByComplaint {
			read = m
		}
		a, ok := q.volunteer(read)
		if s.isRedFlag(q.Fact) {
			if named, yes := q.volunteer(m); yes && named.value == valYes {
				a, ok, read = named, true, m
			}
		}
		if !ok || (a.value == valUnsure && s.isRedFlag(q.Fact)) {
			continue
		}
		a.words, a.turn, a.source = m.raw, m.turn, sourceVolunteered
		a.from = m.typedClauses(q.evidence(read))
		s.facts[q.Fact] = a
		n++
	}
	return n
}

// questions lists everything the committed protocol may ask, in order:
// demographics, red flags, then the protocol's own questions.
func (s *session) questions() []*Question {
	r := s.e.replies
	qs := []*Question{&r.Age, &r.Sex}
	if s.pregnancyRelevant() {
		qs = append(qs, &r.Pregnancy)
	}
	if s.active != nil {
		for i := range s.active.redFlags {
			qs = append(qs, &s.active.redFlags[i])
		}
		for i := range s.active.Questions {
			qs = append(qs, &s.active.Questions[i])
		}
	}
	return qs
}

func (s *session) pregnancyRelevant() bool {
	if s.active == nil || !s.active.PregnancyRelevant {
		return false
	}
	if sex, ok := s.facts[factSex]; ok && sex.value == "male" {
		return false
	}
	if age, ok := s.facts[factAge]; ok && age.hasNum {
		r := s.e.replies
		return age.num >= float64(r.PregnancyAgeFrom) && age.num <= float64(r.PregnancyAgeTo)
	}
	return true
}

func (s *session) next() *Question {
	for _, q := range s.questions() {
		if _, done := s.facts[q.Fact]; !done {
			return q
		}
	}
	return nil
}

func (s *session) isRedFlag(fact string) bool {
	return s.redFlagFor(fact) != nil
}

func (s *session) redFlagFor(fact string) *RedFlag {
	if s.active == nil {
		return nil
	}
	for i := range s.active.RedFlags {
		if s.active.RedFlags[i].Fact == fact {
			return &s.active.RedFlags[i]
		}
	}
	return nil
}

// positiveRedFlag returns the first red flag answered yes, or unsure after
// being asked twice (it cannot be excluded); an emergency one before a
// same-day one when a message gave several at once.
func (s *session) positiveRedFlag() *RedFlag {
	if s.active == nil {
		return nil
	}
	var first *RedFlag
	for i := range s.active.RedFlags {
		rf := &s.active.RedFlags[i]
		if a, ok := s.facts[rf.Fact]; ok && (a.value == valYes || a.value == valUnsure) {
			if s.active.sameDayFlags[rf.Fact] == "" {
				return rf
			}
			if first == nil {
				first = rf
			}
		}
	}
	return first
}

// redFlagsNegative is true once every red flag was answered no.
func (s *session) redFlagsNegative() bool {
	if s.active == nil {
		return false
	}
	for _, rf := range s.active.RedFlags {
		if a, ok := s.facts[rf.Fact]; !ok || a.value != valNo {
			return false
		}
	}
	return true
}

// emergencyIn lists the emergency categories m (the message of turn, from
// 0) names, in order of precedence, with who m speaks of for each
// (speaker.go). An affirmation or a hedge ("I think he might be having a
// stroke") counts; only a negation ("no trouble breathing") or an excepted
// clause ("food poisoning", "years ago") spares a pattern. A category is
// also named by the combination of categories its when_all lists
// ("collapsed" and "not breathing properly"), and a someone_else_only
// category only when m speaks of another person. It is nil when m names
// none.
//
// A category's findings rules are read over the findings of every message
// so far (msgs, the last being m), and hold at m when at least one finding
// they use is m's: "I have a kidney infection" then "now she's confused"
// is suspected sepsis at the second message.
//
// Findings the committed protocol asks about (asked) are left to it.
func (lib *library) emergencyIn(msgs []message, asked map[string]bool) *emergencyHit {
	m := msgs[len(msgs)-1]
	turn := len(msgs) - 1
	heard := map[*EmergencyCategory][]int{} // category → clauses it was heard in
	var ruleNotes []string
	for _, c := range lib.emergencies {
		if clauses, ok := c.heardIn(m); ok {
			heard[c] = clauses
		}
		// The rules too, so the note names the rule and its source even
		// when a phrase heard the category.
		for i := range c.Findings {
			used, ok := c.Findings[i].holdsAt(msgs, c.ownExcept, lib.history, asked)
			if !ok {
				continue
			}
			if heard[c] == nil {
				for _, f := range used {
					heard[c] = append(heard[c], f.clause)
				}
			}
			if n := c.Findings[i].Note; n != "" {
				ruleNotes = append(ruleNotes, n)
			}
			break
		}
	}
	for _, c := range lib.emergencies {
		for _, all := range c.whenAll {
			var clauses []int
			for _, other := range all {
				cl, ok := heard[other]
				if !ok {
					clauses = nil
					break
				}
				clauses = append(clauses, cl...)
			}
			if clauses != nil && heard[c] == nil {
				heard[c] = clauses
			}
		}
	}
	var hit *emergencyHit
	for _, c := range lib.emergencies {
		clauses, ok := heard[c]
		if !ok {
			continue
		}
		sp := lib.speaker.of(m, clauses)
		if sp == speakerNone && (c.Unnamed == unnamedSomeoneElse || c.SomeoneElseOnly) {
			sp = speakerSomeoneElse
		}
		if c.SomeoneElseOnly && sp != speakerSomeoneElse {
			continue
		}
		if sp == speakerNone {
			sp = speakerSelf
		}
		if hit == nil {
			hit = &emergencyHit{turn: turn + 1, words: m.raw, rules: ruleNotes}
		}
		hit.categories = append(hit.categories, c)
		hit.speakers = append(hit.speakers, sp)
	}
	return hit
}

// heardIn reports whether every part of one of c's patterns is said in m,
// and the clauses the first such pattern's parts were said in.
func (c *EmergencyCategory) heardIn(m message) ([]int, bool) {
	for _, sp := range c.sparedBy {
		if slices.ContainsFunc(m.findings, sp.meets) {
			return nil, false // the words mean something else
		}
	}
	if c.namesOnly(m) {
		return nil, false // the name of a complaint, alone
	}
	for i, parts := range c.patterns {
		var clauses []int
		for j, part := range parts {
			if !m.mayHaveFirst(c.firsts[i][j]) {
				clauses = nil
				break
			}
			cl, ok := m.says(part, c.except)
			if !ok {
				clauses = nil
				break
			}
			clauses = append(clauses, cl)
		}
		if clauses != nil {
			return clauses, true
		}
	}
	return nil, false
}

// namesOnly is true when m is one of c's complaint names and nothing else,
// or several of them, a clause each ("Shortness of breath, trouble
// breathing", a complaint title that names its complaint twice): a
// quick-reply title, not a report. A clause that says more ("real trouble
// breathing") or another complaint ("chest pain, trouble breathing") is
// heard.
func (c *EmergencyCategory) namesOnly(m message) bool {
	if len(c.names) == 0 || len(m.tokens) == 0 {
		return false
	}
	if c.isName(m.lx, m.tokens) {
		return true
	}
	for _, cl := range m.clauses {
		if len(cl) > 0 && !c.isName(m.lx, cl) {
			return false
		}
	}
	return len(m.clauses) > 1
}

// isName is true when tokens are one of c's complaint names, whole.
func (c *EmergencyCategory) isName(lx *lexicon, tokens []string) bool {
	for _, ph := range c.names {
		if at := lx.matchedAt(tokens, 0, ph); at != nil && slices.Max(at) == len(tokens)-1 {
			return true
		}
	}
	return false
}

// says reports whether phrase occurs affirmed or hedged in a clause that
// holds none of the except phrases, and the first such clause (heardIn has
// looked for its first word: message.mayHaveFirst).
func (m message) says(phrase []string, except [][]string) (int, bool) {
	for c, cl := range m.clauses {
		for i := range cl {
			if _, ok := m.lx.matchLoose(cl, i, phrase); ok && m.lx.prefixPolarity(cl[:i]) != negated && !m.clauseHolds(c, except) {
				return c, true
			}
		}
	}
	return 0, false
}

// clauseHolds is holdsAny for clause c of m, not looking for a phrase
// whose first word m does not hold (message.mayHave).
func (m message) clauseHolds(c int, phrases [][]string) bool {
	for _, ph := range phrases {
		if !m.mayHave(ph[0]) {
			continue
		}
		for i := range m.clauses[c] {
			if _, ok := m.lx.matchLoose(m.clauses[c], i, ph); ok {
				return true
			}
		}
	}
	return false
}

// holdsAny is true when one of phrases occurs anywhere in the clause.
func (lx *lexicon) holdsAny(cl []string, phrases [][]string) bool {
	for _, ph := range phrases {
		for i := range cl {
			if _, ok := lx.matchLoose(cl, i, ph); ok {
				return true
			}
		}
	}
	return false
}
