package rules

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// no repeats "No" n times: the usual answer to a run of red flags.
func no(n int) []string {
	return slices.Repeat([]string{"No"}, n)
}

func msgs(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			out = append(out, v)
		case []string:
			out = append(out, v...)
		}
	}
	return out
}

type want struct {
	protocol    string
	disposition string
	safety      string
	turns       int      // 0: not checked
	score       string   // "key total band", "" for none
	reason      string   // fragment of the assessment
	reply       []string // fragments of the last reply
	asked       []string // fragments that must appear in some reply
	notAsked    []string // fragments that must appear in no reply
	subjective  string   // fragment of the SOAP subjective
	sameDay     bool     // urgent_escalation without urgent: care today, no ambulance
}

// conversationCase is a scripted conversation and what it must lead to.
type conversationCase struct {
	name string
	s    script
	w    want
}

// conversationCases are the scripted conversations of TestConversations,
// also played on every voice by TestVoicesDecideTheSame.
func conversationCases() []conversationCase {
	return []conversationCase{
		// Sore throat: Centor/McIsaac at each threshold.
		{"sore throat, McIsaac 0, self-care",
			script{Age: 30, Sex: "male", Messages: msgs("I have a sore throat", no(3), "No", "Yes", "No", "No", "1 to 2 days")},
			want{protocol: "sore_throat.v1", disposition: engine.DispositionSelfCare, safety: engine.SafetyCannotMissNegative, turns: 9,
				score: "centor_mcisaac 0 weak", reply: []string{"looked after at home"}}},
		{"sore throat, McIsaac 1 is weak",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", no(3), "yeah", "yes", "no", "no", "3 to 6 days")},
			want{disposition: engine.DispositionSelfCare, score: "centor_mcisaac 1 weak"}},
		{"sore throat, McIsaac 2 is mid",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", no(3), "yes", "no", "no", "no", "1 to 2 days")},
			want{disposition: engine.DispositionReview, score: "centor_mcisaac 2 mid", reason: "McIsaac score 2 or more"}},
		{"sore throat, McIsaac 3 is mid",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", no(3), "yes", "no", "yes", "no", "1 to 2 days")},
			want{disposition: engine.DispositionReview, score: "centor_mcisaac 3 mid"}},
		{"sore throat, McIsaac 4 is strong",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", no(3), "yes", "no", "yes", "yes", "1 to 2 days")},
			want{disposition: engine.DispositionReview, score: "centor_mcisaac 4 strong", reply: []string{"A clinician should look at your answers"}}},
		{"sore throat, age 45 or over takes a point off",
			script{Age: 50, Sex: "male", Messages: msgs("sore throat", no(3), "yes", "no", "yes", "yes", "1 to 2 days")},
			want{score: "centor_mcisaac 3 mid"}},
		{"sore throat, weak score but a week or more goes to review",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", no(3), "no", "yes", "no", "no", "A week or more")},
			want{disposition: engine.DispositionReview, score: "centor_mcisaac 0 weak", reason: "a week or more"}},
		{"sore throat, volunteered fever, cough and duration are not asked again",
			script{Age: 30, Sex: "male", Messages: msgs("I've had a sore throat since Tuesday with a fever but no cough", no(3), "not really", "I don't think so")},
			want{turns: 6, score: "centor_mcisaac 2 mid", notAsked: []string{"Have you had a fever", "Do you have a cough", "How long have you had"}}},

		// Cough with fever: CRB-65.
		{"cough with fever, CRB-65 0, self-care",
			script{Age: 40, Sex: "female", Messages: msgs("cough and a fever", no(3), "no", "no", "no", "A few days")},
			want{protocol: "cough_fever.v1", disposition: engine.DispositionSelfCare, score: "crb65 0 weak", turns: 8}},
		{"cough with fever, age 65 makes CRB-65 1 (mid)",
			script{Age: 65, Sex: "female", Messages: msgs("chest infection", no(3), "no", "no", "no", "A few days")},
			want{disposition: engine.DispositionReview, score: "crb65 1 mid"}},
		{"cough with fever, CRB-65 3 is urgent (same day) without a red flag",
			script{Age: 70, Sex: "male", Messages: msgs("chest infection", no(3), "yes", "yes", "no", "A few days")},
			want{disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissNegative, score: "crb65 3 strong", sameDay: true,
				reply: []string{"seen by a doctor or nurse today", "you do not need an ambulance", "GP practice now", "NHS 111"}}},
		{"cough with fever, over 3 weeks goes to review",
			script{Age: 40, Sex: "male", Messages: msgs("chesty cough", no(3), "no", "no", "no", "More than 3 weeks")},
			want{disposition: engine.DispositionReview, score: "crb65 0 weak", reason: "3 weeks or more"}},

		// Ankle: Ottawa.
		{"ankle, Ottawa negative, self-care",
			script{Age: 25, Sex: "female", Messages: msgs("I twisted my ankle", no(2), "no", "no", "no", "Today")},
			want{protocol: "ankle_foot_injury.v1", disposition: engine.DispositionSelfCare, score: "ottawa_ankle 0 weak"}},
		{"ankle, one Ottawa criterion is mid",
			script{Age: 25, Sex: "female", Messages: msgs("I twisted my ankle", no(2), "no", "yes", "no", "Today")},
			want{disposition: engine.DispositionReview, score: "ottawa_ankle 1 mid", reason: "X-ray indicated"}},
		{"ankle, cannot walk volunteered plus tenderness is strong",
			script{Age: 25, Sex: "female", Messages: msgs("I rolled my ankle and I can't walk on it", no(2), "yes", "no", "Today")},
			want{score: "ottawa_ankle 2 strong", turns: 6, notAsked: []string{"impossible to take four steps"}}},
		{"ankle, negative rules but over a week ago",
			script{Age: 25, Sex: "female", Messages: msgs("hurt my foot", no(2), "no", "no", "no", "Over a week ago")},
			want{disposition: engine.DispositionReview, score: "ottawa_ankle 0 weak"}},

		// Low mood: PHQ-2.
		{"low mood, PHQ-2 1 is weak, self-care",
			script{Age: 30, Sex: "female", Messages: msgs("I've been feeling low", no(3), "Several days", "Not at all", "yes", "no")},
			want{protocol: "low_mood.v1", disposition: engine.DispositionSelfCare, score: "phq2 1 weak"}},
		{"low mood, PHQ-2 2 is mid",
			script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "Several days", "Several days", "yes", "no")},
			want{disposition: engine.DispositionReview, score: "phq2 2 mid"}},
		{"low mood, PHQ-2 3 is strong",
			script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "More than half the days", "Several days", "yes", "no")},
			want{disposition: engine.DispositionReview, score: "phq2 3 strong", reason: "PHQ-2 positive"}},
		{"low mood, PHQ-2 in other words: 'over half the days' and 'some days'",
			script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "Over half the days", "Some days", "yes", "no")},
			want{disposition: engine.DispositionReview, score: "phq2 3 strong"}},
		{"low mood, PHQ-2 6",
			script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "nearly every day", "every day", "no", "yes")},
			want{score: "phq2 6 strong"}},

		// Urinary: UKHSA symptom score.
		{"urinary, no key symptom, self-care",
			script{Age: 30, Sex: "female", Messages: msgs("I think I have a water infection", "No", no(3), "no", "no", "no", "no")},
			want{protocol: "urinary_symptoms.v1", disposition: engine.DispositionSelfCare, score: "uti_symptom_score 0 weak", turns: 9,
				asked: []string{"Is there any chance you could be pregnant?"}}},
		{"urinary, one key symptom is mid",
			script{Age: 30, Sex: "female", Messages: msgs("cystitis", "No", no(3), "yes", "no", "no", "no")},
			want{disposition: engine.DispositionReview, score: "uti_symptom_score 1 mid"}},
		{"urinary, burning volunteered plus nocturia is strong",
			script{Age: 30, Sex: "female", Messages: msgs("it burns when I pee", "No", no(3), "yes", "no", "no")},
			want{score: "uti_symptom_score 2 strong", turns: 8, notAsked: []string{"burn or sting"}}},
		{"urinary in a man is reviewed and pregnancy is not asked",
			script{Age: 30, Sex: "male", Messages: msgs("cystitis", no(3), "no", "no", "no", "no")},
			want{disposition: engine.DispositionReview, reason: "in a man", notAsked: []string{"pregnant"}}},

		// The other protocols reach each of their dispositions.
		{"chest pain, young, reproducible, self-care",
			script{Age: 30, Sex: "male", Messages: msgs("I have chest pain", no(4), "no", "yes", "no", "A few days")},
			want{protocol: "chest_pain.v1", disposition: engine.DispositionSelfCare, score: ""}},
		{"chest pain at 45 is reviewed",
			script{Age: 45, Sex: "male", Messages: msgs("I have chest pain", no(4), "no", "yes", "no", "A few days")},
			want{disposition: engine.DispositionReview, reason: "40 or over"}},
		{"headache, familiar and eased by painkillers, self-care",
			script{Age: 30, Sex: "male", Messages: msgs("I've got a headache", no(4), "yes", "yes", "no", "Started today")},
			want{protocol: "headache.v1", disposition: engine.DispositionSelfCare, notAsked: []string{"pregnant"}}},
		{"headache in possible pregnancy is reviewed",
			script{Age: 30, Sex: "female", Messages: msgs("bad headache", "maybe", no(4), "yes", "yes", "no", "Started today")},
			want{disposition: engine.DispositionReview, reason: "pre-eclampsia"}},
		{"tummy pain, upper, self-care",
			script{Age: 30, Sex: "male", Messages: msgs("stomach ache", no(3), "Upper tummy", "no", "no", "Started today")},
			want{protocol: "abdominal_pain.v1", disposition: engine.DispositionSelfCare}},
		{"tummy pain, lower right volunteered, reviewed",
			script{Age: 30, Sex: "male", Messages: msgs("tummy pain, worst on the lower right side", no(3), "no", "no", "Started today")},
			want{disposition: engine.DispositionReview, reason: "Right lower quadrant", turns: 7, notAsked: []string{"Where is the pain worst?"}}},
		{"breathless asthmatic relieved by inhaler, self-care",
			script{Age: 30, Sex: "male", Messages: msgs("I'm short of breath, I have asthma and I'm wheezing", no(4), "Gradually", "Yes", "A few days")},
			want{protocol: "shortness_of_breath.v1", disposition: engine.DispositionSelfCare, turns: 8}},
		{"breathless, sudden onset, reviewed",
			script{Age: 30, Sex: "male", Messages: msgs("short of breath", no(4), "Suddenly", "no", "no", "I don't have one", "Started today")},
			want{disposition: engine.DispositionReview, reason: "Sudden-onset"}},
		{"back pain, simple, self-care",
			script{Age: 30, Sex: "male", Messages: msgs("lower back pain", no(3), "no", "no", "no", "yes", "A few days")},
			want{protocol: "low_back_pain.v1", disposition: engine.DispositionSelfCare}},
		{"back pain with a history of cancer is reviewed",
			script{Age: 30, Sex: "male", Messages: msgs("lower back pain", no(3), "no", "no", "yes", "yes", "A few days")},
			want{disposition: engine.DispositionReview, reason: "history of cancer"}},
		{"rash, itchy, self-care",
			script{Age: 30, Sex: "female", Messages: msgs("I have an itchy rash", no(3), "no", "no", "no", "A day or two")},
			want{protocol: "rash.v1", disposition: engine.DispositionSelfCare, notAsked: []string{"Is the rash itchy?"}}},
		{"rash after a new medicine is reviewed",
			script{Age: 30, Sex: "female", Messages: msgs("rash", no(3), "yes", "no", "yes", "no", "A day or two")},
			want{disposition: engine.DispositionReview, reason: "drug eruption"}},

		// Negation.
		{"negated fever is captured as no",
			script{Age: 30, Sex: "male", Messages: msgs("I have a rash but I don't have a fever", no(3), "yes", "no", "no", "A day or two")},
			want{protocol: "rash.v1", disposition: engine.DispositionSelfCare, notAsked: []string{"Do you have a fever?"}}},
		{"a negated complaint selects nothing",
			script{Messages: msgs("I don't have a rash")},
			want{protocol: "", disposition: engine.DispositionContinue, safety: engine.SafetyNoRedFlagsYet,
				reply: []string{"What is the main problem"}}},

		// Emergencies.
		{"emergency phrase on turn 1",
			script{Messages: msgs("I can't breathe")},
			want{disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive, turns: 1, reply: []string{"emergency services"}}},
		{"crushing chest pain on turn 1 commits chest pain",
			script{Messages: msgs("crushing chest pain")},
			want{protocol: "chest_pain.v1", disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive, turns: 1}},
		{"emergency phrase mid-intake",
			script{Age: 30, Sex: "female", Messages: msgs("feeling low", "No", "I want to kill myself")},
			want{protocol: "low_mood.v1", disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive, turns: 3}},
		{"a negated emergency phrase does not escalate",
			script{Age: 30, Sex: "female", Messages: msgs("sore throat but no crushing chest pain")},
			want{protocol: "sore_throat.v1", disposition: engine.DispositionContinue}},
		{"a red flag volunteered in the first message escalates at once",
			script{Age: 30, Sex: "male", Messages: msgs("back pain and I've wet myself")},
			want{protocol: "low_back_pain.v1", disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive, turns: 1,
				sameDay: true, reply: []string{"urgent treatment centre or an emergency department (A&E)"}}},
		{"an emergency red flag wins over a same-day one said in the same message",
			script{Age: 30, Sex: "male", Messages: msgs("I twisted my ankle, it looks deformed, and my foot is cold")},
			want{protocol: "ankle_foot_injury.v1", disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive, turns: 1,
				reason: "Neurovascular compromise", reply: []string{"call emergency services now"}}},

		// Understanding and clarification.
		{"an unclear answer is asked again, twice unclear is unsure",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", no(3), "purple", "banana", "no", "no", "no", "1 to 2 days")},
			want{disposition: engine.DispositionSelfCare, score: "centor_mcisaac 1 weak", asked: []string{"Sorry, I did not catch that. Put another way: have you had a high temperature",
				"I will note that one as unclear and move on. Do you have a cough?"}}},
		{"an unsure red flag is asked again, then treated as not excluded",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "not sure", "I don't know")},
			want{disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive,
				asked: []string{"I need a clear yes or no for this one"}}},
		{"a red flag not understood is asked again in other words, and not understood twice is not excluded",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "Sorry, I don't understand the question.", "I do not understand")},
			want{disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive,
				asked: []string{"Sorry, I did not catch that. Put another way: is saliva running out"},
				reply: []string{"I could not get a clear yes or no"}, reason: "NOT EXCLUDED"}},
		{"'I do not know' to a red flag is unsure, not no",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "I do not know", "I do not know")},
			want{disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive,
				asked: []string{"I need a clear yes or no for this one"}}},
		{"'definitely not' to a red flag is a no, and a firm no after a hedge is no",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "Definitely not", "maybe a little", "Not at all")},
			want{disposition: engine.DispositionContinue, reply: []string{"Are you unable to open your mouth"}}},
		{"'low down on the right' is the lower right of the tummy",
			script{Age: 30, Sex: "female", Messages: msgs("tummy pain", no(4), "Low down on the right", "no", "no", "A few days")},
			want{disposition: engine.DispositionReview, reason: "Right lower quadrant"}},
		{"'top of my belly' is the upper tummy, understood the first time",
			script{Age: 30, Sex: "female", Messages: msgs("tummy pain", no(4), "Top of my belly", "no", "no", "A few days")},
			want{disposition: engine.DispositionSelfCare, notAsked: []string{"Sorry, I did not catch that"}}},
		{"'it helps' answers whether the reliever helped",
			script{Age: 30, Sex: "female", Messages: msgs("I am short of breath", no(5), "Gradually", "yes", "yes", "It helps")},
			want{disposition: engine.DispositionContinue, notAsked: []string{"Sorry, I did not catch that"}}},
		{"a complaint's name said alone is the complaint: 'Breathing difficulty' asks the breathlessness red flags",
			script{Age: 30, Sex: "female", Messages: msgs("Breathing difficulty")},
			want{protocol: "shortness_of_breath.v1", disposition: engine.DispositionContinue}},
		{"'Bladder problems' is the urinary protocol",
			script{Age: 30, Sex: "female", Messages: msgs("Bladder problems")},
			want{protocol: "urinary_symptoms.v1", disposition: engine.DispositionContinue}},
		{"an overdose years ago does not volunteer the recent self-harm red flag: it is asked",
			script{Age: 30, Sex: "female", Messages: msgs("I took an overdose years ago but I'm well now. Lately I've been feeling low")},
			want{protocol: "low_mood.v1", disposition: engine.DispositionContinue}},
		{"a red flag hedged, then only a soft no, stays unsure and the patient is told why",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "no", "maybe a little", "not really")},
			want{disposition: engine.DispositionEscalate, safety: engine.SafetyCannotMissPositive, turns: 4,
				asked: []string{"I need a clear yes or no for this one, to be safe. Put another way: is it hard to breathe"},
				reply: []string{"I could not get a clear yes or no", "emergency services"}, reason: "NOT EXCLUDED",
				subjective: `Noisy or difficult breathing (stridor): "maybe a little", then "not really"`}},
		{"a red flag hedged, then a clear no, is no",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "no", "maybe a little", "No")},
			want{disposition: engine.DispositionContinue, reply: []string{"Are you unable to open your mouth"}}},

		// No question asked twice: facts already given are used.
		{"a duration answers 'more than 2 weeks?'",
			script{Age: 30, Sex: "female", Messages: msgs("I have been feeling really low for a few weeks", no(3), "Several days", "Several days", "yes")},
			want{protocol: "low_mood.v1", disposition: engine.DispositionReview, turns: 7, notAsked: []string{"more than 2 weeks"}}},
		{"'low nearly every day for weeks' answers the PHQ-2 mood item and the duration",
			script{Age: 30, Sex: "female", Messages: msgs("I've been feeling low nearly every day for weeks", no(3), "Several days", "yes")},
			want{disposition: engine.DispositionReview, score: "phq2 4 strong", turns: 6, notAsked: []string{"felt down, depressed or hopeless", "more than 2 weeks"}}},
		{"'a few weeks' as the answer to 'more than 2 weeks?' is yes",
			script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "Not at all", "Several days", "yes", "a few weeks")},
			want{disposition: engine.DispositionReview, reason: "more than 2 weeks"}},
		{"'about a week' as the answer to 'more than 2 weeks?' is no",
			script{Age: 30, Sex: "female", Messages: msgs("low mood", no(3), "Not at all", "Several days", "yes", "about a week")},
			want{disposition: engine.DispositionSelfCare}},
		{"'my breathing is fine and I can open my mouth' answers both red flags",
			script{Age: 30, Sex: "male", Messages: msgs("I have a sore throat, my breathing is fine and I can open my mouth", "no")},
			want{reply: []string{"Have you had a fever"}, notAsked: []string{"Is your breathing noisy", "unable to open your mouth", "is it hard to breathe"}}},
		{"an answer to other questions is noted, and the question asked again in other words",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "my breathing is fine and I can open my mouth", "no")},
			want{reply: []string{"Have you had a fever"},
				asked:    []string{"Thank you, I have noted that. Put another way: is saliva running out of your mouth"},
				notAsked: []string{"Is your breathing noisy", "unable to open your mouth", "Sorry"}}},
		{"an answer to other questions is not a miss: one unclear reply after it is asked again",
			script{Age: 30, Sex: "male", Messages: msgs("sore throat", "my breathing is fine and I can open my mouth", "purple", "no")},
			want{reply: []string{"Have you had a fever"}, asked: []string{"Sorry, I did not catch that. Put another way: is saliva"}}},
		{"demographics skip age and sex",
			script{Age: 52, Sex: "male", Messages: msgs("headache")},
			want{protocol: "headache.v1", reply: []string{"headache. Did the headache come on suddenly"}, notAsked: []string{"How old", "What is your sex"}}},
		{"without demographics age and sex are asked; a volunteered age is not",
			script{Messages: msgs("I'm 34 and I have a headache", "female")},
			want{reply: []string{"Is there any chance you could be pregnant?"}, asked: []string{"What is your sex?"}, notAsked: []string{"How old"}}},
		{"several matches ask which, then commit",
			script{Age: 30, Sex: "male", Messages: msgs("headache and a sore throat", "Sore throat")},
			want{protocol: "sore_throat.v1", asked: []string{"Which one is bothering you most?"}}},
	}
}

