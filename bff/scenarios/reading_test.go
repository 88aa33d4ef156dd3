package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// The kinds of confident misreading issue 34 found, each in more than one
// wording (none of them a sandbox voice's sentence), played by the
// simulated patient of a built-in vignette with the real understanding.
// Every case failed before the patient read the question rather than the
// message.

func builtinPatient(t *testing.T, id string) *Patient {
	t.Helper()
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	u, err := Understanding()
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Vignettes {
		if s.Vignettes[i].ID == id {
			v := s.Vignettes[i]
			v.MaxTurns = 30
			return NewPatient(&v, u)
		}
	}
	t.Fatalf("no built-in vignette %q", id)
	return nil
}

// yesNoWords are the answer's words that are a yes or a no.
func yesNoWords(text string) []string {
	var out []string
	for _, w := range textWords(text) {
		if yn := leadingYesNo(w); yn != "" {
			out = append(out, yn)
		}
	}
	return out
}

// A preamble names concepts ("a few things about your cough and fever")
// that the question does not ask: the answer is the question's, one no.
func TestPreambleIsNotAsked(t *testing.T) {
	for _, q := range []string{
		"Thanks. I'd like to ask a few things about your cough and fever. Any blood when you cough?",
		"I'm going to ask you some questions about your cough and temperature. Have you coughed up any blood?",
		"Can I ask you a couple of things about the cough and the fever? Is there any blood in what you cough up?",
		"I need to check something about your cough and fever now. Have you been bringing up blood?",
	} {
		said, _ := builtinPatient(t, "no-chest-pain-just-cough").Answer(q, nil)
		if yn := yesNoWords(said.Text); !slices.Equal(yn, []string{"no"}) || !slices.Equal(said.Why.Concepts, []string{"coughing_blood"}) {
			t.Errorf("%q: said %q (%s); want one no, about coughing blood only", q, said.Text, said.Why)
		}
	}
}

// A discourse phrase where the engine speaks of itself ("Before I go on")
// asks nothing: not whether it happened before.
func TestDiscoursePhraseIsNotAsked(t *testing.T) {
	for _, q := range []string{
		"Before I go on, is it possible you might be pregnant?",
		"Before we move on, is it possible that you're pregnant?",
		"Just so I know before we carry on, could you be pregnant at all?",
	} {
		said, _ := builtinPatient(t, "headache-usual-migraine").Answer(q, nil)
		if !strings.HasPrefix(said.Text, "no") || !slices.Equal(said.Why.Concepts, []string{"pregnancy"}) {
			t.Errorf("%q: said %q (%s); want no, about pregnancy only", q, said.Text, said.Why)
		}
	}
}

// Alternatives ("A, or B, or C?") get one yes naming what applies or one
// no, never a yes or no per alternative; two questions get two sentences
// in the order asked.
func TestAnswerShapes(t *testing.T) {
	for _, c := range []struct {
		vignette, q string
		want        []string // the yes/no words of the answer, in order
		sentences   int
	}{
		// Bleeding asked as alternatives: the vomiting named in "thrown up
		// blood" is not asked; a patient who vomits but has no blood says no.
		{"abdominal-pain-older-vomiting", "I need to check one thing about bleeding. Have you thrown up blood or something that looks like coffee grounds, or had black or bloody poo?", []string{"no"}, 1},
		{"abdominal-pain-older-vomiting", "Have you brought up any blood, or had black, tarry stools?", []string{"no"}, 1},
		// Two alternatives that both apply: one yes naming both.
		{"uti-loin-pain-rigors", "Do you have pain in your side or back, below your ribs, or a fever with shivers?", []string{"yes"}, 1},
		{"uti-loin-pain-rigors", "Any pain in your loin, or have you had a fever or the shivers?", []string{"yes"}, 1},
		// None applies: one no.
		{"uti-man-review", "Do you have pain in your side or back, below your ribs, or a fever with shivers?", []string{"no"}, 1},
		// One of several applies: one yes.
		{"low-mood-voices", "Have you been hearing voices or seeing things, or do you feel unsafe at home?", []string{"yes"}, 1},
		// Two separate questions: two sentences, in order.
		{"food-poisoning-not-poisoning", "Have you had a fever? And how long has the pain been going on?", []string{"no"}, 2},
		{"no-chest-pain-just-cough", "Any chest pain, and how long have you had the cough?", []string{"no", "no"}, 2},
	} {
		said, _ := builtinPatient(t, c.vignette).Answer(c.q, nil)
		n := strings.Count(said.Text, ". ") + 1
		if yn := yesNoWords(said.Text); !slices.Equal(yn, c.want) || n != c.sentences {
			t.Errorf("%s %q: said %q (%s); want yes/no %v in %d sentence(s)", c.vignette, c.q, said.Text, said.Why, c.want, c.sentences)
		}
	}
}

