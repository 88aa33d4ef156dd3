package rules

import (
	"regexp"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

var (
	quoted        = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	sentenceBreak = regexp.MustCompile(`[.!?]\s+`)
)

// soapRepeats lists what a SOAP section says twice: a sentence, a label
// ("Emergency phrase:", "Red flag POSITIVE:", "Reported:") or the label of a
// fact or red flag of protocol p. Quoted patient words are left out: a
// patient may say "No" to several questions.
func soapRepeats(section string, p *Protocol) []string {
	var out []string
	text := quoted.ReplaceAllString(section, `"…"`)
	sentences := map[string]bool{}
	labels := map[string]bool{}
	for _, sent := range sentenceBreak.Split(text, -1) {
		sent = strings.TrimSpace(strings.TrimRight(sent, "."))
		if sent == "" {
			continue
		}
		key := strings.ToLower(sent)
		if sentences[key] {
			out = append(out, "sentence "+sent)
		}
		sentences[key] = true
		if label, _, ok := strings.Cut(sent, ": "); ok && len(strings.Fields(label)) <= 6 {
			if labels[strings.ToLower(label)] {
				out = append(out, "label "+label)
			}
			labels[strings.ToLower(label)] = true
		}
	}
	lower := strings.ToLower(text)
	if n := strings.Count(lower, "emergency phrase"); n > 1 {
		out = append(out, "label Emergency phrase")
	}
	if p != nil {
		var names []string
		for _, rf := range p.RedFlags {
			names = append(names, rf.Label)
		}
		for _, q := range p.Questions {
			names = append(names, q.Label)
		}
		for _, name := range names {
			if n := strings.Count(lower, strings.ToLower(name)+":"); n > 1 {
				out = append(out, "fact label "+name)
			}
		}
		for _, rf := range p.RedFlags {
			if n := strings.Count(lower, strings.ToLower(rf.Label)); n > 1 && !strings.HasPrefix(lower, "reported:") {
				out = append(out, "red flag "+rf.Label)
			}
		}
	}
	return out
}

// checkSOAP fails when any section of res repeats itself.
func checkSOAP(t *testing.T, e *Engine, where string, in engine.Input, res engine.Result) {
	t.Helper()
	var p *Protocol
	for _, x := range e.lib.protocols {
		if x.ID == res.ActiveProtocol {
			p = x
		}
	}
	for name, section := range map[string]string{"subjective": res.SOAP.Subjective, "objective": res.SOAP.Objective,
		"assessment": res.SOAP.Assessment, "plan": res.SOAP.Plan} {
		if r := soapRepeats(section, p); len(r) > 0 {
			t.Errorf("%s %q: %s says twice %q:\n%s", where, in.Patient, name, r, section)
		}
	}
}

// TestSOAPNeverRepeats walks every path of the engine: every protocol with
// every quick reply at every question (demographics asked, and given as a
// man of 70; each red flag yes), so every disposition and both kinds of
// escalation; the complaint stage closing unidentified; and every emergency
// category's corpus, first and mid-intake. No SOAP section, at any turn,
// says a sentence or a label twice. The SOAP templates are the same in every
// voice (only the quoted closing reply differs), so the other voices walk
// every protocol with every red flag and the other paths, not every
// combination of quick replies.
func TestSOAPNeverRepeats(t *testing.T) {
	for _, voice := range Voices() {
		t.Run(voice, func(t *testing.T) {
			t.Parallel()
			soapNeverRepeats(t, voice, voice == VoicePlain)
		})
	}
}

func soapNeverRepeats(t *testing.T, voice string, everyCombination bool) {
	{
		e, err := NewVoice(voice)
		if err != nil {
			t.Fatal(err)
		}
		evaluate := func(demo engine.Demographics, msgs []string) engine.Result {
			in := engine.Input{Demographics: demo, Patient: msgs}
			s := newSession(e, in)
			s.run()
			res := s.result()
			checkSOAP(t, e, voice, in, res)
			return res
		}
		reached := map[string]map[string]bool{} // protocol → "disposition urgent"
		var walk func(demo engine.Demographics, msgs []string)
		walk = func(demo engine.Demographics, msgs []string) {
			res := evaluate(demo, msgs)
			if res.Terminal {
				if reached[res.ActiveProtocol] == nil {
					reached[res.ActiveProtocol] = map[string]bool{}
				}
				key := res.Disposition
				if res.Urgent {
					key += " urgent"
				}
				reached[res.ActiveProtocol][key] = true
				return
			}
			next := res.Choices
			switch res.IntakeStatus {
			case needsAge:
				next = []string{"30"}
			case needsSex:
				// The demographics given below vary it.
				next = res.Choices[:1]
			case needsPregnancy:
				next = res.Choices[1:2] // "No"; "Yes" goes to review like many a question
			}
			if len(next) == 0 {
				next = []string{"3 days"}
			}
			if !everyCombination && res.IntakeStatus != needsRedFlags {
				next = next[:1]
			}
			for _, n := range next {
				walk(demo, append(msgs[:len(msgs):len(msgs)], n))
			}
		}
		age70 := 70
		for _, p := range e.lib.protocols {
			for _, demo := range []engine.Demographics{{}, {AgeYears: &age70, Sex: "male"}} {
				walk(demo, []string{p.shownTitle})
			}
		}
		for _, p := range e.lib.protocols {
			if !everyCombination {
				break
			}
			want := []string{engine.DispositionReview, engine.DispositionSelfCare}
			if len(p.sameDayFlags) < len(p.RedFlags) {
				want = append(want, engine.DispositionEscalate+" urgent")
			}
			if len(p.sameDayFlags)+len(p.sameDayScores) > 0 {
				want = append(want, engine.DispositionEscalate)
			}
			for _, w := range want {
				if !reached[p.ID][w] {
					t.Errorf("%s: %s: no path reached %s (reached %v)", voice, p.ID, w, reached[p.ID])
				}
			}
		}
		// The complaint stage, closed unidentified.
		for _, msgs := range [][]string{{"hello", "umm", "no idea"}, {"headache and a sore throat", "both", "both"}} {
			for i := range msgs {
				evaluate(engine.Demographics{}, msgs[:i+1])
			}
		}
		// Every emergency category, at once and mid-intake.
		for _, c := range readCorpora[emergencyCorpus](t, "emergencies") {
			for _, msg := range c.Escalate {
				evaluate(engine.Demographics{}, []string{msg})
				evaluate(engine.Demographics{}, []string{"I have chest pain", msg})
				evaluate(engine.Demographics{}, []string{"hello", msg})
			}
		}
	}
}

// The example: an emergency handoff says "Emergency phrase" once
// and its finding once.
func TestEmergencyAssessmentSaysItOnce(t *testing.T) {
	e := newEngine(t)
	for _, m := range [][]string{{"I have crushing chest pain spreading to my left arm"}, {"my dad's face has dropped"}} {
		res := last(run(t, e, script{Messages: m}))
		a := res.SOAP.Assessment
		if strings.Count(a, "Emergency phrase") != 1 || strings.Count(a, "acute coronary syndrome")+strings.Count(a, "FAST") != 1 {
			t.Errorf("%q: assessment %q", m, a)
		}
	}
}