func TestConversations(t *testing.T) {
	e := newEngine(t)
	cases := conversationCases()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := run(t, e, c.s)
			res := last(tr)
			w := c.w
			fail := func(format string, args ...any) {
				t.Helper()
				t.Errorf(format+"\ntranscript:\n%s", append(args, dump(tr))...)
			}
			if w.protocol != "" || strings.Contains(c.name, "selects nothing") {
				if res.ActiveProtocol != w.protocol {
					fail("active protocol %q, want %q", res.ActiveProtocol, w.protocol)
				}
			}
			if w.disposition != "" && res.Disposition != w.disposition {
				fail("disposition %q, want %q", res.Disposition, w.disposition)
			}
			if w.disposition != "" && w.disposition != engine.DispositionContinue {
				if !res.Terminal || res.IntakeStatus != engine.IntakeStatusComplete {
					fail("terminal %v intake_status %q, want terminal and complete", res.Terminal, res.IntakeStatus)
				}
				if res.Urgent != (w.disposition == engine.DispositionEscalate && !w.sameDay) {
					fail("urgent %v for %s (same day %v)", res.Urgent, w.disposition, w.sameDay)
				}
			}
			if w.safety != "" && res.SafetyStatus != w.safety {
				fail("safety_status %q, want %q", res.SafetyStatus, w.safety)
			}
			if w.turns != 0 && len(tr) != w.turns {
				fail("%d turns, want %d", len(tr), w.turns)
			}
			if w.score != "" {
				if len(res.Scores) != 1 {
					fail("scores %+v, want %s", res.Scores, w.score)
				} else if got := res.Scores[0].Key + " " + res.Scores[0].Total + " " + res.Scores[0].Band; got != w.score {
					fail("score %q, want %q (components %s)", got, w.score, res.Scores[0].Components)
				}
			}
			if w.subjective != "" && !strings.Contains(res.SOAP.Subjective, w.subjective) {
				fail("subjective %q lacks %q", res.SOAP.Subjective, w.subjective)
			}
			if w.reason != "" && !strings.Contains(res.SOAP.Assessment, w.reason) {
				fail("assessment %q lacks %q", res.SOAP.Assessment, w.reason)
			}
			for _, f := range w.reply {
				if !strings.Contains(res.Reply, f) {
					fail("last reply %q lacks %q", res.Reply, f)
				}
			}
			for _, f := range w.asked {
				if !slices.ContainsFunc(tr, func(x turn) bool { return strings.Contains(x.Result.Reply, f) }) {
					fail("no reply contains %q", f)
				}
			}
			for _, f := range w.notAsked {
				if slices.ContainsFunc(tr, func(x turn) bool { return strings.Contains(x.Result.Reply, f) }) {
					fail("a reply contains %q, which should have been skipped", f)
				}
			}
		})
	}
}

