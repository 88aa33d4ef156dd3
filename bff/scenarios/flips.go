package scenarios

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// FlipDirection says which way a variation moved a vignette's final class.
type FlipDirection string

// Directions.
const (
	// FlipDown: less urgent than the unvaried play, or undecided where it
	// decided: the safety figure.
	FlipDown FlipDirection = "down"
	FlipUp   FlipDirection = "up" // more urgent
)

// Flip is one vignette whose final class under a variation differs from
// its unvaried play's. With repeats, each side is its modal class (a tie
// goes to the less urgent), and BaseRepeat and VariedRepeat name a repeat
// that ended in it: the transcripts to show side by side.
type Flip struct {
	VignetteID   string        `json:"vignette_id"`
	Title        string        `json:"title"`
	Gold         Class         `json:"gold"`
	Variation    string        `json:"variation"`
	Base         Class         `json:"base"`
	Varied       Class         `json:"varied"`
	Direction    FlipDirection `json:"direction"`
	BaseRepeat   int           `json:"base_repeat"`
	VariedRepeat int           `json:"varied_repeat"`
}

// FlipRow is one variation's flips over the vignettes of one gold class
// (Class "" for all): Compared had a scored unvaried and varied play;
// rates are fractions of Compared (0 when it is 0).
type FlipRow struct {
	Variation string  `json:"variation"`
	Class     Class   `json:"class,omitempty"`
	Compared  int     `json:"compared"`
	Flipped   int     `json:"flipped"`
	Down      int     `json:"down"`
	Up        int     `json:"up"`
	DownRate  float64 `json:"down_rate"`
	FlipRate  float64 `json:"flip_rate"`
}

// FlipReport compares every variation's plays with the unvaried ones.
type FlipReport struct {
	Variations []string `json:"variations"` // in the order the results first name them
	// Rows: per variation, all classes first, then each gold class that
	// has a compared vignette, most urgent first.
	Rows []FlipRow `json:"rows"`
	// Flips: downward first; then emergencies first, by vignette id and
	// variation.
	Flips []Flip `json:"flips"`
	// NotCompared counts vignette×variation pairs left out: the varied or
	// the unvaried play has no scored result (failed, or the patient did
	// not understand a question).
	NotCompared int `json:"not_compared"`
}

// FlippedBy lists, sorted, the variations that flipped vignette id.
func (f *FlipReport) FlippedBy(id string) []string {
	var out []string
	for _, x := range f.Flips {
		if x.VignetteID == id {
			out = append(out, x.Variation)
		}
	}
	slices.Sort(out)
	return out
}

// modal is a vignette's most frequent final class over its scored results
// (a tie goes to the less urgent, as in Compare), and a repeat ending in it.
type modal struct {
	class  Class
	repeat int
	scored int
	title  string
	gold   Class
}

func modals(results []Result) map[[2]string]*modal {
	counts := map[[2]string]map[Class]int{}
	first := map[[2]string]map[Class]int{}
	out := map[[2]string]*modal{}
	for _, r := range results {
		k := [2]string{r.VignetteID, r.Variation}
		m := out[k]
		if m == nil {
			m = &modal{title: r.Title, gold: r.Gold.Class}
			out[k], counts[k], first[k] = m, map[Class]int{}, map[Class]int{}
		}
		if !Assess(r).Scored() {
			continue
		}
		m.scored++
		counts[k][r.Final]++
		if _, ok := first[k][r.Final]; !ok {
			first[k][r.Final] = r.Repeat
		}
	}
	for k, m := range out {
		if c, n := mostCommon(counts[k]); n > 0 {
			m.class, m.repeat = c, first[k][c]
		}
	}
	return out
}

