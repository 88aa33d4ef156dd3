package intakeapi

import (
	"encoding/json"
	"time"
)

// Enumerations are typed strings: the spec says several may grow, so a value
// the client does not know is kept as received, never rejected. Only the
// constants below are known; compare with them, and show unknown values as
// received.

// State is the lifecycle state of an intake.
type State string

// States of an intake.
const (
	StateOpen    State = "open"
	StateClosed  State = "closed"
	StateExpired State = "expired"
)

// SafetyStatus is the engine's deterministic safety state. Never override it.
type SafetyStatus string

// Safety statuses named by the spec; the enumeration is not complete.
const (
	SafetyNoRedFlagsYet      SafetyStatus = "no_red_flags_yet"
	SafetyCannotMissNegative SafetyStatus = "cannot_miss_negative"
	SafetyCannotMissPositive SafetyStatus = "cannot_miss_positive"
)

// Disposition is the engine's decision on what happens next. Never override it.
type Disposition string

// Dispositions named by the spec; the enumeration is not complete.
const (
	DispositionContinueIntake   Disposition = "continue_intake"
	DispositionClinicianReview  Disposition = "clinician_review"
	DispositionSelfCare         Disposition = "self_care"
	DispositionUrgentEscalation Disposition = "urgent_escalation"
)

// IntakeStatus says what an intake still needs, or IntakeStatusComplete.
type IntakeStatus string

// IntakeStatusComplete is the only intake status the spec names.
const IntakeStatusComplete IntakeStatus = "complete"

// Band is the strength band of a score.
type Band string

// Score bands.
const (
	BandStrong Band = "strong"
	BandMid    Band = "mid"
	BandWeak   Band = "weak"
)

// Role is the speaker of a conversation message.
type Role string

// Roles in the patient-facing conversation.
const (
	RoleAssistant Role = "assistant"
	RolePatient   Role = "patient"
)

// Sex is the demographic sex given when an intake is created.
type Sex string

// Values accepted by POST /v1/intakes.
const (
	SexFemale   Sex = "female"
	SexMale     Sex = "male"
	SexIntersex Sex = "intersex"
)

