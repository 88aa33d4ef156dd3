package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// findingsOf reads text as a first patient message: its findings.
func findingsOf(e *Engine, text string) []finding {
	m := e.lx.parse(text)
	m.turn = 1
	return e.lib.vocab.read(m)
}

// polarityOf is the polarity of the first finding id in text (absent when
// none), at site when site is not "".
func polarityOf(e *Engine, text, id, site string) polarity {
	for _, f := range findingsOf(e, text) {
		if f.id == id && (site == "" || slices.Contains(f.sites, site)) {
			return f.pol
		}
	}
	return absent
}

// TestNegationScope: negation reaches the finding it governs and no
// further (NegEx triggers, pseudo-triggers, terminators, the lay triggers
// and hypotheticals of docs/protocols.md "Negation and its scope"). It
// fails when the scope rules of negation.go or lexicon.json's "negation"
// are removed.
func TestNegationScope(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct {
		text, id, site string
		want           polarity
		why            string
	}{
		{"no fever but a cough", "fever", "", negated, "a pre-trigger"},
		{"no fever but a cough", "cough", "", affirmed, "a clause break ends the scope"},
		{"no fever now my chest hurts", "pain", "chest", affirmed, "a terminator (now) ends the scope"},
		{"I have no cough just a sore throat", "pain", "throat", affirmed, "a terminator (just) ends the scope"},
		{"free of pain since Tuesday", "pain", "", negated, "a multi-word pre-trigger"},
		{"nowhere near the worst headache I've had", "pain", "head", affirmed, "a lay trigger before a word of degree denies the degree, not the headache"},
		{"nowhere near as breathless as last week", "breathless", "", affirmed, "the degree again"},
		{"I'm nowhere near breathless", "breathless", "", negated, "nowhere near denies"},
		{"I've never had a pain like this before", "pain", "", affirmed, "never … before affirms a new symptom"},
		{"I've never had a rash", "rash", "", negated, "never alone denies"},
		{"I used to get migraines", "pain", "head", past, "used to: past"},
		{"had meningitis as a child", "neck_stiffness", "", absent, "nothing said"},
		{"what if it turns into a chest infection", "infection", "", hypothetical, "a hypothetical"},
		{"not only a cough but a fever", "cough", "", affirmed, "a pseudo-trigger (not only)"},
		{"my cough is not getting better", "cough", "", affirmed, "a pseudo-trigger after the finding"},
		{"I'm not feeling good I can't take my breath", "breathless", "", affirmed, "not feeling good is a pseudo-trigger"},
		{"a chest infection was ruled out at the walk-in centre", "infection", "", negated, "a post-trigger"},
		{"my temperature is normal", "fever", "", negated, "a post-trigger (normal)"},
		{"not sure if I have a temperature", "fever", "", uncertain, "a hedge"},
		{"worst headache ever? nah, it's my usual one", "pain", "head", negated, "a question answered no straight after"},
	} {
		if got := polarityOf(e, c.text, c.id, c.site); got != c.want {
			t.Errorf("%q: %s is %v, want %v (%s)", c.text, c.id, got, c.want, c.why)
		}
	}
	// The red flag keyword is denied too: "nowhere near the worst
	// headache" is not a thunderclap headache.
	s := volunteeredIn(e, protocolByID(e, "headache.v1"), "nowhere near the worst headache I've had, it's my usual migraine")
	if a, ok := s.facts["thunderclap"]; !ok || a.value != valNo {
		t.Errorf("thunderclap = %+v (%v), want no", a, ok)
	}
}

// TestSpellingTolerance: a word one slip from a vocabulary word is read as
// it, within the guard (spelling.go); the end-to-end case fails when
// correction is removed (lexicon.correct returning its word).
func TestSpellingTolerance(t *testing.T) {
	e := newEngine(t)
	for in, want := range map[string]string{
		"tonge":       "tongue",     // a letter missing
		"tounge":      "tongue",     // letters out of order, two edits away
		"swolen":      "swollen",    // a letter missing
		"breathles":   "breathless", // a long word
		"pnuemonia":   "pneumonia",  // two letters swapped
		"stomack":     "stomach",    // a letter wrong
		"unconsciuos": "unconscious",
	} {
		if got := e.lx.correct(in); got != want {
			t.Errorf("correct(%q) = %q, want %q", in, got, want)
		}
	}
	// The guard: negations, numbers, short words, vocabulary words and
	// their inflections, and English words are never corrected.
	for _, w := range []string{"dont", "never", "38", "hed", "pain", "coughing", "breeding", "night", "brake", "sweat", "tight", "able", "nope"} {
		if got := e.lx.correct(w); got != w {
			t.Errorf("correct(%q) = %q, want it left alone", w, got)
		}
	}
	for _, c := range []struct{ text, category string }{
		{"my tonge is swolen and i cant breath after the new tablets", "anaphylaxis"},
		{"he's unconsciuos on the floor", "unresponsive"},
	} {
		s, res := firstTurn(t, e, c.text)
		if !res.Urgent || s.emergency == nil || !slices.ContainsFunc(s.emergency.categories, func(x *EmergencyCategory) bool { return x.ID == c.category }) {
			t.Errorf("%q: want the %s emergency, got %s (%s)", c.text, c.category, res.Disposition, res.Reply)
		}
	}
	if polarityOf(e, "I've been vomitting all night", "vomiting", "") != affirmed {
		t.Error("vomitting: an inflection of a vocabulary word with a doubled letter is read as it (a lemma)")
	}
	if _, res := firstTurn(t, e, "i have stomack pain since yesterday"); res.ActiveProtocol != "abdominal_pain.v1" {
		t.Errorf("stomack pain: protocol %q", res.ActiveProtocol)
	}
}

