package scenarios

import (
	"slices"
	"testing"
	"time"
)

func ids(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.VignetteID)
	}
	return out
}

func TestCompare(t *testing.T) {
	base := []Result{
		res("a-ok-ok", Urgent, Urgent),
		res("b-ok-over", Routine, Routine),
		res("c-ok-under", Emergency, Emergency),
		res("d-wrong-ok", SelfCare, Routine),
		res("e-over-under", Urgent, Emergency), // wrong both times, newly under
		res("f-ok-under-adj", Routine, Routine),
		res("g-only-base", Routine, Routine),
		res("h-wrong-wrong", Routine, Urgent),
	}
	head := []Result{
		res("a-ok-ok", Urgent, Urgent),
		res("b-ok-over", Routine, Urgent),
		res("c-ok-under", Emergency, Routine),
		res("d-wrong-ok", SelfCare, SelfCare),
		res("e-over-under", Urgent, Routine),
		res("f-ok-under-adj", Routine, SelfCare),
		res("h-wrong-wrong", Routine, Urgent),
		res("i-only-head", Routine, Routine),
	}
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	adj := map[string]Adjudication{
		"f-ok-under-adj": {VignetteID: "f-ok-under-adj", Verdict: GoldWrong, Gold: Routine, Note: "self-care is right", By: "dr.jones", At: at},
		"c-ok-under":     {VignetteID: "c-ok-under", Verdict: EngineWrong, By: "dr.jones", At: at},
	}
	c := Compare(base, head, adj)
	// Under-triage regressions first (c, e), then the rest (b).
	if got := ids(c.Regressions); !slices.Equal(got, []string{"c-ok-under", "e-over-under", "b-ok-over"}) {
		t.Errorf("regressions %v", got)
	}
	if got := ids(c.SetAside); !slices.Equal(got, []string{"f-ok-under-adj"}) {
		t.Errorf("set aside %v", got)
	}
	if got := ids(c.Improvements); !slices.Equal(got, []string{"d-wrong-ok"}) {
		t.Errorf("improvements %v", got)
	}
	if !slices.Equal(c.OnlyInBase, []string{"g-only-base"}) || !slices.Equal(c.OnlyInHead, []string{"i-only-head"}) {
		t.Errorf("only in base %v head %v", c.OnlyInBase, c.OnlyInHead)
	}
	// Paired: a..f and h = 7; both correct a; base only b, c, f; head only d; both wrong e, h.
	if c.Paired != 7 || c.BothCorrect != 1 || c.BaseOnlyCorrect != 3 || c.HeadOnlyCorrect != 1 || c.BothWrong != 2 {
		t.Errorf("pairs %+v", c)
	}
	if c.PValue != McNemarExact(3, 1) || c.PValue != 0.625 {
		t.Errorf("p = %v", c.PValue)
	}
	changed := map[string]bool{}
	for _, ch := range c.Changes {
		changed[ch.VignetteID] = ch.Changed
	}
	want := map[string]bool{"a-ok-ok": false, "b-ok-over": true, "c-ok-under": true, "d-wrong-ok": true, "e-over-under": true,
		"f-ok-under-adj": true, "g-only-base": false, "h-wrong-wrong": false, "i-only-head": false}
	for id, w := range want {
		if got, ok := changed[id]; !ok || got != w {
			t.Errorf("%s changed = %v (present %v), want %v", id, got, ok, w)
		}
	}
	if c.Regressions[0].Adjudication == nil || c.Regressions[0].Adjudication.Verdict != EngineWrong {
		t.Errorf("engine_wrong adjudication not carried: %+v", c.Regressions[0])
	}
	if !c.Regressed() {
		t.Error("Regressed false with regressions")
	}

	// Adjudicating the rest gold_wrong leaves nothing regressed.
	for _, id := range []string{"b-ok-over", "c-ok-under", "e-over-under"} {
		adj[id] = Adjudication{VignetteID: id, Verdict: GoldWrong}
	}
	if c := Compare(base, head, adj); c.Regressed() || len(c.SetAside) != 4 {
		t.Errorf("all adjudicated: regressions %v set aside %v", ids(c.Regressions), ids(c.SetAside))
	}
	// An adjudication of a gold class since corrected no longer applies.
	adj["f-ok-under-adj"] = Adjudication{VignetteID: "f-ok-under-adj", Verdict: GoldWrong, Gold: SelfCare}
	if c := Compare(base, head, adj); !slices.Equal(ids(c.Regressions), []string{"f-ok-under-adj"}) {
		t.Errorf("stale adjudication: regressions %v", ids(c.Regressions))
	}
}