// Flips compares each varied play with the unvaried play of the same
// vignette; nil when no result is varied.
func Flips(results []Result) *FlipReport {
	f := &FlipReport{}
	for _, r := range results {
		if r.Variation != "" && !slices.Contains(f.Variations, r.Variation) {
			f.Variations = append(f.Variations, r.Variation)
		}
	}
	if len(f.Variations) == 0 {
		return nil
	}
	ms := modals(results)
	keys := make([][2]string, 0, len(ms))
	for k := range ms {
		if k[1] != "" {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Compare(a[0], b[0]) })
	rows := map[string]map[Class]*FlipRow{}
	for _, v := range f.Variations {
		rows[v] = map[Class]*FlipRow{"": {Variation: v}}
	}
	for _, k := range keys {
		vm, bm := ms[k], ms[[2]string{k[0], ""}]
		if bm == nil || bm.scored == 0 || vm.scored == 0 {
			f.NotCompared++
			continue
		}
		gold := cmp.Or(bm.gold, vm.gold)
		if rows[k[1]][gold] == nil {
			rows[k[1]][gold] = &FlipRow{Variation: k[1], Class: gold}
		}
		for _, row := range []*FlipRow{rows[k[1]][""], rows[k[1]][gold]} {
			row.Compared++
		}
		if vm.class == bm.class {
			continue
		}
		dir := FlipUp
		if vm.class.Rank() > bm.class.Rank() {
			dir = FlipDown
		}
		for _, row := range []*FlipRow{rows[k[1]][""], rows[k[1]][gold]} {
			row.Flipped++
			if dir == FlipDown {
				row.Down++
			} else {
				row.Up++
			}
		}
		f.Flips = append(f.Flips, Flip{VignetteID: k[0], Title: cmp.Or(bm.title, vm.title), Gold: gold, Variation: k[1],
			Base: bm.class, Varied: vm.class, Direction: dir, BaseRepeat: bm.repeat, VariedRepeat: vm.repeat})
	}
	for _, v := range f.Variations {
		for _, c := range append([]Class{""}, Classes...) {
			row := rows[v][c]
			if row == nil {
				continue
			}
			if row.Compared > 0 {
				row.DownRate = float64(row.Down) / float64(row.Compared)
				row.FlipRate = float64(row.Flipped) / float64(row.Compared)
			}
			f.Rows = append(f.Rows, *row)
		}
	}
	order := func(v string) int { return slices.Index(f.Variations, v) }
	slices.SortStableFunc(f.Flips, func(a, b Flip) int {
		if a.Direction != b.Direction {
			if a.Direction == FlipDown {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Gold.Rank(), b.Gold.Rank()), cmp.Compare(a.VignetteID, b.VignetteID), cmp.Compare(order(a.Variation), order(b.Variation)))
	})
	return f
}

// VignetteConsistency is one vignette's unvaried repeats: Agreement is the
// share of its scored repeats ending in the modal class; PassK holds when
// every one of them (at least one) is correct: pass^k.
type VignetteConsistency struct {
	VignetteID string  `json:"vignette_id"`
	Gold       Class   `json:"gold"`
	Repeats    int     `json:"repeats"` // scored
	Modal      Class   `json:"modal"`
	Agreement  float64 `json:"agreement"`
	PassK      bool    `json:"pass_k"`
}

// ConsistencySummary sums the vignettes of a class: their mean agreement
// and the share that passed every repeat (pass^k).
type ConsistencySummary struct {
	N             int     `json:"n"`
	MeanAgreement float64 `json:"mean_agreement"`
	PassK         float64 `json:"pass_k"`
}

// ConsistencyReport is how alike an engine's repeats of each vignette were.
type ConsistencyReport struct {
	K         int                          `json:"k"` // the most scored repeats of a vignette
	Vignettes []VignetteConsistency        `json:"vignettes"`
	PerClass  map[Class]ConsistencySummary `json:"per_class"`
	All       ConsistencySummary           `json:"all"`
}