// "Losing strength" is weakness, not its opposite: a patient without weak
// legs says no.
func TestLosingStrengthIsWeakness(t *testing.T) {
	for _, q := range []string{
		"Do your legs feel like they're losing strength?",
		"Have you noticed your legs losing their strength?",
		"Are you losing strength in your legs?",
	} {
		said, _ := builtinPatient(t, "back-pain-lifting-self-care").Answer(q, nil)
		if !strings.HasPrefix(said.Text, "no") || said.Why.Inverted {
			t.Errorf("%q: said %q (%s); want no, not turned", q, said.Text, said.Why)
		}
	}
}

// A quick reply is picked only when it clearly names the complaint: not
// "Low back pain" or "Back problems" for a knee, not "Shortness of breath"
// for a diabetic emergency that mentions breathing.
func TestQuickReplyNeedsAClearMatch(t *testing.T) {
	u, err := Understanding()
	if err != nil {
		t.Fatal(err)
	}
	sandbox := []string{"Abdominal pain", "Ankle or foot injury", "Chest pain", "Cough with fever", "Headache", "Low back pain", "Low mood", "Rash", "Shortness of breath", "Sore throat", "Urinary symptoms"}
	checker := []string{"Stomach ache", "Breathing difficulty", "Chest discomfort", "Head pain", "Back problems", "Mental health", "Skin problem", "Urinary problems", "Injury", "Throat problem", "Cough or cold"}
	for _, c := range []struct {
		complaint string
		list      []string
	}{
		{"my knee has been swollen and stiff since the weekend", sandbox},
		{"my knee has been swollen and stiff since the weekend", checker},
		{"my right knee keeps locking and giving way", sandbox},
		{"my husband is diabetic, his sugar reading just says HI and he's breathing really deep and fast", sandbox},
		{"my daughter is type 1 diabetic, she's been sick all day and her breath smells of pear drops", sandbox},
		{"my daughter is type 1 diabetic, she's been sick all day and her breath smells of pear drops", checker},
	} {
		if got := namingChoice(u, c.list, c.complaint); got != "" {
			t.Errorf("%q: chose %q; want the complaint in words", c.complaint, got)
		}
	}
	// A clear match still picks its title.
	if got := namingChoice(u, sandbox, "I went over on my ankle playing netball"); got != "Ankle or foot injury" {
		t.Errorf("ankle: chose %q", got)
	}
}

// A reading below the margin (a tie between two readings of the same
// words) is not trusted: the patient says it does not understand, the
// answer is not counted understood, the result is simulator-limited, and
// the readings count it as low margin.
func TestLowMarginIsNotTrusted(t *testing.T) {
	p := NewPatient(conceptVignette(), understanding)
	open := p.Opening()
	said, _ := p.Answer("Can you move your neck?", nil)
	if said.Text != "I'm not sure what you mean." || said.Why.Kind != WhyLowMargin || said.Why.Understood() || said.Why.Reading() != ReadingLowMargin {
		t.Fatalf("a tie: said %q, why %+v", said.Text, said.Why)
	}
	next, _ := p.Answer("Does it spread?", nil)
	var r Result
	Account(&r, []Exchange{
		{Message: open.Text, Why: &open.Why, Reply: "Can you move your neck?"},
		{Message: said.Text, Why: &said.Why, Reply: "Does it spread?"},
		{Message: next.Text, Why: &next.Why},
	})
	if !r.SimulatorLimited || r.Understood != 1 || r.Questions != 2 ||
		r.Readings[ReadingLowMargin] != 1 || r.Readings[ReadingConcept] != 1 {
		t.Fatalf("limited %v, understood %d of %d, readings %v", r.SimulatorLimited, r.Understood, r.Questions, r.Readings)
	}
	if s := Score([]Result{r}); s.Readings[ReadingLowMargin] != 1 || s.SimulatorLimited != 1 {
		t.Errorf("summary: readings %v, simulator-limited %d", s.Readings, s.SimulatorLimited)
	}
	// The real understanding: "move" and "neck" are a stiff neck as much as
	// a pain moving into the neck.
	u, err := Understanding()
	if err != nil {
		t.Fatal(err)
	}
	if r := Read(u, "Does your neck move freely?"); len(r.Asked) == 0 || r.Trusted() {
		t.Errorf("Does your neck move freely?: %+v, trusted %v", r, r.Trusted())
	}
}

// In a question opened by "any", "and" lists alternatives: a patient with
// a cough but no fever answers yes.
func TestAnyListsAlternatives(t *testing.T) {
	said, _ := builtinPatient(t, "sore-throat-breathing-fine").Answer("Any cough and fever?", nil)
	if yn := yesNoWords(said.Text); len(yn) == 0 || yn[0] != "yes" || strings.Contains(said.Text, ". ") {
		t.Errorf("said %q (%s): want one yes", said.Text, said.Why)
	}
	said, _ = builtinPatient(t, "sore-throat-breathing-fine").Answer("Do you have a cough along with a fever?", nil)
	if yn := yesNoWords(said.Text); len(yn) == 0 || yn[0] != "no" {
		t.Errorf("said %q (%s): want no (not both)", said.Text, said.Why)
	}
}

