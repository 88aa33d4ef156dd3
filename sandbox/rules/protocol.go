package rules

// The types below mirror the JSON files of protocols/. Field documentation
// lives in docs/protocols.md; the loader (library.go) rejects unknown fields
// so a typo in a protocol file fails New instead of silently dropping a rule.

// Protocol is one presenting complaint.
type Protocol struct {
	ID          string   `json:"id"`           // versioned: "sore_throat.v1"
	Title       string   `json:"title"`        // quick-reply label: "Sore throat"
	PatientTerm string   `json:"patient_term"` // used in replies: "sore throat"
	Triggers    []string `json:"triggers"`     // "a+b": both anywhere in the message; "a~b": both in one clause; "!a": a clause holding a is not read for this protocol
	// Recognise are rules over the findings of a message (findings.go)
	// that name this complaint: "pain@chest", "cough" (alone).
	Recognise []findingRule `json:"recognise,omitempty"`
	// SparedBy are conditions over findings that, met by a positive
	// finding of the message, say its words name something else: the rash
	// protocol's "red patch" beside "burnt my finger" is the burn's.
	SparedBy          []string          `json:"spared_by,omitempty"`
	PregnancyRelevant bool              `json:"pregnancy_relevant"`
	RedFlags          []RedFlag         `json:"red_flags"`
	Questions         []Question        `json:"questions"`
	Score             *ScoreRule        `json:"score,omitempty"`
	Dispositions      []DispositionRule `json:"dispositions"`
	Advice            map[string]string `json:"advice"` // patient-facing, by disposition: ends the closing reply
	SOAP              SOAPTemplates     `json:"soap"`
	// Source names the guidance the red flags, questions and dispositions
	// come from (a NICE CKS topic or NICE guideline), as docs/protocols.md
	// lists it; clinician-facing only.
	Source string `json:"source,omitempty"`

	// Prepared at load time.
	triggers      [][][][]string // trigger → parts ("+", anywhere) → pieces ("~", in one clause) → tokens
	triggerExcept [][]string     // "!" triggers: a clause holding one is not read for this protocol
	sparedBy      []condition    // SparedBy
	title         []string
	redFlags      []Question // the red flags as yes/no questions, same order
	// What the patient sees: Title and PatientTerm in the plain voice, the
	// voice's own words otherwise (voice.go). Matching and the SOAP note
	// use Title and PatientTerm.
	shownTitle string
	shownTerm  string
	// Same-day escalations (urgency.json): where a positive red flag, by
	// fact, or an urgent_escalation rule testing a score, by score key,
	// sends the patient (sameDayGP or sameDayED). Unlisted ones are
	// emergencies.
	sameDayFlags  map[string]string
	sameDayScores map[string]string
	// asksFindings are the findings its questions ask about
	// (Question.Findings).
	asksFindings map[string]bool
	// anyFirst is every word the title and the triggers start with: a
	// message holding none is not looked at for them.
	anyFirst firstWord
}

// RedFlag is a cannot-miss finding, screened before any non-urgent
// disposition. A positive answer escalates at once.
type RedFlag struct {
	Fact       string   `json:"fact"`
	Label      string   `json:"label"`     // clinician-facing name
	Ask        string   `json:"ask"`       // patient-facing question
	AskAgain   string   `json:"ask_again"` // the same question in other words, after an unclear reply
	Keywords   []string `json:"keywords"`
	NoKeywords []string `json:"no_keywords"` // statements that answer it "no": "my breathing is fine"
	// Findings answer the red flag from what was said, like its keywords
	// (conditions over findings: "melaena", "limb_weakness@leg"): an
	// affirmed one is yes, a denied one no.
	Findings   []string `json:"findings,omitempty"`
	Recent     bool     `json:"recent,omitempty"` // a red flag about now: Question.Recent
	SafetyNote string   `json:"safety_note"`      // clinician-facing, in safety_notes when positive
	Reply      string   `json:"reply"`            // patient-facing: why it is urgent, when positive
	Advice     string   `json:"advice"`           // patient-facing: what to do meanwhile (else the protocol's)

	keywords   [][]string
	noKeywords [][]string
}