// TestClinicalShorthand: clinical shorthand typed in capitals is read as
// its words (lexicon.json's abbreviations), and the same letters typed
// as ordinary words, or in a message all in capitals, are not. It fails
// when the abbreviations are removed or their guard is.
func TestClinicalShorthand(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct {
		text, id, site string
		want           polarity
	}{
		{"SOB on exertion for a week", "breathless", "", affirmed},
		{"I sob every night since he left", "breathless", "", absent},
		{"dull CP since this morning", "pain", "chest", affirmed},
		{"sharp pain in my L arm", "pain", "arm", affirmed},
		{"I CANT STOP CRYING I SOB ALL DAY", "breathless", "", absent},
	} {
		if got := polarityOf(e, c.text, c.id, c.site); got != c.want {
			t.Errorf("%q: %s@%s is %v, want %v", c.text, c.id, c.site, got, c.want)
		}
	}
	m := e.lx.parse("PMH MI, new L sided CP")
	if got := strings.Join(m.tokens, " "); got != "history of heart attack new left sided chest pain" {
		t.Errorf("shorthand read as %q", got)
	}
	if got := strings.Join(e.lx.parse("pmh, l arm").tokens, " "); got != "pmh l arm" {
		t.Errorf("lower case read as %q, want it left alone", got)
	}
}

