package bff

import "time"

// Handoff is the clinical summary of an intake, as the service reported it
// (the spec's Handoff object), decoded once where it is read. Nullable
// fields are nil when the service sent null; nothing here is computed.
type Handoff struct {
	IntakeID           string // the service's encounter_id (bff.Intake.EncounterID)
	CapturedAt         time.Time
	Terminal           bool
	Urgent             bool
	IntakeStatus       *string
	SafetyStatus       *string
	SafetyNotes        []string
	Disposition        *string
	DispositionLabel   *string
	SOAP               SOAP
	Facts              Facts
	ActiveProtocol     *string
	CandidateProtocols []string
	Scores             []Score
	Conversation       []Message
	Provenance         Provenance
}

// SOAP is the clinician note of a handoff.
type SOAP struct{ Subjective, Objective, Assessment, Plan string }

// Facts are the demographic facts the intake captured; nil means not
// captured. The age is a string, as the service sends it.
type Facts struct{ Age, Sex, Pregnancy *string }

// Score is one computed clinical scoring rule; Band is strong, mid or weak.
type Score struct{ Key, Total, Band, Components string }

// Message roles in a handoff's conversation.
const (
	RoleAssistant = "assistant"
	RolePatient   = "patient"
)

// Message is one line of the patient-facing conversation.
type Message struct{ Role, Text string }

// Provenance is the run identity the engine reports; every field nullable.
type Provenance struct {
	Release, ServerModel, PromptHash, SourceCommit, DirectoryHash *string
	RuntimeProfile, PromptProfile, VoiceProfile, AuditRef         *string
	LatencyMS, ProtocolCount                                      *float64
}

// PatientMessages counts the patient's lines: the turns that landed.
func (h *Handoff) PatientMessages() int {
	n := 0
	for _, m := range h.Conversation {
		if m.Role == RolePatient {
			n++
		}
	}
	return n
}

// StoredHandoff is a handoff exactly as the service sent it.
type StoredHandoff struct {
	IntakeID  string
	JSON      []byte // the raw object, kept byte for byte for download
	Terminal  bool
	FetchedAt time.Time
	Release   string
}

// HandoffRecord is a handoff as a clinician sees it.
type HandoffRecord struct {
	Intake    *Intake
	Handoff   *Handoff // decoded once
	Raw       []byte   // exactly as the service sent it, for the JSON download only
	FetchedAt time.Time
	Release   string    // the release that served it
	Reviews   []*Review // newest first
	// Stale is set when a fresh read failed and an older copy is shown;
	// StaleReason says why, in words a clinician can act on.
	Stale       bool
	StaleReason string
}
