package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// The corpora in testdata/ were written as a tester would, from how patients
// and the people with them talk, not from the engine's phrase lists: every
// phrasing there is something the engine must meet. Each emergency category
// has at least 25 positives and 10 look-alikes (negated, past, hypothetical,
// someone else's history, or unrelated), each protocol at least 10 positives
// and 2 look-alikes, that must not be taken for it.

type emergencyCorpus struct {
	Category   string   `json:"category"`
	Escalate   []string `json:"escalate"`
	NoEscalate []string `json:"no_escalate"`
	// Ambiguous holds phrasings taken out of escalate or no_escalate because
	// the words alone cannot say which they belong to; they are kept, with
	// the reason, and not tested.
	Ambiguous []struct {
		Text string `json:"text"`
		Was  string `json:"was"` // escalate or no_escalate
		Why  string `json:"why"`
	} `json:"ambiguous"`
	// Instruction holds messages that must get this category's
	// instruction (it wins over every other category they name), worded
	// for who is speaking: "self" (the patient) or "someone_else" (a
	// relative or bystander, of another person).
	Instruction []struct {
		Text    string   `json:"text"`
		Speaker string   `json:"speaker"`
		Says    []string `json:"says"`     // in the reply
		NotSays []string `json:"not_says"` // not in the reply
		Why     string   `json:"why"`
	} `json:"instruction"`
}

type complaintCorpus struct {
	Protocol string   `json:"protocol"`
	Match    []string `json:"match"`
	NoMatch  []string `json:"no_match"`
	// Ambiguous holds phrasings taken out of match or no_match because
	// blind labels disagree on them; kept, with the reason, and not tested.
	Ambiguous []struct {
		Text string `json:"text"`
		Was  string `json:"was"` // match or no_match
		Why  string `json:"why"`
	} `json:"ambiguous"`
	// Volunteered are messages said once the protocol is committed, and
	// what each must volunteer for one fact: its value, or "asked" when
	// the words do not state it (a word of another sense, or one that only
	// names the complaint) and the engine must ask.
	Volunteered []factCase `json:"volunteered"`
}

type factCase struct {
	Text string `json:"text"`
	Fact string `json:"fact"`
	Want string `json:"want"`
	Why  string `json:"why,omitempty"`
}

// wantAsked is factCase.Want for a fact that must not be volunteered.
const wantAsked = "asked"

func readCorpora[T any](t *testing.T, dir string) []T {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no corpus in testdata/%s: %v", dir, err)
	}
	var out []T
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var c T
		if err := decodeStrict(data, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, c)
	}
	return out
}

// firstTurn evaluates one opening message with no demographics.
func firstTurn(t *testing.T, e *Engine, msg string) (*session, engine.Result) {
	t.Helper()
	s := newSession(e, engine.Input{Patient: []string{msg}})
	s.run()
	return s, s.result()
}

