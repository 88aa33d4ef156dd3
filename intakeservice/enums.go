package intakeservice

// Enumerations are typed strings. Where the document lists an enum, the
// constants are exactly that list; where the spec calls the enumeration open
// (SafetyStatus, Disposition, IntakeStatus, Code), the constants are the
// values it names and a value none of them names is kept as received.

// State is the lifecycle state of an intake (schema IntakeStatus).
type State string

// States of an intake.
const (
	StateOpen    State = "open"
	StateClosed  State = "closed"
	StateExpired State = "expired"
)

// SafetyStatus is the engine's deterministic safety state (schema
// SafetyStatus). Never override it.
type SafetyStatus string

// Safety statuses named by the spec; the enumeration is not complete.
const (
	SafetyNoRedFlagsYet      SafetyStatus = "no_red_flags_yet"
	SafetyCannotMissNegative SafetyStatus = "cannot_miss_negative"
	SafetyCannotMissPositive SafetyStatus = "cannot_miss_positive"
)

// Disposition is the engine's decision on what happens next (schema
// Disposition). Never override it.
type Disposition string

// Dispositions named by the spec; the enumeration is not complete.
const (
	DispositionContinueIntake   Disposition = "continue_intake"
	DispositionClinicianReview  Disposition = "clinician_review"
	DispositionSelfCare         Disposition = "self_care"
	DispositionUrgentEscalation Disposition = "urgent_escalation"
)

// IntakeStatus says what an intake still needs, or IntakeStatusComplete
// (Handoff.intake_status).
type IntakeStatus string

// IntakeStatusComplete is the only intake status the spec names.
const IntakeStatusComplete IntakeStatus = "complete"

// Band is the strength band of a score (Score.band).
type Band string

// Score bands.
const (
	BandStrong Band = "strong"
	BandMid    Band = "mid"
	BandWeak   Band = "weak"
)

// Role is the speaker of a conversation message (Message.role).
type Role string

// Roles in the patient-facing conversation.
const (
	RoleAssistant Role = "assistant"
	RolePatient   Role = "patient"
)

// Sex is the demographic sex given when an intake is created
// (Demographics.sex).
type Sex string

// Values accepted by POST /v1/intakes.
const (
	SexFemale   Sex = "female"
	SexMale     Sex = "male"
	SexIntersex Sex = "intersex"
)

// Code is an error code of the error envelope and of the stream's error event
// (schema ErrorCode). Clients keep unknown codes.
type Code string

// Codes of the spec's Errors table, plus the two the sandbox documents where
// the spec is silent.
const (
	CodeInvalidRequest Code = "invalid_request" // 400 (413 for a body over 64 KB in the sandbox)
	CodeUnauthorized   Code = "unauthorized"    // 401
	CodeNotFound       Code = "not_found"       // 404
	CodeIntakeClosed   Code = "intake_closed"   // 409: stop sending turns; read the handoff
	CodeIntakeExpired  Code = "intake_expired"  // 410: create a new intake; the handoff stays readable
	CodeRateLimited    Code = "rate_limited"    // 429 with Retry-After
	CodeQuotaExceeded  Code = "quota_exceeded"  // 429: resume after 00:00 UTC
	CodeUpstreamError  Code = "upstream_error"  // 502: retry once with the same Idempotency-Key
	CodeUnavailable    Code = "unavailable"     // 503: retry with backoff
	CodeInternalError  Code = "internal_error"  // 500: retry once

	// Sandbox choices where the spec is silent.
	CodeTurnInProgress   Code = "turn_in_progress"   // 409: the previous reply is still streaming
	CodeMethodNotAllowed Code = "method_not_allowed" // 405
)

// FaultKind is a fault the sandbox can arm (schema FaultKind; sandbox only).
type FaultKind string

// Fault kinds of POST /v1/sandbox/faults.
const (
	FaultUpstreamError FaultKind = "upstream_error"
	FaultUnavailable   FaultKind = "unavailable"
	FaultInternalError FaultKind = "internal_error"
	FaultRateLimited   FaultKind = "rate_limited"
	FaultQuotaExceeded FaultKind = "quota_exceeded"
	FaultStreamDrop    FaultKind = "stream_drop"
	FaultStreamError   FaultKind = "stream_error"
	FaultNullState     FaultKind = "null_state"
	FaultSlowStart     FaultKind = "slow_start"
)