// TestSyndromeRules: the combinations the guidance names are emergencies
// whatever the words, told in one message or across the conversation, and
// their look-alikes are not. Each case names the rule's source in the
// clinician's note; removing a rule from emergencies.json fails its case.
func TestSyndromeRules(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct {
		msgs     []string
		category string
		note     string // in the safety notes: the rule's source
	}{
		{[]string{"I've got a water infection", "she's talking nonsense now and her knees look mottled"}, "sepsis_or_meningitis", "NG51"},
		{[]string{"my son has a cough and a high temperature", "21", "male", "and now his neck is stiff"}, "sepsis_or_meningitis", "NG240"},
		{[]string{"temperature of 39, the light is hurting my eyes and my head is pounding"}, "sepsis_or_meningitis", "NG240"},
		{[]string{"I flew back from Thailand yesterday and now I'm short of breath and my calf is swollen"}, "breathing", "NG158"},
		{[]string{"had my knee replaced last week and now a sharp pain when I breathe in and I'm breathless"}, "breathing", "NG158"},
		{[]string{"my asthma is bad, I can only get 3 words out at a time"}, "breathing", "BTS/SIGN"},
		{[]string{"wheezing and my reliever isn't helping and I'm so out of breath"}, "breathing", "BTS/SIGN"},
		{[]string{"I had my baby 5 days ago and I'm soaking through a pad every hour"}, "pregnancy", "RCOG"},
		{[]string{"I'm on apixaban and my nose has been bleeding for an hour and won't stop"}, "bleeding", "Anticoagulation"},
		{[]string{"my toddler chewed some of grandad's heart tablets, we don't know how many"}, "poisoning", "TOXBASE"},
		{[]string{"we ate wild mushrooms from the woods at lunch"}, "poisoning", "Poisoning"},
		{[]string{"I've been saving up my pills and tonight I'm going to take them all"}, "self_harm", "NG225"},
		{[]string{"I can't do this any more, I've got a rope in the shed"}, "self_harm", "NG225"},
		{[]string{"my heart is racing and my chest feels tight"}, "cardiac_chest_pain", "Palpitations"},
		{[]string{"her arm has gone weak and her words are coming out jumbled"}, "stroke", "NG128"},
		{[]string{"black tarry poo since yesterday and I nearly fainted in the shower"}, "bleeding", "CG141"},
		{[]string{"had a positive test last week, now really bad pain low down and I keep nearly fainting"}, "pregnancy", "NG126"},
		// Round 2's rules (2026-11-28), each in words of our own.
		{[]string{"I gave birth last week", "this morning I had a fit in the kitchen"}, "pregnancy", "a fit in pregnancy"},
		{[]string{"she had her baby on Monday, tonight she was jerking all over and now she's really drowsy"}, "pregnancy", "shaking or jerking in pregnancy"},
		{[]string{"32 weeks and fluid keeps trickling out of me"}, "pregnancy", "NG25"},
		{[]string{"I'm 34 weeks pregnant with blurry vision and my hands have swollen up"}, "pregnancy", "suspected pre-eclampsia (NICE NG133)"},
		{[]string{"I'm on chemo and my temperature is 38.2"}, "sepsis_or_meningitis", "NG151"},
		{[]string{"my 6 week old has a temperature of 38.5"}, "sepsis_or_meningitis", "NG143"},
		{[]string{"my dad keeps shivering uncontrollably and he's confused"}, "sepsis_or_meningitis", "shaking chills (a sign of infection)"},
		{[]string{"she had a seizure, then a second one, and she hasn't woken up"}, "seizure", "status epilepticus"},
		{[]string{"a man is lying on the floor of the bus not reacting to anything"}, "unresponsive", "basic life support"},
		{[]string{"cut my leg on glass, the blood is soaking through the towel"}, "bleeding", "catastrophic bleeding"},
		{[]string{"the chip pan caught fire, my hand looks waxy and it doesn't hurt"}, "burns", "full-thickness"},
		{[]string{"got oven cleaner in my eye and it stings"}, "burns", "chemical burn"},
		{[]string{"the gas fire has been on all day and now my husband is drowsy"}, "poisoning", "carbon monoxide"},
		{[]string{"took my first penicillin tablet an hour ago, now I'm itchy everywhere and my chest feels tight"}, "anaphylaxis", "chest or throat tightness"},
		{[]string{"my heart is going at 190 and my chest hurts"}, "cardiac_chest_pain", "Palpitations"},
		// Round 3's rules (2026-11-28), each in words of our own.
		{[]string{"like a heavy weight pressing down on me and it goes up into my neck"}, "cardiac_chest_pain", "CG95"},
		{[]string{"a crushing feeling, spreading down into my left arm"}, "cardiac_chest_pain", "CG95"},
		{[]string{"tight band across my breastbone and I'm all clammy"}, "cardiac_chest_pain", "with sweating"},
		{[]string{"she's on oxycodone and her breathing has gone really shallow"}, "poisoning", "opioid or sedative toxicity"},
		{[]string{"he takes methadone and we can't rouse him"}, "poisoning", "opioid or sedative toxicity"},
		{[]string{"my mate dropped a pill at the club and now he's overheating and his heart is pounding"}, "poisoning", "recreational drug"},
		{[]string{"i think my drink was spiked, im so confused"}, "poisoning", "recreational drug"},
		{[]string{"since the new gas fire went in I get a pounding headache and feel dizzy"}, "poisoning", "a headache and nausea"},
		{[]string{"the boiler smells funny and we all have headaches and feel sick"}, "poisoning", "a headache and nausea"},
		{[]string{"found a note from my husband saying sorry for everything and he's not answering his phone"}, "self_harm", "suspected suicide attempt"},
		{[]string{"my sister wrote goodbye letters to all of us and now she won't answer the door"}, "self_harm", "suspected suicide attempt"},
		{[]string{"I've been sick twice and it looked like coffee grounds"}, "bleeding", "coffee grounds"},
		{[]string{"he vomited and there were coffee coloured bits in it"}, "bleeding", "coffee grounds"},
		{[]string{"she's clutching her neck after a grape and her lips are turning blue"}, "airway", "choking"},
		{[]string{"I've done back blows and he's gone purple"}, "airway", "choking"},
		{[]string{"my little boy has a high temperature and screams if I try to move his neck"}, "sepsis_or_meningitis", "NG240"},
		{[]string{"frying pan oil splashed over her arm and the skin is white and waxy"}, "burns", "full-thickness"},
		{[]string{"my dad's face has gone to one side and he can't answer me properly"}, "stroke", "NG128"},
		{[]string{"this morning I can't see to the right side and my right hand doesn't feel like mine"}, "stroke", "NG128"},
		// Round 4's rules (2026-11-28), each in words of our own.
		{[]string{"62F, CP for 30 mins going into her jaw, clammy and grey"}, "cardiac_chest_pain", "CG95"},
		{[]string{"PMH angina. Now crushing central CP radiating to R arm, diaphoretic"}, "cardiac_chest_pain", "CG95"},
		{[]string{"crushing weight on the left side of my chest going into my arm, sore when I press on it"}, "cardiac_chest_pain", "CG95"},
		{[]string{"pain in my chest and left arm, it gets worse when I move my arm"}, "cardiac_chest_pain", "acute coronary syndrome"}, // not one-sided: not spared
		{[]string{"I've given my cat to my neighbour and written letters to my family, tonight is the night"}, "self_harm", "NG225"},
		{[]string{"I've put my affairs in order and I won't be around by the weekend"}, "self_harm", "NG225"},
		{[]string{"gave the cat to my neighbour this morning, tonight's the night"}, "self_harm", "NG225"},
		{[]string{"my grandad took his whole week of tablets from the dosette box in one go"}, "poisoning", "Poisoning or overdose"},
		{[]string{"she swallowed the entire blister pack of her sleeping tablets"}, "poisoning", "Poisoning or overdose"},
		{[]string{"my son's neck is stiff and he's so drowsy I can hardly wake him"}, "sepsis_or_meningitis", "NG240"},
		{[]string{"stiff neck since lunch and I can't stand the light"}, "sepsis_or_meningitis", "NG240"},
	} {
		res := last(run(t, e, script{Messages: c.msgs}))
		s := newSession(e, engine.Input{Patient: c.msgs})
		s.run()
		if !res.Urgent || s.emergency == nil {
			t.Errorf("%q: want the %s emergency, got %s (%s)", c.msgs, c.category, res.Disposition, res.Reply)
			continue
		}
		if !slices.ContainsFunc(s.emergency.categories, func(x *EmergencyCategory) bool { return x.ID == c.category }) {
			t.Errorf("%q: categories %v, want %s", c.msgs, s.emergency.categories[0].ID, c.category)
		}
		if notes := strings.Join(res.SafetyNotes, " "); !strings.Contains(notes, c.note) {
			t.Errorf("%q: safety notes do not name the rule's source %q: %s", c.msgs, c.note, notes)
		}
	}
	for _, msgs := range [][]string{
		{"I've got a water infection, I'm not confused and I'm weeing fine"},
		{"stiff neck from sleeping funny, no temperature"},
		{"I flew back from Spain last week, I feel fine, just a sore throat"},
		{"I had my baby 3 weeks ago and the bleeding is light now"},
		{"I'm on warfarin, I cut myself shaving and it stopped quickly"},
		{"I took two paracetamol for my headache"},
		{"my asthma's a bit wheezy but I can talk fine and my inhaler helps"},
		{"my heart races when I'm anxious, no chest pain"},
		{"I have a kidney infection and I'm shivery"},
		{"cut myself shaving this morning"},
		{"I'm 12 weeks pregnant, no bleeding and no pain, just stinging when I wee"},
		{"think I've poisoned myself with a dodgy kebab, been sick all night"},
		{"I'm on chemo, no temperature, just tired"},
		{"my 6 week old has a blocked nose, no temperature"},
		{"I'm 30 weeks pregnant and fit and well, just a sore throat"},
		{"I'm sweating and soaking my clothes at night"},
		{"the boiler is broken and it's freezing in here"},
		{"my son had his lip pierced and it is swollen and the skin inside is grey and looks infected"},
		{"my asthma is well controlled, I just wanted a review"},
		// Round 3's look-alikes.
		{"my arm feels heavy after the gym and the ache goes down to my elbow"},
		{"lots of pressure at work and I'm sweating about the deadline"},
		{"I take morphine for my back and it makes me a bit sleepy"},
		{"went to a festival last weekend and came home with a cold and a temperature"},
		{"I took something for my headache and now I feel hot"},
		{"the boiler is broken, I've got a headache from the cold"},
		{"my son left a note saying he's at football, he's not answering his phone"},
		{"I drink a lot of coffee and feel sick in the mornings"},
		{"we practised back blows at the first aid course today"},
		{"I've got flu with a temperature and my head aches when I move"},
		{"I spilled some cooking oil on the floor"},
		{"for weeks food feels like it sticks halfway down, I can breathe fine"},
		{"pins and needles in my left hand since I slept on it"},
		{"my left hand is numb and my vision is blurry after staring at the screen"},
		// Round 4's look-alikes.
		{"sharp pain on the right side of my chest when I twist or lift my arm, breathing fine"},
		{"left sided chest pain, it hurts when I press on my ribs and when I reach up, no sweating"},
		{"the dog is going to my sister's while we're away next week"},
		{"I emptied my pill organiser to refill it for the week"},
		{"I've got a week's supply of tablets and took the first one today"},
		{"stiff neck from sleeping awkwardly on the sofa, no temperature, just a bit tired"},
		{"woke up with a stiff neck and a headache, I think I slept funny"},
		{"my wife is burnt out at work and crying a lot, she says she would never hurt herself"},
		{"I wrote a letter to my family about the holiday"},
	} {
		if res := last(run(t, e, script{Age: 30, Sex: "female", Messages: msgs})); res.Urgent {
			t.Errorf("look-alike %q escalated: %q", msgs, res.SafetyNotes)
		}
	}
}