// Question kinds.
const (
	kindYesNo    = "yes_no"
	kindChoice   = "choice"
	kindDuration = "duration"
)

// Question fills one fact.
type Question struct {
	Fact     string   `json:"fact"`
	Label    string   `json:"label"` // clinician-facing name
	Ask      string   `json:"ask"`
	AskAgain string   `json:"ask_again"` // the same question in other words, after an unclear reply
	Kind     string   `json:"kind"`
	Keywords []string `json:"keywords"` // volunteered-fact patterns
	// NoKeywords are statements that answer a yes/no question "no" without
	// a negation: "my breathing is fine", "I can open my mouth".
	NoKeywords []string `json:"no_keywords"`
	// YesFromDays answers a yes/no question from a duration: "for a few
	// weeks" answers "more than 2 weeks?" (yes from 14 days, no below).
	YesFromDays *float64 `json:"yes_from_days,omitempty"`
	// AnsweredByComplaint says that the words naming the complaint state
	// this finding too ("it burns when I pee" is the urinary complaint and
	// its dysuria), so they may answer it when volunteered. Without it a
	// fact is never read from the complaint's own words alone (session
	// volunteer).
	AnsweredByComplaint bool `json:"answered_by_complaint,omitempty"`
	// Recent marks a question about now ("have you harmed yourself
	// recently?"): words said of the past (a past marker in their clause:
	// "two years ago", "used to", "as a child") do not volunteer it, so it
	// is asked. A question about a history ("have you had cancer?") wants
	// those words and is not marked.
	Recent bool `json:"recent,omitempty"`
	// Findings are the findings (findings.json) this question asks about,
	// as conditions ("confusion", "pain@chest"): said, they answer it as
	// its keywords do (affirmed yes, denied no). While the protocol is
	// committed, the emergency categories' rules over findings leave them
	// to it: the cough and fever protocol asks about new confusion for
	// CRB-65, and its score decides what a yes means, not the sepsis rule.
	Findings []string `json:"findings,omitempty"`
	Choices  []string `json:"choices"` // quick replies; defaulted for yes_no
	Options  []Option `json:"options"` // choice questions only

	keywords   [][]string
	noKeywords [][]string
	findings   []condition
}

// Option is one answer of a choice question.
type Option struct {
	Value string   `json:"value"`
	Label string   `json:"label"` // shown as the quick reply
	Match []string `json:"match"` // phrases that select it

	match [][]string
}

// ScoreRule is a published clinical scoring rule.
type ScoreRule struct {
	Key        string      `json:"key"`
	Name       string      `json:"name"`
	Source     string      `json:"source"`
	Components []Component `json:"components"`
	Bands      []Band      `json:"bands"` // highest threshold first
}

// Component adds Points when its fact matches (In, or Min/Max for numbers).
type Component struct {
	Label  string   `json:"label"`
	Fact   string   `json:"fact"`
	In     []string `json:"in,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Points int      `json:"points"`
}

// Band maps totals at or above Min to a band, with the published meaning.
type Band struct {
	Min     int    `json:"min"`
	Band    string `json:"band"`
	Meaning string `json:"meaning"`
}

// DispositionRule applies when every condition holds; the first that applies
// wins and the last rule of a protocol has none.
type DispositionRule struct {
	When        []Condition `json:"when"`
	Disposition string      `json:"disposition"`
	Reason      string      `json:"reason"` // clinician-facing, in the assessment
}

// Condition tests a fact (In, or Min/Max on its number) or a score's band.
type Condition struct {
	Fact  string   `json:"fact,omitempty"`
	In    []string `json:"in,omitempty"`
	Min   *float64 `json:"min,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	Score string   `json:"score,omitempty"`
	Bands []string `json:"bands,omitempty"`
}

// SOAPTemplates hold the note's wording; placeholders are listed in
// placeholders() and filled from the captured facts. A plan says what the
// clinician should do; what the patient was told is quoted after it.
type SOAPTemplates struct {
	Subjective string            `json:"subjective"`
	Objective  string            `json:"objective"`
	Assessment string            `json:"assessment"`
	Plan       map[string]string `json:"plan"` // by disposition
}
