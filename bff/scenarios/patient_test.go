package scenarios

import "testing"

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
	p := NewPatient(chestVignette())
	if got := p.Opening(); got != "I have had chest pain since this morning" {
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
		// Matches no fact: the default.
		{"Do you take any medicines?", []string{"Yes", "No"}, "I don't know."},
		// Choose without an Answer and no choices: the default.
		{"Are you sweating?", nil, "I don't know."},
	}
	for i, s := range steps {
		got, ok := p.Answer(s.question, s.choices)
		if !ok || got != s.want {
			t.Errorf("step %d %q: got %q, %v; want %q, true", i, s.question, got, ok, s.want)
		}
	}
	// Opening + 5 answers = 6 = MaxTurns: the next answer is refused.
	if got, ok := p.Answer("How old are you?", nil); ok || got != "" {
		t.Errorf("past the limit: got %q, %v; want \"\", false", got, ok)
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
	p := NewPatient(v)
	if _, ok := p.Answer("How old are you?", nil); !ok {
		t.Fatal("first answer refused under MaxTurns 2")
	}
	if _, ok := p.Answer("How old are you?", nil); ok {
		t.Fatal("second answer given under MaxTurns 2")
	}
	v.MaxTurns = 0
	p = NewPatient(v)
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
	p := NewPatient(v)
	for _, c := range cases {
		if got, _ := p.Answer(c.q, nil); got != c.want {
			t.Errorf("%q: got %q, want %q", c.q, got, c.want)
		}
	}
}

// TestPatientDeterministic: two patients of one vignette answer the same
// replies the same way, and only the question and choices decide.
func TestPatientDeterministic(t *testing.T) {
	qs := []string{"Does it spread?", "Breathless?", "Age?", "Pain?"}
	ch := [][]string{{"to my arm", "no"}, nil, nil, {"a", "b"}}
	a, b := NewPatient(chestVignette()), NewPatient(chestVignette())
	for i, q := range qs {
		ra, oka := a.Answer(q, ch[i])
		rb, okb := b.Answer(q, ch[i])
		if ra != rb || oka != okb {
			t.Errorf("%q: %q/%v vs %q/%v", q, ra, oka, rb, okb)
		}
	}
}

// TestPatientFallback: with no Default the patient still says something.
func TestPatientFallback(t *testing.T) {
	p := NewPatient(&Vignette{Opening: "hi"})
	if got, ok := p.Answer("What brings you here?", nil); !ok || got != fallbackAnswer {
		t.Errorf("got %q, %v", got, ok)
	}
}
