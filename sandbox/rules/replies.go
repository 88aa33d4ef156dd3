package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// kindAge is the built-in age question; protocol files cannot use it.
const kindAge = "age"

// replies is every patient-facing sentence the engine can say outside the
// protocol files, plus the built-in questions. Its
// JSON form is hashed into provenance.prompt_hash: change a word, change the
// hash.
type replies struct {
	AskMainProblem  string `json:"ask_main_problem"`
	AskWhichProblem string `json:"ask_which_problem"`
	Committed       string `json:"committed"` // {complaint}
	NotUnderstood   string `json:"not_understood"`
	NeedClearAnswer string `json:"need_clear_answer"` // before a red flag is asked again
	NotedUnclear    string `json:"noted_unclear"`     // a question left unclear after asking twice
	NotedOther      string `json:"noted_other"`       // the reply answered other questions, not this one
	CloseSelfCare   string `json:"close_self_care"`
	CloseReview     string `json:"close_review"`
	SafetyNetSelf   string `json:"safety_net_self_care"` // ends the self-care closing
	SafetyNetReview string `json:"safety_net_review"`    // ends the review closing
	UrgentBecause   string `json:"urgent_because"`       // when nothing more specific is known
	UrgentUnclear   string `json:"urgent_unclear"`       // a red flag left unclear after asking twice
	UrgentCall      string `json:"urgent_call"`          // every emergency closing has it, or UrgentCallNow
	// UrgentCallNow replaces UrgentCall for an emergency category marked
	// call_now: no "or go to the emergency department" for someone who
	// must not be driven there (not breathing, collapsed, a stroke).
	UrgentCallNow     string `json:"urgent_call_now"`
	SameDayGP         string `json:"same_day_gp"`        // a same-day closing: GP practice, NHS 111
	SameDayED         string `json:"same_day_ed"`        // a same-day closing: urgent treatment centre or A&E
	CloseUnidentified string `json:"close_unidentified"` // the main problem not identified after asking twice
	// OutsideScope says plainly that a complaint outside every protocol
	// cannot be assessed here, naming it in the patient's words ({what});
	// OutsideChosen is the same when the patient chose "Something else".
	// The generic screen's first question follows either.
	OutsideScope    string `json:"outside_scope"`
	OutsideChosen   string `json:"outside_chosen"`
	LabelInProgress string `json:"label_in_progress"`
	LabelSelfCare   string `json:"label_self_care"`
	LabelReview     string `json:"label_review"`
	LabelUrgent     string `json:"label_urgent"`
	LabelSameDay    string `json:"label_same_day"`
	SandboxNote     string `json:"sandbox_note"` // clinician-facing, always in safety_notes
	// Clinician-facing plans of a same-day escalation, by where the patient
	// was sent; the protocols' urgent_escalation plans are for emergencies.
	SameDayPlanGP string        `json:"same_day_plan_gp"`
	SameDayPlanED string        `json:"same_day_plan_ed"`
	EmergencySOAP SOAPTemplates `json:"emergency_soap"`
	// NoProtocolSOAP is the note while no protocol is committed, and when
	// the intake closed without one.
	NoProtocolSOAP   SOAPTemplates `json:"no_protocol_soap"`
	Age              Question      `json:"age"`
	Sex              Question      `json:"sex"`
	Pregnancy        Question      `json:"pregnancy"`
	PregnancyAgeFrom int           `json:"pregnancy_age_from"`
	PregnancyAgeTo   int           `json:"pregnancy_age_to"`
}

