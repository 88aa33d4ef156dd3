package rules

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Outside every protocol (docs/protocols.md, "Outside every protocol").
// When no loaded protocol recognises the opening, the engine either
// recognises the complaint as outside them all (it read a finding that no
// protocol's recognise rules claim: a site or a symptom none names) or
// cannot place it. The first is said plainly, screened for the emergency
// categories by language/outside.json's generic questions, and closed as
// clinician review (same day when severe, sudden or getting worse quickly;
// an emergency when the screen finds something). The second is asked for
// the main problem, offering the protocols closest to what was read and
// "Something else", which is the outside path again.

const outsideFile = "language/outside.json"

// outsideData is outside.json.
type outsideData struct {
	Comment     string            `json:"comment"`
	Title       string            `json:"title"`
	PatientTerm string            `json:"patient_term"`
	Screen      []screenItem      `json:"screen"`
	NotScreened map[string]string `json:"not_screened"`
	SameDay     []findingRule     `json:"same_day"`
	Advice      map[string]string `json:"advice"`
	SOAP        SOAPTemplates     `json:"soap"`
}

// screenItem is one question of the generic screen: a red flag, and the
// emergency categories it screens.
type screenItem struct {
	RedFlag
	Categories []string `json:"categories"`
}

// outsideScreen is outside.json, prepared: the screen as a protocol that is
// never in the library (no id the handoff reports, not a candidate), so
// that the session asks, reads and records its questions as a protocol's
// red flags.
type outsideScreen struct {
	p *Protocol
	// categories are the emergency categories each red flag screens, by
	// fact; notScreened says why a category is not asked.
	categories  map[string][]string
	notScreened map[string]string
	sameDay     []findingRule
	// claimedIDs and claimedSites are the finding ids and the sites the
	// loaded protocols' recognise rules name (their conditions that must be
	// met): a finding with neither is outside them all.
	claimedIDs   map[string]bool
	claimedSites map[string]bool
}

// outsideID is the screen's internal id; never reported as a protocol.
const outsideID = "outside.v1"

func loadOutside(data []byte, lx *lexicon, lib *library) (*outsideScreen, error) {
	var d outsideData
	if err := decodeStrict(data, &d); err != nil {
		return nil, fmt.Errorf("rules: %s: %w", outsideFile, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("rules: %s: "+format, append([]any{outsideFile}, args...)...))
	}
	if d.Title == "" || d.PatientTerm == "" {
		bad("title and patient_term are required")
	}
	o := &outsideScreen{categories: map[string][]string{}, notScreened: d.NotScreened,
		claimedIDs: map[string]bool{}, claimedSites: map[string]bool{}}
	p := &Protocol{
		ID: outsideID, Title: d.Title, PatientTerm: d.PatientTerm, Advice: d.Advice, SOAP: d.SOAP,
		Dispositions: []DispositionRule{{Disposition: engine.DispositionReview,
			Reason: "Outside every protocol of this intake; generic red-flag screen negative."}},
		sameDayFlags: map[string]string{}, asksFindings: map[string]bool{},
	}
	p.title = lx.normalisePhrase(p.Title)
	p.shownTitle, p.shownTerm = p.Title, p.PatientTerm
	p.anyFirst = lx.firstWordOf(p.title[0])
	if len(d.Screen) == 0 {
		bad("the screen has no questions")
	}
	known := map[string]bool{}
	for _, c := range lib.emergencies {
		known[c.ID] = true
	}
	facts := map[string]bool{}
	for _, it := range d.Screen {
		rf := it.RedFlag
		if facts[rf.Fact] {
			bad("fact %q is defined twice", rf.Fact)
		}
		facts[rf.Fact] = true
		if len(rf.Findings) > 0 {
			// A finding a question asks about is left to it by the
			// emergency rules (Question.Findings): the screen must never
			// silence them.
			bad("screen %q: findings are not allowed; the emergency categories read them", rf.Fact)
		}
		if len(it.Categories) == 0 {
			bad("screen %q names no emergency category", rf.Fact)
		}
		for _, c := range it.Categories {
			if !known[c] {
				bad("screen %q: unknown emergency category %q", rf.Fact, c)
			}
		}
		o.categories[rf.Fact] = it.Categories
		q, err := rf.prepare(lx)
		if err != nil {
			bad("%v", err)
		}
		p.RedFlags = append(p.RedFlags, rf)
		p.redFlags = append(p.redFlags, q)
	}
	for c := range d.NotScreened {
		if !known[c] {
			bad("not_screened: unknown emergency category %q", c)
		}
	}
	for i := range d.SameDay {
		r := &d.SameDay[i]
		if err := r.prepare(lx, lib.vocab); err != nil {
			bad("same_day rule %d: %v", i, err)
		}
		if r.Note == "" || r.Alone || len(r.YieldsTo) > 0 || r.Scope != "" || len(r.Except) > 0 {
			bad("same_day rule %d: needs a note, and takes only all, any, min and none", i)
		}
	}
	o.sameDay = d.SameDay
	for _, disp := range []string{engine.DispositionReview, engine.DispositionEscalate} {
		if d.Advice[disp] == "" || d.SOAP.Plan[disp] == "" {
			bad("advice and soap.plan need %s", disp)
		}
	}
	for name, text := range map[string]string{"subjective": d.SOAP.Subjective, "objective": d.SOAP.Objective, "assessment": d.SOAP.Assessment} {
		if text == "" {
			bad("soap.%s is empty", name)
		}
		checkPlaceholders(text, "soap."+name, bad)
	}
	for _, pr := range lib.protocols {
		for i := range pr.Recognise {
			r := &pr.Recognise[i]
			for _, c := range slices.Concat(r.all, r.anyOf) {
				if c.denied {
					continue
				}
				for _, id := range c.ids {
					o.claimedIDs[id] = true
				}
				for _, s := range c.sites {
					o.claimedSites[s] = true
				}
			}
		}
	}
	o.p = p
	return o, errors.Join(errs...)
}