// Intake is the create response.
type Intake struct {
	EncounterID string    `json:"encounter_id"`
	Status      State     `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// Summary is the status summary of an intake (GET /v1/intakes/{id}).
type Summary struct {
	EncounterID      string        `json:"encounter_id"`
	Status           State         `json:"status"`
	TurnCount        int           `json:"turn_count"`
	CreatedAt        time.Time     `json:"created_at"`
	ExpiresAt        time.Time     `json:"expires_at"`
	LastSafetyStatus *SafetyStatus `json:"last_safety_status"`
	LastDisposition  *Disposition  `json:"last_disposition"`
}

// Turn is one patient message plus the engine's reply: the blocking response
// and the data of the turn.completed event.
//
// SafetyStatus, Disposition and DispositionLabel are nil in the rare case the
// turn completed but its snapshot read failed: the turn must not be resent;
// read the handoff for the state (see NeedsReconcile).
type Turn struct {
	EncounterID      string        `json:"encounter_id"`
	TurnIndex        int           `json:"turn_index"`
	AssistantMessage string        `json:"assistant_message"`
	Choices          []string      `json:"choices"`
	Terminal         bool          `json:"terminal"`
	Urgent           bool          `json:"urgent"`
	SafetyStatus     *SafetyStatus `json:"safety_status"`
	Disposition      *Disposition  `json:"disposition"`
	DispositionLabel *string       `json:"disposition_label"`
	// Handoff is present only when Terminal is true.
	Handoff *Handoff `json:"handoff,omitempty"`

	// NextAction and TraceID appear in the spec's abridged overview with no
	// type; they are kept raw (nil when absent) so nothing is lost or rejected.
	NextAction json.RawMessage `json:"next_action,omitempty"`
	TraceID    json.RawMessage `json:"trace_id,omitempty"`
}

// NeedsReconcile reports whether the turn arrived without its state fields, so
// the caller must read the handoff for the state (and must not resend).
func (t *Turn) NeedsReconcile() bool {
	return t.SafetyStatus == nil || t.Disposition == nil || t.DispositionLabel == nil
}

// Handoff is the structured clinical summary of an intake.
type Handoff struct {
	EncounterID        string        `json:"encounter_id"`
	CapturedAt         time.Time     `json:"captured_at"`
	Terminal           bool          `json:"terminal"`
	Urgent             bool          `json:"urgent"`
	IntakeStatus       *IntakeStatus `json:"intake_status"`
	SafetyStatus       *SafetyStatus `json:"safety_status"`
	SafetyNotes        []string      `json:"safety_notes"`
	Disposition        *Disposition  `json:"disposition"`
	DispositionLabel   *string       `json:"disposition_label"`
	SOAP               SOAP          `json:"soap"`
	CapturedFacts      CapturedFacts `json:"captured_facts"`
	ActiveProtocol     *string       `json:"active_protocol"`
	CandidateProtocols []string      `json:"candidate_protocols"`
	Scores             []Score       `json:"scores"`
	Conversation       []Message     `json:"conversation"`
	Provenance         Provenance    `json:"provenance"`

	// Raw is the handoff object exactly as the service sent it (unknown
	// fields included), for storing and downloading it unchanged. It is set
	// when the handoff was decoded from JSON.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a handoff and keeps its raw bytes in Raw.
func (h *Handoff) UnmarshalJSON(b []byte) error {
	type plain Handoff // no methods: no recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*h = Handoff(p)
	h.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// SOAP is the clinician note of a handoff.
type SOAP struct {
	Subjective string `json:"subjective"`
	Objective  string `json:"objective"`
	Assessment string `json:"assessment"`
	Plan       string `json:"plan"`
}

// CapturedFacts are the demographic facts the intake captured; nil means not
// captured. The age is carried as a string, as the service sends it.
type CapturedFacts struct {
	Age       *string `json:"age"`
	Sex       *string `json:"sex"`
	Pregnancy *string `json:"pregnancy"`
}

// Score is one computed clinical scoring rule.
type Score struct {
	Key        string `json:"key"`
	Total      string `json:"total"`
	Band       Band   `json:"band"`
	Components string `json:"components"`
}

// Message is one line of the patient-facing conversation.
type Message struct {
	Role Role   `json:"role"`
	Text string `json:"text"`
}

// Provenance is the run identity the engine reports; every field is nullable.
type Provenance struct {
	Release        *string  `json:"release"`
	ServerModel    *string  `json:"server_model"`
	PromptHash     *string  `json:"prompt_hash"`
	SourceCommit   *string  `json:"source_commit"`
	DirectoryHash  *string  `json:"directory_hash"`
	RuntimeProfile *string  `json:"runtime_profile"`
	PromptProfile  *string  `json:"prompt_profile"`
	VoiceProfile   *string  `json:"voice_profile"`
	AuditRef       *string  `json:"audit_ref"`
	LatencyMS      *float64 `json:"latency_ms"`
	// ProtocolCount is a JSON number in the spec, so a float keeps 12.0 valid.
	ProtocolCount *float64 `json:"protocol_count"`
}

// Health is the health record (GET /v1/health).
type Health struct {
	OK       bool    `json:"ok"`
	Release  string  `json:"release"`
	BuildSHA *string `json:"build_sha"`
}

// ErrorEnvelope is the JSON body of every error response.
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error object of the envelope.
type ErrorBody struct {
	Code        Code   `json:"code"`
	Message     string `json:"message"`
	EncounterID string `json:"encounter_id,omitempty"`
}

// NewIntake is the optional body of POST /v1/intakes. The zero value creates
// an intake with no demographics.
type NewIntake struct {
	// AgeYears is 0 to 130 when set.
	AgeYears *int
	// Sex is empty or one of SexFemale, SexMale, SexIntersex.
	Sex Sex
	// PatientHistory is free text of at most 4,000 characters.
	PatientHistory string
}

// Meta describes the HTTP exchange that produced a result.
type Meta struct {
	// Release is the x-service-release header of the response ("" if absent):
	// the release that served it.
	Release string
	// Status is the HTTP status of the final attempt.
	Status int
	// Replayed is true when a blocking turn was answered from the idempotency
	// store (x-service-idempotent-replay: true): no engine run, no quota.
	Replayed bool
	// IdempotencyKey is the key a blocking turn was sent with.
	IdempotencyKey string
	// Attempts counts the HTTP attempts made, retries included.
	Attempts int
}
