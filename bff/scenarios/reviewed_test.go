package scenarios

import (
	"strings"
	"testing"
	"time"
)

func TestNormalQuestion(t *testing.T) {
	if got := NormalQuestion("  Have you\n been   SICK — at all’s?  "); got != "have you been sick - at all's?" {
		t.Fatalf("NormalQuestion: %q", got)
	}
}

// A reviewed reading answers its question for its release only, before
// the automatic understanding, and says so in the why.
func TestAnswerFromUsesTheReviewedReading(t *testing.T) {
	u, err := Understanding()
	if err != nil {
		t.Fatal(err)
	}
	v := &Vignette{ID: "v", Opening: "I feel sick.", Facts: []Fact{{Concept: "fever", Answer: "yes, I'm burning up"}}, Default: "no"}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	rv := ReviewMap{"rel-1": {NormalQuestion("Have you been vomiting?"): {Decision: ReviewCorrected,
		Reading: CorrectedReading("fever", "yes_no", false), By: "dr.ada", At: at}}}
	said, _ := NewPatient(v, u).AnswerFrom(rv, "rel-1", "Have you  been vomiting?", nil)
	if said.Text != "yes, I'm burning up" || !said.Why.Reviewed() || !strings.HasSuffix(said.Why.String(), "; reviewed by dr.ada on 2026-11-28") {
		t.Fatalf("with the review: %q (%s)", said.Text, said.Why)
	}
	said, _ = NewPatient(v, u).AnswerFrom(rv, "rel-2", "Have you been vomiting?", nil)
	if said.Text != "no" || said.Why.Reviewed() {
		t.Fatalf("another release: %q (%s)", said.Text, said.Why)
	}
}

// An answer after which the engine's disposition, safety status or urgent
// flag changed is decisive; a result is provisional while one rests on an
// unreviewed reading; answers are counted by what they rest on.
func TestAccountSaysWhatTheFiguresRestOn(t *testing.T) {
	auto := &Why{Kind: WhyConcept, Concepts: []string{"fever"}}
	reviewed := &Why{Kind: WhyConcept, Concepts: []string{"fever"}, ReviewedBy: "dr.ada", ReviewedOn: "2026-11-28"}
	lost := &Why{Kind: WhyNotUnderstood}
	turns := func(decisive *Why) []Exchange {
		return []Exchange{
			{Message: "hi", Why: &Why{Kind: WhyOpening}, Reply: "Any fever?", Disposition: "undetermined"},
			{Message: "no", Why: auto, Reply: "Any rash?", Disposition: "undetermined"},
			{Message: "huh", Why: lost, Reply: "Any cough?", Disposition: "undetermined"},
			{Message: "yes", Why: decisive, Reply: "Call 999.", Disposition: "urgent_escalation", Urgent: true, Terminal: true},
		}
	}
	var r Result
	Account(&r, turns(auto))
	if !r.Provisional || r.Basis != (Basis{Automatic: 2, NotUnderstood: 1}) || !r.Answers[3].Decisive || r.Answers[1].Decisive {
		t.Fatalf("automatic decisive answer: provisional %v, basis %+v, answers %+v", r.Provisional, r.Basis, r.Answers)
	}
	Account(&r, turns(reviewed))
	if r.Provisional || r.Basis != (Basis{Reviewed: 1, Automatic: 1, NotUnderstood: 1}) {
		t.Fatalf("reviewed decisive answer: provisional %v, basis %+v", r.Provisional, r.Basis)
	}
	s := Score([]Result{r, func() Result { var x Result; Account(&x, turns(auto)); return x }()})
	if s.Provisional != 1 || s.Basis.Total() != 6 || s.Basis.Reviewed != 1 {
		t.Fatalf("summary: provisional %d, basis %+v", s.Provisional, s.Basis)
	}
	if got := s.Basis.String(); got != "16.7% on reviewed readings, 50.0% automatic, 33.3% not understood, of 6 answers" {
		t.Fatalf("basis in words: %q", got)
	}
}
