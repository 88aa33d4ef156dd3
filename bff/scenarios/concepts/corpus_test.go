package concepts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func loadCorpus(tb testing.TB) []corpusCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	var c corpusFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		tb.Fatalf("corpus.yaml: %v", err)
	}
	if len(c.Cases) == 0 {
		tb.Fatal("corpus.yaml has no cases")
	}
	return c.Cases
}

func mustLoad(tb testing.TB) *Understanding {
	tb.Helper()
	u, err := Load()
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// TestCorpus plays every case of the engine-question corpus: per-concept
// recall must be 100% and no case may have a confusion (a concept found
// that it does not list, one missing, two in the wrong order, or a wrong
// inverse).
func TestCorpus(t *testing.T) {
	u := mustLoad(t)
	cases := loadCorpus(t)
	total := map[string]int{}
	found := map[string]int{}
	var confusions, low []string
	for i, c := range cases {
		want := *c.Concepts
		got := u.Understand(c.Q)
		if slices.ContainsFunc(got, func(m Match) bool { return m.Margin < MinMargin }) {
			low = append(low, fmt.Sprintf("case %d %q", i+1, c.Q))
		}
		var gotIDs []string
		gotInverse := map[string]bool{}
		for _, m := range got {
			gotIDs = append(gotIDs, m.Concept)
			gotInverse[m.Concept] = m.Inverse
		}
		var problems []string
		for _, id := range want {
			total[id]++
			if slices.Contains(gotIDs, id) {
				found[id]++
			} else {
				problems = append(problems, "missing "+id)
			}
		}
		for _, m := range got {
			if !slices.Contains(want, m.Concept) {
				problems = append(problems, fmt.Sprintf("found %s (cue %q)", m.Concept, m.Cue))
				continue
			}
			if wantInv := slices.Contains(c.Inverse, m.Concept); m.Inverse != wantInv {
				problems = append(problems, fmt.Sprintf("%s inverse %v, want %v (cue %q)", m.Concept, m.Inverse, wantInv, m.Cue))
			}
		}
		if len(problems) == 0 && !slices.Equal(gotIDs, want) {
			problems = append(problems, fmt.Sprintf("order %v, want %v", gotIDs, want))
		}
		if len(problems) > 0 {
			confusions = append(confusions, fmt.Sprintf("case %d %q: %s", i+1, c.Q, strings.Join(problems, "; ")))
		}
	}
	var full, sum, sumFound int
	for _, c := range u.Concepts() {
		n, f := total[c.ID], found[c.ID]
		sum += n
		sumFound += f
		mark := ""
		if f == n {
			full++
		} else {
			mark = "  <"
		}
		t.Logf("%-26s %2d/%-2d%s", c.ID, f, n, mark)
	}
	t.Logf("cases %d; concepts at 100%% recall %d of %d; recall %d/%d; confusions %d",
		len(cases), full, len(u.Concepts()), sumFound, sum, len(confusions))
	for _, c := range confusions {
		t.Logf("confusion: %s", c)
	}
	for _, c := range low {
		t.Logf("below the margin (the patient would not trust it): %s", c)
	}
	if sumFound < sum || len(confusions) > 0 {
		t.Errorf("recall %d/%d with %d confusions: want 100%% and none", sumFound, sum, len(confusions))
	}
	if len(low) > maxCorpusLowMargin {
		t.Errorf("%d cases read below the margin, want at most %d", len(low), maxCorpusLowMargin)
	}
}

// maxCorpusLowMargin is how many corpus cases this understanding reads
// below the margin (found, but not trusted: the patient says it does not
// understand); TestCorpus fails above it.
const maxCorpusLowMargin = 3

// exactWords is the baseline the understanding replaces: a concept is
// found when the message holds its id's own words in order ("chest_pain"
// when "chest pain" is said), word for word, the way the simulated
// patient's `asks` matched.
type exactWords struct {
	phrases map[string][][]string
}

func newExactWords(u *Understanding) *exactWords {
	e := &exactWords{phrases: map[string][][]string{}}
	for _, c := range u.Concepts() {
		id, _ := words(strings.ReplaceAll(c.ID, "_", " "), nil)
		e.phrases[c.ID] = append(e.phrases[c.ID], id)
	}
	return e
}

func (e *exactWords) finds(message, id string) bool {
	ws, _ := words(message, nil)
	for _, p := range e.phrases[id] {
		for i := range ws {
			if phraseAt(ws, i, p) {
				return true
			}
		}
	}
	return false
}

// TestExactWordsAreNotEnough shows that matching the concepts' own words
// misses much of the corpus, where Understand finds every concept: the test
// that fails when understanding by meaning is replaced by exact words.
func TestExactWordsAreNotEnough(t *testing.T) {
	u := mustLoad(t)
	e := newExactWords(u)
	var total, baseline, understood int
	for _, c := range loadCorpus(t) {
		got := u.Understand(c.Q)
		for _, id := range *c.Concepts {
			total++
			if e.finds(c.Q, id) {
				baseline++
			}
			if slices.ContainsFunc(got, func(m Match) bool { return m.Concept == id }) {
				understood++
			}
		}
	}
	bp := 100 * float64(baseline) / float64(total)
	up := 100 * float64(understood) / float64(total)
	t.Logf("exact words of the concept id: recall %d/%d (%.0f%%); Understand: %d/%d (%.0f%%)", baseline, total, bp, understood, total, up)
	if bp >= 60 {
		t.Errorf("exact-words baseline recall %.0f%%: the corpus should need more than the concepts' own words", bp)
	}
	if understood != total {
		t.Errorf("Understand recall %d/%d, want all", understood, total)
	}
}

// BenchmarkUnderstand understands every corpus question once per iteration
// and reports the time per message.
func BenchmarkUnderstand(b *testing.B) {
	u := mustLoad(b)
	var qs []string
	for _, c := range loadCorpus(b) {
		qs = append(qs, c.Q)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, q := range qs {
			u.Understand(q)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(qs))/1000, "µs/msg")
}

// BenchmarkLoad is what building the understanding costs: why package
// scenarios builds it once per process.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(); err != nil {
			b.Fatal(err)
		}
	}
}
