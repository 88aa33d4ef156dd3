package scenarios

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func chestVignette() *Vignette {
	return &Vignette{
		ID:      "chest",
		Opening: "I have had chest pain since this morning",
		Facts: []Fact{
			{Asks: []string{"how old"}, Answer: "I'm 58."},
			{Asks: []string{"breath*", "short of"}, Answer: "Yes, I get breathless walking."},
			{Asks: []string{"pain"}, Answer: "It is a dull ache."},
			{Asks: []string{"spread", "radiat*"}, Choose: "arm", Answer: "Into my left arm."},
			{Asks: []string{"sweat*"}, Choose: "yes"},
		},
		Default:  "I don't know.",
		MaxTurns: 6,
	}
}

// TestPatientScripted plays the patient against scripted engine replies and
// checks each answer in turn.
func TestPatientScripted(t *testing.T) {
	p := NewPatient(chestVignette(), fakeUnderstanding{"medicine": {Concept: "medicines", Kind: "value"}})
	if got := p.Opening().Text; got != "I have had chest pain since this morning" {
		t.Fatalf("opening = %q", got)
	}
	steps := []struct {
		question string
		choices  []string
		want     string
	}{
		// A choice containing the fact's Choose is returned exactly as offered.
		{"Does it spread anywhere?", []string{"No", "Yes, to my LEFT ARM", "Yes, to my jaw"}, "Yes, to my LEFT ARM"},
		// No offered choice contains it: the fact's Answer.
		{"Does it radiate?", []string{"Yes", "No"}, "Into my left arm."},
		// Matches two facts ("pain" and "breathless"): the first listed wins.
		{"Are you breathless with the pain?", nil, "Yes, I get breathless walking."},
		// Understood, a value no fact gives: not the yes/no default.
		{"Do you take any medicines?", []string{"Yes", "No"}, "I'm not sure."},
		// Choose without an Answer and no choices: the default.
		{"Are you sweating?", nil, "I don't know."},
	}
	for i, s := range steps {
		said, ok := p.Answer(s.question, s.choices)
		if got := said.Text; !ok || got != s.want {
			t.Errorf("step %d %q: got %q, %v; want %q, true", i, s.question, got, ok, s.want)
		}
	}
	// Opening + 5 answers = 6 = MaxTurns: the next answer is refused.
	if said, ok := p.Answer("How old are you?", nil); ok || said.Text != "" {
		t.Errorf("past the limit: got %q, %v; want \"\", false", said.Text, ok)
	}
	if p.Turns() != 6 {
		t.Errorf("Turns = %d, want 6", p.Turns())
	}
}

// TestPatientTurnLimit: the opening counts as turn 1, so MaxTurns 2 allows
// one answer; without a limit the default of 15 applies.
func TestPatientTurnLimit(t *testing.T) {
	v := chestVignette()
	v.MaxTurns = 2
	p := NewPatient(v, nil)
	if _, ok := p.Answer("How old are you?", nil); !ok {
		t.Fatal("first answer refused under MaxTurns 2")
	}
	if _, ok := p.Answer("How old are you?", nil); ok {
		t.Fatal("second answer given under MaxTurns 2")
	}
	v.MaxTurns = 0
	p = NewPatient(v, nil)
	n := 0
	for {
		if _, ok := p.Answer("anything?", nil); !ok {
			break
		}
		n++
		if n > 100 {
			t.Fatal("no limit")
		}
	}
	if n != DefaultMaxTurns-1 {
		t.Errorf("answers with the default limit = %d, want %d", n, DefaultMaxTurns-1)
	}
}