// TestEverySentenceCounts: a complaint, red flag or emergency in any
// sentence is found, and several complaints in the opening are asked about
// by name.
func TestEverySentenceCounts(t *testing.T) {
	e := newEngine(t)
	// Several problems: the question names the ones found, not the list.
	_, res := firstTurn(t, e, "I've had a headache for two days. My back has been killing me too.")
	if want := []string{"Headache", "Low back pain"}; !slices.Equal(res.Choices, want) {
		t.Errorf("several complaints: choices %q, want %q (%s)", res.Choices, want, res.Reply)
	}
	// A red flag in a second sentence: the protocol it belongs to is the
	// one committed, and it escalates.
	_, res = firstTurn(t, e, "Not feeling myself lately. I've also noticed my stools are black.")
	if res.ActiveProtocol != "abdominal_pain.v1" || res.Disposition != engine.DispositionEscalate {
		t.Errorf("black stools in a second sentence: %s %s (%s)", res.ActiveProtocol, res.Disposition, res.Reply)
	}
	// An emergency late in a long message.
	_, res = firstTurn(t, e, "Long story, my back has been bad for a month and I wanted advice about that. Anyway while typing this my dad has gone grey and sweaty and says his chest feels crushed.")
	if !res.Urgent {
		t.Errorf("an emergency at the end of a long message: %s", res.Reply)
	}
	// A complaint named in an answer to an unrelated question is kept for
	// the clinician.
	res = last(run(t, e, script{Messages: []string{"I have a headache", "34, and I've also got chest pain"}}))
	if !strings.Contains(strings.Join(res.SafetyNotes, " "), "Also named by the patient, not assessed by this intake: chest pain") {
		t.Errorf("a complaint in an answer: safety notes %q", res.SafetyNotes)
	}
}

