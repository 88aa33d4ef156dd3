package rules

import "testing"

func TestPlainAnswers(t *testing.T) {
	lx := newLexicon()
	cases := map[string]polarity{
		"yes": affirmed, "Yeah": affirmed, "yep!": affirmed, "I think so": affirmed, "a bit": affirmed,
		"no": negated, "Nope.": negated, "not really": negated, "I don't think so": negated, "nah": negated,
		"not sure": uncertain, "I'm not sure": uncertain, "no idea": uncertain, "maybe": uncertain, "I don't know": uncertain,
		// Replies blind writers found misread (docs/protocols.md, "Plain
		// answers"): an unknowing reply is not a no, a yes word before
		// "not" is a no, and "correct" or "it helps" is a yes.
		"I do not know": uncertain, "I really do not know": uncertain,
		"Definitely not": negated, "Absolutely not.": negated, "Certainly not": negated, "Of course not": negated,
		"That is not the case": negated, "Not at all": negated,
		"That is correct": affirmed, "Correct": affirmed, "That's right": affirmed, "Right.": affirmed, "It helps": affirmed, "it helped a bit": affirmed,
		"It doesn't help": negated, "That is not correct": negated,
	}
	for in, want := range cases {
		got, ok := lx.parse(in).yesNo()
		if !ok || got != want {
			t.Errorf("yesNo(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"banana", "purple", "", "Low down on the right", "Sorry, I don't understand the question.", "I do not understand", "What do you mean?"} {
		if _, ok := lx.parse(in).yesNo(); ok {
			t.Errorf("yesNo(%q) understood; want not understood", in)
		}
	}
	// A firm no leaves a hedged red flag no; a soft one leaves it unsure
	// (answerPending).
	for in, want := range map[string]bool{"not really": true, "I don't think so": true, "Not at all": false, "Definitely not": false,
		"That is not the case": false, "no": false} {
		if got := lx.parse(in).softNo(); got != want {
			t.Errorf("softNo(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNegationAndHedging(t *testing.T) {
	lx := newLexicon()
	fever := lx.normalisePhrase("fever*")
	rash := lx.normalisePhrase("rash")
	cases := []struct {
		in     string
		phrase []string
		want   polarity
	}{
		{"no fever", fever, negated},
		{"I've had a fever", fever, affirmed},
		{"feverish since last night", fever, affirmed},
		{"I don't think I have a fever", fever, negated},
		{"not sure if I have a fever", fever, uncertain},
		{"I might have a fever", fever, uncertain},
		{"I don't have a rash", rash, negated},
		{"no cough but a rash", rash, affirmed},
		{"a rash, no fever", fever, negated},
		{"a rash, no fever", rash, affirmed},
		{"headache", rash, absent},
	}
	for _, c := range cases {
		if got := lx.parse(c.in).mention(c.phrase); got != c.want {
			t.Errorf("mention(%q, %v) = %v, want %v", c.in, c.phrase, got, c.want)
		}
	}
}

func TestDurations(t *testing.T) {
	lx := newLexicon()
	cases := map[string]float64{
		"3 days": 3, "three days": 3, "for about 2 weeks": 14, "a couple of weeks": 14, "since yesterday": 1,
		"since Tuesday": 7, "started today": 0, "a few days": 3, "more than 3 weeks": 21, "a month": 30,
		"for a few hours": 0.125, "last night": 1, "less than a week": 6,
		// The plain quick replies and their rewordings read alike: a range
		// of figures is its upper figure, "a day or two" is about a day,
		// "several" is "a few".
		"1 to 2 days": 2, "1 or 2 days": 2, "One or two days": 2, "A day or two": 1, "For a day or two": 1,
		"Several days": 3, "for 5days": 5, "2wks": 14, "A few days": 3, "for several days": 3, "3 to 6 days": 6, "Between 3 and 6 days": 6,
	}
	for in, want := range cases {
		got, _, ok := duration(lx.parse(in).tokens)
		if !ok || got != want {
			t.Errorf("duration(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"I'm 34", "34 years old", "no"} {
		if got, _, ok := duration(lx.parse(in).tokens); ok {
			t.Errorf("duration(%q) = %v; want none", in, got)
		}
	}
}

func TestAges(t *testing.T) {
	lx := newLexicon()
	volunteered := map[string]int{
		"I'm 34": 34, "I am 34 and have a cough": 34, "34 years old": 34, "aged 71": 71,
		"I'm thirty four": 34, "a 52 year old man": 52,
	}
	for in, want := range volunteered {
		if got, ok := volunteeredAge(lx.parse(in).tokens); !ok || got != want {
			t.Errorf("volunteeredAge(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"3 days", "I have had it for 2 weeks", "I'm 3 days in", "temperature 39"} {
		if got, ok := volunteeredAge(lx.parse(in).tokens); ok {
			t.Errorf("volunteeredAge(%q) = %v; want none", in, got)
		}
	}
	if got, ok := answeredAge(lx.parse("34").tokens); !ok || got != 34 {
		t.Errorf("answeredAge(34) = %v, %v", got, ok)
	}
}

func TestNormalisation(t *testing.T) {
	lx := newLexicon()
	cases := []struct {
		in, phrase string
		want       polarity
	}{
		{"my throat is really very sore", "throat is sore", affirmed},          // fillers between words
		{"my throat is not sore", "throat is sore", absent},                    // a negator is never a filler
		{"He cannot breath", "cant breath*", affirmed},                         // spelling and a prefix
		{"she is unable to breathe", "cant breathe", affirmed},                 // a rewrite
		{"my husband is clutching his cheast", "clutching my chest", affirmed}, // third person, typo
		{"took 30 paracetamol", "took #10-99 paracetamol", affirmed},
		{"took 2 paracetamol", "took #10-99 paracetamol", absent},
		{"my face is droopy", "face droopy|drooping", affirmed},
		{"I might be having a stroke", "having stroke", uncertain},
	}
	for _, c := range cases {
		if got := lx.parse(c.in).mention(lx.normalisePhrase(c.phrase)); got != c.want {
			t.Errorf("mention(%q, %q) = %v, want %v", c.in, c.phrase, got, c.want)
		}
	}
}

// Complaint triggers: "a~b" in one clause in any order, "!a" leaves a clause
// out, and a question answered "no" straight after does not name it.
func TestComplaintPhrases(t *testing.T) {
	lx := newLexicon()
	chest, heavy := lx.normalisePhrase("chest"), lx.normalisePhrase("heavy|pressure")
	together := [][]string{chest, heavy}
	for in, want := range map[string]bool{
		"a heavy feeling in the middle of my chest":   true,
		"my chest feels heavy":                        true,
		"pressure right across his chest":             true,
		"my chest is fine, my legs feel heavy":        false,
		"no heavy feeling in my chest":                false,
		"my chest doesn't feel heavy":                 false,
		"heavy legs and a cough from my chest":        false,
		"I think there might be pressure in my chest": true,
	} {
		if got := lx.parse(in).saysTogether(together); got != want {
			t.Errorf("saysTogether(%q, chest~heavy) = %v, want %v", in, got, want)
		}
	}
	backPain := [][]string{lx.normalisePhrase("back pain")}
	for in, want := range map[string]bool{
		"back pain? no, it's my chest that hurts": false,
		"back pain? yes, for a week":              true,
		"is it back pain? I think so":             true,
		"back pain":                               true,
	} {
		if got := lx.parse(in).saysTogether(backPain); got != want {
			t.Errorf("saysTogether(%q, back pain) = %v, want %v", in, got, want)
		}
	}
	low := [][]string{lx.normalisePhrase("feeling low")}
	except := [][]string{lx.normalisePhrase("low in belly|tummy")}
	for in, want := range map[string]bool{
		"a dragging feeling low in my belly":           false,
		"feeling low, and a dragging pain in my belly": true,
		"I've been feeling low":                        true,
	} {
		if got := lx.parse(in).without(except).saysTogether(low); got != want {
			t.Errorf("without(low in belly).saysTogether(%q, feeling low) = %v, want %v", in, got, want)
		}
	}
}
