package fhir

import "encoding/json"

// The FHIR R4 resources and data types a handoff needs: a small typed
// subset written by hand (see the package doc for why). Every field is
// omitempty, so an absent value is absent from the JSON; the R4 JSON schema
// in the tests rejects any field or resource this file gets wrong.

// Meta is Resource.meta.
type Meta struct {
	Security []Coding `json:"security,omitempty"`
	Tag      []Coding `json:"tag,omitempty"`
}

// Coding is a code from a code system.
type Coding struct {
	System  string `json:"system,omitempty"`
	Code    string `json:"code,omitempty"`
	Display string `json:"display,omitempty"`
}

// CodeableConcept is codings and a text.
type CodeableConcept struct {
	Coding []Coding `json:"coding,omitempty"`
	Text   string   `json:"text,omitempty"`
}

// Identifier is a business identifier.
type Identifier struct {
	System string `json:"system,omitempty"`
	Value  string `json:"value,omitempty"`
}

// Reference points at another resource: a urn:uuid of an entry in the same
// bundle, or (for Provenance entities) only a logical identifier.
type Reference struct {
	Reference  string      `json:"reference,omitempty"`
	Type       string      `json:"type,omitempty"`
	Identifier *Identifier `json:"identifier,omitempty"`
	Display    string      `json:"display,omitempty"`
}

// Period is a start and an end.
type Period struct {
	Start string `json:"start,omitempty"`
	End   string `json:"end,omitempty"`
}

// Quantity is a measured amount; Value keeps the number's digits as received.
type Quantity struct {
	Value  json.Number `json:"value,omitempty"`
	Unit   string      `json:"unit,omitempty"`
	System string      `json:"system,omitempty"`
	Code   string      `json:"code,omitempty"`
}

// Narrative is a resource's or section's human-readable text (XHTML).
type Narrative struct {
	Status string `json:"status"`
	Div    string `json:"div"`
}

// Bundle is the document.
type Bundle struct {
	ResourceType string      `json:"resourceType"`
	ID           string      `json:"id,omitempty"`
	Meta         *Meta       `json:"meta,omitempty"`
	Identifier   *Identifier `json:"identifier,omitempty"`
	Type         string      `json:"type"`
	Timestamp    string      `json:"timestamp,omitempty"`
	Entry        []Entry     `json:"entry,omitempty"`
}

// Entry is one resource of the bundle.
type Entry struct {
	FullURL  string `json:"fullUrl"`
	Resource any    `json:"resource"`
}

// Composition is the document's header and table of contents.
type Composition struct {
	ResourceType string          `json:"resourceType"`
	ID           string          `json:"id"`
	Meta         *Meta           `json:"meta,omitempty"`
	Identifier   *Identifier     `json:"identifier,omitempty"`
	Status       string          `json:"status"`
	Type         CodeableConcept `json:"type"`
	Subject      *Reference      `json:"subject,omitempty"`
	Encounter    *Reference      `json:"encounter,omitempty"`
	Date         string          `json:"date"`
	Author       []Reference     `json:"author"`
	Title        string          `json:"title"`
	Section      []Section       `json:"section,omitempty"`
}

// Section is one section of the composition.
type Section struct {
	Title       string           `json:"title,omitempty"`
	Code        *CodeableConcept `json:"code,omitempty"`
	Text        *Narrative       `json:"text,omitempty"`
	Entry       []Reference      `json:"entry,omitempty"`
	EmptyReason *CodeableConcept `json:"emptyReason,omitempty"`
}

// Patient is the synthetic patient: only what the intake captured.
type Patient struct {
	ResourceType string `json:"resourceType"`
	ID           string `json:"id"`
	Meta         *Meta  `json:"meta,omitempty"`
	Gender       string `json:"gender,omitempty"`
}

// Encounter is the intake.
type Encounter struct {
	ResourceType string       `json:"resourceType"`
	ID           string       `json:"id"`
	Identifier   []Identifier `json:"identifier,omitempty"`
	Status       string       `json:"status"`
	Class        Coding       `json:"class"`
	Subject      *Reference   `json:"subject,omitempty"`
	Period       *Period      `json:"period,omitempty"`
}

// Device is the intake engine that wrote the handoff.
type Device struct {
	ResourceType string           `json:"resourceType"`
	ID           string           `json:"id"`
	DeviceName   []DeviceName     `json:"deviceName,omitempty"`
	Type         *CodeableConcept `json:"type,omitempty"`
	Version      []DeviceVersion  `json:"version,omitempty"`
	Property     []DeviceProperty `json:"property,omitempty"`
}

