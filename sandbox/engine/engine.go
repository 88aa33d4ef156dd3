// Package engine is the contract between the sandbox service and the intake
// engine behind it: what the service hands the engine for each turn and what
// the engine decides. The service owns HTTP, keys, limits, storage and
// streaming; the engine owns the clinical conversation and nothing else.
//
// An engine is a pure function of the conversation: the service passes every
// patient message so far on each call, and the same input always gives the
// same Result. That keeps the sandbox deterministic and lets a turn be
// "not applied" (a fault, a rejected request) by simply not recording it.
package engine

import "context"

// Safety statuses the engine reports. The spec lists these values and says the
// enumeration may grow; clients keep unknown values.
const (
	SafetyNoRedFlagsYet      = "no_red_flags_yet"
	SafetyCannotMissNegative = "cannot_miss_negative"
	SafetyCannotMissPositive = "cannot_miss_positive"
)

// Dispositions the engine reports.
const (
	DispositionContinue  = "continue_intake"
	DispositionReview    = "clinician_review"
	DispositionSelfCare  = "self_care"
	DispositionEscalate  = "urgent_escalation"
	IntakeStatusComplete = "complete"
)

// Score bands, mapped from each scoring rule's published thresholds.
const (
	BandStrong = "strong"
	BandMid    = "mid"
	BandWeak   = "weak"
)

// Demographics are what the client gave when it created the intake. Every
// field is optional.
type Demographics struct {
	AgeYears *int   // 0 to 130 when set
	Sex      string // "", "female", "male" or "intersex"
	History  string // free text: allergies, medications, conditions
}

// Input is everything the engine sees for one evaluation.
type Input struct {
	Demographics Demographics
	// Patient holds every patient message of the intake in order; the last one
	// is the message being answered. It is empty when the service asks for the
	// snapshot of an intake that has had no turn yet.
	Patient []string
}

// Result is the engine's decision after the last patient message: the reply
// and the full clinical snapshot the handoff is built from.
type Result struct {
	// Reply is the next patient-facing message: plain text, never
	// clinician-only content. Empty only when Input.Patient is empty.
	Reply   string
	Choices []string // quick replies for the next turn; may be empty

	Terminal         bool // no more turns: the intake closes
	Urgent           bool // immediate clinician review required
	SafetyStatus     string
	SafetyNotes      []string // clinician-facing notes on the safety state
	Disposition      string
	DispositionLabel string
	IntakeStatus     string // what the intake still needs, or "complete"

	SOAP               SOAP
	Facts              Facts
	ActiveProtocol     string // committed protocol id, "" before one is committed
	CandidateProtocols []string
	Scores             []Score
}

// SOAP is the clinician note.
type SOAP struct {
	Subjective string
	Objective  string
	Assessment string
	Plan       string
}

// Facts are the captured demographic facts; nil means not captured yet.
type Facts struct {
	Age       *string // carried as a string, as the spec says
	Sex       *string
	Pregnancy *string
}

// Score is one computed clinical scoring rule.
type Score struct {
	Key        string // e.g. "centor_mcisaac"
	Total      string // e.g. "3"
	Band       string // BandStrong, BandMid or BandWeak
	Components string // e.g. "fever +1, tonsillar exudate +1, ..."
}

// Identity describes the engine for the handoff's provenance.
type Identity struct {
	ServerModel    string // names the engine and its version
	PromptHash     string // content hash of the reply templates
	DirectoryHash  string // content hash of the protocol library
	ProtocolCount  int
	RuntimeProfile string
	PromptProfile  string
	VoiceProfile   string
}

// Engine decides replies.
//
// Evaluate must be deterministic and free of side effects. It returns an error
// only for a fault of the engine itself (the service then answers 502
// upstream_error and records nothing); a message the engine does not
// understand is answered with a clarifying Reply, never an error. It must
// honour ctx cancellation if it ever waits.
type Engine interface {
	Evaluate(ctx context.Context, in Input) (Result, error)
	Identity() Identity
}
