package concepts

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The rules of English that round 2's fresh wording (2026-11-28) showed
// the understanding lacked, each shown on wordings written for this test
// (none of them a sentence of a sandbox voice). Every table failed on the
// understanding before its rule was written.

// reading is what a test expects of one message: the concepts in the order
// asked, those asked in the opposite sense (prefixed "!"), and whether the
// reading must be trusted (every margin at least MinMargin) or must not.
type reading struct {
	q    string
	want []string // concepts in order, "!" before one read inverse
	low  bool     // the reading must be below the margin: the patient says it does not understand
}

func (r reading) check(t *testing.T, u *Understanding) {
	t.Helper()
	ms := u.Understand(r.q)
	var got []string
	low := false
	for _, m := range ms {
		id := m.Concept
		if m.Inverse && !r.low { // a reading not trusted has no polarity
			id = "!" + id
		}
		got = append(got, id)
		low = low || m.Margin < MinMargin
	}
	if !slices.Equal(got, r.want) || low != r.low {
		t.Errorf("%q: read %v (%s), want %v with low margin %v", r.q, got, margins(ms), r.want, r.low)
	}
}

func margins(ms []Match) string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s margin %d, cue %q", m.Concept, m.Margin, m.Cue))
	}
	return strings.Join(out, "; ")
}

func checkReadings(t *testing.T, rs []reading) {
	t.Helper()
	u := mustLoad(t)
	for _, r := range rs {
		r.check(t, u)
	}
}

// A concept named as the object or complement of another's word ("vomiting
// OF blood", "a cough WITH blood in it", "pain ON passing urine") is the
// more specific concept; the head word's own concept is not asked. Before:
// the head word was read as its own concept too, whenever the more specific
// reading's closest words lay elsewhere in the question ("… or bloody
// stools"), and a vomiting patient answered "yes" to a question about
// bleeding.
func TestObjectOfAnotherConcept(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Any vomiting of blood or stuff like coffee grounds, or bloody poo?", want: []string{"gi_bleeding"}},
		{q: "Have you been throwing up any blood or dark grainy stuff, or had red stools?", want: []string{"gi_bleeding"}},
		{q: "Any vomiting of blood, or bloody poo?", want: []string{"gi_bleeding"}},
		{q: "Has there been any throwing up of blood, or blood from your back passage?", want: []string{"gi_bleeding"}},
		{q: "Been sick with blood in it, or had black, tarry stools?", want: []string{"gi_bleeding"}},
		{q: "Any coughing with blood in it, or phlegm that's rusty?", want: []string{"coughing_blood"}},
		{q: "Feeling faint on getting up, or dizzy when you stand?", want: []string{"low_blood_pressure"}},
	})
}

// A first clause opened by a subordinator ("When you stand up, …") is part
// of the question after it, not a question of its own: the two are read as
// one ("When you get up, do you feel faint?" is low blood pressure, not a
// faint).
func TestFrontedSubordinateClause(t *testing.T) {
	checkReadings(t, []reading{
		{q: "When you stand up, do you go faint or dizzy, or has your blood pressure been low?", want: []string{"low_blood_pressure"}},
		{q: "When you get up from a chair, do you feel like you might faint?", want: []string{"low_blood_pressure"}},
		{q: "If you stand up quickly, do you come over faint?", want: []string{"low_blood_pressure"}},
	})
}

// A statement followed by a confirmation tag ("X — is that right?", "X,
// correct?", "X, haven't you?") asks whether X holds, in X's own polarity:
// a negative statement's "yes" confirms the negative. The tag's own words
// ("haven't", "no") are not a negation of X. And a negation belongs to the
// alternative it stands in: in "You can't open it, or one side is swollen",
// the "can't" is the first alternative's, not the second's.
func TestConfirmationTags(t *testing.T) {
	checkReadings(t, []reading{
		{q: "You've been vomiting, haven't you?", want: []string{"vomiting"}},
		{q: "You've got a temperature, haven't you?", want: []string{"fever"}},
		{q: "You haven't passed out at all, have you?", want: []string{"!fainting"}},
		{q: "You're not pregnant, are you?", want: []string{"!pregnancy"}},
		{q: "No blood in your wee, correct?", want: []string{"!blood_in_urine"}},
		{q: "You can't put any weight on it, yes?", want: []string{"cannot_bear_weight"}},
		{q: "You're unable to open your jaw properly, or one side of your throat is bulging and swollen — correct?", want: []string{"trismus"}},
		{q: "You can't swallow your own spit, or you're dribbling — is that right?", want: []string{"drooling"}},
		{q: "The spots don't fade when you press a glass on them - is that right?", want: []string{"non_blanching_rash"}},
	})
}

