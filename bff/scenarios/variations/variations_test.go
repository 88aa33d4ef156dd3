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
		{"pain round my umbilicus", "pain round my belly button"},
		// Names of illnesses are not a temperature.
		{"I had glandular fever as a teenager", "I had glandular fever as a teenager"},
		{"my hay fever is bad", "my hay fever is bad"},
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
		// Found in the built-in suite: a phrase is not its words one by one
		// ("belly button" became "abdomen button": where appendicitis
		// starts), and a verb stays a verb ("needing to wee" became
		// "needing to urine").
		{"it started round my belly button", "it started round my umbilicus"},
		{"I keep needing to wee", "I keep needing to urinate"},
		{"I've had a bad tummy ache for two days", "I've had a bad abdominal ache for two days"},
		{"belly pain and tummy cramps", "abdominal pain and abdominal cramps"},
		{"my belly is agony", "my abdomen is agony"},
		{"my pee is dark and my wee smells", "my urine is dark and my urine smells"},
		{"I need a wee all the time", "I need to urinate all the time"},
		{"it hurts when I pee", "it hurts when I urinate"},
		{"she can't wee", "she can't urinate"},
		{"a wee bit sore", "a wee bit sore"}, // Scots for small
		// A temperature is a fever when one has it, not when it is measured.
		{"yes, I've got a temperature", "yes, I've got a fever"},
		{"he's had a high temperature since Monday", "he's had a high fever since Monday"},
		{"my temperature was 37 and normal", "my temperature was 37 and normal"},
		{"no temperature", "no fever"},
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
		// The past stays the past, irregular or not; an adverb between I
		// and its verb is not the verb (found in the built-in suite: "she
		// wents over", "he fells down", "he wets himself this morning",
		// "she suddenlies got", "he nearlies passed out").
		{"female", "I went over on my ankle at netball", "She went over on her ankle at netball"},
		{"male", "yes, I fell down the last few stairs", "yes, he fell down the last few stairs"},
		{"male", "it's gone numb and I wet myself this morning", "it's gone numb and he wet himself this morning"},
		{"female", "I found the marks tonight", "She found the marks tonight"},
		{"male", "I ate something with peanuts in", "He ate something with peanuts in"},
		{"male", "since my girlfriend and I split up", "since his girlfriend and he split up"},
		{"male", "yes, I nearly passed out", "yes, he nearly passed out"},
		{"female", "I suddenly got short of breath", "She suddenly got short of breath"},
		{"male", "yes, I smacked my head on a cupboard door", "yes, he smacked his head on a cupboard door"},
		// I think is the patient's thought, said of her: she thinks.
		{"female", "I think I have a water infection", "She thinks she has a water infection"},
		// Typed without apostrophes or a capital, it is still the patient:
		// left as "im", the relative would be the one sweating.
		{"male", "cheast pain for the last hour and im all sweaty", "cheast pain for the last hour and he's all sweaty"},
		{"female", "Im 30 weeks pregant and ive started bleeding", "She's 30 weeks pregant and she's started bleeding"},
		{"", "yes, im 30 weeks", "yes, they're 30 weeks"},
		{"male", "i can't sleep", "He can't sleep"},
		// A question puts the verb before I: it agrees there, and the verb
		// after I stays bare.
		{"female", "what do I do?", "what does she do?"},
		{"male", "should I go to A&E?", "should he go to A&E?"},
		{"female", "am I having a heart attack?", "is she having a heart attack?"},
		{"male", "have I got a chest infection?", "has he got a chest infection?"},
		{"", "do I need antibiotics?", "do they need antibiotics?"},
		{"", "was I right to wait?", "were they right to wait?"},
		{"female", "shall I call someone?", "shall she call someone?"},
		{"male", "my wife has a cold and so do I", "His wife has a cold and so does he"},
	} {
		if got := ThirdPerson(c.in, c.sex); got != c.want {
			t.Errorf("ThirdPerson(%q, %q) = %q, want %q", c.in, c.sex, got, c.want)
		}
	}
}

// A vignette already told by someone else (a parent, a partner, a
// bystander) is not told again by a relative: "my son has swallowed my
// tablets" said for the son would be "his son has swallowed his
// tablets", a grandson and another person's tablets.
func TestToldByAnother(t *testing.T) {
	for _, c := range []struct {
		opening string
		want    bool
	}{
		{"my son has swallowed some of my iron tablets, I don't know how many", true},
		{"my little girl has a rash on her legs and she's hot", true},
		{"my toddler pulled the kettle over himself", true},
		{"my dad's face has dropped on one side and he's not making sense", true},
		{"mum has a headache and her words are coming out all wrong", true},
		{"my boyfriend is fitting on the floor what do i do", true},
		{"my daughter has been cutting herself again, I found the marks tonight", true},
		{"my husband can't catch his breath and his lips are going blue", true},
		{"Hi, my wife has a terrible headache", true},
		{"I'm writing for my brother, he has chest pain", true},
		{"I'm asking about my mum", true},
		// The patient speaks, whoever else is named.
		{"feeling a bit down since my girlfriend and I split up", false},
		{"my back's been bad for a week", false},
		{"my belly is agony", false},
		{"my asthma is playing up and I'm a bit wheezy", false},
		{"my throat is killing me", false},
		{"one of my migraines again", false},
		{"I have a pain in my chest", false},
		{"my husband says I snore, and I'm tired all day", false},
		{"Hi, my mood is rubbish", false},
	} {
		if got := toldByAnother(c.opening); got != c.want {
			t.Errorf("toldByAnother(%q) = %v, want %v", c.opening, got, c.want)
		}
		v := &scenarios.Vignette{ID: "v", Opening: c.opening, Sex: "female", Default: "no"}
		if _, ok := Apply(v, Proxy, 1); ok == c.want {
			t.Errorf("Apply(%q, third_person) applied = %v, want %v", c.opening, ok, !c.want)
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
	// "I" stays a capital ("i think I have" mixed the two).
	if got := Terse("I think I have a water infection", true); got != "I think I have a water infection" {
		t.Errorf("Terse(opening) = %q", got)
	}
	if got := Terse("yes, I fell down the last few stairs", false); got != "yes, I fell down the last few stairs" {
		t.Errorf("Terse(a yes with a number word) = %q", got)
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