// alternativesAnswer: one yes naming what applies, one no, or "no, but"
// what holds of a conjunction that does not.
func TestAlternativesAnswer(t *testing.T) {
	ca := func(alt int, text string) conceptAnswer {
		return conceptAnswer{alt: alt, text: text, yesNo: leadingYesNo(text), plain: yesNo(text) != ""}
	}
	for _, c := range []struct {
		in   []conceptAnswer
		want string
	}{
		{[]conceptAnswer{ca(0, "yes, it goes into my jaw")}, "yes, it goes into my jaw"},
		{[]conceptAnswer{ca(0, "no"), ca(1, "yes, I've had a temperature")}, "yes, I've had a temperature"},
		{[]conceptAnswer{ca(0, "Yes, a cough"), ca(1, "yes, a fever")}, "Yes, a cough, and a fever"},
		{[]conceptAnswer{ca(0, "yes, side pain and chills"), ca(1, "yes, chills")}, "yes, side pain and chills"},
		{[]conceptAnswer{ca(0, "no"), ca(1, "no, nothing like that")}, "no, nothing like that"},
		{[]conceptAnswer{ca(0, "no"), ca(1, "no")}, "no"},
		{[]conceptAnswer{ca(0, "yes, a tickly cough"), ca(0, "no")}, "no, but a tickly cough"},
		{[]conceptAnswer{ca(0, "yes"), ca(1, "I don't have an inhaler")}, "yes"},
		{[]conceptAnswer{ca(0, "no"), ca(1, "I don't have an inhaler")}, "I don't have an inhaler"},
	} {
		if got := alternativesAnswer(c.in); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
	if got := sentences([]string{"no", "since last night", "yes."}); got != "no. Since last night. Yes." {
		t.Errorf("sentences: %q", got)
	}
}

// Round 2's kinds of confident misreading (2026-11-28), each in wordings
// written for this test, played by the patient of a built-in vignette.
// Every case failed before the rules of english_test.go (package concepts)
// were written.

// A concept named as the object of another's word: a patient who keeps
// being sick, with no blood, says no to a question about vomiting blood.
func TestVomitingOfBloodIsBleeding(t *testing.T) {
	for _, q := range []string{
		"Any vomiting of blood or stuff like coffee grounds, or bloody poo?",
		"Have you been throwing up any blood or dark grainy stuff, or had red stools?",
		"Any bringing up of blood or something like coffee grounds, or black, bloody motions?",
	} {
		said, _ := builtinPatient(t, "abdominal-pain-older-vomiting").Answer(q, nil)
		if yn := yesNoWords(said.Text); !slices.Equal(yn, []string{"no"}) || !slices.Equal(said.Why.Concepts, []string{"gi_bleeding"}) {
			t.Errorf("%q: said %q (%s); want one no, about bleeding only", q, said.Text, said.Why)
		}
	}
}

// A statement with a confirmation tag asks whether the statement holds: a
// patient who can open their mouth says no to "You can't open your mouth
// …, is that right?", and yes to the positive statement's "… can't you?".
func TestConfirmationTagKeepsTheStatementsPolarity(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"You're unable to open your jaw properly, or one side of your throat is bulging and swollen — correct?", "no"},
		{"You can't open your mouth wide, or one side of your throat is much bigger than the other, is that right?", "no"},
		{"You can open your mouth fully, can't you?", "yes"},
	} {
		said, _ := builtinPatient(t, "sore-throat-mcisaac-strong").Answer(c.q, nil)
		if yn := yesNoWords(said.Text); len(yn) != 1 || yn[0] != c.want || !slices.Equal(said.Why.Concepts, []string{"trismus"}) {
			t.Errorf("%q: said %q (%s); want %s, about trismus", c.q, said.Text, said.Why, c.want)
		}
	}
}

// One concept asked in alternatives of opposite polarity has no one yes or
// no: the patient says it does not understand (low margin).
func TestMixedPolarityIsNotAnswered(t *testing.T) {
	said, _ := builtinPatient(t, "sore-throat-mcisaac-strong").Answer("Can you open your mouth fully, or is one side of your throat more swollen?", nil)
	if said.Why.Kind != WhyLowMargin || said.Why.Understood() {
		t.Errorf("said %q (%s); want low margin", said.Text, said.Why)
	}
}