// TestWordNetWordsReviewed: every word a WordNet synset adds to a finding
// was reviewed: testdata/wordnet-reviewed.json holds, for each, a sentence
// a patient would write with the word in that sense, and that sentence is
// read as the finding. A synset word no one reviewed, or one read as
// something else, fails.
func TestWordNetWordsReviewed(t *testing.T) {
	e := newEngine(t)
	data, err := os.ReadFile(filepath.Join("testdata", "wordnet-reviewed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reviewed struct {
		Comment  string                       `json:"comment"`
		Findings map[string]map[string]string `json:"findings"`
	}
	if err := decodeStrict(data, &reviewed); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range e.lib.vocab.findings {
		examples := reviewed.Findings[f.id]
		for _, w := range f.wordnet {
			n++
			sentence, ok := examples[w]
			if !ok {
				t.Errorf("%s: WordNet adds %q, which is not reviewed in testdata/wordnet-reviewed.json (add a patient's sentence using it, or leave it out with findings.json's not)", f.id, w)
				continue
			}
			if !slices.ContainsFunc(findingsOf(e, sentence), func(x finding) bool { return x.id == f.id && x.positive() }) {
				t.Errorf("%s: the reviewed sentence for %q, %q, is not read as %s", f.id, w, sentence, f.id)
			}
		}
		for w := range examples {
			if !slices.Contains(f.wordnet, w) {
				t.Errorf("%s: %q is reviewed but no synset of the finding adds it", f.id, w)
			}
		}
	}
	for id := range reviewed.Findings {
		if e.lib.vocab.byID[id] == nil {
			t.Errorf("reviewed words for unknown finding %q", id)
		}
	}
	if n < 20 {
		t.Errorf("only %d WordNet words: the expansion is not loaded", n)
	}
}

// TestWordNetFileIsCurrent: language/wordnet.json was generated for the
// words the library holds now; a word added to a phrase since is not a
// spelling target until it is generated again.
func TestWordNetFileIsCurrent(t *testing.T) {
	e := newEngine(t)
	if len(e.lx.unlisted) > 0 {
		slices.Sort(e.lx.unlisted)
		t.Errorf("%d vocabulary words are not in %s (run go generate ./sandbox/rules; it needs apt-get install wordnet-base wbritish): %q", len(e.lx.unlisted), wordnetFile, e.lx.unlisted)
	}
}

// TestBlindRoundCorpora: every case of every blind round (testdata/rounds)
// is read as its writer labelled it, once the round has joined the
// corpora: an emergency escalates at once, a complaint or look-alike
// names its protocol (committed, or among the ones the engine asks the
// patient to choose from) without escalating, and an out-of-scope message
// is committed to no protocol and does not escalate. It logs whether each
// emergency was named by the category the writer gave.
func TestBlindRoundCorpora(t *testing.T) {
	e := newEngine(t)
	names, err := filepath.Glob(filepath.Join("testdata", "rounds", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no blind round in testdata/rounds: %v", err)
	}
	var protocols []string
	for _, id := range e.Protocols() {
		protocols = append(protocols, strings.Split(id, ".v")[0])
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Round   int    `json:"round"`
			Written string `json:"written"`
			Comment string `json:"comment"`
			Cases   []struct {
				ID       string   `json:"id"`
				Text     string   `json:"text"`
				Kind     string   `json:"kind"`
				Expected string   `json:"expected"`
				Also     []string `json:"also"`
				Register string   `json:"register"`
				Why      string   `json:"why"`
			} `json:"cases"`
			Ambiguous []struct {
				ID, Text, Kind, Expected, Register, Why, Reason string
			} `json:"ambiguous"`
			// Left: labels judged right that the engine still gets wrong
			// after the round's changes, each with why; logged, not failed.
			Left []struct {
				ID, Text, Kind, Expected, Register, Why, Reason string
			} `json:"left"`
		}
		if err := decodeStrict(data, &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		named, emergencies := 0, 0
		for _, c := range r.Cases {
			s, res := firstTurn(t, e, c.Text)
			right := append([]string{c.Expected}, c.Also...)
			switch {
			case c.Expected == "out_of_scope":
				if res.ActiveProtocol != "" || res.Urgent {
					t.Errorf("%s %s: out of scope, got protocol %q urgent %v: %q", name, c.ID, res.ActiveProtocol, res.Urgent, c.Text)
				}
			case slices.Contains(protocols, c.Expected):
				offered := slices.ContainsFunc(res.CandidateProtocols, func(id string) bool { return slices.Contains(right, strings.Split(id, ".v")[0]) })
				if res.Urgent || !offered || (res.ActiveProtocol != "" && !slices.Contains(right, strings.Split(res.ActiveProtocol, ".v")[0])) {
					t.Errorf("%s %s: want %v, got protocol %q candidates %v urgent %v: %q", name, c.ID, right, res.ActiveProtocol, res.CandidateProtocols, res.Urgent, c.Text)
				}
			default:
				emergencies++
				if !res.Urgent || s.emergency == nil {
					t.Errorf("%s %s: want the %s emergency, got %s: %q", name, c.ID, c.Expected, res.Disposition, c.Text)
					continue
				}
				var got []string
				for _, x := range s.emergency.categories {
					got = append(got, x.ID)
				}
				if slices.ContainsFunc(got, func(id string) bool { return slices.Contains(right, id) }) {
					named++
				} else {
					t.Logf("%s %s: escalated as %v, the writer said %v: %q", name, c.ID, got, right, c.Text)
				}
			}
		}
		for _, c := range r.Left {
			_, res := firstTurn(t, e, c.Text)
			t.Logf("%s %s: left (want %s), the engine: protocol %q urgent %v: %q", name, c.ID, c.Expected, res.ActiveProtocol, res.Urgent, c.Text)
		}
		t.Logf("%s (round %d, written %s): %d cases, %d ambiguous and %d left out; %d of %d emergencies named by the writer's category", name, r.Round, r.Written, len(r.Cases), len(r.Ambiguous), len(r.Left), named, emergencies)
	}
}

// TestDocsListFindings: docs/protocols.md lists every finding, site and
// qualifier of the vocabulary, and every condition of every rule over
// findings (protocols' recognise rules, red flags' and questions'
// findings, emergency categories' rules), so the page says what the engine
// reads and decides.
func TestDocsListFindings(t *testing.T) {
	e := newEngine(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	listed := func(what, s string) {
		if !strings.Contains(doc, "`"+strings.ReplaceAll(s, "|", `\|`)+"`") {
			t.Errorf("docs/protocols.md does not list %s `%s`", what, s)
		}
	}
	v := e.lib.vocab
	for _, f := range v.findings {
		listed("finding", f.id)
	}
	for _, s := range v.sites {
		listed("site", s.id)
	}
	for q := range v.qualifiers {
		listed("qualifier", q)
	}
	rule := func(what string, r findingRule) {
		for _, c := range slices.Concat(r.All, r.Any, r.None) {
			listed(what+" condition", c)
		}
	}
	for _, p := range e.lib.protocols {
		for _, r := range p.Recognise {
			rule(p.ID+" recognise", r)
		}
		for _, rf := range p.RedFlags {
			for _, c := range rf.Findings {
				listed(p.ID+" red flag "+rf.Fact+" finding", c)
			}
		}
		for _, q := range p.Questions {
			for _, c := range q.Findings {
				listed(p.ID+" question "+q.Fact+" finding", c)
			}
		}
	}
	for _, c := range e.lib.emergencies {
		for _, r := range c.Findings {
			rule(c.ID, r)
			if r.Note == "" {
				t.Errorf("%s: a rule over findings without a note naming its source", c.ID)
			}
		}
	}
}

// TestNotThemselves: "not himself" says a change from the person's usual
// self and nothing of its kind: beside another complaint it is that
// complaint's (an older man with a chest infection who is not himself is
// the infection's change, not a second problem to choose between), alone
// it is the mood protocol's vague frame. It fails when "not myself" is a
// low mood trigger again, or when the finding rule is removed.
func TestNotThemselves(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct{ text, want string }{
		{"my mum's got a water infection and she isn't herself", "urinary_symptoms.v1"},
		{"I have a bad headache and I'm not myself", "headache.v1"},
		{"my husband has a cough and a temperature and hasn't been himself", "cough_fever.v1"},
		{"I'm just not myself lately", "low_mood.v1"},
		{"she hasn't been herself for weeks", "low_mood.v1"},
	} {
		_, res := firstTurn(t, e, c.text)
		if res.ActiveProtocol != c.want || len(res.CandidateProtocols) != 1 {
			t.Errorf("%q: protocol %q candidates %v, want %s alone", c.text, res.ActiveProtocol, res.CandidateProtocols, c.want)
		}
	}
}

// TestIssue37Rules: the general rules behind issue 37's fresh set (round 5)
// and the findings noticed beside it, in our own wording, each with a
// look-alike: testicles in slang and euphemism; an abscess in the armpit;
// impetigo; loose motions; a child pulling at an ear; torn skin is a wound;
// a red, hot, swollen patch on a limb is skin infection; a tooth is never
// the back; acne and hair loss are outside every protocol; a small scald is
// the wound protocol, a child's scald still the burns emergency; reflux is
// indigestion; light-headed greying of the sight is dizziness; "feel
// rough" is not a pain; a boil on the buttock is not low back pain.
// want is a protocol id, "outside" (committed to none, not urgent) or an
// emergency category.
func TestIssue37Rules(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct{ text, want string }{
		{"got kicked in the nuts playing rugby and the left one is really swollen", "testicular_pain.v1"},
		{"aching down in my nether regions, my sack feels heavy and sore on the right", "testicular_pain.v1"},
		{"my 3 year old's scrotum gets bigger on one side when he cries", "testicular_pain.v1"},
		{"I'm allergic to nuts and my lips are tingling a bit after lunch", ""},
		{"lost my job, got the sack on friday and feel rubbish", "low_mood.v1"},
		{"a hard red lump under my arm that's oozing pus", "skin_infection.v1"},
		{"there's a sore red lump in my armpit", "skin_infection.v1"},
		{"my son has crusted honey coloured patches round his mouth", "skin_infection.v1"},
		{"had loose motions since tuesday, about 5 times a day", "vomiting_diarrhoea.v1"},
		{"the baby keeps tugging at his ears and won't settle", "ear_problem.v1"},
		{"tore the skin off my elbow on the wall, a big flap hanging", "wound_bite_burn.v1"},
		{"my ankle, twisted it on the kerb, it's swollen", "ankle_foot_injury.v1"},
		{"there's a warm, red, swollen patch on my calf, no cut", "skin_infection.v1"},
		{"my knee is hot red and swollen since yesterday", "joint_pain.v1"},
		{"my wisdom tooth at the back is throbbing", "outside"},
		{"my gums are bleeding and sore when I brush", "outside"},
		{"my lower back has been killing me since I lifted the boxes", "low_back_pain.v1"},
		{"my teenage son has blackheads all over his nose", "outside"},
		{"my acne itches like mad", "outside"},
		{"I have itchy spots on my arms since yesterday", "rash.v1"},
		{"seeing my hair come out in clumps makes me so sad", "outside"},
		{"I have felt depressed for months and my hair is falling out", "low_mood.v1"},
		{"I burnt my finger on the oven, a small blister the size of a pea", "wound_bite_burn.v1"},
		{"my toddler pulled a cup of hot tea over his arm, there's a small blister", "burns"},
		{"spilt boiling water all over my legs, huge blisters", "burns"},
		{"bad heartburn every night after dinner and acid coming up in my throat", "abdominal_pain.v1"},
		{"I splashed drain cleaner on my hand and it burns", "burns"},
		{"when I get up quickly I go light headed and my sight goes fuzzy", "dizziness.v1"},
		{"my sight has gone blurry in one eye over a week", "eye_problem.v1"},
		{"been vomiting all morning, tummy doesn't hurt, just feel rough", "vomiting_diarrhoea.v1"},
		{"I've got a boil on my bum, it's really sore to sit on", "skin_infection.v1"},
		{"my bum cheek aches and it goes down my leg", "low_back_pain.v1"},
	} {
		s, res := firstTurn(t, e, c.text)
		switch {
		case c.want == "outside":
			if res.ActiveProtocol != "" || res.Urgent || !s.isOutside() {
				t.Errorf("%q: want outside every protocol, got protocol %q candidates %v urgent %v outside %v", c.text, res.ActiveProtocol, res.CandidateProtocols, res.Urgent, s.isOutside())
			}
		case strings.HasSuffix(c.want, ".v1"):
			if res.Urgent || res.ActiveProtocol != c.want {
				t.Errorf("%q: want %s committed, got protocol %q candidates %v urgent %v", c.text, c.want, res.ActiveProtocol, res.CandidateProtocols, res.Urgent)
			}
		case c.want == "":
			if res.Urgent {
				t.Errorf("%q: want no escalation, got %s", c.text, res.Disposition)
			}
		default:
			var got []string
			if s.emergency != nil {
				for _, x := range s.emergency.categories {
					got = append(got, x.ID)
				}
			}
			if !slices.Contains(got, c.want) {
				t.Errorf("%q: want the %s emergency, got %v (%s)", c.text, c.want, got, res.Disposition)
			}
		}
	}
}

// TestIssue37Findings: the engine findings noticed with issue 37, each
// fixed by a general rule: an overdose needs its words near each other; the
// pattern once matched them anywhere; "came on gradually" is not sudden;
// drier nappies are less urine, not none; a phrase cannot end in a clause
// word (the "crying and" exception once loaded as "crying").
func TestIssue37Findings(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct {
		text   string
		urgent bool
	}{
		{"I took the bus into town this morning. It was busy, there were lots of people about, the queue was long. Then I picked up my pills", false},
		{"I took lots of my pills last night", true},
		{"she's swallowed a whole packet of her tablets", true},
		{"my baby has a temperature of 38 and her nappies are drier than usual", false},
		{"my baby has a temperature and hasn't had a wet nappy since this morning and is floppy", true},
		{"my 8 week old has a temperature of 38.2", true},
		{"feel faint, sharp pain low on one side of my tummy and my period is 2 weeks late", true},
		{"my period is a week late and I've got mild period-type cramps in my tummy", false},
	} {
		_, res := firstTurn(t, e, c.text)
		if res.Urgent != c.urgent {
			t.Errorf("%q: urgent %v, want %v (%s)", c.text, res.Urgent, c.urgent, res.Disposition)
		}
	}
	m := e.lx.parse("the pain came on gradually over a few days")
	for _, f := range e.lib.vocab.read(m) {
		if f.quals&e.lib.vocab.qualBit["sudden"] != 0 {
			t.Errorf("%q: %s read as sudden", m.raw, f.id)
		}
	}
	if m := e.lx.parse("the pain came on all of a sudden"); !slices.ContainsFunc(e.lib.vocab.read(m), func(f finding) bool { return f.quals&e.lib.vocab.qualBit["sudden"] != 0 }) {
		t.Errorf("%q: not read as sudden", m.raw)
	}
	// A comma between describing words is a list in one clause: every
	// word is at the forearm, and "red hot" is warm skin, not a fever.
	m = e.lx.parse("I have a red, hot, swollen patch on my forearm")
	fs := e.lib.vocab.read(m)
	if slices.ContainsFunc(fs, func(f finding) bool { return f.id == "fever" }) ||
		!slices.ContainsFunc(fs, func(f finding) bool { return f.id == "warm_skin" && slices.Contains(f.sites, "arm") }) ||
		!slices.ContainsFunc(fs, func(f finding) bool { return f.id == "redness" && slices.Contains(f.sites, "arm") }) {
		t.Errorf("%q: want redness and warm skin at the arm and no fever, got %v", m.raw, fs)
	}
	if m := e.lx.parse("no, it's sore"); len(m.clauses) != 2 {
		t.Errorf("%q: a comma after no is a clause break, got %q", m.raw, m.clauses)
	}
	if _, err := phrase(e.lx, "crying and"); err == nil {
		t.Error(`phrase "crying and" loads; it matches as "crying"`)
	}
	if _, res := firstTurn(t, e, "I can't stop crying and I don't want to see anyone"); res.ActiveProtocol != "low_mood.v1" {
		t.Errorf("crying: protocol %q, want low_mood", res.ActiveProtocol)
	}
}