// prepare checks a red flag and returns it as the yes/no question the
// session asks (Protocol.prepare's, for a protocol's red flags).
func (rf *RedFlag) prepare(lx *lexicon) (Question, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if rf.Label == "" || rf.Ask == "" || rf.SafetyNote == "" {
		bad("red flag %q needs label, ask and safety_note", rf.Fact)
	}
	if len(rf.Keywords) == 0 {
		bad("red flag %q has no keywords", rf.Fact)
	}
	rf.keywords = phrases(lx, rf.Keywords, bad)
	rf.noKeywords = phrases(lx, rf.NoKeywords, bad)
	if rf.AskAgain == "" || rf.AskAgain == rf.Ask {
		bad("red flag %q needs ask_again, the question in other words", rf.Fact)
	}
	return Question{
		Fact: rf.Fact, Label: rf.Label, Ask: rf.Ask, AskAgain: rf.AskAgain, Kind: kindYesNo,
		Keywords: rf.Keywords, NoKeywords: rf.NoKeywords, Findings: rf.Findings, Recent: rf.Recent, Choices: slices.Clone(redFlagYesNoChoices),
		keywords: rf.keywords, noKeywords: rf.noKeywords,
	}, errors.Join(errs...)
}

// outsideFinding is the first positive finding of m that no loaded
// protocol claims: its kind is named by no protocol's recognise rules, or
// it is at a site none names ("my tooth is killing me": pain at the tooth).
// A state (pregnant, on warfarin) is not a complaint by itself.
func (o *outsideScreen) outsideFinding(m message) (finding, bool) {
	for _, f := range m.findings {
		if !f.positive() || f.state {
			continue
		}
		if !o.claimedIDs[f.id] {
			return f, true
		}
		if len(f.sites) > 0 && !slices.ContainsFunc(f.sites, func(s string) bool { return o.claimedSites[s] }) {
			return f, true
		}
	}
	return finding{}, false
}

// maxClosest is how many protocols the main-problem question offers at most,
// beside "Something else".
const maxClosest = 5

