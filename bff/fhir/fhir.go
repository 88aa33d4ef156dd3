// Package fhir turns a handoff into a FHIR R4 document: a Bundle of type
// document whose first entry is a Composition (SOAP and safety sections)
// and which holds every resource the composition points at (the synthetic
// Patient, the Encounter, the Device that is the engine, the conversation
// as a QuestionnaireResponse, scores as Observations and RiskAssessments,
// safety and disposition as Observations and a Flag, and a Provenance).
//
// Nothing is computed: every value is the handoff's as received; a null is
// left out. Values without a standard code travel in the project's own code
// systems (docs/fhir.md lists them), unknown values too. The same handoff
// gives the same bytes: resource ids are UUIDv5 of the encounter id and the
// resource's role.
//
// The resources are a small typed subset written by hand (resources.go):
// the Go FHIR model libraries either generate every R4 type with pointers
// everywhere (samply/golang-fhir-models, unmaintained since 2021) or need
// protocol buffers (google/fhir); twenty structs are easier to read and the
// official R4 JSON schema checks them in the tests (see fhirtest).
package fhir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/clinical-intake/intake-web/bff"
)

// Base is the root of the project's FHIR URLs: its code systems and
// identifier systems (docs/fhir.md).
const Base = "https://clinical-intake.example/fhir"

// The project's code systems and identifier systems.
const (
	// CSHandoff names the handoff's fields: its codes are the spec's field
	// names (safety_status, disposition, urgent, release, ...).
	CSHandoff = Base + "/CodeSystem/handoff"
	// CSSafetyStatus, CSDisposition, CSScoreKey and CSScoreBand hold the
	// values the service sends, exactly, known or not.
	CSSafetyStatus = Base + "/CodeSystem/safety-status"
	CSDisposition  = Base + "/CodeSystem/disposition"
	CSScoreKey     = Base + "/CodeSystem/score-key"
	CSScoreBand    = Base + "/CodeSystem/score-band"

	SIDEncounter     = Base + "/sid/encounter-id"
	SIDAuditRef      = Base + "/sid/audit-ref"
	SIDPromptHash    = Base + "/sid/prompt-hash"
	SIDDirectoryHash = Base + "/sid/directory-hash"
	SIDSourceCommit  = Base + "/sid/source-commit"
)

// Standard systems.
const (
	LOINC         = "http://loinc.org"
	actCode       = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
	actReason     = "http://terminology.hl7.org/CodeSystem/v3-ActReason"
	listEmpty     = "http://terminology.hl7.org/CodeSystem/list-empty-reason"
	participant   = "http://terminology.hl7.org/CodeSystem/provenance-participant-type"
	rfc3986       = "urn:ietf:rfc:3986"
	xhtmlDivStart = `<div xmlns="http://www.w3.org/1999/xhtml">`
)

// MediaType is the content type of a FHIR JSON resource.
const MediaType = "application/fhir+json"

// Input is what the document is made of: the handoff as decoded, and what
// this app knows of the intake and of the read that brought the handoff.
type Input struct {
	Handoff   *bff.Handoff
	Intake    *bff.Intake // status, created and expiry times; may be nil
	FetchedAt time.Time   // when this app read the handoff from the service
	Release   string      // x-service-release of that read
}

