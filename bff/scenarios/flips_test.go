package scenarios

import (
	"math"
	"slices"
	"testing"
)

func varied(id string, gold, final Class, variation string, repeat int) Result {
	r := res(id, gold, final)
	r.Variation, r.Repeat = variation, repeat
	return r
}

func TestFlips(t *testing.T) {
	rs := []Result{
		varied("a", Emergency, Emergency, "", 1),
		varied("a", Emergency, Urgent, "typos", 1), // down
		varied("a", Emergency, Emergency, "lay", 1),
		varied("b", Routine, Routine, "", 1),
		varied("b", Routine, Urgent, "typos", 1), // up
		varied("b", Routine, NoClass, "lay", 1),  // down: undecided
		varied("c", SelfCare, SelfCare, "", 1),
		varied("c", SelfCare, SelfCare, "typos", 1),
		varied("d", Emergency, Emergency, "typos", 1), // no unvaried play: not compared
	}
	errd := varied("c", SelfCare, Urgent, "lay", 1)
	errd.Error = "turn 3: timeout" // not scored: not compared
	rs = append(rs, errd)
	f := Flips(rs)
	if f == nil {
		t.Fatal("no flip report")
	}
	if !slices.Equal(f.Variations, []string{"typos", "lay"}) {
		t.Errorf("variations %v", f.Variations)
	}
	if f.NotCompared != 2 {
		t.Errorf("not compared %d, want 2", f.NotCompared)
	}
	row := func(v string, c Class) FlipRow {
		for _, r := range f.Rows {
			if r.Variation == v && r.Class == c {
				return r
			}
		}
		t.Fatalf("no row %s/%s", v, c)
		return FlipRow{}
	}
	if r := row("typos", ""); r.Compared != 3 || r.Flipped != 2 || r.Down != 1 || r.Up != 1 || math.Abs(r.DownRate-1.0/3) > 1e-9 {
		t.Errorf("typos all: %+v", r)
	}
	if r := row("typos", Emergency); r.Compared != 1 || r.Down != 1 || r.DownRate != 1 {
		t.Errorf("typos emergency: %+v", r)
	}
	if r := row("lay", ""); r.Compared != 2 || r.Down != 1 || r.Up != 0 {
		t.Errorf("lay all: %+v", r)
	}
	// Downward flips first, then upward.
	if len(f.Flips) != 3 || f.Flips[0].Direction != FlipDown || f.Flips[1].Direction != FlipDown || f.Flips[2].Direction != FlipUp {
		t.Fatalf("flips %+v", f.Flips)
	}
	if x := f.Flips[0]; x.VignetteID != "a" || x.Variation != "typos" || x.Base != Emergency || x.Varied != Urgent {
		t.Errorf("first flip %+v", x)
	}
	if got := f.FlippedBy("b"); !slices.Equal(got, []string{"lay", "typos"}) {
		t.Errorf("b flipped by %v", got)
	}
	// No varied result: no flip report.
	if Flips([]Result{res("a", Emergency, Emergency)}) != nil {
		t.Error("a flip report without variations")
	}
}

func TestFlipsWithRepeatsUseTheModalClass(t *testing.T) {
	rs := []Result{
		varied("a", Emergency, Emergency, "", 1), varied("a", Emergency, Emergency, "", 2), varied("a", Emergency, Urgent, "", 3),
		varied("a", Emergency, Emergency, "terse", 1), varied("a", Emergency, Urgent, "terse", 2), varied("a", Emergency, Urgent, "terse", 3),
	}
	f := Flips(rs)
	if len(f.Flips) != 1 || f.Flips[0].Base != Emergency || f.Flips[0].Varied != Urgent {
		t.Fatalf("flips %+v", f.Flips)
	}
	// The transcripts shown are of a repeat that ended in the modal class.
	if f.Flips[0].BaseRepeat != 1 || f.Flips[0].VariedRepeat != 2 {
		t.Errorf("repeats %d %d", f.Flips[0].BaseRepeat, f.Flips[0].VariedRepeat)
	}
}

