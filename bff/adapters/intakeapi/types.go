package intakeapi

import "github.com/clinical-intake/intake-web/intakeservice"

// The resources, enumerations and events of the service are package
// intakeservice's: the one Go definition of the service's contract, checked
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
	State = intakeservice.State
	// SafetyStatus is the engine's deterministic safety state. Never override it.
	SafetyStatus = intakeservice.SafetyStatus
	// Disposition is the engine's decision on what happens next. Never override it.
	Disposition = intakeservice.Disposition
	// IntakeStatus says what an intake still needs, or IntakeStatusComplete.
	IntakeStatus = intakeservice.IntakeStatus
	// Band is the strength band of a score.
	Band = intakeservice.Band
	// Role is the speaker of a conversation message.
	Role = intakeservice.Role
	// Sex is the demographic sex given when an intake is created.
	Sex = intakeservice.Sex

	// Intake is the create response.
	Intake = intakeservice.Intake
	// Summary is the status summary of an intake (GET /v1/intakes/{id}).
	Summary = intakeservice.Summary
	// Turn is one patient message plus the engine's reply: the blocking
	// response and the data of the turn.completed event. See
	// Turn.NeedsReconcile.
	Turn = intakeservice.Turn
	// Handoff is the structured clinical summary of an intake; Raw holds the
	// object exactly as the service sent it.
	Handoff = intakeservice.Handoff
	// SOAP is the clinician note of a handoff.
	SOAP = intakeservice.SOAP
	// CapturedFacts are the demographic facts the intake captured.
	CapturedFacts = intakeservice.CapturedFacts
	// Score is one computed clinical scoring rule.
	Score = intakeservice.Score
	// Message is one line of the patient-facing conversation.
	Message = intakeservice.Message
	// Provenance is the run identity the engine reports; every field is nullable.
	Provenance = intakeservice.Provenance
	// Health is the health record (GET /v1/health).
	Health = intakeservice.Health
	// ErrorEnvelope is the JSON body of every error response.
	ErrorEnvelope = intakeservice.ErrorEnvelope
	// ErrorBody is the error object of the envelope.
	ErrorBody = intakeservice.ErrorBody
)

// States of an intake.
const (
	StateOpen    = intakeservice.StateOpen
	StateClosed  = intakeservice.StateClosed
	StateExpired = intakeservice.StateExpired
)

// Safety statuses named by the spec; the enumeration is not complete.
const (
	SafetyNoRedFlagsYet      = intakeservice.SafetyNoRedFlagsYet
	SafetyCannotMissNegative = intakeservice.SafetyCannotMissNegative
	SafetyCannotMissPositive = intakeservice.SafetyCannotMissPositive
)

// Dispositions named by the spec; the enumeration is not complete.
const (
	DispositionContinueIntake   = intakeservice.DispositionContinueIntake
	DispositionClinicianReview  = intakeservice.DispositionClinicianReview
	DispositionSelfCare         = intakeservice.DispositionSelfCare
	DispositionUrgentEscalation = intakeservice.DispositionUrgentEscalation
)

// IntakeStatusComplete is the only intake status the spec names.
const IntakeStatusComplete = intakeservice.IntakeStatusComplete

// Score bands.
const (
	BandStrong = intakeservice.BandStrong
	BandMid    = intakeservice.BandMid
	BandWeak   = intakeservice.BandWeak
)

// Roles in the patient-facing conversation.
const (
	RoleAssistant = intakeservice.RoleAssistant
	RolePatient   = intakeservice.RolePatient
)

// Values accepted by POST /v1/intakes.
const (
	SexFemale   = intakeservice.SexFemale
	SexMale     = intakeservice.SexMale
	SexIntersex = intakeservice.SexIntersex
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
