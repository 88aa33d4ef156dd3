package variations

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// Every variation over every built-in vignette keeps what it must: the
// gold labels, what each fact answers and chooses, an answer's leading yes
// or no, its numbers, and its negations (terse may drop the words after a
// yes or no; the yes or no is the answer).
func TestBuiltinKeepsMeaning(t *testing.T) {
	suite, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	swapped := map[string]int{}
	var toldByOthers []string
	for i := range suite.Vignettes {
		v := &suite.Vignettes[i]
		for _, name := range Names() {
			w, ok := Apply(v, name, 1)
			if !ok && name == Proxy {
				toldByOthers = append(toldByOthers, v.ID)
				continue
			}
			if !ok {
				if (name == SexSwap && slices.Contains(v.Neutral, "sex")) || (name == AgeSwap && slices.Contains(v.Neutral, "age")) {
					t.Errorf("%s: marked neutral but %s does not apply (its text says the sex or age)", v.ID, name)
				}
				continue
			}
			if name == SexSwap || name == AgeSwap {
				swapped[name]++
			}
			if name == Proxy {
				thirdPersonSpeaks(t, v, w)
			}
			if !goldEqual(w.Gold, v.Gold) || w.ID != v.ID || w.MaxTurns != v.MaxTurns {
				t.Errorf("%s/%s changed the gold, id or turn limit", v.ID, name)
			}
			texts := [][2]string{{v.Default, w.Default}}
			if !slices.Equal(numbers(v.Opening), numbers(w.Opening)) || negations(w.Opening) < negations(v.Opening) {
				t.Errorf("%s/%s: opening %q -> %q changed a number or lost a negation", v.ID, name, v.Opening, w.Opening)
			}
			for j, f := range v.Facts {
				g := w.Facts[j]
				if g.Concept != f.Concept || g.Choose != f.Choose || !slices.Equal(g.Asks, f.Asks) {
					t.Errorf("%s/%s: fact %d answers another question", v.ID, name, j+1)
				}
				texts = append(texts, [2]string{f.Answer, g.Answer})
			}
			for _, p := range texts {
				was, is := p[0], p[1]
				if yn(was) != yn(is) {
					t.Errorf("%s/%s: %q -> %q turned the yes/no", v.ID, name, was, is)
				}
				if !slices.Equal(numbers(was), numbers(is)) {
					t.Errorf("%s/%s: %q -> %q changed a number", v.ID, name, was, is)
				}
				if name == TerseName && yn(was) != "" && !hasNumber(was) {
					continue
				}
				if n, m := negations(was), negations(is); m < n {
					t.Errorf("%s/%s: %q -> %q lost a negation", v.ID, name, was, is)
				}
			}
		}
	}
	t.Logf("swapped: %v", swapped)
	if want := []string{"dad-face-dropped", "husband-cant-catch-breath-blue", "chest-infection-crb65-three", "mum-headache-words-wrong",
		"partner-fitting", "rash-non-blanching-child", "teen-cutting", "toddler-kettle-scald", "toddler-swallowed-tablets",
		"earache-swelling-behind-ear", "toddler-fever-drinking-less", "toddler-fever-green"}; !sameSet(toldByOthers, want) {
		t.Errorf("third_person left out %v, want the vignettes already told by someone else %v", toldByOthers, want)
	}
	if swapped[SexSwap] == 0 || swapped[AgeSwap] == 0 {
		t.Errorf("the built-in suite marks no vignette neutral: %v", swapped)
	}
}

func goldEqual(a, b scenarios.Gold) bool {
	return a.Class == b.Class && a.Protocol == b.Protocol && slices.Equal(a.Dispositions, b.Dispositions) &&
		slices.Equal(a.RedFlagsPositive, b.RedFlagsPositive) && slices.Equal(a.RedFlagsNegative, b.RedFlagsNegative)
}

func numbers(s string) []string {
	var out []string
	for _, w := range words(s) {
		if numberWords[w] || strings.ContainsFunc(w, unicode.IsDigit) {
			out = append(out, w)
		}
	}
	return out
}

func negations(s string) int {
	n := 0
	for _, w := range words(s) {
		if negation[w] && w != "yes" && w != "yeah" && w != "yep" {
			n++
		}
	}
	return n
}

// thirdPersonSpeaks checks that under third_person the relative speaks
// throughout: after "I'm writing for my …", no word is the patient's own
// I, me or my (typed any way: "im", "ive", "i"), and no verb after
// she/he took a wrong -s (a past tense or an adverb: "she wents",
// "he nearlies").
func thirdPersonSpeaks(t *testing.T, v, w *scenarios.Vignette) {
	t.Helper()
	first := set("i", "i'm", "im", "i've", "ive", "i'd", "i'll", "me", "my", "mine", "myself")
	texts := []string{strings.TrimPrefix(w.Opening, "I'm writing for my "+relation(v)+". "), w.Complaint, w.Default}
	for _, f := range w.Facts {
		texts = append(texts, f.Answer)
	}
	for _, text := range texts {
		ws := words(text)
		for i, x := range ws {
			if first[x] {
				t.Errorf("%s/third_person: %q still says %q", v.ID, text, x)
			}
			if i > 0 && (ws[i-1] == "she" || ws[i-1] == "he") && wrongS[x] {
				t.Errorf("%s/third_person: %q says %q %q", v.ID, text, ws[i-1], x)
			}
		}
	}
}

// wrongS are third-person forms no verb takes: a past or an adverb with -s.
var wrongS = set("wents", "fells", "wets", "founds", "ates", "splits", "nearlies", "suddenlies", "gots", "hads", "dids", "thoughts")

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