// One concept asked in two alternatives with opposite polarities ("Can you
// open your mouth, or is one side swollen?": a yes to the first denies
// trismus, a yes to the second affirms it) cannot be answered with one yes
// or no: the reading is below the margin.
func TestMixedPolarityAlternatives(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Can you open your mouth fully, or is one side of your throat more swollen?", want: []string{"trismus"}, low: true},
		{q: "Are you able to swallow your saliva, or are you drooling?", want: []string{"drooling"}, low: true},
		{q: "Are you able to keep any drinks down, or is everything coming back up?", want: []string{"cannot_keep_fluids"}, low: true},
		// A polarity word in another alternative says nothing of this one:
		// the "failure" of heart failure negates no angina.
		{q: "Have you ever had angina, a heart attack or heart failure?", want: []string{"heart_history"}},
		// A difficulty word belongs to the alternative it stands in: both
		// alternatives here ask trismus in its own sense.
		{q: "Is opening your jaw fully difficult, or is one side of your throat more swollen?", want: []string{"trismus"}},
		{q: "Is it hard to open your mouth, or is one side of the throat bigger and more swollen?", want: []string{"trismus"}},
	})
}

// What a question sets its concept against ("cloudy RATHER THAN clear",
// "pale INSTEAD OF pink") is not asked: the question keeps its first
// term's sense.
func TestContrast(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Does your wee look murky rather than clear?", want: []string{"cloudy_urine"}},
		{q: "Is the urine milky instead of clear?", want: []string{"cloudy_urine"}},
		{q: "Are the toes white as opposed to pink?", want: []string{"limb_circulation"}},
	})
}

// "'s" after a word is "is", "has" or a possessive: the word carries the
// meaning ("How long's the cough been there?" asks how long).
func TestApostropheS(t *testing.T) {
	checkReadings(t, []reading{
		{q: "How long's the cough been there?", want: []string{"duration"}},
		{q: "How long's it been hurting?", want: []string{"duration"}},
		{q: "How long's your knee been sore?", want: []string{"duration"}},
		{q: "How bad's the pain, out of ten?", want: []string{"severity"}},
		{q: "Baby's temperature been high?", want: []string{"fever"}},
	})
}

// A conditional or concessive clause ("even if you're not sure") says
// nothing of the concept before it: its negation does not turn the
// question.
func TestConcessiveClause(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Might you be pregnant, even if you're not certain?", want: []string{"pregnancy"}},
		{q: "Could there be a baby on the way, even if it isn't confirmed?", want: []string{"pregnancy"}},
		{q: "Do you get a temperature, even if it's not very high?", want: []string{"fever"}},
	})
}

// A rival reading made of words that other readings of the message claim
// (the "painful" of one alternative and the "coughing" of the next), or
// of words in two clauses that are alternatives of each other, is no
// rival: it reads two things asked as one.
func TestRivalsAcrossReadings(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Is one calf painful, or have you been coughing up blood?", want: []string{"calf_swelling", "coughing_blood"}},
		{q: "Either calf painful or swollen — or coughing blood?", want: []string{"calf_swelling", "coughing_blood"}},
		{q: "Is your foot cold or blue, or has it lost all feeling?", want: []string{"limb_circulation"}},
	})
}

// "What brings you …" asks for the main problem only as a phrase: "blood in
// what you bring up" holds its words in another order and asks about
// blood.
func TestWhatBringsYouIsAPhrase(t *testing.T) {
	checkReadings(t, []reading{
		{q: "What you bring up when you cough — any blood in it?", want: []string{"coughing_blood"}},
		{q: "Is there blood in what you're bringing up from your chest?", want: []string{"coughing_blood"}},
		{q: "What's brought you here today?", want: []string{"main_problem"}},
		{q: "What has brought you to us?", want: []string{"main_problem"}},
	})
}

