// Package intakeservice is the Clinical Intake Service's contract: its
// OpenAPI 3.1 document (openapi.yaml, embedded: OpenAPI) and the JSON shapes
// of the spec (docs/clinical-intake-service.md) exactly as the document names
// them, defined once in Go. It belongs to neither side: the sandbox encodes
// these types and the app's client (bff/adapters/intakeapi) decodes them; neither has
// a copy of its own. It imports nothing but the standard library, so the
// sandbox, which imports it, still imports nothing of the app.
//
// # Written by hand, checked against the document
//
// The types are written by hand, not generated. oapi-codegen v2.8.2 (types
// only) was tried on the document first: it refuses the unmodified document
// (two duplicate type names: the IntakeStatus schema against the inline
// `const: open` of Intake.status, and the EncounterId schema against the
// EncounterId parameter), maps `number` to float32, maps `date-time` to
// time.Time whose encoding drops the millisecond zeros the sandbox promises,
// names fields EncounterId, BuildSha, LatencyMs, Soap (its initialisms
// normalizer fixes only EncounterID; the whole app uses EncounterID,
// BuildSHA, LatencyMS, SOAP), and turns the open enumerations SafetyStatus
// and Disposition into plain string aliases. Each of these is
// fixable only with Go-specific x-go-* extensions in the contract or with
// wrappers around every generated type, which is a second definition again.
//
// Instead, contract_test.go reads openapi.yaml and checks both ways
// that every component schema has its Go type and every property its JSON
// field, with the same required-ness (no omitempty) and nullability (a
// pointer), the same JSON type (string, integer, number, boolean, array,
// object, date-time), that the constants of each enumeration are exactly
// the document's enum or examples (for the open ones, that its description
// names each constant), and that the event types are the stream's
// x-sse-events. The few deliberate differences are listed in the test with
// their reasons. A change on either side without the other fails
// `go test ./intakeservice/`.
//
// # Tolerant decoding
//
// The spec says several enumerations may grow, so they are typed strings: a
// value no constant names is kept as received, never rejected. Nullable
// fields are pointers. Handoff keeps the bytes it was decoded from in Raw,
// for a consumer that must store or download it exactly as received; Turn
// keeps next_action and trace_id raw, as the spec shows them without a type.
//
// # Encoding
//
// Times are time.Time; Intake, Summary and Handoff encode them in their
// place as the sandbox sends them, RFC 3339 in UTC with milliseconds
// (TimeLayout), and decode any RFC 3339 time. Slices are encoded as given: an encoder that
// must send [] rather than null passes non-nil slices.
package intakeservice