// closest lists the protocols nearest to the findings of msgs, best first,
// at most maxClosest: a protocol whose recognise rules name a finding's
// site counts 2, one that names its kind 1, both 3. Among equals the
// nearer is the one whose first recognise rule (its main complaint) names
// it, then the one whose condition names fewer kinds ("a pain" is nearer
// to the headache's pain or pressure at the head than to the eye's pain,
// redness, itch, discharge … at the eye, and nearer to both than to the
// mood's second rule, pain in the mind), then library order. Empty when
// nothing was read.
func (lib *library) closest(msgs []message) []*Protocol {
	type near struct {
		p     *Protocol
		score int
		rule  int // the first recognise rule giving score
		kinds int // the fewest kinds of its conditions giving score
	}
	nearer := func(a, b near) int {
		if a.score != b.score {
			return b.score - a.score
		}
		if a.rule != b.rule {
			return a.rule - b.rule
		}
		return a.kinds - b.kinds
	}
	var ns []near
	for _, p := range lib.protocols {
		x := near{p: p}
		for _, m := range msgs {
			for _, f := range m.findings {
				if !f.positive() {
					continue
				}
				for i := range p.Recognise {
					r := &p.Recognise[i]
					for _, c := range slices.Concat(r.all, r.anyOf) {
						if c.denied {
							continue
						}
						n := 0
						if slices.Contains(c.ids, f.id) {
							n++
						}
						if slices.ContainsFunc(f.sites, func(s string) bool { return slices.Contains(c.sites, s) }) {
							n += 2
						}
						if y := (near{p, n, i, len(c.ids)}); n > 0 && (x.score == 0 || nearer(y, x) < 0) {
							x = y
						}
					}
				}
			}
		}
		if x.score > 0 {
			ns = append(ns, x)
		}
	}
	if len(ns) == 0 {
		return nil
	}
	slices.SortStableFunc(ns, nearer)
	var out []*Protocol
	for _, x := range ns {
		if x.score == ns[0].score && len(out) < maxClosest {
			out = append(out, x.p)
		}
	}
	return out
}

// outsideHit is what took the intake outside every protocol: the finding
// read (none when the patient chose "Something else") and its message.
type outsideHit struct {
	turn    int
	words   string // the clause it was read from, as typed; "" for "Something else"
	finding string // its label and site, for the clinician
	chosen  bool   // the patient chose "Something else"
}

// enterOutside takes the intake outside every protocol: the screen is asked
// as a protocol's red flags.
func (s *session) enterOutside(m message, f finding, found bool) {
	o := s.e.lib.outside
	h := &outsideHit{turn: m.turn, chosen: !found}
	if found {
		h.words = strings.TrimRight(m.typedClauses([]occurrence{{clause: f.clause, at: f.at}}), " .,;:!?")
		label := s.e.lib.vocab.byID[f.id].label
		if len(f.sites) > 0 {
			label += " at " + strings.Join(f.sites, ", ")
		}
		h.finding = label
	}
	s.outside = h
	s.active = o.p
	s.phase = phaseQuestion
	s.committed = true
}

// chooseOutside is true when m names "Something else" (the quick reply) or,
// once nothing was recognised, a finding outside every protocol; the
// intake is then taken outside them.
func (s *session) chooseOutside(m message) bool {
	o := s.e.lib.outside
	if o == nil {
		return false
	}
	if f, ok := o.outsideFinding(m); ok {
		s.enterOutside(m, f, true)
		return true
	}
	if s.phase != phaseComplaint && said(m.complaintMention(o.p.title)) {
		s.enterOutside(m, finding{}, false)
		return true
	}
	return false
}

// outsideSevere is the note of the first same-day rule that holds over the
// conversation's findings: a complaint outside every protocol that is
// severe, sudden or getting worse quickly.
func (s *session) outsideSevere() (string, bool) {
	var fs []finding
	for _, m := range s.msgs {
		fs = append(fs, m.findings...)
	}
	for i := range s.e.lib.outside.sameDay {
		r := &s.e.lib.outside.sameDay[i]
		if _, ok := r.holds(fs); ok {
			return r.Note, true
		}
	}
	return "", false
}

// isOutside is true when the intake left every protocol for the screen.
func (s *session) isOutside() bool {
	return s.outside != nil
}

// outsideNote is the clinician-facing note naming what the patient said.
func (s *session) outsideNote() string {
	h := s.outside
	n := len(s.e.lib.protocols)
	if h.chosen {
		return fmt.Sprintf("Outside every protocol: the patient chose %q at turn %d (none of the %d protocols of this intake applies); their messages are quoted in the note. Generic red-flag screen asked instead.",
			s.e.lib.outside.p.Title, h.turn, n)
	}
	return fmt.Sprintf("Outside every protocol: the patient said %s at turn %d (read as %s, which none of the %d protocols of this intake covers). Generic red-flag screen asked instead.",
		strconv.Quote(h.words), h.turn, strings.ToLower(h.finding), n)
}

// outsideIntro is the patient-facing sentence that says the complaint
// cannot be assessed here, naming it in the patient's words.
func (s *session) outsideIntro() string {
	r := s.e.replies
	if s.outside.chosen {
		return r.OutsideChosen
	}
	return strings.ReplaceAll(r.OutsideScope, "{what}", s.outside.words)
}
