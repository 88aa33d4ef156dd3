package variations

import (
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// The cases are written before the code: what each variation changes and
// what it must keep (the facts, negations, numbers, red flags, and the
// leading yes or no the patient turns for an opposite-framed question).

func TestLayWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"pain in my abdomen when I urinate", "pain in my tummy when I pee"},
		{"yes, I've been vomiting", "yes, I've been sick"},
		{"vomiting and diarrhoea", "being sick and the runs"},
		{"no nausea", "no feeling sick"},
		{"Abdominal pain for 3 days", "Tummy pain for 3 days"},
		{"I'm short of breath", "I'm out of breath"},
		{"no, I am not breathless", "no, I am not out of breath"},
		{"a rash on my leg", "a rash on my leg"}, // already lay: unchanged
		{"shortness of breath", "being out of breath"},
	} {
		if got := Lay(c.in); got != c.want {
			t.Errorf("Lay(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestClinicalWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"pain in my tummy when I pee", "pain in my abdomen when I urinate"},
		{"no, I haven't been sick", "no, I haven't been vomiting"},
		{"yes, I'm out of breath", "yes, I'm short of breath"},
		{"chest pain", "chest pain"},
	} {
		if got := Clinical(c.in); got != c.want {
			t.Errorf("Clinical(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestThirdPerson(t *testing.T) {
	for _, c := range []struct{ sex, in, want string }{
		{"female", "yes, it goes up into my jaw", "yes, it goes up into her jaw"},
		{"male", "I have a pain in my chest", "He has a pain in his chest"},
		{"female", "I've got a bit of chest tightness", "She's got a bit of chest tightness"},
		{"male", "no, I can't walk on it", "no, he can't walk on it"},
		{"female", "no, I don't smoke", "no, she doesn't smoke"},
		{"male", "I get a pain when I walk up the hill", "He gets a pain when he walks up the hill"},
		{"female", "I'm all sweaty and I feel sick", "She's all sweaty and she feels sick"},
		{"", "I am 40 and I have a rash", "They are 40 and they have a rash"},
		{"", "I'm scared", "They're scared"},
		{"male", "I was fine yesterday", "He was fine yesterday"},
		{"female", "I just feel awful", "She just feels awful"},
		{"male", "it hurts me", "it hurts him"},
		{"female", "no", "no"},
		{"male", "for the last hour", "for the last hour"},
		{"female", "I haven't been able to pee", "She hasn't been able to pee"},
		{"female", "I try to rest", "She tries to rest"},
	} {
		if got := ThirdPerson(c.in, c.sex); got != c.want {
			t.Errorf("ThirdPerson(%q, %q) = %q, want %q", c.in, c.sex, got, c.want)
		}
	}
}

func TestTerse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"yes, it goes up into my jaw", "yes"},
		{"No, pressing doesn't change it.", "no"},
		{"Yes.", "yes"},
		{"about three weeks now", "about three weeks"},
		{"for the last hour", "for the last hour"},
		{"Hi, I have a pain in my chest", "pain in my chest"},
		{"I've got a really bad headache, the worst ever", "really bad headache, the worst ever"},
		{"I'm 58.", "58"},
		{"yes, for 3 days now", "yes, for 3 days"}, // a number stays
		{"no, not for two weeks", "no, not for two weeks"},
	} {
		if got := Terse(c.in, false); got != c.want {
			t.Errorf("Terse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The opening keeps its words: the complaint must be told.
	if got := Terse("I have a pain in my chest and it goes down my arm", true); got != "pain in my chest and it goes down my arm" {
		t.Errorf("Terse(opening) = %q", got)
	}
}

func TestUnderstate(t *testing.T) {
	for _, c := range []struct {
		in      string
		opening bool
		want    string
	}{
		{"I have a pain in my chest", true, "It's probably nothing, but I have a pain in my chest"},
		{"yes, it goes up into my jaw", false, "yes, it goes up into my jaw, but it's probably nothing"},
		{"Yes.", false, "Yes, but it's probably nothing."},
		{"no", false, "no"}, // a no is not played down
		{"about three weeks now", false, "about three weeks now"}, // a value is not played down
		{"cheast pain for the last hour", true, "It's probably nothing, but cheast pain for the last hour"},
	} {
		if got := Understate(c.in, c.opening); got != c.want {
			t.Errorf("Understate(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAnxious(t *testing.T) {
	r := newRand(1, "v", "anxious", 0)
	got := Anxious("yes, it goes up into my jaw", false, r)
	if !strings.HasPrefix(got, "yes, it goes up into my jaw") || len(got) < 60 {
		t.Errorf("Anxious kept the answer first and made it long: %q", got)
	}
	got = Anxious("I have a pain in my chest", true, newRand(1, "v", "anxious", 0))
	if !strings.Contains(got, "I have a pain in my chest") || !strings.HasPrefix(got, "Sorry") {
		t.Errorf("Anxious opening: %q", got)
	}
	// The added words add no symptom, body part or negation.
	for _, s := range append(slices.Clone(anxiousOpenings), append(anxiousTails, anxiousClosings...)...) {
		for _, w := range words(s) {
			if negation[w] || slices.Contains([]string{"pain", "heart", "chest", "breath", "breathe", "sleep", "racing", "dizzy", "sick"}, w) {
				t.Errorf("anxious phrase %q has %q", s, w)
			}
		}
	}
}

func TestTypos(t *testing.T) {
	// At rate 1 every word that may take a typo takes one; negations,
	// yes/no and numbers never do.
	in := "No, I don't have any chest pain and it started 3 days ago, not twenty minutes"
	got := Typos(in, 1, newRand(7, "v", "typos", 0))
	for _, keep := range []string{"No,", "don't", " 3 ", "not", "twenty"} {
		if !strings.Contains(got, keep) {
			t.Errorf("Typos lost %q: %q", keep, got)
		}
	}
	if got == in {
		t.Errorf("Typos at rate 1 changed nothing")
	}
	for _, w := range []string{"chest", "started", "minutes"} {
		if strings.Contains(got, " "+w+" ") {
			t.Errorf("Typos at rate 1 left %q: %q", w, got)
		}
	}
	// Deterministic with a seed, different with another.
	a := Typos(in, 0.3, newRand(7, "v", "typos", 0))
	b := Typos(in, 0.3, newRand(7, "v", "typos", 0))
	c := Typos(in, 0.3, newRand(8, "v", "typos", 0))
	if a != b {
		t.Errorf("same seed, different text: %q %q", a, b)
	}
	if a == c {
		t.Logf("seeds 7 and 8 gave the same text (possible, unlikely): %q", a)
	}
	// Rate 0 changes nothing; a typo is one edit of one word.
	if got := Typos(in, 0, newRand(7, "v", "typos", 0)); got != in {
		t.Errorf("rate 0: %q", got)
	}
	for seed := uint64(0); seed < 50; seed++ {
		got := Typos("headache", 1, newRand(seed, "v", "typos", 0))
		if d := editDistance(got, "headache"); d < 1 || d > 1 {
			t.Errorf("seed %d: %q is %d edits from headache", seed, got, d)
		}
	}
}

func TestApplyKeepsGoldAndPolarity(t *testing.T) {
	age := 52
	v := &scenarios.Vignette{ID: "chest-jaw", Title: "t", AgeYears: &age, Sex: "female",
		Opening: "I have a pain in my chest",
		Facts: []scenarios.Fact{
			{Concept: "chest_pain", Answer: "yes, a pain in my chest"},
			{Concept: "spread", Answer: "yes, it goes up into my jaw"},
			{Concept: "duration", Answer: "about 2 hours", Choose: "Less than a day"},
			{Asks: []string{"smoke"}, Answer: "no, never"},
		},
		Default: "no", Neutral: []string{"sex", "age"},
		Gold: scenarios.Gold{Class: scenarios.Emergency, RedFlagsPositive: []string{"pain spreading to arm, jaw, neck or back"}}}
	for _, name := range Names() {
		w, ok := Apply(v, name, 42)
		if !ok {
			t.Errorf("%s: not applicable", name)
			continue
		}
		if !slices.Equal(w.Gold.RedFlagsPositive, v.Gold.RedFlagsPositive) || w.Gold.Class != v.Gold.Class {
			t.Errorf("%s changed the gold labels", name)
		}
		if w.ID != v.ID || len(w.Facts) != len(v.Facts) {
			t.Errorf("%s changed the id or the facts", name)
		}
		for i, f := range w.Facts {
			o := v.Facts[i]
			if f.Concept != o.Concept || f.Choose != o.Choose || !slices.Equal(f.Asks, o.Asks) {
				t.Errorf("%s changed what fact %d answers or chooses", name, i+1)
			}
			if yn(f.Answer) != yn(o.Answer) {
				t.Errorf("%s: fact %d's leading yes/no %q became %q", name, i+1, o.Answer, f.Answer)
			}
			if strings.Contains(o.Answer, "2") != strings.Contains(f.Answer, "2") {
				t.Errorf("%s lost a number: %q", name, f.Answer)
			}
		}
		if yn(w.Default) != "no" {
			t.Errorf("%s: default %q", name, w.Default)
		}
		again, _ := Apply(v, name, 42)
		if again.Opening != w.Opening || again.Facts[1].Answer != w.Facts[1].Answer {
			t.Errorf("%s not deterministic", name)
		}
	}
	if v.Facts[1].Answer != "yes, it goes up into my jaw" || v.Sex != "female" || *v.AgeYears != 52 {
		t.Errorf("Apply changed its input")
	}
	w, _ := Apply(v, SexSwap, 1)
	if w.Sex != "male" || w.Opening != v.Opening {
		t.Errorf("sex swap: %q %q", w.Sex, w.Opening)
	}
	w, _ = Apply(v, AgeSwap, 1)
	if w.AgeYears == nil || *w.AgeYears != 32 {
		t.Errorf("age swap: %v", w.AgeYears)
	}
	// Not marked neutral: no swap.
	u := *v
	u.Neutral = []string{"age"}
	if _, ok := Apply(&u, SexSwap, 1); ok {
		t.Errorf("sex swap of a vignette not marked neutral for sex")
	}
	// A text that says the sex or the age is not swapped.
	said := *v
	said.Facts = append(slices.Clone(v.Facts), scenarios.Fact{Asks: []string{"pregnant"}, Answer: "no, I'm not pregnant"})
	if _, ok := Apply(&said, SexSwap, 1); ok {
		t.Errorf("sex swap of a patient who speaks of pregnancy")
	}
	said.Opening = "I'm 52 and I have a pain in my chest"
	if _, ok := Apply(&said, AgeSwap, 1); ok {
		t.Errorf("age swap of a patient who says their age")
	}
	if _, ok := Apply(v, "shouting", 1); ok {
		t.Errorf("an unknown variation applied")
	}
	// The unvaried play is the vignette itself.
	if w, ok := Apply(v, None, 1); !ok || w != v {
		t.Errorf("None must return the vignette")
	}
}

func TestAgeSwapBands(t *testing.T) {
	for _, c := range []struct{ in, want int }{{18, 38}, {30, 50}, {44, 64}, {45, 25}, {64, 44}, {70, 50}, {10, 10}} {
		if got := swapAge(c.in); got != c.want {
			t.Errorf("swapAge(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	got, err := Parse("all")
	if err != nil || !slices.Equal(got, Names()) {
		t.Errorf("all: %v %v", got, err)
	}
	got, err = Parse("typos, lay")
	if err != nil || !slices.Equal(got, []string{Typo, LayName}) {
		t.Errorf("list: %v %v", got, err)
	}
	if _, err := Parse("typos,shouting"); err == nil || !strings.Contains(err.Error(), `"shouting"`) || !strings.Contains(err.Error(), "typos") {
		t.Errorf("unknown: %v", err)
	}
	if got, err := Parse(""); err != nil || got != nil {
		t.Errorf("empty: %v %v", got, err)
	}
}

func yn(s string) string {
	w := words(s)
	if len(w) == 0 {
		return ""
	}
	switch w[0] {
	case "yes", "no":
		return w[0]
	}
	return ""
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
