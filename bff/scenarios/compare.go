package scenarios

import (
	"cmp"
	"slices"
	"time"
)

// Verdict is a clinician's judgement of a disagreement between the engine
// and the gold label.
type Verdict string

// Verdicts.
const (
	GoldWrong   Verdict = "gold_wrong"   // the gold label is wrong: not the engine's regression
	EngineWrong Verdict = "engine_wrong" // the engine is wrong: the regression stands
)

// Adjudication is a clinician's verdict on one vignette. It carries into
// every later comparison given it, for as long as the vignette's gold class
// is Gold (when Gold is set): a corrected gold label retires it.
type Adjudication struct {
	VignetteID string    `json:"vignette_id"`
	Verdict    Verdict   `json:"verdict"`
	Gold       Class     `json:"gold,omitempty"` // the gold class judged; "" for any
	Note       string    `json:"note"`
	By         string    `json:"by"`
	At         time.Time `json:"at"`
}

// Side is one vignette in one run, over its repeats.
type Side struct {
	Present bool  `json:"present"` // the run has a scored repeat of it
	Final   Class `json:"final"`   // the most frequent final class; a tie goes to the less urgent
	// Correct and Under hold when more than half the scored repeats are
	// correct (under-triaged): a tie is not correct, and not under.
	Correct bool `json:"correct"`
	Under   bool `json:"under"`
	Repeats int  `json:"repeats"` // results, scored or not
	Scored  int  `json:"scored"`
}

// Change is one vignette across two runs. Both runs' plays are judged
// against one gold label, the head's (the base's when the head lacks the
// vignette): a change of the label is not a change of the engine.
type Change struct {
	VignetteID string `json:"vignette_id"`
	Title      string `json:"title"`
	Gold       Class  `json:"gold"` // the head's gold (the base's when the head lacks it)
	Base       Side   `json:"base"`
	Head       Side   `json:"head"`
	// GoldChanged: both runs played it and its gold label (class or
	// accepted dispositions) differs between them; BaseGold is then the
	// base's own gold class. The base's plays are judged against the
	// head's label all the same.
	GoldChanged bool  `json:"gold_changed,omitempty"`
	BaseGold    Class `json:"base_gold,omitempty"`
	// Changed: both runs have it and the engine's final class, or its
	// correctness against the one label, differs.
	Changed bool `json:"changed"`
	// Regression: correct in the base and not in the head, or newly
	// under-triaged (UnderTriage: not under in the base, under in the head;
	// flagged first). Improvement: wrong in the base, correct in the head.
	Regression  bool `json:"regression"`
	UnderTriage bool `json:"under_triage"`
	Improvement bool `json:"improvement"`
	// Adjudication is the verdict that applies to this vignette, if any;
	// SetAside says a gold_wrong verdict removed its regression.
	Adjudication *Adjudication `json:"adjudication,omitempty"`
	SetAside     bool          `json:"set_aside"`
}

// Scope is what a comparison took of one run: its plays as written.
// Varied plays are left out (they are compared with the run's own plays
// as written, in Flips), and so are plays that are not scored (failed, or
// simulator-limited).
type Scope struct {
	Plays      int      `json:"plays"`  // results as written, repeats included
	Scored     int      `json:"scored"` // of Plays: the ones compared
	Varied     int      `json:"varied"` // varied results: left out
	Variations []string `json:"variations,omitempty"`
	// Flips is the run's own flip report (nil without variations).
	Flips *FlipReport `json:"flips,omitempty"`
}

// NotScored is the plays as written that were left out: failed or
// simulator-limited.
func (s Scope) NotScored() int { return s.Plays - s.Scored }

// FlippedDown counts the run's downward flips.
func (s Scope) FlippedDown() int {
	n := 0
	if s.Flips != nil {
		for _, f := range s.Flips.Flips {
			if f.Direction == FlipDown {
				n++
			}
		}
	}
	return n
}

func scopeOf(results []Result) Scope {
	s := Scope{Flips: Flips(results)}
	for _, r := range results {
		switch {
		case r.Variation != "":
			s.Varied++
		case Assess(r).Scored():
			s.Plays++
			s.Scored++
		default:
			s.Plays++
		}
	}
	if s.Flips != nil {
		s.Variations = s.Flips.Variations
	}
	return s
}