// DeviceName is Device.deviceName.
type DeviceName struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// DeviceVersion is Device.version.
type DeviceVersion struct {
	Type  *CodeableConcept `json:"type,omitempty"`
	Value string           `json:"value"`
}

// DeviceProperty is Device.property.
type DeviceProperty struct {
	Type          CodeableConcept `json:"type"`
	ValueQuantity []Quantity      `json:"valueQuantity,omitempty"`
}

// QuestionnaireResponse is the conversation.
type QuestionnaireResponse struct {
	ResourceType string     `json:"resourceType"`
	ID           string     `json:"id"`
	Status       string     `json:"status"`
	Subject      *Reference `json:"subject,omitempty"`
	Encounter    *Reference `json:"encounter,omitempty"`
	Authored     string     `json:"authored,omitempty"`
	Source       *Reference `json:"source,omitempty"`
	Item         []QRItem   `json:"item,omitempty"`
}

// QRItem is one question and its answer.
type QRItem struct {
	LinkID string     `json:"linkId"`
	Text   string     `json:"text,omitempty"`
	Answer []QRAnswer `json:"answer,omitempty"`
}

// QRAnswer is an answer.
type QRAnswer struct {
	ValueString string `json:"valueString,omitempty"`
}

// Observation is a captured fact, a score, or a safety or disposition state.
type Observation struct {
	ResourceType         string            `json:"resourceType"`
	ID                   string            `json:"id"`
	Status               string            `json:"status"`
	Category             []CodeableConcept `json:"category,omitempty"`
	Code                 CodeableConcept   `json:"code"`
	Subject              *Reference        `json:"subject,omitempty"`
	Encounter            *Reference        `json:"encounter,omitempty"`
	EffectiveDateTime    string            `json:"effectiveDateTime,omitempty"`
	ValueString          string            `json:"valueString,omitempty"`
	ValueBoolean         *bool             `json:"valueBoolean,omitempty"`
	ValueQuantity        *Quantity         `json:"valueQuantity,omitempty"`
	ValueCodeableConcept *CodeableConcept  `json:"valueCodeableConcept,omitempty"`
	Component            []Component       `json:"component,omitempty"`
}

// Component is Observation.component.
type Component struct {
	Code        CodeableConcept `json:"code"`
	ValueString string          `json:"valueString,omitempty"`
}

// RiskAssessment is one score's band.
type RiskAssessment struct {
	ResourceType       string           `json:"resourceType"`
	ID                 string           `json:"id"`
	Status             string           `json:"status"`
	Code               *CodeableConcept `json:"code,omitempty"`
	Subject            Reference        `json:"subject"`
	Encounter          *Reference       `json:"encounter,omitempty"`
	OccurrenceDateTime string           `json:"occurrenceDateTime,omitempty"`
	Basis              []Reference      `json:"basis,omitempty"`
	Prediction         []Prediction     `json:"prediction,omitempty"`
}

// Prediction is RiskAssessment.prediction.
type Prediction struct {
	QualitativeRisk *CodeableConcept `json:"qualitativeRisk,omitempty"`
}

// Flag is the urgency alert.
type Flag struct {
	ResourceType string            `json:"resourceType"`
	ID           string            `json:"id"`
	Status       string            `json:"status"`
	Category     []CodeableConcept `json:"category,omitempty"`
	Code         CodeableConcept   `json:"code"`
	Subject      Reference         `json:"subject"`
	Encounter    *Reference        `json:"encounter,omitempty"`
	Author       *Reference        `json:"author,omitempty"`
}

// Provenance is the engine's run identity.
type Provenance struct {
	ResourceType     string             `json:"resourceType"`
	ID               string             `json:"id"`
	Target           []Reference        `json:"target"`
	OccurredDateTime string             `json:"occurredDateTime,omitempty"`
	Recorded         string             `json:"recorded"`
	Agent            []ProvenanceAgent  `json:"agent"`
	Entity           []ProvenanceEntity `json:"entity,omitempty"`
}

// ProvenanceAgent is Provenance.agent.
type ProvenanceAgent struct {
	Type *CodeableConcept `json:"type,omitempty"`
	Who  Reference        `json:"who"`
}

// ProvenanceEntity is Provenance.entity.
type ProvenanceEntity struct {
	Role string    `json:"role"`
	What Reference `json:"what"`
}