func TestConsistency(t *testing.T) {
	rs := []Result{
		res("a", Emergency, Emergency), res("a", Emergency, Emergency), res("a", Emergency, Urgent),
		res("b", Routine, Routine), res("b", Routine, Routine), res("b", Routine, Routine),
		res("c", SelfCare, Urgent), res("c", SelfCare, Urgent), res("c", SelfCare, Urgent),
		varied("c", SelfCare, SelfCare, "typos", 1), // varied: not counted
	}
	for i := range rs {
		rs[i].Repeat = i%3 + 1
	}
	c := Consistency(rs)
	if c == nil || c.K != 3 || len(c.Vignettes) != 3 {
		t.Fatalf("consistency %+v", c)
	}
	a := c.Vignettes[0]
	if a.VignetteID != "a" || a.Modal != Emergency || math.Abs(a.Agreement-2.0/3) > 1e-9 || a.PassK {
		t.Errorf("a: %+v", a)
	}
	if b := c.Vignettes[1]; b.Agreement != 1 || !b.PassK {
		t.Errorf("b: %+v", b)
	}
	if cc := c.Vignettes[2]; cc.Agreement != 1 || cc.PassK { // consistent, and consistently wrong
		t.Errorf("c: %+v", cc)
	}
	if s := c.PerClass[Emergency]; s.N != 1 || s.PassK != 0 || math.Abs(s.MeanAgreement-2.0/3) > 1e-9 {
		t.Errorf("emergency: %+v", s)
	}
	if s := c.All; s.N != 3 || math.Abs(s.PassK-1.0/3) > 1e-9 {
		t.Errorf("all: %+v", s)
	}
	// Single plays: nothing to say about consistency.
	if Consistency([]Result{res("a", Emergency, Emergency)}) != nil {
		t.Error("consistency of single plays")
	}
}

func TestClusteredCompare(t *testing.T) {
	// Three vignettes, two repeats each: base correct 2, 2, 1; head 0, 1, 1.
	// Obuchowski (1998) by hand: p1 = 5/6, p2 = 2/6; per-cluster residuals
	// (X1-X2) - n(p1-p2) = 1, 0, -1; var = 3/2 * 2/36 = 1/12;
	// X² = 0.25 / (1/12) = 3, p = erfc(sqrt(3/2)) = 0.08326.
	var base, head []Result
	add := func(out *[]Result, id string, correct int) {
		for k := range 2 {
			f := Urgent
			if k < correct {
				f = Emergency
			}
			r := res(id, Emergency, f)
			r.Repeat = k + 1
			*out = append(*out, r)
		}
	}
	add(&base, "a", 2)
	add(&base, "b", 2)
	add(&base, "c", 1)
	add(&head, "a", 0)
	add(&head, "b", 1)
	add(&head, "c", 1)
	ct := ClusteredCompare(base, head)
	if ct.Clusters != 3 || math.Abs(ct.BaseCorrect-5.0/6) > 1e-9 || math.Abs(ct.HeadCorrect-2.0/6) > 1e-9 {
		t.Fatalf("%+v", ct)
	}
	if math.Abs(ct.Statistic-3) > 1e-9 || math.Abs(ct.PValue-0.0832645166635504) > 1e-9 {
		t.Errorf("statistic %v p %v", ct.Statistic, ct.PValue)
	}
	// Compare carries it when a run has repeats.
	c := Compare(base, head, nil)
	if c.Clustered == nil || math.Abs(c.Clustered.PValue-ct.PValue) > 1e-12 {
		t.Errorf("Compare's clustered test %+v", c.Clustered)
	}
	if Compare([]Result{res("a", Emergency, Emergency)}, []Result{res("a", Emergency, Urgent)}, nil).Clustered != nil {
		t.Error("a clustered test of single plays")
	}
	// Nothing changed: p = 1.
	if ct := ClusteredCompare(base, base); ct.PValue != 1 || ct.Statistic != 0 {
		t.Errorf("same runs: %+v", ct)
	}
}