// TestPatientWordBoundaries: an ask matches whole words only; "*" extends a
// word's end by letters; phrases need their words adjacent and in order.
func TestPatientWordBoundaries(t *testing.T) {
	v := &Vignette{
		Facts: []Fact{
			{Asks: []string{"pain"}, Answer: "pain-fact"},
			{Asks: []string{"cough*"}, Answer: "cough-fact"},
			{Asks: []string{"short of breath"}, Answer: "breath-fact"},
		},
		Default:  "default",
		Unknown:  "default", // no understanding here: every other question is unknown
		MaxTurns: 30,
	}
	cases := []struct{ q, want string }{
		{"Is it PAIN?", "pain-fact"},
		{"Is it painful?", "default"},       // "pain" inside a word
		{"Any spain travel?", "default"},    // "pain" at a word's end
		{"Are you coughing?", "cough-fact"}, // stem plus letters
		{"A cough?", "cough-fact"},          // the stem alone
		{"Any cough2?", "default"},          // "*" is letters only
		{"Hiccough?", "default"},            // "*" only at the end
		{"Are you short of breath?", "breath-fact"},
		{"Short, of breath?", "breath-fact"},     // punctuation separates words
		{"Breath short of?", "default"},          // order matters
		{"Short of sleep or breath?", "default"}, // adjacency matters
	}
	p := NewPatient(v, nil)
	for _, c := range cases {
		if said, _ := p.Answer(c.q, nil); said.Text != c.want {
			t.Errorf("%q: got %q, want %q", c.q, said.Text, c.want)
		}
	}
}

// TestPatientDeterministic: two patients of one vignette answer the same
// replies the same way, and only the question and choices decide.
func TestPatientDeterministic(t *testing.T) {
	qs := []string{"Does it spread?", "Breathless?", "Age?", "Pain?"}
	ch := [][]string{{"to my arm", "no"}, nil, nil, {"a", "b"}}
	a, b := NewPatient(chestVignette(), nil), NewPatient(chestVignette(), nil)
	for i, q := range qs {
		ra, oka := a.Answer(q, ch[i])
		rb, okb := b.Answer(q, ch[i])
		if ra.Text != rb.Text || oka != okb {
			t.Errorf("%q: %q/%v vs %q/%v", q, ra, oka, rb, okb)
		}
	}
}

// TestPatientFallback: with no Default the patient still says something.
func TestPatientFallback(t *testing.T) {
	p := NewPatient(&Vignette{Opening: "hi"}, nil)
	if said, ok := p.Answer("What brings you here?", nil); !ok || said.Text != unknownAnswer || said.Why.Kind != WhyNotUnderstood {
		t.Errorf("got %q %v, %v", said.Text, said.Why, ok)
	}
}

// fakeUnderstanding places a question by the first of its keys the
// question contains (the real understanding is tested in concepts).
type fakeUnderstanding map[string]Asked

func (f fakeUnderstanding) Understand(q string) []Asked {
	q = strings.ToLower(q)
	var out []Asked
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if strings.Contains(q, k) {
			a := f[k]
			if a.Cue != "tie" {
				a.Margin = max(a.Margin, 1) // a confident reading, unless a tie
			}
			// A new question after ", and" or "?"; an alternative after "or".
			before := q[:strings.Index(q, k)]
			a.Question = strings.Count(before, ", and ") + strings.Count(before, "? ")
			a.Alt = strings.Count(before, " or ")
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b Asked) int {
		return strings.Index(q, keyOf(f, a)) - strings.Index(q, keyOf(f, b))
	})
	return out
}

func (f fakeUnderstanding) Known(id string) bool {
	for _, a := range f {
		if a.Concept == id {
			return true
		}
	}
	return false
}

// Areas knows three: enough for the tests of the patient's choice.
func (f fakeUnderstanding) Areas(text string) []string {
	var out []string
	for _, w := range textWords(text) {
		if a, ok := map[string]string{"chest": "chest", "tummy": "abdomen", "headache": "head"}[w]; ok {
			out = append(out, a)
		}
	}
	return out
}

// Names: a title names the text when they share an area; Covered: every
// area of the text is some title's.
func (f fakeUnderstanding) Names(title, text string) bool {
	return slices.ContainsFunc(f.Areas(title), func(a string) bool { return slices.Contains(f.Areas(text), a) })
}