func defaultReplies() *replies {
	return &replies{
		AskMainProblem:  "What is the main problem you would like help with today?",
		AskWhichProblem: "You mentioned more than one problem. Which one is bothering you most?",
		Committed:       "Thank you. I will ask a few questions about your {complaint}.",
		NotUnderstood:   "Sorry, I did not catch that.",
		NeedClearAnswer: "I need a clear yes or no for this one, to be safe.",
		NotedUnclear:    "I will note that one as unclear and move on.",
		NotedOther:      "Thank you, I have noted that.",
		CloseSelfCare: "Thank you, that is all my questions. Your answers suggest this can be looked after at home for now; " +
			"a clinician can still check your summary.",
		CloseReview:     "Thank you, that is all my questions. A clinician should look at your answers, and your summary has been passed on.",
		SafetyNetSelf:   "If you get worse or notice anything new, seek medical help.",
		SafetyNetReview: "If you get worse before you hear back, seek medical help.",
		UrgentBecause:   "Your answers suggest you need urgent help.",
		UrgentUnclear:   "I could not get a clear yes or no to my last question, so to be safe I have to treat it as urgent.",
		UrgentCall:      "Please call emergency services now or go to the nearest emergency department. Do not wait for a reply here.",
		UrgentCallNow:   "Please call emergency services now. Do not wait for a reply here.",
		SameDayGP: "You need to be seen by a doctor or nurse today, but you do not need an ambulance. Please contact your GP practice now, " +
			"or NHS 111 or an urgent treatment centre if it is closed. Do not call emergency services unless you get much worse while you wait.",
		SameDayED: "You need to be checked today at an urgent treatment centre or an emergency department (A&E), but you do not need an ambulance. " +
			"Please go there now, and ask someone to take you if you can. Do not call emergency services unless you get much worse while you wait.",
		CloseUnidentified: "I am sorry, I have not been able to work out the main problem from your messages, so I will stop my questions here. " +
			"A clinician will read what you have written and contact you. If you feel worse or are worried before then, " +
			"contact your GP practice or NHS 111, and in an emergency call emergency services.",
		OutsideScope: "You wrote: \"{what}\". I am sorry, I cannot assess that here: it is not one of the problems this service covers. " +
			"A clinician will read what you have written. First, to be safe, a few questions.",
		OutsideChosen: "I am sorry, I cannot assess that here: it is not one of the problems this service covers. " +
			"A clinician will read what you have written. First, to be safe, a few questions.",
		LabelInProgress: "Intake in progress",
		LabelSelfCare:   "Self-care advice",
		LabelReview:     "Clinician review",
		LabelUrgent:     "Urgent: seek emergency care now",
		LabelSameDay:    "Urgent: be seen today",
		SandboxNote: "Synthetic research sandbox: generated by a deterministic rules engine from synthetic messages. " +
			"Not clinical advice; not for real patient care.",
		SameDayPlanGP: "Same-day assessment, not an emergency ambulance: GP practice now, or NHS 111 or an urgent treatment centre out of hours; " +
			"emergency services only if the patient deteriorates.",
		SameDayPlanED: "Same-day assessment at an urgent treatment centre or emergency department, no ambulance needed; " +
			"emergency services only if the patient deteriorates.",
		EmergencySOAP: SOAPTemplates{
			Subjective: "In the patient's words: {opening}. {answers}",
			Objective:  "Self-reported only, no examination (remote intake). {demographics}.",
			Assessment: "{red_flags}",
			Plan: map[string]string{
				engine.DispositionEscalate: "Immediate escalation to emergency care.",
			},
		},
		NoProtocolSOAP: SOAPTemplates{
			Subjective: "The patient's messages: {messages}. Patient-entered history: {history}",
			Objective:  "Self-reported only, no examination (remote intake). {demographics}.",
			Assessment: "{red_flags} {reason}",
			Plan: map[string]string{
				engine.DispositionReview: "Clinician review: contact the patient to establish the presenting complaint, then screen for red flags.",
			},
		},
		Age: Question{Fact: factAge, Label: "Age", Ask: "How old are you?", AskAgain: "Put another way: what is your age in years?", Kind: kindAge, Choices: []string{}},
		Sex: Question{
			Fact: factSex, Label: "Sex", Ask: "What is your sex?", AskAgain: "Put another way: are you female, male or intersex?", Kind: kindChoice,
			Keywords: []string{"female", "male", "intersex", "im a woman", "i am a woman", "im a man", "i am a man", "year old woman", "year old man"},
			Options: []Option{
				{Value: "female", Label: "Female", Match: []string{"woman", "lady", "girl", "f"}},
				{Value: "male", Label: "Male", Match: []string{"man", "guy", "boy", "m"}},
				{Value: "intersex", Label: "Intersex"},
			},
		},
		Pregnancy: Question{
			Fact: factPregnancy, Label: "Pregnancy", Ask: "Is there any chance you could be pregnant?",
			AskAgain: "Put another way: could you be pregnant at the moment, even if you are not sure?", Kind: kindYesNo,
			Keywords: []string{"pregnan*"},
		},
		PregnancyAgeFrom: 12,
		PregnancyAgeTo:   55,
	}
}

// prepare normalises the built-in phrases; it runs once in New.
func (r *replies) prepare(lx *lexicon) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, q := range []*Question{&r.Age, &r.Sex, &r.Pregnancy} {
		q.keywords = phrases(lx, q.Keywords, bad)
		for j := range q.Options {
			o := &q.Options[j]
			o.match = phrases(lx, append([]string{o.Label}, o.Match...), bad)
		}
	}
	r.Sex.Choices = []string{"Female", "Male", "Intersex"}
	r.Pregnancy.Choices = slices.Clone(defaultYesNoChoices)
	return errors.Join(errs...)
}

// hash is provenance.prompt_hash.
func (r *replies) hash() (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func (r *replies) label(disposition string) string {
	switch disposition {
	case engine.DispositionSelfCare:
		return r.LabelSelfCare
	case engine.DispositionReview:
		return r.LabelReview
	case engine.DispositionEscalate:
		return r.LabelUrgent
	}
	return r.LabelInProgress
}

// sameDay is the closing sentence and the clinician's plan of a same-day
// escalation that sends the patient where.
func (r *replies) sameDay(where string) (reply, plan string) {
	if where == sameDayED {
		return r.SameDayED, r.SameDayPlanED
	}
	return r.SameDayGP, r.SameDayPlanGP
}
