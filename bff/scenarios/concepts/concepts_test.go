package concepts

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func ids(ms []Match) []string {
	out := []string{}
	for _, m := range ms {
		id := m.Concept
		if m.Inverse {
			id = "!" + id
		}
		out = append(out, id)
	}
	return out
}

func TestLoad(t *testing.T) {
	u := mustLoad(t)
	cs := u.Concepts()
	if len(cs) < 80 || cs[0].ID != "main_problem" || cs[len(cs)-1].ID != "support" {
		t.Fatalf("Concepts: %d concepts, first %q, last %q: not the vocabulary's order", len(cs), cs[0].ID, cs[len(cs)-1].ID)
	}
	c, ok := u.Concept("cannot_bear_weight")
	if !ok || c.Kind != YesNo || c.Yes == "" || c.Means == "" {
		t.Errorf("Concept(cannot_bear_weight) = %+v, %v", c, ok)
	}
	if _, ok := u.Concept("smoking"); ok {
		t.Error("Concept(smoking) found")
	}
	cs[0].ID = "changed"
	if u.Concepts()[0].ID != "main_problem" {
		t.Error("Concepts returns the Understanding's own slice")
	}
}

func TestWords(t *testing.T) {
	u := mustLoad(t)
	for _, tc := range []struct{ in, want string }{
		{"Can't you WALK?", "cant you walk"},
		{"I’d like to check", "id like to check"},
		{"Any self-harm?", "any self harm"},
		{"What colour / color is it?", "what colour colour is it"},
		{"Any vomitting or diarrhea?", "any vomiting or diarrhoea"},
		{"Did the Tylenol help?", "did the paracetamol help"},
		{"Rate it 0-10.", "rate it 0 10"},
		{"ur temprature", "your temperature"},
	} {
		got, _ := words(tc.in, u.spell)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("words(%q) = %q, want %q", tc.in, strings.Join(got, " "), tc.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Thanks, that's helpful. Does it spread to your arm?", []string{"Thanks, that's helpful.", "Does it spread to your arm?"}},
		{"Is it over 37.5 degrees?", []string{"Is it over 37.5 degrees?"}},
		{"Really?! OK... Next one", []string{"Really?!", "OK...", "Next one"}},
		{"Any fever\nAny cough", []string{"Any fever", "Any cough"}},
		{"  ", nil},
		// A dash before a word that opens a question sets the question off;
		// a dash before another word, or a hyphen in a word, does not.
		{"Feel your neck — are the glands up?", []string{"Feel your neck —", "are the glands up?"}},
		{"You can't walk on it - is that right?", []string{"You can't walk on it -", "is that right?"}},
		{"Chest pain – does it spread?", []string{"Chest pain –", "does it spread?"}},
		{"About your chest pain: does it spread?", []string{"About your chest pain:", "does it spread?"}},
		{"Quick check: fever?", []string{"Quick check: fever?"}},
		{"Any heart problems — angina, a heart attack?", []string{"Any heart problems — angina, a heart attack?"}},
		{"Any self-harm — or plans to?", []string{"Any self-harm — or plans to?"}},
	} {
		asks := func(w string) bool { return slices.Contains([]string{"are", "is", "does"}, w) }
		if got := splitSentences(tc.in, asks); !slices.Equal(got, tc.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUnderstand(t *testing.T) {
	u := mustLoad(t)
	for _, tc := range []struct {
		q    string
		want string // ids in order, "!" before an inverse one
	}{
		// lead-ins and statements ask nothing; frames are not concepts
		{"Thanks, that's helpful.", ""},
		{"I'm sorry to hear about your chest pain.", ""},
		{"I'm sorry to hear about your chest pain. Does it spread to your arm?", "spread"},
		{"You've had a fever. Is that right?", "fever"},
		{"You have chest pain, is that right?", "chest_pain"},
		{"I'd like to check whether you have a fever.", "fever"},
		{"Tell me about any allergies.", "allergies"},
		{"Can I ask if you've been sick?", "vomiting"},
		// unknown: nothing, never the nearest concept
		{"Do you smoke?", ""},
		{"How much alcohol do you drink?", ""},
		{"Which GP surgery are you registered with?", ""},
		// specificity
		{"Do you have chest pain that is sharp when you breathe in?", "pleuritic_pain"},
		{"Does the chest pain spread to your arm?", "spread"},
		{"Do you have chest pain, and does it spread to your arm?", "chest_pain spread"},
		{"Is the bone showing through the skin?", "deformity"},
		{"Have you coughed up any blood?", "coughing_blood"},
		{"Is the rash spreading?", "rash_spreading"},
		// two at once, in the order asked
		{"Have you had a fever or been vomiting?", "fever vomiting"},
		{"Have you been vomiting or had a fever?", "vomiting fever"},
		// a question split over two sentences
		{"Press on the bony bumps of your ankle. Does that hurt?", "ankle_bone_tender"},
		// polarity
		{"Can you walk on it?", "!cannot_bear_weight"},
		{"Is it impossible to walk on it?", "cannot_bear_weight"},
		{"Are you unable to put weight on it?", "cannot_bear_weight"},
		{"Are you able to keep fluids down?", "!cannot_keep_fluids"},
		{"Are you struggling to keep fluids down?", "cannot_keep_fluids"},
		{"Have you had a fever or not?", "fever"},
		{"So no fever at all, is that right?", "!fever"},
		{"Is your urine clear?", "!cloudy_urine"},
		{"Are you managing OK at home?", "managing_daily_activities"},
		{"Is the pain stopping you doing your usual activities?", "!managing_daily_activities"},
		{"Does the rash fade when you press a glass on it?", "!non_blanching_rash"},
		{"Is there a rash that doesn't fade when you press it?", "non_blanching_rash"},
		{"Can you stand up without feeling dizzy?", "!low_blood_pressure"},
		{"Do you have trouble opening your mouth?", "trismus"},
		{"Can you open your mouth fully?", "!trismus"},
		{"Do you have a stiff neck, or a rash that doesn't fade under a glass?", "stiff_neck non_blanching_rash"},
	} {
		if got := strings.Join(ids(u.Understand(tc.q)), " "); got != tc.want {
			t.Errorf("Understand(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestMatchAudit(t *testing.T) {
	u := mustLoad(t)
	got := u.Understand("Thanks. Does the pain spread to your arm or jaw? And are you sweating?")
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	if got[0].Concept != "spread" || got[0].Text != "Does the pain spread to your arm or jaw?" || !strings.Contains(got[0].Cue, "radiat*") {
		t.Errorf("first match %+v: want spread, its sentence and its cue as written", got[0])
	}
	if got[1].Concept != "sweating_nausea" || got[1].Text != "And are you sweating?" {
		t.Errorf("second match %+v", got[1])
	}
	if m := u.Understand(""); len(m) != 0 {
		t.Errorf("empty message: %+v", m)
	}
}

func TestLoadErrors(t *testing.T) {
	cues := string(cuesYAML)
	itchy := "  itchy:\n    - \"itch*|scratch*|prurit*\"\n"
	if !strings.Contains(cues, itchy) {
		t.Fatal("cues.yaml's itchy entry has changed: update this test")
	}
	for _, tc := range []struct {
		name, cues string
		want       []string // in the error
	}{
		{"unknown concept", cues + "  smoking:\n    - \"smok*\"\n", []string{"cues.yaml", "smoking", "not a concept of vocabulary.yaml"}},
		{"concept without cues", strings.Replace(cues, itchy, "", 1), []string{"vocabulary.yaml", "itchy", "no cues"}},
		{"only optional groups", strings.Replace(cues, itchy, "  itchy:\n    - \"?itch*\"\n", 1), []string{"cues.yaml", "itchy, rule 1", "only optional"}},
		{"empty group", strings.Replace(cues, itchy, "  itchy:\n    - \"itch* + \"\n", 1), []string{"itchy, rule 1", "empty group"}},
		{"star inside a word", strings.Replace(cues, itchy, "  itchy:\n    - \"it*ch\"\n", 1), []string{"itchy, rule 1", "may only end a word"}},
		{"unknown rule field", strings.Replace(cues, itchy, "  itchy:\n    - {cue: \"itch*\", invert: true}\n", 1), []string{"itchy, rule 1", "unknown field \"invert\""}},
		{"unknown macro", strings.Replace(cues, itchy, "  itchy:\n    - \"itch* + @nothing\"\n", 1), []string{"itchy, rule 1", "@nothing"}},
		{"unknown top-level field", "colour: blue\n" + cues, []string{"cues.yaml", "colour"}},
	} {
		_, err := load(vocabularyYAML, []byte(tc.cues))
		if err == nil {
			t.Errorf("%s: Load succeeded", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
	if _, err := load(vocabularyYAML, cuesYAML); err != nil {
		t.Errorf("the embedded files: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	u := mustLoad(t)
	qs := []string{"Can you walk on it?", "Does the chest pain spread to your arm?", "Do you smoke?"}
	want := make([]string, len(qs))
	for i, q := range qs {
		want[i] = fmt.Sprint(u.Understand(q))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(qs)
				if got := fmt.Sprint(u.Understand(qs[i])); got != want[i] {
					t.Errorf("%q: %s, want %s", qs[i], got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// TestGroups: each concept carries the section of vocabulary.yaml it is
// listed under ("# --- head ---"), and a concept added under a new section
// carries that one: the clinician area's vocabulary page groups by them.
func TestGroups(t *testing.T) {
	u, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"main_problem": "open questions", "pregnancy": "about the person",
		"spread": "the complaint in general", "support": "mood"} {
		if c, _ := u.Concept(id); c.Group != want {
			t.Errorf("%s is in group %q, want %q", id, c.Group, want)
		}
	}
	for _, c := range u.Concepts() {
		if c.Group == "" {
			t.Errorf("%s has no group", c.ID)
		}
	}
	vocab := string(vocabularyYAML) + "  # --- eyes ------------------------------\n" +
		"  - {id: red_eye, kind: yes_no, yes: \"an eye is red\", means: \"a red eye\"}\n"
	cues := string(cuesYAML) + "  red_eye:\n    - \"red + eye*\"\n"
	u, err = load([]byte(vocab), []byte(cues))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := u.Concept("red_eye"); !ok || c.Group != "eyes" || c.Yes != "an eye is red" {
		t.Errorf("the added concept: %+v", c)
	}
	if c, _ := u.Concept("support"); c.Group != "mood" {
		t.Errorf("support moved to group %q", c.Group)
	}
}