// TestEmergencyCorpus: every positive escalates on its own as the first
// message, naming its own category (among any others it also names), and in
// the middle of an unrelated intake; no look-alike escalates as anything. It
// logs recall and false alarms per category (go test -run
// TestEmergencyCorpus -v ./sandbox/rules) and fails below 100% recall (of
// either kind) or above 0 false alarms.
func TestEmergencyCorpus(t *testing.T) {
	e := newEngine(t)
	corpora := readCorpora[emergencyCorpus](t, "emergencies")
	var ids []string
	for _, c := range e.lib.emergencies {
		ids = append(ids, c.ID)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-20s %8s %8s %10s %12s\n", "category", "recall", "own", "negatives", "false alarms")
	var seen []string
	for _, c := range corpora {
		if !slices.Contains(ids, c.Category) {
			t.Errorf("corpus for unknown category %q", c.Category)
			continue
		}
		seen = append(seen, c.Category)
		if len(c.Escalate) < 25 || len(c.NoEscalate) < 10 {
			t.Errorf("%s: %d positives and %d look-alikes; want at least 25 and 10", c.Category, len(c.Escalate), len(c.NoEscalate))
		}
		for _, a := range c.Ambiguous {
			if a.Was != "escalate" && a.Was != "no_escalate" || a.Why == "" {
				t.Errorf("%s: ambiguous %q needs was (escalate or no_escalate) and why", c.Category, a.Text)
			}
			t.Logf("%s: ambiguous, not tested (was %s): %q: %s", c.Category, a.Was, a.Text, a.Why)
		}
		hits, own, alarms := 0, 0, 0
		for _, msg := range c.Escalate {
			s, res := firstTurn(t, e, msg)
			if !res.Urgent || !res.Terminal || res.Disposition != engine.DispositionEscalate || res.SafetyStatus != engine.SafetyCannotMissPositive || s.emergency == nil {
				t.Errorf("%s: %q did not escalate as an emergency: %s (%s)", c.Category, msg, res.Disposition, res.Reply)
				continue
			}
			hits++
			if slices.ContainsFunc(s.emergency.categories, func(x *EmergencyCategory) bool { return x.ID == c.Category }) {
				own++
			} else {
				t.Errorf("%s: %q escalated as %s, not as its own category", c.Category, msg, s.emergency.categories[0].ID)
			}
			// The same words mid-intake escalate too.
			mid := last(run(t, e, script{Age: 30, Sex: "male", Messages: []string{"I have a rash", msg}}))
			if !mid.Urgent || mid.Disposition != engine.DispositionEscalate {
				t.Errorf("%s: %q mid-intake did not escalate: %s", c.Category, msg, mid.Reply)
			}
		}
		for _, msg := range c.NoEscalate {
			if s, res := firstTurn(t, e, msg); res.Urgent || s.emergency != nil {
				alarms++
				t.Errorf("%s: look-alike %q escalated (%s)", c.Category, msg, res.SafetyNotes[0])
			}
		}
		fmt.Fprintf(&table, "%-20s %3d/%-4d %3d/%-4d %10d %8d/%d\n", c.Category, hits, len(c.Escalate), own, len(c.Escalate),
			len(c.NoEscalate), alarms, len(c.NoEscalate))
	}
	for _, id := range ids {
		if !slices.Contains(seen, id) {
			t.Errorf("category %s has no corpus", id)
		}
	}
	t.Log("emergency corpus: recall = escalated on the first message; own = recognised as this category" + table.String())
}

// TestEmergencyInstructionCorpus: each "instruction" case of the emergency
// corpora escalates with its category's reply and advice, worded for who is
// speaking, whatever else the message names (issue 33: "my dad collapsed and
// is not breathing" was told to sit upright and use a reliever inhaler).
// Every category has a case for each speaker it can be said to.
func TestEmergencyInstructionCorpus(t *testing.T) {
	e := newEngine(t)
	byID := map[string]*EmergencyCategory{}
	for _, c := range e.lib.emergencies {
		byID[c.ID] = c
	}
	covered := map[string]bool{} // "category speaker"
	for _, c := range readCorpora[emergencyCorpus](t, "emergencies") {
		cat := byID[c.Category]
		if cat == nil {
			t.Errorf("corpus for unknown category %q", c.Category)
			continue
		}
		for _, in := range c.Instruction {
			s, res := firstTurn(t, e, in.Text)
			if s.emergency == nil {
				t.Errorf("%s: %q did not escalate as an emergency: %s", c.Category, in.Text, res.Reply)
				continue
			}
			if got := s.emergency.categories[0]; got != cat {
				t.Errorf("%s: %q got the %s instruction, want %s's (%s): %q", c.Category, in.Text, got.ID, c.Category, in.Why, res.Reply)
				continue
			}
			if got := s.emergency.speakers[0].String(); got != in.Speaker {
				t.Errorf("%s: %q read as said by %s, want %s (%s): %q", c.Category, in.Text, got, in.Speaker, in.Why, res.Reply)
			}
			covered[c.Category+" "+in.Speaker] = true
			reply, advice := cat.Reply, cat.Advice
			if in.Speaker == speakerSomeoneElse.String() {
				reply, advice = cat.ReplySomeoneElse, cat.AdviceSomeoneElse
			}
			call := e.replies.UrgentCall
			if cat.CallNow {
				call = e.replies.UrgentCallNow
			}
			if want := joinSentences(reply, call, advice); res.Reply != want {
				t.Errorf("%s: %q: reply %q, want %q", c.Category, in.Text, res.Reply, want)
			}
			for _, w := range in.Says {
				if !strings.Contains(res.Reply, w) {
					t.Errorf("%s: %q: reply lacks %q: %q", c.Category, in.Text, w, res.Reply)
				}
			}
			for _, w := range in.NotSays {
				if strings.Contains(res.Reply, w) {
					t.Errorf("%s: %q: reply says %q: %q", c.Category, in.Text, w, res.Reply)
				}
			}
		}
	}
	for _, c := range e.lib.emergencies {
		for _, sp := range []speaker{speakerSelf, speakerSomeoneElse} {
			if c.SomeoneElseOnly && sp == speakerSelf {
				continue
			}
			if !covered[c.ID+" "+sp.String()] {
				t.Errorf("%s: no instruction case said by %s", c.ID, sp)
			}
		}
	}
}

// TestComplaintCorpus: every positive commits its protocol from the first
// message, and no other protocol is even a candidate for it (no confusion);
// no look-alike makes its protocol a candidate. A positive may end the
// intake at once on one of its own protocol's red flags ("my skin is peeling"
// is a rash with a cannot-miss sign): the complaint was recognised, and the
// table counts it under "red flag". An emergency is not recognition. It logs
// recall, confusion and false matches per protocol (go test -run
// TestComplaintCorpus -v ./sandbox/rules) and fails below 100% recall or on
// any confusion or false match.
func TestComplaintCorpus(t *testing.T) {
	e := newEngine(t)
	corpora := readCorpora[complaintCorpus](t, "complaints")
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-24s %8s %10s %9s %14s\n", "protocol", "recall", "confusion", "red flag", "false matches")
	var seen []string
	totalHits, total := 0, 0
	for _, c := range corpora {
		seen = append(seen, c.Protocol)
		if len(c.Match) < 25 || len(c.NoMatch) < 5 {
			t.Errorf("%s: %d positives and %d look-alikes; want at least 25 and 5", c.Protocol, len(c.Match), len(c.NoMatch))
		}
		for _, a := range c.Ambiguous {
			if a.Was != "match" && a.Was != "no_match" || a.Why == "" {
				t.Errorf("%s: ambiguous %q needs was (match or no_match) and why", c.Protocol, a.Text)
			}
			t.Logf("%s: ambiguous, not tested (was %s): %q: %s", c.Protocol, a.Was, a.Text, a.Why)
		}
		hits, confused, redFlag, wrong := 0, 0, 0, 0
		for _, msg := range c.Match {
			s, res := firstTurn(t, e, msg)
			if others := slices.DeleteFunc(slices.Clone(res.CandidateProtocols), func(id string) bool { return id == c.Protocol }); len(others) > 0 {
				confused++
				t.Errorf("%s: %q confused with %v", c.Protocol, msg, others)
			}
			if res.ActiveProtocol == c.Protocol && s.emergency == nil {
				hits++
				if res.Terminal {
					redFlag++
				}
				continue
			}
			t.Errorf("%s: %q gave protocol %q candidates %v terminal %v: %s", c.Protocol, msg, res.ActiveProtocol, res.CandidateProtocols, res.Terminal, res.Reply)
		}
		for _, msg := range c.NoMatch {
			if _, res := firstTurn(t, e, msg); slices.Contains(res.CandidateProtocols, c.Protocol) {
				wrong++
				t.Errorf("%s: look-alike %q selected it", c.Protocol, msg)
			}
		}
		totalHits += hits
		total += len(c.Match)
		fmt.Fprintf(&table, "%-24s %3d/%-4d %10d %9d %10d/%d\n", c.Protocol, hits, len(c.Match), confused, redFlag, wrong, len(c.NoMatch))
	}
	fmt.Fprintf(&table, "%-24s %3d/%-4d\n", "all", totalHits, total)
	for _, id := range e.Protocols() {
		if !slices.Contains(seen, id) {
			t.Errorf("protocol %s has no corpus", id)
		}
	}
	t.Log("complaint corpus: recall = the first message commits the protocol; confusion = another protocol was a candidate; red flag = recognised, then ended on its own red flag" + table.String())
}

// docs/protocols.md lists every trigger, emergency pattern and exception, so
// the page says what the engine recognises.
func TestDocsListWhatIsRecognised(t *testing.T) {
	e := newEngine(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	listed := func(what, s string) {
		if !strings.Contains(doc, "`"+strings.ReplaceAll(s, "|", `\|`)+"`") {
			t.Errorf("docs/protocols.md does not list %s `%s`", what, s)
		}
	}
	for _, p := range e.lib.protocols {
		for _, tr := range p.Triggers {
			listed(p.ID+" trigger", tr)
		}
	}
	for _, c := range e.lib.emergencies {
		listed("category", c.ID)
		for _, pat := range c.Patterns {
			listed(c.ID+" pattern", pat)
		}
		for _, ex := range c.Except {
			listed(c.ID+" exception", ex)
		}
	}
}

// TestDocsListSources: every protocol names the guidance it follows
// (source), and docs/protocols.md's table of sources lists it.
func TestDocsListSources(t *testing.T) {
	e := newEngine(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range e.lib.protocols {
		if p.Source == "" {
			t.Errorf("%s: no source", p.ID)
		} else if row := "| `" + p.ID + "` | " + p.Title + " | " + p.Source + " |"; !strings.Contains(string(data), row) {
			t.Errorf("docs/protocols.md has no row %q", row)
		}
	}
}

// Every corpus message gives the same result from two engines: matching
// keeps no state and reads no clock.
func TestCorpusIsDeterministic(t *testing.T) {
	a, b := newEngine(t), newEngine(t)
	for _, c := range readCorpora[emergencyCorpus](t, "emergencies") {
		for _, msg := range append(slices.Clone(c.Escalate), c.NoEscalate...) {
			in := engine.Input{Patient: []string{"I have a rash", msg}}
			ra, _ := a.Evaluate(t.Context(), in)
			rb, _ := b.Evaluate(t.Context(), in)
			if !reflect.DeepEqual(ra, rb) {
				t.Errorf("%q: two engines differ", msg)
			}
		}
	}
}

// protocolByID is the engine's protocol id, or nil.
func protocolByID(e *Engine, id string) *Protocol {
	for _, p := range e.lib.protocols {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// volunteeredIn commits p and reads text as the engine reads every message
// at commit: what it volunteers (session.volunteer).
func volunteeredIn(e *Engine, p *Protocol, text string) *session {
	age := 30
	s := newSession(e, engine.Input{Demographics: engine.Demographics{AgeYears: &age, Sex: "female"}, Patient: []string{text}})
	s.commit(p)
	s.volunteer(s.msgs[0])
	return s
}

// TestVolunteeredFactCorpus: each case of the complaint corpora's
// "volunteered" lists volunteers its fact with the value wanted, or leaves
// it to be asked. The cases are the keywords' other senses ("a faint ache",
// "the radiator", "hay fever", "can't see a GP") and the complaint's own
// words ("a pressure in my chest" is not "pressing on it hurts", issue 33),
// beside phrasings that must still be read.
func TestVolunteeredFactCorpus(t *testing.T) {
	e := newEngine(t)
	n := 0
	for _, c := range readCorpora[complaintCorpus](t, "complaints") {
		p := protocolByID(e, c.Protocol)
		if p == nil {
			t.Errorf("corpus for unknown protocol %q", c.Protocol)
			continue
		}
		for _, fc := range c.Volunteered {
			n++
			s := volunteeredIn(e, p, fc.Text)
			if !slices.ContainsFunc(s.questions(), func(q *Question) bool { return q.Fact == fc.Fact }) {
				t.Errorf("%s: %q: no question %q", c.Protocol, fc.Text, fc.Fact)
				continue
			}
			a, got := s.facts[fc.Fact]
			switch {
			case fc.Want == wantAsked && got:
				t.Errorf("%s: %q volunteered %s = %s (from %q), want it asked: %s", c.Protocol, fc.Text, fc.Fact, a.value, a.from, fc.Why)
			case fc.Want != wantAsked && (!got || a.value != fc.Want || a.source != sourceVolunteered):
				t.Errorf("%s: %q: %s = %q (%v), want %q volunteered", c.Protocol, fc.Text, fc.Fact, a.value, got, fc.Want)
			}
		}
	}
	t.Logf("%d volunteered-fact cases", n)
}

// TestNoFactFromComplaintWordsAlone: no fact is volunteered from words that
// only name the complaint (issue 33: "a pressure in my chest" answered "does
// pressing on it hurt?" with yes). Every phrasing of the complaint corpora
// is read once its protocol is committed; each fact it volunteers must hold
// one of its question's words outside the words the protocol's triggers
// matched in the same clause. The exceptions are the engine's: a question
// marked answered_by_complaint, and a red flag's yes.
func TestNoFactFromComplaintWordsAlone(t *testing.T) {
	e := newEngine(t)
	checked := 0
	for _, c := range readCorpora[complaintCorpus](t, "complaints") {
		p := protocolByID(e, c.Protocol)
		if p == nil {
			continue
		}
		texts := slices.Clone(c.Match)
		for _, fc := range c.Volunteered {
			texts = append(texts, fc.Text)
		}
		for _, text := range texts {
			s := volunteeredIn(e, p, text)
			m := s.msgs[0]
			complaint := p.complaintWords(m)
			for _, q := range s.questions() {
				a, ok := s.facts[q.Fact]
				if !ok || a.source != sourceVolunteered || q.AnsweredByComplaint || (s.isRedFlag(q.Fact) && a.value == valYes) {
					continue
				}
				occ := q.evidence(m.unmasked())
				if len(occ) == 0 {
					continue // a duration or an age: read from the whole message
				}
				checked++
				own := slices.ContainsFunc(occ, func(o occurrence) bool {
					return slices.ContainsFunc(o.at, func(k int) bool { return !complaint[o.clause][k] })
				})
				if !own {
					t.Errorf("%s: %q volunteered %s = %s from the complaint's own words (%q)", c.Protocol, text, q.Fact, a.value, m.typedClauses(occ))
				}
			}
		}
	}
	t.Logf("%d volunteered facts checked", checked)
}
