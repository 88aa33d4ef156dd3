package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"testing"
)

func res(id string, gold, final Class) Result {
	return Result{VignetteID: id, Repeat: 1, Gold: Gold{Class: gold}, Final: final, Terminal: final != NoClass, Turns: 4}
}

// matrixResults puts g*4+f+1 results in confusion cell (gold g, final f),
// so every cell has a different count (1..16, 136 in all), and adds two
// undecided emergencies, one undecided self-care, one urgent with a
// disposition its gold does not accept, and one failed play.
func matrixResults() []Result {
	var rs []Result
	for g, gc := range Classes {
		for f, fc := range Classes {
			for range g*4 + f + 1 {
				rs = append(rs, res(fmt.Sprintf("v%d%d", g, f), gc, fc))
			}
		}
	}
	rs = append(rs, res("undecided-e1", Emergency, NoClass), res("undecided-e2", Emergency, NoClass), res("undecided-s", SelfCare, NoClass))
	wd := res("wrong-disposition", Urgent, Urgent)
	wd.Gold.Dispositions = []string{"urgent_escalation"}
	wd.Disposition = "callback_within_hour"
	ok := res("right-disposition", Urgent, Urgent) // counted below as an extra diagonal cell
	ok.Gold.Dispositions = []string{"urgent_escalation"}
	ok.Disposition = "urgent_escalation"
	failed := res("failed", Emergency, Emergency)
	failed.Error = "upstream unavailable"
	return append(rs, wd, ok, failed)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestScoreConfusionAndTriageRates(t *testing.T) {
	s := Score(matrixResults())
	var want [4][4]int
	for g := range 4 {
		for f := range 4 {
			want[g][f] = g*4 + f + 1
		}
	}
	want[1][1] += 2 // wrong- and right-disposition urgents
	if s.Confusion != want {
		t.Errorf("confusion = %v, want %v", s.Confusion, want)
	}
	if s.Undecided != [4]int{2, 0, 0, 1} {
		t.Errorf("undecided = %v", s.Undecided)
	}
	// 136 cells + 3 undecided + 2 dispositions = 141 scored, 1 error.
	if s.Runs != 142 || s.Scored != 141 || s.Errors != 1 || s.WrongDisposition != 1 {
		t.Errorf("runs %d scored %d errors %d wrong disposition %d", s.Runs, s.Scored, s.Errors, s.WrongDisposition)
	}
	if s.Vignettes != 16+3+3 {
		t.Errorf("vignettes = %d", s.Vignettes)
	}
	// Correct: the diagonal 1+6+11+16 plus right-disposition = 35.
	// Under: above the diagonal 2+3+4+7+8+12 = 36 plus 2 undecided emergencies.
	// Over: below it 5+9+10+13+14+15 = 66. Undecided self-care and the
	// wrong disposition are wrong, neither under nor over.
	if !near(s.Accuracy, 35.0/141) || !near(s.UnderTriage, 38.0/141) || !near(s.OverTriage, 66.0/141) {
		t.Errorf("accuracy %v under %v over %v", s.Accuracy, s.UnderTriage, s.OverTriage)
	}
	wantPer := map[Class]ClassSummary{
		Emergency: {N: 12, Correct: 1, Under: 11, Over: 0},
		Urgent:    {N: 28, Correct: 7, Under: 15, Over: 5},
		Routine:   {N: 42, Correct: 11, Under: 12, Over: 19},
		SelfCare:  {N: 59, Correct: 16, Under: 0, Over: 42},
	}
	for c, w := range wantPer {
		w.Accuracy, w.UnderTriage, w.OverTriage = float64(w.Correct)/float64(w.N), float64(w.Under)/float64(w.N), float64(w.Over)/float64(w.N)
		if got := s.PerClass[c]; got != w {
			t.Errorf("per class %s = %+v, want %+v", c, got, w)
		}
	}
	if len(s.PerClass) != 4 {
		t.Errorf("per class has %d classes", len(s.PerClass))
	}
}

func TestAssessTriage(t *testing.T) {
	cases := []struct {
		gold, final Class
		want        Triage
	}{
		{Emergency, Emergency, TriageCorrect},
		{Emergency, SelfCare, TriageUnder},
		{Emergency, NoClass, TriageUnder},
		{Routine, Urgent, TriageOver},
		{SelfCare, Routine, TriageOver},
		{SelfCare, NoClass, TriageUndecided},
		{NoClass, Routine, TriageError}, // no gold class: not scored
	}
	for _, c := range cases {
		if got := Assess(res("x", c.gold, c.final)).Triage; got != c.want {
			t.Errorf("gold %q final %q: %s, want %s", c.gold, c.final, got, c.want)
		}
	}
}

func TestScoreRedFlagsProtocolsBandsTurns(t *testing.T) {
	notes := []string{
		`Emergency phrase at turn 1 ("worst headache ever"): thunderclap headache.`,
		"Red flag POSITIVE: Neck stiffness. Meningitis until proven otherwise.",
		"Cannot-miss red flags screened negative: fever, rash.",
		"Red flag POSITIVE: Rash. A negative glass test does not exclude sepsis.",
	}
	pos, neg := SplitSafetyNotes(notes)
	if len(pos) != 3 || len(neg) != 1 || neg[0] != notes[2] {
		t.Fatalf("split: positive %q negative %q", pos, neg)
	}
	a := res("a", Emergency, Emergency)
	a.RedFlagsFound, a.RedFlagsNegative = pos, neg
	a.Gold.RedFlagsPositive = []string{"Thunderclap", "neck stiffness", "confusion"} // 2 of 3 found
	a.Gold.RedFlagsNegative = []string{"fever", "meningitis"}                        // meningitis shown positive: a false alarm
	a.Gold.Protocol = "headache"
	a.Protocol = "Headache "
	a.Gold.Scores = map[string]string{"centor": "weak", "wells": "strong"}
	a.Scores = map[string]string{"centor": "weak", "wells": "mid"}
	a.Turns = 3

	b := res("b", Routine, Routine)
	b.Gold.RedFlagsPositive = []string{"fever"}
	b.RedFlagsNegative = []string{"Cannot-miss red flags screened negative: fever."} // negative notes never count as found
	b.Gold.Protocol = "sore_throat"
	b.Protocol = "cough"
	b.Gold.Scores = map[string]string{"centor": "mid"} // not reported: disagrees
	b.Turns = 8

	c := res("c", SelfCare, SelfCare) // nothing expected: does not dilute the rates
	c.Turns = 4
	c.Provenance.Release = "2.0"

	s := Score([]Result{a, b, c})
	if s.RedFlagsExpected != 4 || s.RedFlagsMissed != 2 || s.FalseAlarms != 1 || !near(s.RedFlagRecall, 2.0/4) {
		t.Errorf("red flags: expected %d missed %d false alarms %d recall %v", s.RedFlagsExpected, s.RedFlagsMissed, s.FalseAlarms, s.RedFlagRecall)
	}
	if s.ProtocolsChecked != 2 || !near(s.ProtocolMatch, 0.5) {
		t.Errorf("protocols checked %d match %v", s.ProtocolsChecked, s.ProtocolMatch)
	}
	if s.BandsChecked != 3 || !near(s.ScoreBandAgreement, 1.0/3) {
		t.Errorf("bands checked %d agreement %v", s.BandsChecked, s.ScoreBandAgreement)
	}
	if !near(s.MeanTurns, 5) {
		t.Errorf("mean turns %v", s.MeanTurns)
	}
	if !s.MixedProvenance || s.Provenance != (Provenance{}) {
		t.Errorf("provenance %+v mixed %v", s.Provenance, s.MixedProvenance)
	}
	o := Assess(a)
	if !reflect.DeepEqual(o.RedFlagsHit, []string{"Thunderclap", "neck stiffness"}) || !reflect.DeepEqual(o.RedFlagsMissed, []string{"confusion"}) || !reflect.DeepEqual(o.FalseAlarms, []string{"meningitis"}) {
		t.Errorf("assess a: %+v", o)
	}
	if same := Score([]Result{c, c}); same.MixedProvenance || same.Provenance.Release != "2.0" {
		t.Errorf("same provenance: %+v", same)
	}
}

func TestScoreEmpty(t *testing.T) {
	s := Score(nil)
	if s.Accuracy != 0 || s.Scored != 0 || len(s.PerClass) != 4 || s.MeanTurns != 0 {
		t.Errorf("empty: %+v", s)
	}
}

// A simulator-limited result is counted apart, overall and by gold class,
// and never in the engine's rates or its comparisons: an emergency the
// patient could not describe is not the engine's under-triage.
func TestSimulatorLimitedIsCountedApart(t *testing.T) {
	right := res("right", Emergency, Emergency)
	right.Questions, right.Understood = 4, 4
	missed := res("missed", Emergency, Routine)
	missed.Questions, missed.Understood, missed.SimulatorLimited = 5, 3, true
	s := Score([]Result{right, missed})
	if s.Scored != 1 || s.SimulatorLimited != 1 || s.Errors != 0 || s.UnderTriage != 0 || s.Accuracy != 1 {
		t.Fatalf("scored %d, limited %d, errors %d, under %v, accuracy %v", s.Scored, s.SimulatorLimited, s.Errors, s.UnderTriage, s.Accuracy)
	}
	if e := s.PerClass[Emergency]; e.N != 1 || e.Under != 0 || e.SimulatorLimited != 1 {
		t.Fatalf("emergency class: %+v", e)
	}
	if s.Questions != 9 || !near(s.Coverage, 7.0/9) {
		t.Fatalf("coverage %v of %d", s.Coverage, s.Questions)
	}
	o := Assess(missed)
	if o.Scored() || !o.SimulatorLimited || o.Triage != TriageUnder {
		t.Fatalf("the limited outcome: %+v", o)
	}
	base := res("missed", Emergency, Emergency)
	c := Compare([]Result{base}, []Result{missed}, nil)
	if len(c.Regressions) != 0 || c.Paired != 0 {
		t.Fatalf("a simulator-limited head is not the engine's regression: %+v", c)
	}
}