// Document returns the bundle as indented JSON (markup in the narratives
// left unescaped: it is XHTML, and JSON needs no escaping of it).
func Document(in Input) ([]byte, error) {
	b, err := NewBundle(in)
	if err != nil {
		return nil, err
	}
	var w bytes.Buffer
	enc := json.NewEncoder(&w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(b); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// intake states as the document sees them.
const (
	stateOpen    = "open"
	stateClosed  = "closed"
	stateExpired = "expired"
)

// state is expired for an expired intake (whose handoff may say terminal),
// closed for a closed intake or a terminal handoff, else open.
func state(in Input) string {
	switch {
	case in.Intake != nil && in.Intake.Status == bff.StatusExpired:
		return stateExpired
	case in.Handoff.Terminal || (in.Intake != nil && in.Intake.Status == bff.StatusClosed):
		return stateClosed
	}
	return stateOpen
}

// builder accumulates the entries of one bundle.
type builder struct {
	in      Input
	h       *bff.Handoff
	state   string
	ns      uuid.UUID
	when    string // captured_at
	entries []Entry
	patient Reference
	enc     Reference
	device  Reference
}

// namespace is the UUIDv5 namespace of every id this package makes.
var namespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte(Base))

// id is the deterministic id of the resource with role in this handoff.
func (b *builder) id(role string) string {
	return uuid.NewSHA1(b.ns, []byte(role)).String()
}

// add appends a resource under its id and returns a reference to it.
func (b *builder) add(id, typ string, r any) Reference {
	url := "urn:uuid:" + id
	b.entries = append(b.entries, Entry{FullURL: url, Resource: r})
	return Reference{Reference: url, Type: typ}
}

// NewBundle maps the handoff to a FHIR R4 document bundle.
func NewBundle(in Input) (*Bundle, error) {
	h := in.Handoff
	if h == nil || h.IntakeID == "" {
		return nil, fmt.Errorf("fhir: no handoff")
	}
	b := &builder{in: in, h: h, state: state(in), ns: uuid.NewSHA1(namespace, []byte(h.IntakeID))}
	captured := h.CapturedAt
	if captured.IsZero() { // the spec requires captured_at; only a broken upstream omits it
		captured = in.FetchedAt
	}
	b.when = instant(captured)

	// The composition is first; its content is filled in once the rest exists.
	comp := &Composition{ResourceType: "Composition", ID: b.id("composition"), Status: "preliminary",
		Type: CodeableConcept{Coding: []Coding{{System: LOINC, Code: "34133-9", Display: "Summary of episode note"}}, Text: "Clinical intake handoff"},
		Date: b.when, Title: "Clinical intake handoff " + h.IntakeID}
	if b.state != stateOpen {
		comp.Status = "final"
	}
	compRef := b.add(comp.ID, "Composition", comp)

	b.patient = b.add(b.id("patient"), "Patient", b.patientResource())
	b.enc = b.add(b.id("encounter"), "Encounter", b.encounter())
	b.device = b.add(b.id("device"), "Device", b.deviceResource())
	comp.Subject, comp.Encounter, comp.Author = &b.patient, &b.enc, []Reference{b.device}

	subjective := append([]Reference{b.add(b.id("conversation"), "QuestionnaireResponse", b.conversation())}, b.facts()...)
	assessment := append(b.scores(), b.protocols()...)
	plan := b.disposition()
	safety := b.safety()

	comp.Section = []Section{
		section("Subjective", loinc("61150-9", "Subjective Narrative"), h.SOAP.Subjective, subjective),
		section("Objective", loinc("61149-1", "Objective Narrative"), h.SOAP.Objective, nil),
		section("Assessment", loinc("51848-0", "Evaluation note"), h.SOAP.Assessment, assessment),
		section("Plan", loinc("18776-5", "Plan of care note"), h.SOAP.Plan, plan),
		{Title: "Safety", Code: local(CSHandoff, "safety", "Safety"), Text: safetyNarrative(h), Entry: safety},
	}
	b.add(b.id("provenance"), "Provenance", b.provenance(compRef))

	return &Bundle{
		ResourceType: "Bundle", ID: b.id("bundle"), Meta: synthetic(),
		Identifier: &Identifier{System: rfc3986, Value: "urn:uuid:" + b.id("document/"+b.when)},
		Type:       "document", Timestamp: b.when, Entry: b.entries,
	}, nil
}

// synthetic labels test data: every patient here is synthetic.
func synthetic() *Meta {
	return &Meta{Security: []Coding{{System: actReason, Code: "HTEST", Display: "test health data"}}}
}

func (b *builder) patientResource() *Patient {
	p := &Patient{ResourceType: "Patient", ID: b.id("patient"), Meta: synthetic()}
	// Administrative gender only when the value is one of its codes.
	if s := b.h.Facts.Sex; s != nil {
		switch *s {
		case "female", "male", "other", "unknown":
			p.Gender = *s
		}
	}
	return p
}

func (b *builder) encounter() *Encounter {
	e := &Encounter{ResourceType: "Encounter", ID: b.id("encounter"),
		Identifier: []Identifier{{System: SIDEncounter, Value: b.h.IntakeID}},
		Status:     "in-progress", Class: Coding{System: actCode, Code: "VR", Display: "virtual"}, Subject: &b.patient}
	if b.state != stateOpen {
		e.Status = "finished"
	}
	if in := b.in.Intake; in != nil && !in.CreatedAt.IsZero() {
		e.Period = &Period{Start: instant(in.CreatedAt)}
		switch b.state {
		case stateClosed:
			e.Period.End = b.when
		case stateExpired:
			e.Period.End = instant(in.ExpiresAt)
		}
	}
	return e
}

// deviceResource is the engine, with every version the provenance reports.
func (b *builder) deviceResource() *Device {
	d := &Device{ResourceType: "Device", ID: b.id("device"),
		DeviceName: []DeviceName{{Name: "Clinical Intake Service engine", Type: "user-friendly-name"}}}
	pv := b.h.Provenance
	for _, v := range []struct {
		code string
		val  *string
	}{
		{"release", pv.Release}, {"server_model", pv.ServerModel}, {"prompt_hash", pv.PromptHash},
		{"source_commit", pv.SourceCommit}, {"directory_hash", pv.DirectoryHash}, {"runtime_profile", pv.RuntimeProfile},
		{"prompt_profile", pv.PromptProfile}, {"voice_profile", pv.VoiceProfile}, {"x-service-release", &b.in.Release},
	} {
		if v.val != nil && *v.val != "" {
			d.Version = append(d.Version, DeviceVersion{Type: local(CSHandoff, v.code, ""), Value: *v.val})
		}
	}
	if pv.ProtocolCount != nil {
		d.Property = append(d.Property, DeviceProperty{Type: *local(CSHandoff, "protocol_count", "Protocols in the pinned library"),
			ValueQuantity: []Quantity{{Value: number(*pv.ProtocolCount)}}})
	}
	return d
}

// conversation pairs each assistant line with the patient line after it:
// items turn-1, turn-2, ...; a line with no partner has no text or answer.
func (b *builder) conversation() *QuestionnaireResponse {
	qr := &QuestionnaireResponse{ResourceType: "QuestionnaireResponse", ID: b.id("conversation"),
		Status:  map[string]string{stateOpen: "in-progress", stateClosed: "completed", stateExpired: "stopped"}[b.state],
		Subject: &b.patient, Encounter: &b.enc, Authored: b.when, Source: &b.patient}
	var q *QRItem
	next := func() *QRItem {
		qr.Item = append(qr.Item, QRItem{LinkID: "turn-" + strconv.Itoa(len(qr.Item)+1)})
		return &qr.Item[len(qr.Item)-1]
	}
	for _, m := range b.h.Conversation {
		switch m.Role {
		case bff.RoleAssistant:
			q = next()
			q.Text = m.Text
		case bff.RolePatient:
			if q == nil {
				q = next()
			}
			if m.Text != "" {
				q.Answer = []QRAnswer{{ValueString: m.Text}}
			}
			q = nil
		}
	}
	return qr
}

// observation starts an Observation of this handoff.
func (b *builder) observation(role string, code CodeableConcept) *Observation {
	o := &Observation{ResourceType: "Observation", ID: b.id(role), Status: "preliminary", Code: code,
		Subject: &b.patient, Encounter: &b.enc, EffectiveDateTime: b.when}
	if b.state != stateOpen {
		o.Status = "final"
	}
	return o
}

func (b *builder) addObs(o *Observation) Reference { return b.add(o.ID, "Observation", o) }

// facts are the captured age, sex and pregnancy, as strings as received.
func (b *builder) facts() []Reference {
	var refs []Reference
	for _, f := range []struct {
		name, loinc, display string
		val                  *string
	}{
		{"age", "30525-0", "Age", b.h.Facts.Age},
		{"sex", "46098-0", "Sex", b.h.Facts.Sex},
		{"pregnancy", "82810-3", "Pregnancy status", b.h.Facts.Pregnancy},
	} {
		if f.val == nil || *f.val == "" {
			continue
		}
		o := b.observation("fact/"+f.name, CodeableConcept{Coding: []Coding{
			{System: LOINC, Code: f.loinc, Display: f.display}, {System: CSHandoff, Code: f.name}}, Text: f.display})
		o.ValueString = *f.val
		refs = append(refs, b.addObs(o))
	}
	return refs
}

// scores: one Observation (the total and its components) and one
// RiskAssessment (the band) per score.
func (b *builder) scores() []Reference {
	var refs []Reference
	for i, sc := range b.h.Scores {
		n := strconv.Itoa(i + 1)
		code := CodeableConcept{Text: sc.Key}
		if k := strings.ToLower(sc.Key); k == "phq2" || k == "phq-2" {
			code.Coding = append(code.Coding, Coding{System: LOINC, Code: "55758-7", Display: "Patient Health Questionnaire 2 item (PHQ-2) total score [Reported]"})
		}
		if isCode(sc.Key) {
			code.Coding = append(code.Coding, Coding{System: CSScoreKey, Code: sc.Key})
		}
		o := b.observation("score/"+n, code)
		if isDecimal(sc.Total) {
			o.ValueQuantity = &Quantity{Value: json.Number(sc.Total)}
		} else {
			o.ValueString = sc.Total
		}
		if sc.Components != "" {
			o.Component = []Component{{Code: *local(CSHandoff, "components", "Score components"), ValueString: sc.Components}}
		}
		obs := b.addObs(o)
		ra := &RiskAssessment{ResourceType: "RiskAssessment", ID: b.id("risk/" + n), Status: o.Status, Code: &code,
			Subject: b.patient, Encounter: &b.enc, OccurrenceDateTime: b.when, Basis: []Reference{obs}}
		if sc.Band != "" {
			ra.Prediction = []Prediction{{QualitativeRisk: received(CSScoreBand, sc.Band, "")}}
		}
		refs = append(refs, b.add(ra.ID, "RiskAssessment", ra), obs)
	}
	return refs
}

// protocols: the intake status, the active protocol and the candidates.
func (b *builder) protocols() []Reference {
	var refs []Reference
	str := func(role, code, display, v string) {
		if v == "" {
			return
		}
		o := b.observation(role, *local(CSHandoff, code, display))
		o.ValueString = v
		refs = append(refs, b.addObs(o))
	}
	if b.h.IntakeStatus != nil {
		str("intake_status", "intake_status", "Intake status", *b.h.IntakeStatus)
	}
	if b.h.ActiveProtocol != nil {
		str("active_protocol", "active_protocol", "Active protocol", *b.h.ActiveProtocol)
	}
	for i, p := range b.h.CandidateProtocols {
		str("candidate_protocol/"+strconv.Itoa(i+1), "candidate_protocols", "Candidate protocol", p)
	}
	return refs
}

// disposition is the engine's disposition, code and label as received.
func (b *builder) disposition() []Reference {
	code, label := deref(b.h.Disposition), deref(b.h.DispositionLabel)
	if code == "" && label == "" {
		return nil
	}
	o := b.observation("disposition", *local(CSHandoff, "disposition", "Disposition"))
	o.ValueCodeableConcept = received(CSDisposition, code, label)
	return []Reference{b.addObs(o)}
}

// safety: urgency (an Observation, and an active Flag when urgent), the
// safety status and each safety note.
func (b *builder) safety() []Reference {
	var refs []Reference
	urgent := b.h.Urgent
	o := b.observation("urgent", *local(CSHandoff, "urgent", "Immediate clinician review"))
	o.ValueBoolean = &urgent
	refs = append(refs, b.addObs(o))
	if urgent {
		f := &Flag{ResourceType: "Flag", ID: b.id("flag/urgent"), Status: "active",
			Code: *local(CSHandoff, "urgent", "Immediate clinician review"), Subject: b.patient, Encounter: &b.enc, Author: &b.device}
		refs = append(refs, b.add(f.ID, "Flag", f))
	}
	if s := deref(b.h.SafetyStatus); s != "" {
		o := b.observation("safety_status", *local(CSHandoff, "safety_status", "Safety status"))
		o.ValueCodeableConcept = received(CSSafetyStatus, s, "")
		refs = append(refs, b.addObs(o))
	}
	for i, n := range b.h.SafetyNotes {
		if n == "" {
			continue
		}
		o := b.observation("safety_note/"+strconv.Itoa(i+1), *local(CSHandoff, "safety_notes", "Safety note"))
		o.ValueString = n
		refs = append(refs, b.addObs(o))
	}
	return refs
}

// provenance: the engine (the Device) wrote the composition; the run's
// audit reference and hashes are its source entities.
func (b *builder) provenance(target Reference) *Provenance {
	recorded := b.in.FetchedAt
	if recorded.IsZero() {
		recorded = b.h.CapturedAt
	}
	p := &Provenance{ResourceType: "Provenance", ID: b.id("provenance"), Target: []Reference{target},
		OccurredDateTime: b.when, Recorded: instant(recorded),
		Agent: []ProvenanceAgent{{Type: &CodeableConcept{Coding: []Coding{{System: participant, Code: "author", Display: "Author"}}}, Who: b.device}}}
	pv := b.h.Provenance
	// The agent's display names the release and model the Device carries.
	var who []string
	if v := deref(pv.Release); v != "" {
		who = append(who, "release "+v)
	}
	if v := deref(pv.ServerModel); v != "" {
		who = append(who, "model "+v)
	}
	if len(who) > 0 {
		p.Agent[0].Who.Display = "Clinical Intake Service engine, " + strings.Join(who, ", ")
	}
	for _, e := range []struct {
		system, display string
		val             *string
	}{
		{SIDAuditRef, "engine run (audit_ref)", pv.AuditRef},
		{SIDPromptHash, "prompt (prompt_hash)", pv.PromptHash},
		{SIDDirectoryHash, "protocol library (directory_hash)", pv.DirectoryHash},
		{SIDSourceCommit, "engine source (source_commit)", pv.SourceCommit},
	} {
		if e.val != nil && *e.val != "" {
			p.Entity = append(p.Entity, ProvenanceEntity{Role: "source",
				What: Reference{Identifier: &Identifier{System: e.system, Value: *e.val}, Display: e.display}})
		}
	}
	return p
}

// section is a SOAP section: its text as the narrative, or, with neither
// text nor entries, the empty reason "unavailable".
func section(title string, code *CodeableConcept, text string, entries []Reference) Section {
	s := Section{Title: title, Code: code, Entry: entries}
	if strings.TrimSpace(text) != "" {
		s.Text = &Narrative{Status: "generated", Div: xhtmlDivStart + paragraphs(text) + "</div>"}
	} else if len(entries) == 0 {
		s.EmptyReason = &CodeableConcept{Coding: []Coding{{System: listEmpty, Code: "unavailable", Display: "Unavailable"}}}
	}
	return s
}

// safetyNarrative says the safety status, urgency and notes as received.
func safetyNarrative(h *bff.Handoff) *Narrative {
	var w strings.Builder
	w.WriteString(xhtmlDivStart)
	if h.SafetyStatus != nil {
		w.WriteString("<p>Safety status: <code>" + html.EscapeString(*h.SafetyStatus) + "</code></p>")
	} else {
		w.WriteString("<p>Safety status: not reported (null).</p>")
	}
	if h.Urgent {
		w.WriteString("<p><b>Urgent</b>: immediate clinician review.</p>")
	} else {
		w.WriteString("<p>Urgent: no.</p>")
	}
	if len(h.SafetyNotes) == 0 {
		w.WriteString("<p>No safety notes.</p>")
	} else {
		w.WriteString("<ul>")
		for _, n := range h.SafetyNotes {
			w.WriteString("<li>" + html.EscapeString(n) + "</li>")
		}
		w.WriteString("</ul>")
	}
	w.WriteString("</div>")
	return &Narrative{Status: "generated", Div: w.String()}
}

// paragraphs is text as XHTML: blank lines part paragraphs, line breaks kept.
func paragraphs(text string) string {
	var w strings.Builder
	for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		w.WriteString("<p>" + strings.ReplaceAll(html.EscapeString(p), "\n", "<br/>") + "</p>")
	}
	return w.String()
}

func loinc(code, display string) *CodeableConcept {
	return &CodeableConcept{Coding: []Coding{{System: LOINC, Code: code, Display: display}}}
}

func local(system, code, display string) *CodeableConcept {
	return &CodeableConcept{Coding: []Coding{{System: system, Code: code, Display: display}}, Text: display}
}

// received is a value the service sent, in system: its code when FHIR's
// code syntax allows it (no leading, trailing or double spaces), the text
// always; label is the service's display label, if any.
func received(system, code, label string) *CodeableConcept {
	cc := &CodeableConcept{Text: code}
	if label != "" {
		cc.Text = label
	}
	if code != "" && isCode(code) {
		cc.Coding = []Coding{{System: system, Code: code, Display: label}}
	}
	return cc
}

var (
	codeSyntax    = regexp.MustCompile(`^[^\s]+(\s[^\s]+)*$`)
	decimalSyntax = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?$`)
)

func isCode(s string) bool    { return codeSyntax.MatchString(s) }
func isDecimal(s string) bool { return decimalSyntax.MatchString(s) }

func number(f float64) json.Number { return json.Number(strconv.FormatFloat(f, 'f', -1, 64)) }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// instant is t in UTC as a FHIR instant, or "" for the zero time.
func instant(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
