package intakeapi

import "github.com/clinical-intake/intake-web/sandbox/wire"

// The resources, enumerations and events of the service are package wire's
// (sandbox/wire): the one Go definition of the service's contract, checked
// against its OpenAPI document and shared with the sandbox. The aliases and
// constants below give them their names in this package, so callers need
// only intakeapi.
//
// Enumerations are typed strings: the spec says several may grow, so a value
// the client does not know is kept as received, never rejected. Compare with
// the constants, and show unknown values as received. Nullable fields are
// pointers; a Handoff decoded from JSON keeps its bytes in Raw, for storing
// and downloading it unchanged.

type (
	// State is the lifecycle state of an intake.
	State = wire.State
	// SafetyStatus is the engine's deterministic safety state. Never override it.
	SafetyStatus = wire.SafetyStatus
	// Disposition is the engine's decision on what happens next. Never override it.
	Disposition = wire.Disposition
	// IntakeStatus says what an intake still needs, or IntakeStatusComplete.
	IntakeStatus = wire.IntakeStatus
	// Band is the strength band of a score.
	Band = wire.Band
	// Role is the speaker of a conversation message.
	Role = wire.Role
	// Sex is the demographic sex given when an intake is created.
	Sex = wire.Sex

	// Intake is the create response.
	Intake = wire.Intake
	// Summary is the status summary of an intake (GET /v1/intakes/{id}).
	Summary = wire.Summary
	// Turn is one patient message plus the engine's reply: the blocking
	// response and the data of the turn.completed event. See
	// Turn.NeedsReconcile.
	Turn = wire.Turn
	// Handoff is the structured clinical summary of an intake; Raw holds the
	// object exactly as the service sent it.
	Handoff = wire.Handoff
	// SOAP is the clinician note of a handoff.
	SOAP = wire.SOAP
	// CapturedFacts are the demographic facts the intake captured.
	CapturedFacts = wire.CapturedFacts
	// Score is one computed clinical scoring rule.
	Score = wire.Score
	// Message is one line of the patient-facing conversation.
	Message = wire.Message
	// Provenance is the run identity the engine reports; every field is nullable.
	Provenance = wire.Provenance
	// Health is the health record (GET /v1/health).
	Health = wire.Health
	// ErrorEnvelope is the JSON body of every error response.
	ErrorEnvelope = wire.ErrorEnvelope
	// ErrorBody is the error object of the envelope.
	ErrorBody = wire.ErrorBody
)

// States of an intake.
const (
	StateOpen    = wire.StateOpen
	StateClosed  = wire.StateClosed
	StateExpired = wire.StateExpired
)

// Safety statuses named by the spec; the enumeration is not complete.
const (
	SafetyNoRedFlagsYet      = wire.SafetyNoRedFlagsYet
	SafetyCannotMissNegative = wire.SafetyCannotMissNegative
	SafetyCannotMissPositive = wire.SafetyCannotMissPositive
)

// Dispositions named by the spec; the enumeration is not complete.
const (
	DispositionContinueIntake   = wire.DispositionContinueIntake
	DispositionClinicianReview  = wire.DispositionClinicianReview
	DispositionSelfCare         = wire.DispositionSelfCare
	DispositionUrgentEscalation = wire.DispositionUrgentEscalation
)

// IntakeStatusComplete is the only intake status the spec names.
const IntakeStatusComplete = wire.IntakeStatusComplete

// Score bands.
const (
	BandStrong = wire.BandStrong
	BandMid    = wire.BandMid
	BandWeak   = wire.BandWeak
)

// Roles in the patient-facing conversation.
const (
	RoleAssistant = wire.RoleAssistant
	RolePatient   = wire.RolePatient
)

// Values accepted by POST /v1/intakes.
const (
	SexFemale   = wire.SexFemale
	SexMale     = wire.SexMale
	SexIntersex = wire.SexIntersex
)

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