// A question split from the instruction or statement before it by a dash
// ("Feel your neck — are the glands up?") is a question of its own; the
// instruction is its context, as a sentence before it would be. When the
// question alone finds nothing, the instruction before it completes it
// ("Press on the bony lumps of your ankle. Is the bone tender?").
func TestInstructionThenQuestion(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Run your fingers down the side of your neck — are the glands up, or tender to touch?", want: []string{"neck_glands"}},
		{q: "Press on the bony lumps at the sides of your ankle. Is the bone tender?", want: []string{"ankle_bone_tender"}},
		{q: "Pushing on the knobbly bones either side of the ankle — does the bone hurt?", want: []string{"ankle_bone_tender"}},
		{q: "Try to touch your chin to your chest — does your neck hurt?", want: []string{"stiff_neck"}},
		{q: "Compared with the other foot — is this one colder or paler?", want: []string{"limb_circulation"}},
		// Read with the sentence before, the question's reading is the
		// placing that reaches into it: the foot's bone and the
		// tenderness, not the pressing nearer the foot.
		{q: "Now press along the outer edge of your foot and the bony bump on the inner side. Any tenderness there?", want: []string{"midfoot_bone_tender"}},
		// A colon sets off what comes before a question as its topic: the
		// preamble's concepts are not asked.
		{q: "Some questions about your chest pain: does it go into your arm or jaw?", want: []string{"spread"}},
		{q: "Let's go through your cough and temperature: any blood when you cough?", want: []string{"coughing_blood"}},
	})
}

// Words an engine uses for the same thing that the cues lacked: when a
// rash "came up", someone to "talk things through with", spreading "fast"
// (a rash, not a pain), a "BP" reading.
func TestEverydayWords(t *testing.T) {
	checkReadings(t, []reading{
		{q: "When did the spots first come up?", want: []string{"duration"}},
		{q: "When did this rash show up?", want: []string{"duration"}},
		{q: "Have you got someone to talk it through with?", want: []string{"support"}},
		{q: "Anyone — family, a mate — you could talk things over with?", want: []string{"support"}},
		{q: "Is the redness spreading fast?", want: []string{"rash_spreading"}},
		{q: "Spreading quickly?", want: []string{"rash_spreading"}},
		{q: "Was your BP low when it was last checked?", want: []string{"low_blood_pressure"}},
		{q: "Press on the knobs of bone at your ankle: tender?", want: []string{"ankle_bone_tender"}},
	})
}

// A concept named by a definite noun phrase ("the sore spot on your chest",
// "the breathlessness") is what another concept's question is about, not
// asked itself.
func TestDefiniteTopic(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Does it get worse if you press on the sore bit of your chest?", want: []string{"tender_to_press"}},
		{q: "Did the breathlessness start suddenly, or come on gradually?", want: []string{"onset"}},
		{q: "How long has the chest pain been going on?", want: []string{"duration"}},
	})
}

// A comparison set off by commas ("…, like a blow, …") describes what the
// question asks about; it is no concept of its own. Alone, the words after
// "like" are an example of what is asked.
func TestComparisonAside(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Did it arrive all at once, like a bang, or is this the worst headache you've ever had?", want: []string{"onset", "thunderclap"}},
		{q: "Did the pain start in an instant, like a knock, or is it the worst of your life?", want: []string{"thunderclap"}},
		{q: "Did something happen to start this, like an accident?", want: []string{"injury"}},
	})
}