// TestCompareRepeats: repeats combine by majority, and failed plays are not
// scored.
func TestCompareRepeats(t *testing.T) {
	rep := func(r Result, n int) Result { r.Repeat = n; return r }
	failed := res("v", Urgent, NoClass)
	failed.Error = "timeout"
	base := []Result{rep(res("v", Urgent, Urgent), 1), rep(res("v", Urgent, Urgent), 2), rep(res("v", Urgent, Routine), 3)}
	head := []Result{rep(res("v", Urgent, Urgent), 1), rep(res("v", Urgent, Routine), 2), rep(failed, 3)}
	c := Compare(base, head, nil)
	ch := c.Changes[0]
	if !ch.Base.Correct || ch.Base.Final != Urgent || ch.Base.Scored != 3 {
		t.Errorf("base side %+v", ch.Base)
	}
	// One of two scored correct is not a majority; the tie of finals goes to the less urgent.
	if ch.Head.Correct || ch.Head.Under || ch.Head.Final != Routine || ch.Head.Repeats != 3 || ch.Head.Scored != 2 {
		t.Errorf("head side %+v", ch.Head)
	}
	if !slices.Equal(ids(c.Regressions), []string{"v"}) || ch.UnderTriage {
		t.Errorf("regressions %v under %v", ids(c.Regressions), ch.UnderTriage)
	}
	// A run whose every repeat failed is not paired.
	c = Compare(base, []Result{failed}, nil)
	if c.Paired != 0 || !slices.Equal(c.OnlyInBase, []string{"v"}) || c.Regressed() {
		t.Errorf("failed head: %+v", c)
	}
}

// TestCompareGoldLabelChange: a vignette whose gold label changed while the
// engine answered the same is a label change, not a regression or an
// improvement; where the engine's answer changed too, it is judged against
// the head's label.
func TestCompareGoldLabelChange(t *testing.T) {
	base := []Result{
		res("a-label-only", Routine, Routine), // correct against its own label
		res("b-label-and-engine", Urgent, Urgent),
		res("c-same", Routine, Routine),
	}
	head := []Result{
		res("a-label-only", Urgent, Routine), // the label moved up; the engine answered the same
		res("b-label-and-engine", Routine, SelfCare),
		res("c-same", Routine, Routine),
	}
	c := Compare(base, head, nil)
	if got := ids(c.GoldChanges); !slices.Equal(got, []string{"a-label-only", "b-label-and-engine"}) {
		t.Errorf("gold changes %v", got)
	}
	// a: wrong against the head's label in both runs: no regression, no change.
	// b: against the head's label (routine) the base was over, the head under: newly under-triaged.
	if got := ids(c.Regressions); !slices.Equal(got, []string{"b-label-and-engine"}) || !c.Regressions[0].UnderTriage {
		t.Errorf("regressions %v", got)
	}
	for _, ch := range c.Changes {
		if ch.VignetteID == "a-label-only" && (ch.Changed || ch.Regression || ch.Improvement || ch.UnderTriage || ch.BaseGold != Routine || ch.Gold != Urgent) {
			t.Errorf("label-only change %+v", ch)
		}
	}
	if c.BothWrong != 2 || c.BothCorrect != 1 || c.BaseOnlyCorrect != 0 || c.HeadOnlyCorrect != 0 {
		t.Errorf("pairs on one label: %+v", c)
	}
	// Accepted dispositions are part of the label.
	d := res("d", Urgent, Urgent)
	d.Disposition = "urgent_escalation"
	dh := d
	dh.Gold.Dispositions = []string{"same_day"}
	if c := Compare([]Result{d}, []Result{dh}, nil); len(c.GoldChanges) != 1 || c.Regressed() {
		t.Errorf("a change of accepted dispositions: gold changes %v regressions %v", ids(c.GoldChanges), ids(c.Regressions))
	}
}

// TestCompareScope: varied plays are left out of the pairing and counted
// so, with each run's own flips; unscored plays as written are counted.
func TestCompareScope(t *testing.T) {
	vary := func(r Result, v string) Result { r.Variation = v; return r }
	failed := res("c", Routine, NoClass)
	failed.Error = "timeout"
	base := []Result{res("a", Emergency, Emergency), res("b", Urgent, Urgent)}
	head := []Result{res("a", Emergency, Emergency), res("b", Urgent, Urgent), failed,
		vary(res("a", Emergency, Urgent), "typos"), vary(res("b", Urgent, Routine), "typos"), vary(res("a", Emergency, Emergency), "terse")}
	c := Compare(base, head, nil)
	if c.Regressed() || len(c.Changes) != 3 {
		t.Errorf("varied plays were compared: regressions %v changes %d", ids(c.Regressions), len(c.Changes))
	}
	if s := c.BaseScope; s.Plays != 2 || s.Scored != 2 || s.Varied != 0 || s.Flips != nil {
		t.Errorf("base scope %+v", s)
	}
	s := c.HeadScope
	if s.Plays != 3 || s.Scored != 2 || s.NotScored() != 1 || s.Varied != 3 || !slices.Equal(s.Variations, []string{"typos", "terse"}) {
		t.Errorf("head scope %+v", s)
	}
	if s.FlippedDown() != 2 {
		t.Errorf("head flipped down %d, want 2", s.FlippedDown())
	}
}
