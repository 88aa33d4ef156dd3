// Package scenarios plays synthetic patients from vignettes against the
// intake engine and scores what it decided against gold labels: a suite
// (vignettes in YAML), a simulated patient that answers the engine's
// questions from the vignette's facts, the scores of a run (triage
// accuracy, under- and over-triage, the confusion matrix, red flags,
// protocols, score bands) and the comparison of two runs (which vignettes
// regressed, McNemar's exact test). docs/scenarios.md describes the format.
package scenarios

// Class is an urgency class: where the patient should be sent.
type Class string

// The urgency classes, from the most urgent.
const (
	Emergency Class = "emergency" // emergency services now
	Urgent    Class = "urgent"    // urgent assessment, not an ambulance
	Routine   Class = "routine"   // routine clinician review
	SelfCare  Class = "self_care" // self-care advice
	NoClass   Class = ""          // the engine decided nothing (the run ended first)
)

// Classes lists the urgency classes from the most urgent: the rows and
// columns of the confusion matrix.
var Classes = []Class{Emergency, Urgent, Routine, SelfCare}

// Rank orders classes: 0 for Emergency up to 3 for SelfCare, 4 for NoClass.
// A final class ranked above the gold one (less urgent) is under-triage.
func (c Class) Rank() int {
	for i, k := range Classes {
		if k == c {
			return i
		}
	}
	return len(Classes)
}

// ClassOf maps what the engine reported at the end of an intake to an
// urgency class: urgent (the spec's `urgent` flag: emergency services) is
// an emergency; the disposition urgent_escalation without it is urgent;
// clinician_review is routine; self_care is self-care. Anything else (an
// intake that did not finish) is NoClass.
func ClassOf(disposition string, urgent bool) Class {
	switch {
	case urgent:
		return Emergency
	case disposition == "urgent_escalation":
		return Urgent
	case disposition == "clinician_review":
		return Routine
	case disposition == "self_care":
		return SelfCare
	}
	return NoClass
}

// Suite is a set of vignettes, from one file or the built-in directory.
type Suite struct {
	Name      string     `yaml:"suite"`
	Vignettes []Vignette `yaml:"vignettes"`
}

// Vignette is one synthetic patient and what a correct intake concludes.
type Vignette struct {
	ID    string `yaml:"id"`    // unique in its suite: [a-z0-9_-], at most 64
	Title string `yaml:"title"` // for people

	// Demographics and history, as the start form takes them.
	AgeYears *int   `yaml:"age_years"` // 0-130, optional
	Sex      string `yaml:"sex"`       // female, male, other, or "" (not given)
	History  string `yaml:"history"`   // optional
	// Neutral lists the demographics a clinician judged not to change
	// the right outcome ("sex", "age"): only these are swapped by the
	// sex_swap and age_swap variations (bff/scenarios/variations).
	Neutral []string `yaml:"neutral"`

	// Opening is the patient's first message.
	Opening string `yaml:"opening"`
	// Complaint is the problem in the patient's words, restated to an open
	// question ("what is the main problem?"); "" = the opening.
	Complaint string `yaml:"complaint"`
	// Facts answer the engine's questions: by concept (the question is
	// understood by meaning) or by the words of their asks (which win).
	Facts []Fact `yaml:"facts"`
	// Default answers a question understood that no fact covers.
	Default string `yaml:"default"`
	// Unknown answers a question the patient cannot place at all (the
	// result is then simulator-limited); "" = "Sorry, I don't understand
	// the question."
	Unknown string `yaml:"unknown"`
	// MaxTurns stops the patient after this many messages (opening
	// included); 1-30, default 15.
	MaxTurns int `yaml:"max_turns"`

	Gold Gold `yaml:"gold"`
}

// Fact is something the simulated patient knows and says when asked.
type Fact struct {
	// Concept is what the fact is about, from the concept vocabulary
	// (bff/scenarios/concepts/vocabulary.yaml): it answers any question
	// understood to ask about it, whatever its words. Its Answer is written
	// in the concept's polarity ("yes, it goes up into my jaw" for spread).
	Concept string `yaml:"concept"`
	// Asks are what questions it answers by their words: case-insensitive
	// words or phrases; a question matches when it contains any of them. A
	// phrase may hold "*" (any run of letters) at a word's end. A match by
	// asks wins over understanding by meaning.
	Asks []string `yaml:"asks"`
	// Answer is what the patient says, in their own words.
	Answer string `yaml:"answer"`
	// Choose, instead of Answer, picks a quick reply the engine offers:
	// the first offered choice containing this text (case-insensitive);
	// Answer is said when none is offered or none contains it.
	Choose string `yaml:"choose"`
}

// Gold is what a correct intake of the vignette concludes.
type Gold struct {
	Class Class `yaml:"class" json:"class"` // required
	// Dispositions the engine may end with (empty: the class decides).
	Dispositions []string `yaml:"dispositions" json:"dispositions,omitempty"`
	// RedFlagsPositive must be found positive, RedFlagsNegative must stay
	// negative: matched against the handoff's safety notes and facts by
	// case-insensitive text.
	RedFlagsPositive []string `yaml:"red_flags_positive" json:"red_flags_positive,omitempty"`
	RedFlagsNegative []string `yaml:"red_flags_negative" json:"red_flags_negative,omitempty"`
	// Protocol is the protocol the engine should use ("" = not checked).
	Protocol string `yaml:"protocol" json:"protocol,omitempty"`
	// Scores expects the band of each score the engine reports, by key.
	Scores map[string]string `yaml:"scores" json:"scores,omitempty"`
}