// Words of one concept that another concept's cue could take: a value
// question ("how often …", "how long ago …") is not a question about how
// long; weight put through a foot is not pain going down the leg.
func TestLookAlikes(t *testing.T) {
	checkReadings(t, []reading{
		{q: "How often over the past fortnight have you been feeling down?", want: []string{"feeling_down"}},
		{q: "In the last two weeks, on how many days have you felt hopeless?", want: []string{"feeling_down"}},
		{q: "Roughly how long ago did it all start?", want: []string{"duration"}},
		{q: "Is it too painful to put any weight through your foot?", want: []string{"cannot_bear_weight"}},
		{q: "Are you thinking straight?", want: []string{"!confusion"}},
		{q: "Have you felt like you might throw up with the pain?", want: []string{"sweating_nausea"}},
		{q: "Trying to wee but nothing happens?", want: []string{"cannot_pass_urine"}},
		{q: "Any blueness around the mouth?", want: []string{"blue_lips"}},
		{q: "Is there a chance you're expecting?", want: []string{"pregnancy"}},
		{q: "Was it sudden, reaching full strength within a minute?", want: []string{"thunderclap"}},
		{q: "Any chest pain that catches you as you breathe?", want: []string{"pleuritic_pain"}},
		{q: "Is it hard to catch your breath?", want: []string{"breathless"}},
		// "when" after a verb opens a subordinate clause, not a question
		// about when: "Does the pain start when you exert yourself?".
		{q: "Does the pain only start when you exert yourself, and ease with rest?", want: []string{"exertional"}},
		{q: "Does climbing the stairs or walking uphill bring on the pain?", want: []string{"exertional"}},
		{q: "Is the headache at its worst first thing in the morning?", want: []string{"worse_on_waking"}},
		{q: "Complete inability to pass urine?", want: []string{"cannot_pass_urine"}},
		{q: "Trismus, or one-sided swelling of the throat?", want: []string{"trismus"}},
		{q: "Any loss of power in an arm or a leg?", want: []string{"neuro_deficit"}},
		{q: "Has the low mood been there for more than two weeks?", want: []string{"duration"}},
	})
}

// Round 3 (2026-11-28): the grammatical structure of a question decides
// what it asks. The tables below are wordings written for these tests (none
// a sandbox voice's sentence); every one was read wrong, or below the
// margin, before its rule.

// A relative clause ("that …", "which …", "who …", or one with its pronoun
// left out: "a medicine you were not taking before") says something of the
// noun before it. A concept read wholly inside it restricts that noun's
// concept and is not asked; a polarity word inside it is the clause's own.
// Before: "that are new for you" was read as a question of its own (is this
// the first time?) and "that was not there before" turned the weakness into
// its absence.
func TestRelativeClauseRestricts(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Have you had weakness, numbness or loss of vision, which is new for you?", want: []string{"neuro_deficit"}},
		{q: "Any weakness that was not there before?", want: []string{"neuro_deficit"}},
		{q: "Have you had numbness or weakness that you have never had before?", want: []string{"neuro_deficit"}},
		{q: "Has anyone said you seem muddled in a way that is new for you?", want: []string{"confusion"}},
		{q: "Any puffiness of the lips or face, which can happen with an allergy?", want: []string{"swelling_face_lips"}},
		{q: "Have you started a tablet you were not on before?", want: []string{"new_medicine"}},
		// A head named by a definite noun phrase is given; what the clause
		// says of it is asked.
		{q: "Is the breathlessness something that came on all of a sudden?", want: []string{"onset"}},
	})
}

// The words before a colon or a dash that opens a list, and a remark in
// brackets, say what is asked of the list's items (a time, a place, that
// they are new): a concept read wholly in them is not an item. Before:
// "Have you noticed any of the following that are new for you: …" was
// answered "yes, never had headaches like this".
func TestListFrame(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Have you noticed any of these that are new for you: weakness in an arm, slurred speech, or blurred vision?", want: []string{"neuro_deficit"}},
		{q: "Have you had any of the following that you have not had before: numbness, trouble speaking, or loss of sight?", want: []string{"neuro_deficit"}},
		{q: "Since the fall, have you noticed any of these in your foot: coldness, paleness, or numbness?", want: []string{"limb_circulation"}},
		{q: "Any weakness (new for you), slurred speech, or loss of vision?", want: []string{"neuro_deficit"}},
	})
}

// A concept named only by words another concept of the question reads too
// ("vomit" is vomiting's word and gi_bleeding's) names part of that other
// concept when the other is read in its own alternative ("vomit that looks
// like coffee grounds" is gi_bleeding; a comma before a preposition starts
// no alternative: "blood, or dark stuff like coffee grounds, in your
// vomit"). When its words are narrowed by a modifier the patient cannot
// read ("vomit that is dark", "vomit with dark bits in it"), one yes or no
// cannot be trusted: the reading is below the margin, never a vomiting
// patient's "yes" to a question about bleeding. Unnarrowed, it is asked
// ("Have you been sick, or had black stools?").
func TestNamedInsideAnother(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Any of these: blood in the sick, sick that looks like coffee grounds, or tarry stools?", want: []string{"gi_bleeding"}},
		{q: "Have you seen blood, or dark bits like coffee grounds, in what you've vomited?", want: []string{"gi_bleeding"}},
		{q: "Have you had vomit that is dark, or black or bloody stools?", want: []string{"vomiting", "gi_bleeding"}, low: true},
		{q: "Any vomit with dark bits in it, or blood in your poo?", want: []string{"vomiting", "gi_bleeding"}, low: true},
		{q: "Have you been sick, or had black or bloody stools?", want: []string{"vomiting", "gi_bleeding"}},
		{q: "Have you passed out, or felt faint when you stand up?", want: []string{"fainting", "low_blood_pressure"}},
	})
}

