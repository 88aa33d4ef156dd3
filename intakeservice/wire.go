package intakeservice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// TimeLayout is how times are encoded: RFC 3339 in UTC with milliseconds
// (schema DateTime). Any RFC 3339 time is accepted when decoding.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Health is the health record (GET /v1/health; schema Health).
type Health struct {
	OK       bool    `json:"ok"`
	Release  string  `json:"release"`
	BuildSHA *string `json:"build_sha"`
}

// Intake is the create response (POST /v1/intakes; schema Intake).
type Intake struct {
	EncounterID string    `json:"encounter_id"`
	Status      State     `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
}

// MarshalJSON encodes the times with TimeLayout.
func (i Intake) MarshalJSON() ([]byte, error) {
	type plain Intake // no methods: no recursion
	return stamped(plain(i), map[string]time.Time{"created_at": i.CreatedAt, "expires_at": i.ExpiresAt})
}

// Summary is the status summary of an intake (GET /v1/intakes/{id}; schema
// IntakeSummary).
type Summary struct {
	EncounterID      string        `json:"encounter_id"`
	Status           State         `json:"status"`
	TurnCount        int           `json:"turn_count"`
	CreatedAt        time.Time     `json:"created_at"`
	ExpiresAt        time.Time     `json:"expires_at"`
	LastSafetyStatus *SafetyStatus `json:"last_safety_status"`
	LastDisposition  *Disposition  `json:"last_disposition"`
}

// MarshalJSON encodes the times with TimeLayout.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return stamped(plain(s), map[string]time.Time{"created_at": s.CreatedAt, "expires_at": s.ExpiresAt})
}

// Turn is one patient message plus the engine's reply: the blocking response
// and the data of the turn.completed event (schema Turn).
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
	// type, and not in the document (the sandbox does not send them); they
	// are kept raw (nil when absent) so nothing is lost or rejected.
	NextAction json.RawMessage `json:"next_action,omitempty"`
	TraceID    json.RawMessage `json:"trace_id,omitempty"`
}

// NeedsReconcile reports whether the turn arrived without its state fields, so
// the caller must read the handoff for the state (and must not resend).
func (t *Turn) NeedsReconcile() bool {
	return t.SafetyStatus == nil || t.Disposition == nil || t.DispositionLabel == nil
}

// Handoff is the structured clinical summary of an intake (GET
// /v1/intakes/{id}/handoff, and inside a terminal Turn; schema Handoff).
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

	// Raw is the handoff object exactly as it was decoded (unknown fields
	// included), for storing and downloading it unchanged. It is not part of
	// the wire shape: set only by UnmarshalJSON, never encoded.
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

// MarshalJSON encodes the handoff's fields (not Raw), the time with
// TimeLayout.
func (h Handoff) MarshalJSON() ([]byte, error) {
	type plain Handoff
	return stamped(plain(h), map[string]time.Time{"captured_at": h.CapturedAt})
}

// SOAP is the clinician note of a handoff (schema Soap).
type SOAP struct {
	Subjective string `json:"subjective"`
	Objective  string `json:"objective"`
	Assessment string `json:"assessment"`
	Plan       string `json:"plan"`
}

// CapturedFacts are the demographic facts the intake captured; nil means not
// captured. The age is carried as a string, as the service sends it (schema
// CapturedFacts).
type CapturedFacts struct {
	Age       *string `json:"age"`
	Sex       *string `json:"sex"`
	Pregnancy *string `json:"pregnancy"`
}

// Score is one computed clinical scoring rule (schema Score).
type Score struct {
	Key        string `json:"key"`
	Total      string `json:"total"`
	Band       Band   `json:"band"`
	Components string `json:"components"`
}

// Message is one line of the patient-facing conversation (schema Message).
type Message struct {
	Role Role   `json:"role"`
	Text string `json:"text"`
}

// Provenance is the run identity the engine reports; every field is nullable
// (schema Provenance).
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

// ErrorEnvelope is the JSON body of every error response (schema
// ErrorEnvelope).
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error object of the envelope.
type ErrorBody struct {
	Code        Code   `json:"code"`
	Message     string `json:"message"`
	EncounterID string `json:"encounter_id,omitempty"`
}

// CreateIntakeRequest is the optional body of POST /v1/intakes (schema
// CreateIntakeRequest).
type CreateIntakeRequest struct {
	Demographics   *Demographics `json:"demographics,omitempty"`
	PatientHistory string        `json:"patient_history,omitempty"`
}

// Demographics are the optional demographics of a new intake (schema
// Demographics).
type Demographics struct {
	AgeYears *int `json:"age_years,omitempty"`
	Sex      Sex  `json:"sex,omitempty"`
}

// TurnRequest is the body of POST /v1/intakes/{id}/turns (schema
// TurnRequest).
type TurnRequest struct {
	Message string `json:"message"`
	Stream  bool   `json:"stream,omitempty"`
}

// FaultRequest is the body of POST /v1/sandbox/faults (schema FaultRequest;
// sandbox only).
type FaultRequest struct {
	EncounterID string    `json:"encounter_id,omitempty"`
	Kind        FaultKind `json:"kind"`
	Count       int       `json:"count,omitempty"`
}

// Fault is the armed fault (schema Fault; sandbox only). EncounterID is nil
// when every intake of the key is armed.
type Fault struct {
	EncounterID *string   `json:"encounter_id"`
	Kind        FaultKind `json:"kind"`
	Count       int       `json:"count"`
}

// stamped encodes v, a struct without methods, then rewrites each of its
// top-level time fields named in times with TimeLayout in place, so the
// fields keep their order. encoding/json writes a time as a quoted
// RFC 3339 string and escapes every quote inside strings, so `"key":<time>`
// occurs once, as the field itself; nested objects have no such key.
func stamped(v any, times map[string]time.Time) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	for key, t := range times {
		enc, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		field := append([]byte(`"`+key+`":`), enc...)
		at := bytes.Index(b, field)
		if at < 0 {
			return nil, fmt.Errorf("wire: encoded %T has no field %s", v, key)
		}
		val := make([]byte, 0, len(TimeLayout)+2)
		val = append(val, '"')
		val = t.UTC().AppendFormat(val, TimeLayout)
		val = append(val, '"')
		b = slices.Concat(b[:at+len(key)+3], val, b[at+len(field):])
	}
	return b, nil
}