func (f fakeUnderstanding) Covered(titles []string, text string) bool {
	for _, a := range f.Areas(text) {
		if !slices.ContainsFunc(titles, func(t string) bool { return slices.Contains(f.Areas(t), a) }) {
			return false
		}
	}
	return true
}

func keyOf(f fakeUnderstanding, a Asked) string {
	for k, v := range f {
		if v.Concept == a.Concept && v.Inverse == a.Inverse && v.Cue == a.Cue {
			return k
		}
	}
	return ""
}

func conceptVignette() *Vignette {
	age := 52
	return &Vignette{
		ID: "jaw", Opening: "I have a pain in my chest", Complaint: "a heavy feeling in my chest", AgeYears: &age, Sex: "female",
		Facts: []Fact{
			{Concept: "spread", Answer: "yes, it goes up into my jaw"},
			{Concept: "duration", Choose: "today", Answer: "about an hour"},
			{Concept: "sweating_nausea", Answer: "no, I'm not sweaty"},
			{Concept: "cannot_bear_weight", Choose: "yes", Answer: "Yes, I can't put weight on it"},
			{Asks: []string{"jaw"}, Answer: "asks win"},
		},
		Default: "no", Unknown: "I'm not sure what you mean.",
	}
}

var understanding = fakeUnderstanding{
	"spread":     {Concept: "spread", Kind: "yes_no", Cue: "spread"},
	"stay put":   {Concept: "spread", Kind: "yes_no", Inverse: true, Cue: "stay put"},
	"how long":   {Concept: "duration", Kind: "value"},
	"sweat":      {Concept: "sweating_nausea", Kind: "yes_no"},
	"main":       {Concept: "main_problem", Kind: "open"},
	"old":        {Concept: "age", Kind: "value"},
	"sex":        {Concept: "sex", Kind: "value"},
	"fever":      {Concept: "fever", Kind: "yes_no"},
	"walk on it": {Concept: "cannot_bear_weight", Kind: "yes_no", Inverse: true},
	"medicine":   {Concept: "medicines", Kind: "value"},
	"move your":  {Concept: "stiff_neck", Kind: "yes_no", Cue: "tie"},
}

// Facts stated by concept answer whatever the question's words, keep their
// meaning for opposite questions, answer two at once, restate the
// complaint to open questions, and every message says why it was said.
func TestPatientByConcept(t *testing.T) {
	cases := []struct {
		q       string
		choices []string
		want    string
		kind    WhyKind
		facts   []int
		choice  string
		turned  bool
	}{
		{"Does the discomfort spread anywhere?", nil, "yes, it goes up into my jaw", WhyConcept, []int{1}, "", false},
		{"Does it stay put in one place?", nil, "no, it goes up into my jaw", WhyConcept, []int{1}, "", true},
		{"How long has this been going on?", []string{"Started today", "A few days"}, "Started today", WhyConcept, []int{2}, "Started today", false},
		{"How long has this been going on?", nil, "about an hour", WhyConcept, []int{2}, "", false},
		// Two questions at once: two sentences, in the order asked.
		{"Are you sweaty, and does it spread?", nil, "no, I'm not sweaty. Yes, it goes up into my jaw", WhyConcept, []int{3, 1}, "", false},
		// Alternatives: one yes naming what applies, or one no.
		{"Are you sweaty or does it spread?", nil, "yes, it goes up into my jaw", WhyConcept, []int{3, 1}, "", false},
		{"Are you sweaty or feverish?", nil, "no, I'm not sweaty", WhyConcept, []int{3}, "", false},
		{"What's the main problem today?", nil, "a heavy feeling in my chest", WhyOpen, nil, "", false},
		{"What's the main problem today?", []string{"Tummy pain", "Chest pain", "Headache"}, "Chest pain", WhyOpen, nil, "Chest pain", false},
		{"How old are you?", nil, "I'm 52.", WhyDemographics, nil, "", false},
		{"What sex are you?", []string{"Male", "Female"}, "Female", WhyDemographics, nil, "", false},
		// Understood, no fact: the default; not understood: the unknown answer.
		{"Any fever?", nil, "no", WhyDefault, nil, "", false},
		{"What sex are you?", nil, "I'm female.", WhyDemographics, nil, "", false},
		// A value the vignette does not give: not its yes/no default.
		{"Which medicines do you take?", nil, "I'm not sure.", WhyNotKnown, nil, "", false},
		{"Do you smoke?", nil, "I'm not sure what you mean.", WhyNotUnderstood, nil, "", false},
		// An opposite question picks the opposite Yes/No quick reply.
		{"Can you walk on it?", []string{"Yes", "No"}, "No", WhyConcept, []int{4}, "No", true},
		// Asks win over concepts.
		{"Does it spread to your jaw?", nil, "asks win", WhyAsks, []int{5}, "", false},
	}
	for _, c := range cases {
		v := conceptVignette()
		v.MaxTurns = 30
		said, ok := NewPatient(v, understanding).Answer(c.q, c.choices)
		if !ok || said.Text != c.want || said.Why.Kind != c.kind || !slices.Equal(said.Why.Facts, c.facts) ||
			said.Why.Choice != c.choice || said.Why.Inverted != c.turned {
			t.Errorf("%q: said %q, why %+v; want %q, %s, facts %v, choice %q, turned %v", c.q, said.Text, said.Why, c.want, c.kind, c.facts, c.choice, c.turned)
		}
		if said.Why.String() == "" {
			t.Errorf("%q: no reason in words", c.q)
		}
	}
}