// An item of a list opened by "being" or "having" is a clause of its own:
// a negator in it negates that item, not the list; nor does one in a clause
// opened by "that" reach the next item. Before, each was read in both
// polarities at once, below the margin.
func TestGerundItems(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Either of these: being unable to swallow your spit, or dribbling?", want: []string{"drooling"}},
		{q: "Any of these: being unable to hold your bladder, or numbness around your back passage?", want: []string{"cauda_equina"}},
		{q: "Either of these: not being able to open your jaw fully, or one side of your throat being more swollen?", want: []string{"trismus"}},
		{q: "Have you felt that life is not worth living, or had thoughts of ending it all?", want: []string{"suicidal_thoughts"}},
	})
}

// A concept named by a definite noun phrase after "with", "along with",
// "since" … is the circumstance of the whole question, and a definite noun
// phrase that is the subject of another concept's question its topic:
// neither is asked. Before: "along with the chest pain" was an alternative
// of its own, and a patient with chest pain but no sweating said yes.
func TestCircumstanceAndTopic(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Are you clammy, or feeling sick, along with the chest pain?", want: []string{"sweating_nausea"}},
		{q: "Is the chest pain coming with sweats or nausea?", want: []string{"sweating_nausea"}},
		{q: "Has your vomit looked like coffee grounds, or have your stools been black?", want: []string{"gi_bleeding"}},
		{q: "Since when have you had the cough: today, a few days, or longer?", want: []string{"duration"}},
		// Not a topic: the other concept is in a clause of its own.
		{q: "Is your neck stiff while you have a temperature?", want: []string{"stiff_neck", "fever"}},
	})
}

// Polarity words belong where the grammar puts them: "without" says the
// absence of the noun phrase after it, and says nothing of any concept when
// that phrase is none ("without a prescription"); a difficulty word belongs
// to the reading of its own alternative; a plural pronoun ("they") refers
// to a plural noun or a list, not to a singular one in context; "unable to
// control your bladder" is bladder trouble.
func TestPolarityWhereGrammarPutsIt(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Do painkillers you can get without a prescription help the headache?", want: []string{"painkillers_help"}},
		{q: "Can you stand up without feeling light-headed?", want: []string{"!low_blood_pressure"}},
		{q: "Would you say that opening your jaw is difficult, or that one side of your throat is more swollen?", want: []string{"trismus"}},
		{q: "Looking at the back of your throat, are your tonsils big, or do they have white spots on them?", want: []string{"tonsil_pus"}},
		{q: "Are you unable to control your bowels?", want: []string{"cauda_equina"}},
		{q: "Can you control your bladder as normal?", want: []string{"!cauda_equina"}},
	})
}

// A reading across two questions, whose earlier words are what a reference
// points back to, does not drop a concept asked wholly in the earlier
// question: "Have you been sick, and if so, was there blood in it?" asks
// about vomiting, then bleeding.
func TestConditionalFollowUp(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Have you been sick, and if so, was there any blood in it?", want: []string{"vomiting", "gi_bleeding"}},
	})
}

// A subordinate clause after its main clause ("… when you cough", "…
// while you rest") says when or how the main clause's concept is asked
// about: a concept read wholly inside it is not asked. Fronted, it is one
// question with its main clause, whose polarity words reach it.
func TestSubordinateClause(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Do you feel sick when you cough?", want: []string{"sweating_nausea"}},
		{q: "Has there been blood, or dark bits like coffee grounds, when you've thrown up?", want: []string{"gi_bleeding"}},
		{q: "When you try to pee, does nothing come out?", want: []string{"cannot_pass_urine"}},
	})
}

