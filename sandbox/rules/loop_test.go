package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// turnLimit is the most patient messages any intake can take
// (docs/protocols.md, "No endless loop"): the complaint stage at most 5
// (the opening, the main problem asked twice, which of several asked
// twice), then per question of the protocol at most two (age, sex,
// pregnancy, at most 4 red flags and 6 questions, as the loader allows).
const turnLimit = 1 + 2*maxAsks + 2*(3+4+6)

// noProgressLimit is the most replies in a row that leave the intake where
// it was; the next reply always records the answer (as unclear if need
// be), escalates a red flag that could not be excluded, or closes.
const noProgressLimit = 1

// progress is what a turn can move on: the stage, the complaint, the
// candidates, the captured facts.
func progress(s *session) string {
	id := ""
	if s.active != nil {
		id = s.active.ID
	}
	return fmt.Sprintf("%d %s %d %d", s.phase, id, len(s.candidates), len(s.facts))
}

// unhelpful answers, each given at every turn after the opening.
var unhelpful = map[string]func(opening string, n int) string{
	"no":           func(string, int) string { return "no" },
	"maybe":        func(string, int) string { return "maybe" },
	"not sure":     func(string, int) string { return "I'm not sure" },
	"gibberish":    func(string, int) string { return "asdf qwerty zxcv" },
	"punctuation":  func(string, int) string { return "??" },
	"the opening":  func(opening string, _ int) string { return opening },
	"same message": func(string, int) string { return "what do you mean" },
	"alternating": func(_ string, n int) string {
		return []string{"maybe", "hmm", "no idea", "perhaps a little", "not really"}[n%5]
	},
}

// TestNoEndlessLoop drives every opening (nothing recognised, each
// complaint, two complaints) with unhelpful answers at every stage, with
// and without demographics, in every voice: each intake must end within
// turnLimit messages, never with more than noProgressLimit replies in a row
// that change nothing.
func TestNoEndlessLoop(t *testing.T) {
	if turnLimit != 31 {
		t.Fatalf("turnLimit %d: docs/protocols.md says 31", turnLimit)
	}
	for _, voice := range Voices() {
		e, err := NewVoice(voice)
		if err != nil {
			t.Fatal(err)
		}
		openings := []string{"hello", "asdf qwerty", "I feel funny", "headache and a sore throat", "my chest and my stomach and my back"}
		for _, p := range e.lib.protocols {
			openings = append(openings, p.Title, p.shownTitle)
			if bound := 1 + 2*maxAsks + 2*(3+len(p.RedFlags)+len(p.Questions)); bound > turnLimit {
				t.Errorf("%s: up to %d turns, over the limit %d", p.ID, bound, turnLimit)
			}
		}
		ages := []*int{nil, new(int)}
		*ages[1] = 30
		longest := 0
		for _, opening := range openings {
			for name, answer := range unhelpful {
				for _, age := range ages {
					demo := engine.Demographics{AgeYears: age}
					if age != nil {
						demo.Sex = "female"
					}
					msgs := []string{opening}
					var tr []turn
					before, still := "", 0
					for {
						s := newSession(e, engine.Input{Demographics: demo, Patient: msgs})
						s.run()
						res := s.result()
						tr = append(tr, turn{Patient: msgs[len(msgs)-1], Result: res})
						if now := progress(s); len(msgs) > 1 && now == before && !res.Terminal {
							still++
							if still > noProgressLimit {
								t.Fatalf("%s: %q then %s: %d replies in a row without progress:\n%s", voice, opening, name, still, dump(tr))
							}
						} else {
							still = 0
							before = now
						}
						if res.Terminal {
							break
						}
						if len(msgs) >= turnLimit {
							t.Fatalf("%s: %q then %s: not ended after %d turns:\n%s", voice, opening, name, len(msgs), dump(tr))
						}
						msgs = append(msgs, answer(opening, len(msgs)))
					}
					longest = max(longest, len(msgs))
					if last(tr).Disposition == engine.DispositionContinue {
						t.Errorf("%s: %q then %s: terminal without a disposition", voice, opening, name)
					}
				}
			}
		}
		t.Logf("%s: longest intake of unhelpful answers %d turns (limit %d)", voice, longest, turnLimit)
	}
}

// TestMainProblemNotIdentifiedClosesSafely: asked twice with the quick
// replies offered (the closest protocols, or only "Something else" when
// nothing was read), the third reply that names nothing closes the intake
// for clinician review, says so plainly, and hands off honestly.
func TestMainProblemNotIdentifiedClosesSafely(t *testing.T) {
	e := newEngine(t)
	for name, s := range map[string]script{
		"nothing named":        {Messages: msgs("hello", "umm", "I don't know")},
		"several, none chosen": {Messages: msgs("headache and a sore throat", "both", "both of them")},
	} {
		tr := run(t, e, s)
		for i, x := range tr[:len(tr)-1] {
			if x.Result.Terminal || len(x.Result.Choices) < 1 {
				t.Errorf("%s: turn %d: terminal %v, quick replies %q", name, i+1, x.Result.Terminal, x.Result.Choices)
			}
		}
		res := last(tr)
		if !res.Terminal || res.Urgent || res.Disposition != engine.DispositionReview ||
			res.SafetyStatus != engine.SafetyNoRedFlagsYet || res.ActiveProtocol != "" || len(tr) != 3 {
			t.Fatalf("%s: terminal %v urgent %v %s %s protocol %q after %d turns:\n%s", name, res.Terminal, res.Urgent,
				res.Disposition, res.SafetyStatus, res.ActiveProtocol, len(tr), dump(tr))
		}
		if res.Reply != e.replies.CloseUnidentified {
			t.Errorf("%s: reply %q", name, res.Reply)
		}
		if res.SafetyNotes[0] != res.SOAP.Assessment || !contains(res.SafetyNotes[0], "Main problem not identified", "red flags not screened") {
			t.Errorf("%s: safety notes %q, assessment %q", name, res.SafetyNotes, res.SOAP.Assessment)
		}
		if !contains(res.SOAP.Plan, "establish the presenting complaint", "Patient was told: ") ||
			!contains(res.SOAP.Subjective, `"`+s.Messages[0]+`"`, `"`+s.Messages[2]+`"`) {
			t.Errorf("%s: SOAP %+v", name, res.SOAP)
		}
		checkPlanHonest(t, name, res)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !containsFold(s, p) {
			return false
		}
	}
	return true
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