// A result accounts for every answer: the reasons in order, the coverage,
// and simulator-limited as soon as one question was not understood.
func TestAccountCoverage(t *testing.T) {
	p := NewPatient(conceptVignette(), understanding)
	turns := []Exchange{}
	msg := p.Opening()
	for _, q := range []string{"Does it spread?", "Do you smoke?", "How long?", "Any fever?"} {
		why := msg.Why
		turns = append(turns, Exchange{Message: msg.Text, Why: &why, Reply: q})
		msg, _ = p.Answer(q, nil)
	}
	var r Result
	Account(&r, turns)
	if r.Questions != 3 || r.Understood != 2 || !r.SimulatorLimited || len(r.Answers) != 4 {
		t.Fatalf("questions %d, understood %d, limited %v, answers %d", r.Questions, r.Understood, r.SimulatorLimited, len(r.Answers))
	}
	if a := r.Answers[2]; a.Why.Kind != WhyNotUnderstood || a.Question != "Do you smoke?" || a.Reason == "" {
		t.Fatalf("the not-understood answer: %+v", a)
	}
	Account(&r, turns[:2])
	if r.SimulatorLimited || r.Coverage() != 1 {
		t.Fatalf("all understood: limited %v, coverage %v", r.SimulatorLimited, r.Coverage())
	}
}

// The complaints corpus (bff/scenarios/concepts/testdata/complaints.yaml):
// the patient picks the title that names its problem from several engines'
// lists, or none when none does, with the real understanding.
func TestNamingChoiceCorpus(t *testing.T) {
	u, err := Understanding()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("concepts", "testdata", "complaints.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cf struct {
		Lists map[string][]string `yaml:"lists"`
		Cases []struct{ Complaint, List, Want string }
	}
	if err := yaml.Unmarshal(data, &cf); err != nil {
		t.Fatal(err)
	}
	right := 0
	for _, c := range cf.Cases {
		if got := namingChoice(u, cf.Lists[c.List], c.Complaint); got != c.Want {
			t.Errorf("%q from the %s list: chose %q, want %q", c.Complaint, c.List, got, c.Want)
		} else {
			right++
		}
	}
	t.Logf("%d of %d complaints matched to their title", right, len(cf.Cases))
}