// What frames the question is not asked: a lead-in of the engine's own
// ("In other words, …", "To put it differently, …"), a request to answer
// ("Answer yes if …"), a request before a question word ("Could you tell
// me how long …"), the definite subject of the question ("Has the
// breathlessness come on over minutes, or gradually?"), a placing that
// reaches into a context clause when one lies wholly in the question
// ("Other than the vomiting, any blood, for example in your stools?"), and
// a relative clause in the sentence a question points back to ("Some
// people notice numbness that they have not had before. Have you noticed
// anything like that?").
func TestFramesAreNotAsked(t *testing.T) {
	checkReadings(t, []reading{
		{q: "In other words, can you hear a whistle when you breathe out?", want: []string{"wheeze"}},
		{q: "To put it differently, are there tender lumps at the front of your neck?", want: []string{"neck_glands"}},
		{q: "Answer yes if any of these apply: bloody vomit, vomit like coffee grounds, or black stools.", want: []string{"gi_bleeding"}},
		{q: "Could you tell me how long you've had the cough?", want: []string{"duration"}},
		{q: "Has the cough come on over days, or gradually over weeks?", want: []string{"onset"}},
		{q: "Apart from the vomiting, have you seen blood anywhere, say in your poo?", want: []string{"gi_bleeding"}},
		{q: "Some people get weakness in an arm that they have not had before. Have you noticed anything like that?", want: []string{"neuro_deficit"}},
	})
}

// More polarity by meaning: "different from" and "unlike" deny what
// follows them ("Is this headache unlike the ones you've had before?");
// what affects or limits an ability is a difficulty ("Is the pain
// affecting your ability to get on with your day?"); a negator does not
// reach an alternative opened by a preposition, a complement of the word
// before the list ("thoughts that life is not worth living, or of ending
// it").
func TestMorePolarity(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Is this headache unlike the ones you've had before?", want: []string{"!similar_before"}},
		{q: "Is the pain affecting your ability to do your normal daily activities?", want: []string{"!managing_daily_activities"}},
		{q: "Have you had thoughts that life isn't worth living, or of taking your own life?", want: []string{"suicidal_thoughts"}},
		{q: "Can you confirm you've had no new weakness, numbness or trouble speaking?", want: []string{"!neuro_deficit"}},
	})
}

// Clauses listed with commas and ending in an "or" clause are alternatives
// of one question, answered with one yes or no ("Did you pass out, have you
// felt dizzy on standing, or was your blood pressure low?"); before, the
// first was a question of its own, and its yes or no was said apart.
func TestListOfClauses(t *testing.T) {
	u := mustLoad(t)
	for _, q := range []string{
		"Did you pass out, have you felt dizzy on standing, or was your blood pressure low?",
		"Is your lip swelling, is your tongue puffy, or does your throat feel tight?",
	} {
		ms := u.Understand(q)
		if len(ms) == 0 || slices.ContainsFunc(ms, func(m Match) bool { return m.Question != 0 }) {
			t.Errorf("%q: read %v (%s), want one question", q, ms, margins(ms))
		}
	}
}

// An abbreviation of single letters ("i.e.", "e.g.") ends no sentence, and
// "or not" followed by more words of its clause is no "or not" ("muddled,
// or not your usual self" asks about confusion twice, in one sense).
func TestAbbreviationsAndOrNot(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Thunderclap onset, i.e. maximal within seconds?", want: []string{"thunderclap"}},
		{q: "Fever, e.g. over 38 degrees?", want: []string{"fever"}},
		{q: "Have you seemed muddled, or not your usual self?", want: []string{"confusion"}},
	})
}

// Round 4 (2026-11-28): the wordings below are written for these tests
// (none a sandbox voice's sentence); every table failed before its rule.