func TestSameScriptSameTranscript(t *testing.T) {
	e := newEngine(t)
	s := script{Messages: msgs("hello", "Sore throat", "I'm 34", "female", no(3), "yeah", "not sure", "banana", "yes", "no", "since Tuesday")}
	a, b := run(t, e, s), run(t, e, s)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("transcripts differ:\n%s\n---\n%s", dump(a), dump(b))
	}
	// A second engine gives the same answers: nothing hangs off one instance.
	if c := run(t, newEngine(t), s); !reflect.DeepEqual(a, c) {
		t.Fatalf("a second engine differs:\n%s\n---\n%s", dump(a), dump(c))
	}
	if !last(a).Terminal {
		t.Fatalf("script did not finish:\n%s", dump(a))
	}
}

func TestInitialSnapshot(t *testing.T) {
	e := newEngine(t)
	tr := run(t, e, script{})
	if len(tr) != 0 {
		t.Fatal("run of an empty script produced turns")
	}
	res, err := e.Evaluate(t.Context(), engine.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply != "" || res.Terminal || res.SafetyStatus != engine.SafetyNoRedFlagsYet ||
		res.Disposition != engine.DispositionContinue || res.DispositionLabel == "" || res.IntakeStatus != needsComplaint {
		t.Fatalf("initial snapshot %+v", res)
	}
	if res.Choices == nil || res.CandidateProtocols == nil || res.Scores == nil || res.SafetyNotes == nil {
		t.Fatalf("nil slices in the initial snapshot: %+v", res)
	}
}

func TestHandoffContent(t *testing.T) {
	e := newEngine(t)
	tr := run(t, e, script{History: "penicillin allergy", Messages: msgs(
		"I've had a sore throat since Tuesday", "I'm 34", "female", no(3), "yeah", "no", "yes", "yes")})
	res := last(tr)
	if !res.Terminal || res.Disposition != engine.DispositionReview || res.DispositionLabel != "Clinician review" {
		t.Fatalf("not a terminal review:\n%s", dump(tr))
	}
	if res.Facts.Age == nil || *res.Facts.Age != "34" || res.Facts.Sex == nil || *res.Facts.Sex != "female" || res.Facts.Pregnancy != nil {
		t.Errorf("facts %v %v %v", res.Facts.Age, res.Facts.Sex, res.Facts.Pregnancy)
	}
	checks := map[string][]string{
		"subjective": {res.SOAP.Subjective, `"I've had a sore throat since Tuesday"`, `Fever (38°C or more): "yeah"`, "penicillin allergy"},
		"objective":  {res.SOAP.Objective, "Age 34 (asked)", "Duration: within the past week", "Cough: no"},
		"assessment": {res.SOAP.Assessment, "Cannot-miss red flags screened negative", "McIsaac modification 4 (strong"},
		"plan":       {res.SOAP.Plan, "Clinician review within 24 to 48 hours"},
	}
	for name, c := range checks {
		for _, f := range c[1:] {
			if !strings.Contains(c[0], f) {
				t.Errorf("%s %q lacks %q", name, c[0], f)
			}
		}
	}
	if got := res.Scores[0].Components; !strings.Contains(got, "temperature over 38°C +1") || !strings.Contains(got, "age 45 or over 0") {
		t.Errorf("components %q", got)
	}
	if !slices.ContainsFunc(res.SafetyNotes, func(n string) bool {
		return strings.Contains(n, "Synthetic research sandbox") && strings.Contains(n, "Not clinical advice")
	}) {
		t.Errorf("safety notes lack the sandbox line: %q", res.SafetyNotes)
	}
	if !reflect.DeepEqual(res.CandidateProtocols, []string{"sore_throat.v1"}) {
		t.Errorf("candidates %v", res.CandidateProtocols)
	}
}

func TestEmergencyHandoffWithoutProtocol(t *testing.T) {
	e := newEngine(t)
	res := last(run(t, e, script{Messages: msgs("I can't breathe")}))
	if res.ActiveProtocol != "" || len(res.CandidateProtocols) != 0 {
		t.Errorf("protocol %q candidates %v", res.ActiveProtocol, res.CandidateProtocols)
	}
	if !strings.Contains(res.SOAP.Assessment, "unable to breathe") || !strings.Contains(res.SOAP.Plan, "Immediate escalation") {
		t.Errorf("soap %+v", res.SOAP)
	}
	if len(res.SafetyNotes) != 2 || !strings.Contains(res.SafetyNotes[0], `"I can't breathe"`) {
		t.Errorf("safety notes %q", res.SafetyNotes)
	}
}