// Consistency summarises the unvaried results' repeats; nil when no
// vignette has two scored repeats.
func Consistency(results []Result) *ConsistencyReport {
	type tally struct {
		gold    Class
		finals  map[Class]int
		n, good int
	}
	t := map[string]*tally{}
	for _, r := range Unvaried(results) {
		o := Assess(r)
		if !o.Scored() {
			continue
		}
		x := t[r.VignetteID]
		if x == nil {
			x = &tally{gold: r.Gold.Class, finals: map[Class]int{}}
			t[r.VignetteID] = x
		}
		x.n++
		x.finals[r.Final]++
		if o.Correct() {
			x.good++
		}
	}
	c := &ConsistencyReport{PerClass: map[Class]ConsistencySummary{}}
	for _, x := range t {
		c.K = max(c.K, x.n)
	}
	if c.K < 2 {
		return nil
	}
	sums := map[Class]*[3]float64{} // n, agreement, pass
	for _, id := range slices.Sorted(maps.Keys(t)) {
		x := t[id]
		v := VignetteConsistency{VignetteID: id, Gold: x.gold, Repeats: x.n, PassK: x.good == x.n}
		var best int
		v.Modal, best = mostCommon(x.finals)
		v.Agreement = float64(best) / float64(x.n)
		c.Vignettes = append(c.Vignettes, v)
		for _, k := range []Class{x.gold, "all"} {
			if sums[k] == nil {
				sums[k] = &[3]float64{}
			}
			sums[k][0]++
			sums[k][1] += v.Agreement
			if v.PassK {
				sums[k][2]++
			}
		}
	}
	for k, s := range sums {
		cs := ConsistencySummary{N: int(s[0]), MeanAgreement: s[1] / s[0], PassK: s[2] / s[0]}
		if k == "all" {
			c.All = cs
		} else {
			c.PerClass[k] = cs
		}
	}
	return c
}

// ClusteredTest compares the share of correct plays of two runs with
// repeats, each vignette's repeats one cluster: Obuchowski's (1998)
// extension of McNemar's test to clustered data (Stat Med 17:1495), with
// the ratio estimator so the two runs may have different repeats.
//
// McNemar's test on single plays assumes independent pairs. With repeats,
// pairing every repeat counts one vignette k times (its repeats are
// correlated: same facts, same engine path), which shrinks the variance
// and makes p far too small; taking one repeat or a majority throws the
// repeats away and lets the engine's own randomness pass for a change.
// The clustered test estimates the variance from the vignettes' totals.
type ClusteredTest struct {
	Method      string  `json:"method"`
	Clusters    int     `json:"clusters"`     // vignettes scored in both runs
	BaseCorrect float64 `json:"base_correct"` // correct plays over scored plays
	HeadCorrect float64 `json:"head_correct"`
	Statistic   float64 `json:"statistic"` // chi-square, 1 degree of freedom
	PValue      float64 `json:"p_value"`
}

// ClusteredCompare runs the clustered test on the unvaried results of two
// runs. With fewer than two clusters, or no variance between them, the
// statistic is 0 and p is 1 when the shares are equal, else p is 0.
func ClusteredCompare(base, head []Result) ClusteredTest {
	count := func(rs []Result) map[string][2]float64 {
		m := map[string][2]float64{}
		for _, r := range Unvaried(rs) {
			o := Assess(r)
			if !o.Scored() {
				continue
			}
			x := m[r.VignetteID]
			x[1]++
			if o.Correct() {
				x[0]++
			}
			m[r.VignetteID] = x
		}
		return m
	}
	b, h := count(base), count(head)
	var ids []string
	var x1, n1, x2, n2 float64
	for _, id := range slices.Sorted(maps.Keys(b)) {
		if _, ok := h[id]; ok {
			ids = append(ids, id)
			x1, n1 = x1+b[id][0], n1+b[id][1]
			x2, n2 = x2+h[id][0], n2+h[id][1]
		}
	}
	t := ClusteredTest{Method: "Obuchowski clustered McNemar (vignette = cluster)", Clusters: len(ids), PValue: 1}
	if len(ids) == 0 {
		return t
	}
	p1, p2 := x1/n1, x2/n2
	t.BaseCorrect, t.HeadCorrect = p1, p2
	k := float64(len(ids))
	var v1, v2, cov float64
	for _, id := range ids {
		d1 := b[id][0] - b[id][1]*p1
		d2 := h[id][0] - h[id][1]*p2
		v1 += d1 * d1
		v2 += d2 * d2
		cov += d1 * d2
	}
	variance := 0.0
	if k > 1 {
		variance = k / (k - 1) * (v1/(n1*n1) + v2/(n2*n2) - 2*cov/(n1*n2))
	}
	diff := p1 - p2
	switch {
	case diff == 0:
	case variance <= 1e-15:
		t.PValue = 0
	default:
		t.Statistic = diff * diff / variance
		t.PValue = math.Erfc(math.Sqrt(t.Statistic / 2))
	}
	return t
}