// A statement of what the engine means to ask, embedded question and all
// ("I'd like to know how much weight your foot can take."), followed by a
// direct question, names that question's topic: the direct question is
// what is asked. Before: the statement was read as a question of its own,
// "how much weight your foot can take" as the ability to bear weight, and
// the later "Is it impossible to take four steps?" answered in that
// opposite sense ("yes, I can walk on it with a limp"). A request to the
// patient ("Tell me …") still asks.
func TestIntentionBeforeAQuestionIsContext(t *testing.T) {
	checkReadings(t, []reading{
		{q: "I'd like to find out how far you can walk. Is it impossible to put any weight on it at all?", want: []string{"cannot_bear_weight"}},
		{q: "I need to ask about how the pain started. Did it reach its worst within a few seconds?", want: []string{"thunderclap"}},
		{q: "We need to know how your breathing is. Are you too breathless to finish a sentence?", want: []string{"cannot_finish_sentence"}},
		{q: "Tell me how long you've had it. Any fever?", want: []string{"duration", "fever"}},
		{q: "I'd like to know if you've had a fever.", want: []string{"fever"}},
	})
}

// A negator inside one of the concept's own phrases is its meaning, even
// where the match claimed another word of the same group: "with no let-up"
// is constant pain. Before: "Is it severe and constant, with no let-up?"
// was read as asking whether the pain lets up.
func TestNegatorInTheConceptsOwnPhrase(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Is the pain bad, with no let up at all?", want: []string{"peritonism"}},
		{q: "Is the pain really bad and constant, with no let-up?", want: []string{"peritonism"}},
		{q: "Is the pain bad and not constant?", want: []string{"!peritonism"}},
	})
}

// questionsOf is the message's concepts by question number.
func questionsOf(ms []Match) map[string]int {
	out := map[string]int{}
	for _, m := range ms {
		out[m.Concept] = m.Question
	}
	return out
}

// A question opened by "If so," (or "if you are", "if that is the case")
// asks only when the one before it holds: one question, its concepts asked
// together with the one before. Before: two questions, answered "no. No"
// or "I'm not sure. Yes, …". A sentence opened by "Or" continues the
// question before it as an alternative, and one opened by "Like" or "For
// example" gives an example of it: one question, one yes or no. Before:
// "Any pain in your side? Or a temperature?" was two questions.
func TestFollowUpSentencesAreOneQuestion(t *testing.T) {
	u := mustLoad(t)
	for _, c := range []struct {
		q    string
		want map[string]int
	}{
		{"Have you got a cough? If so, is there blood in what you bring up?", map[string]int{"cough": 0, "coughing_blood": 0}},
		{"Are you being sick? If you are, can you keep drinks down?", map[string]int{"vomiting": 0, "cannot_keep_fluids": 0}},
		{"Any pain in your side below the ribs? Or a high temperature with shivers?", map[string]int{"flank_pain": 0, "fever": 0}},
		{"Are you too out of puff to finish a sentence? Or are your lips turning grey?", map[string]int{"cannot_finish_sentence": 0, "blue_lips": 0}},
		// A second question of its own stays one.
		{"Have you got a cough? How long have you had it?", map[string]int{"cough": 0, "duration": 1}},
	} {
		got := questionsOf(u.Understand(c.q))
		if !maps.Equal(got, c.want) {
			t.Errorf("%q: read %v, want %v", c.q, got, c.want)
		}
	}
}

// A question that points back past a statement ("Limping is fine.") is
// read with the instruction before that statement too. Before: "Is it true
// you cannot manage that?" found nothing, and "Is the bone sore?" after
// "Press on the back of each one." was read as pain on a bump.
func TestQuestionReadWithTwoSentencesBefore(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Stand up and try four steps. Limping is fine. Is it true you cannot manage that?", want: []string{"cannot_bear_weight"}},
		{q: "Feel the two bony lumps either side of your ankle. Press on the back of each one. Is the bone sore?", want: []string{"ankle_bone_tender"}},
		{q: "Think about your lower legs. Is one of them puffy? Or have you brought up blood?", want: []string{"calf_swelling", "coughing_blood"}},
	})
}

// Everyday words round 4 showed missing: "the things you usually do" are
// daily activities; a test result that "came back low" is no recurrence;
// "made worse by any movement (for example, walking …)" is pain on
// movement, not exertion.
func TestRound4Words(t *testing.T) {
	checkReadings(t, []reading{
		{q: "Are you still able to do the things you usually do around the house?", want: []string{"managing_daily_activities"}},
		{q: "Did your blood pressure reading come back low today?", want: []string{"low_blood_pressure"}},
		{q: "Is the pain made worse by any movement, such as walking or turning in bed?", want: []string{"peritonism"}},
	})
}