// Round 3 (2026-11-28): the misreadings of round 3's fresh wording, as the
// patient of the built-in vignette answers them, in wordings of their own.
// Every case failed before the rules of english_test.go's round 3 were
// written (a vomiting patient said "yes, I keep being sick" to a question
// about bleeding; a man with a new headache said "yes, never had headaches
// like this" to a question about new weakness).

// A patient who keeps being sick, with no blood, says no to a question
// about bleeding that names vomit inside its items, and never answers it
// with the vomiting's yes.
func TestVomitInsideABleedingQuestion(t *testing.T) {
	for _, q := range []string{
		"Because bleeding from the gut is serious, I must ask: have you had any of these: blood in your sick, sick that looks like coffee grounds, or tarry stools?",
		"Have you seen blood, or dark bits like coffee grounds, in your vomit, or have your motions been black?",
		"Has your vomit looked like coffee grounds, or have your stools been black?",
	} {
		said, _ := builtinPatient(t, "abdominal-pain-older-vomiting").Answer(q, nil)
		if yn := yesNoWords(said.Text); !slices.Equal(yn, []string{"no"}) || !slices.Equal(said.Why.Concepts, []string{"gi_bleeding"}) {
			t.Errorf("%q: said %q (%s); want one no, about bleeding only", q, said.Text, said.Why)
		}
	}
	// Vomit narrowed by words the patient cannot read: not trusted, never
	// the vomiting's yes.
	for _, q := range []string{
		"Have you had vomit that is dark, or black or bloody stools?",
		"Any vomit with dark bits in it, or blood in your poo?",
	} {
		said, _ := builtinPatient(t, "abdominal-pain-older-vomiting").Answer(q, nil)
		if said.Why.Kind != WhyLowMargin || slices.Contains(yesNoWords(said.Text), "yes") {
			t.Errorf("%q: said %q (%s); want low margin, no yes", q, said.Text, said.Why)
		}
	}
}

// What a relative clause or a list's frame says of the items ("that are
// new for you") is not asked: a man whose headaches are new, with no
// weakness, says no to a question about new weakness.
func TestNewForYouIsNotAsked(t *testing.T) {
	for _, q := range []string{
		"Have you noticed any of these that are new for you: weakness in an arm, slurred speech, or blurred vision?",
		"Have you had numbness, weakness or loss of sight, which is new for you?",
		"Any weakness (new for you), trouble speaking, or loss of vision?",
		"Have you had weakness or numbness that you have never had before?",
	} {
		said, _ := builtinPatient(t, "headache-new-over-fifty").Answer(q, nil)
		if yn := yesNoWords(said.Text); !slices.Equal(yn, []string{"no"}) || slices.Contains(said.Why.Concepts, "similar_before") {
			t.Errorf("%q: said %q (%s); want one no, not about having had it before", q, said.Text, said.Why)
		}
	}
}

// An item of a list opened by "being" keeps its own negation: a patient
// who cannot open their mouth fully says yes.
func TestGerundItemKeepsItsNegation(t *testing.T) {
	said, _ := builtinPatient(t, "sore-throat-quinsy").Answer("Either of these: being unable to open your jaw all the way, or one side of your throat being more swollen?", nil)
	if yn := yesNoWords(said.Text); !slices.Equal(yn, []string{"yes"}) || !slices.Equal(said.Why.Concepts, []string{"trismus"}) {
		t.Errorf("said %q (%s); want yes, about trismus", said.Text, said.Why)
	}
}

// Round 4 (2026-11-28): a value the patient cannot give is not said beside
// another answer ("I'm not sure. Yes, it comes and goes" reads as a
// contradiction, and its first words as the answer), and a question opened
// by "If so," narrows the one before it: one answer, "no" when the first
// does not hold or the narrowed one does not.
func TestRound4AnswerShapes(t *testing.T) {
	for _, c := range []struct {
		vignette, q string
		want        []string // the yes/no words of the answer, in order
	}{
		// Constant pain asked beside what it feels like (a value this
		// patient does not give): the one answer, no "I'm not sure".
		{"food-poisoning-not-poisoning", "What does the pain feel like, and is it bad and there all the time?", []string{"no"}},
		// A cough, no blood: the narrowed question's answer is no.
		{"no-chest-pain-just-cough", "Have you got a cough? If so, is there blood in what you bring up?", []string{"no"}},
		// No cough at all (a patient with no cough): no.
		{"food-poisoning-not-poisoning", "Have you got a cough? If so, is there blood in what you bring up?", []string{"no"}},
	} {
		said, _ := builtinPatient(t, c.vignette).Answer(c.q, nil)
		if yn := yesNoWords(said.Text); !slices.Equal(yn, c.want) || strings.Contains(said.Text, "not sure") || strings.Count(said.Text, ". ") > 0 {
			t.Errorf("%s %q: said %q (%s); want one answer, yes/no %v, no \"not sure\"", c.vignette, c.q, said.Text, said.Why, c.want)
		}
	}
}