// Comparison is a head run compared with a base run, vignette by vignette.
type Comparison struct {
	// BaseScope and HeadScope say what was compared of each run and what
	// was left out.
	BaseScope Scope    `json:"base_scope"`
	HeadScope Scope    `json:"head_scope"`
	Changes   []Change `json:"changes"` // every vignette of either run, by id
	// GoldChanges are the vignettes whose gold label differs between the
	// runs, by id: a difference of the suite, not of the engine. Each is
	// also in Regressions or Improvements when the engine's answer
	// changed too.
	GoldChanges []Change `json:"gold_changes,omitempty"`
	// Regressions not set aside: newly under-triaged first, then by id.
	Regressions  []Change `json:"regressions"`
	SetAside     []Change `json:"set_aside"` // regressions adjudicated gold_wrong
	Improvements []Change `json:"improvements"`
	OnlyInBase   []string `json:"only_in_base"` // ids not paired: no scored repeat in the other run
	OnlyInHead   []string `json:"only_in_head"`

	// The paired outcomes (correct or not) of vignettes both runs scored,
	// and McNemar's exact p-value on BaseOnlyCorrect and HeadOnlyCorrect.
	// Adjudications do not change these: they are the engine's outcomes.
	Paired          int     `json:"paired"`
	BothCorrect     int     `json:"both_correct"`
	BaseOnlyCorrect int     `json:"base_only_correct"`
	HeadOnlyCorrect int     `json:"head_only_correct"`
	BothWrong       int     `json:"both_wrong"`
	PValue          float64 `json:"p_value"`
	// Clustered is the test for runs with repeats (nil when every
	// vignette was played once in both): PValue's McNemar pairs one
	// majority outcome per vignette and is for single plays.
	Clustered *ClusteredTest `json:"clustered,omitempty"`
}

// Regressed reports whether any vignette regressed without a gold_wrong
// adjudication setting it aside.
func (c *Comparison) Regressed() bool { return len(c.Regressions) > 0 }

// Compare pairs base and head results by vignette id; repeats are combined
// by majority (see Side). Only plays as written are paired (see Scope).
// Both runs are judged against the head's gold label of each vignette,
// so an engine that answered the same is not a regression or an
// improvement when only the label changed (see Change.GoldChanged).
// adjudications are by vignette id.
func Compare(base, head []Result, adjudications map[string]Adjudication) Comparison {
	baseGold, headGold := golds(base), golds(head)
	judged := make([]Result, len(base))
	for i, r := range base {
		if g, ok := headGold[r.VignetteID]; ok {
			r.Gold = g
		}
		judged[i] = r
	}
	b, h := sides(judged), sides(head)
	ids := make([]string, 0, len(b)+len(h))
	for id := range b {
		ids = append(ids, id)
	}
	for id := range h {
		if _, ok := b[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	c := Comparison{BaseScope: scopeOf(base), HeadScope: scopeOf(head)}
	for _, id := range ids {
		bs, hs := b[id], h[id]
		ch := Change{VignetteID: id, Base: bs.Side, Head: hs.Side, Title: hs.title, Gold: hs.gold}
		if !hs.Present {
			ch.Title, ch.Gold = cmp.Or(ch.Title, bs.title), cmp.Or(ch.Gold, bs.gold)
		}
		if bg, ok := baseGold[id]; ok && bs.Repeats > 0 && hs.Repeats > 0 && !sameLabel(bg, headGold[id]) {
			ch.GoldChanged, ch.BaseGold = true, bg.Class
		}
		if a, ok := adjudications[id]; ok && (a.Gold == "" || a.Gold == ch.Gold) {
			ch.Adjudication = &a
		}
		switch {
		case !bs.Present && !hs.Present:
			// Neither run scored it (every repeat failed): nothing to pair.
		case !hs.Present:
			c.OnlyInBase = append(c.OnlyInBase, id)
		case !bs.Present:
			c.OnlyInHead = append(c.OnlyInHead, id)
		default:
			c.pair(&ch)
		}
		if ch.GoldChanged {
			c.GoldChanges = append(c.GoldChanges, ch)
		}
		c.Changes = append(c.Changes, ch)
	}
	slices.SortStableFunc(c.Regressions, func(x, y Change) int {
		if x.UnderTriage != y.UnderTriage {
			if x.UnderTriage {
				return -1
			}
			return 1
		}
		return 0 // already by id
	})
	c.PValue = McNemarExact(c.BaseOnlyCorrect, c.HeadOnlyCorrect)
	repeated := func(m map[string]side) bool {
		for _, s := range m {
			if s.Scored > 1 {
				return true
			}
		}
		return false
	}
	if repeated(b) || repeated(h) {
		ct := ClusteredCompare(judged, head)
		c.Clustered = &ct
	}
	return c
}

func (c *Comparison) pair(ch *Change) {
	bs, hs := ch.Base, ch.Head
	c.Paired++
	switch {
	case bs.Correct && hs.Correct:
		c.BothCorrect++
	case bs.Correct:
		c.BaseOnlyCorrect++
	case hs.Correct:
		c.HeadOnlyCorrect++
	default:
		c.BothWrong++
	}
	ch.Changed = bs.Final != hs.Final || bs.Correct != hs.Correct
	ch.UnderTriage = hs.Under && !bs.Under
	ch.Regression = (bs.Correct && !hs.Correct) || ch.UnderTriage
	ch.Improvement = !bs.Correct && hs.Correct
	switch {
	case ch.Regression && ch.Adjudication != nil && ch.Adjudication.Verdict == GoldWrong:
		ch.SetAside = true
		c.SetAside = append(c.SetAside, *ch)
	case ch.Regression:
		c.Regressions = append(c.Regressions, *ch)
	case ch.Improvement:
		c.Improvements = append(c.Improvements, *ch)
	}
}

// golds are each vignette's gold label, from its first result as written
// (a run's repeats and variations share it).
func golds(results []Result) map[string]Gold {
	out := map[string]Gold{}
	for _, r := range Unvaried(results) {
		if _, ok := out[r.VignetteID]; !ok {
			out[r.VignetteID] = r.Gold
		}
	}
	return out
}

// sameLabel reports whether two gold labels judge a final class alike:
// the same class and the same accepted dispositions, in any order.
func sameLabel(a, b Gold) bool {
	return a.Class == b.Class && slices.Equal(slices.Sorted(slices.Values(a.Dispositions)), slices.Sorted(slices.Values(b.Dispositions)))
}

// leastUrgentFirst is NoClass then Classes from self-care up.
var leastUrgentFirst = []Class{NoClass, SelfCare, Routine, Urgent, Emergency}

// mostCommon is the class counted most often in counts, and its count; a
// tie goes to the less urgent class, so a tie never hides an under-triage.
// NoClass and 0 when nothing was counted.
func mostCommon(counts map[Class]int) (Class, int) {
	best, n := NoClass, 0
	for _, c := range leastUrgentFirst {
		if counts[c] > n {
			best, n = c, counts[c]
		}
	}
	return best, n
}

type side struct {
	Side
	title string
	gold  Class
}

func sides(results []Result) map[string]side {
	type tally struct {
		side
		correct, under int
		finals         map[Class]int
	}
	t := map[string]*tally{}
	for _, r := range Unvaried(results) {
		x := t[r.VignetteID]
		if x == nil {
			x = &tally{finals: map[Class]int{}}
			t[r.VignetteID] = x
		}
		x.Repeats++
		x.title, x.gold = cmp.Or(x.title, r.Title), cmp.Or(x.gold, r.Gold.Class)
		o := Assess(r)
		if !o.Scored() {
			continue
		}
		x.Scored++
		x.finals[r.Final]++
		if o.Correct() {
			x.correct++
		}
		if o.Triage == TriageUnder {
			x.under++
		}
	}
	out := make(map[string]side, len(t))
	for id, x := range t {
		s := x.side
		s.Present = s.Scored > 0
		s.Correct = 2*x.correct > s.Scored
		s.Under = 2*x.under > s.Scored
		s.Final, _ = mostCommon(x.finals)
		out[id] = s
	}
	return out
}
