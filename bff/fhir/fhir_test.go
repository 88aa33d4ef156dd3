package fhir_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/fhir"
	"github.com/clinical-intake/intake-web/bff/fhir/fhirtest"
)

func p(s string) *string   { return &s }
func f(v float64) *float64 { return &v }

var (
	created  = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	captured = time.Date(2026, 11, 23, 9, 12, 30, 250e6, time.UTC)
	fetched  = time.Date(2026, 11, 23, 9, 12, 31, 0, time.UTC)
)

// closedHandoff is a complete handoff of a closed intake: a PHQ-2 score,
// a conversation, every provenance field.
func closedHandoff() *bff.Handoff {
	return &bff.Handoff{
		IntakeID: "enc_demo_0a1b2c", CapturedAt: captured, Terminal: true,
		IntakeStatus: p("complete"), SafetyStatus: p("cannot_miss_negative"),
		SafetyNotes: []string{"Asked about thoughts of self-harm: none reported.", "No <b>red</b> flags & no chest pain."},
		Disposition: p("clinician_review"), DispositionLabel: p("Clinician review"),
		SOAP: bff.SOAP{Subjective: "Low mood for 3 weeks.\nSleeping poorly.", Objective: "Not examined (remote intake).",
			Assessment: "PHQ-2 3 (strong).", Plan: "Clinician review within 2 weeks."},
		Facts:          bff.Facts{Age: p("34"), Sex: p("female"), Pregnancy: p("not pregnant")},
		ActiveProtocol: p("low_mood.v1"), CandidateProtocols: []string{"low_mood.v1", "fatigue.v1"},
		Scores: []bff.Score{{Key: "phq2", Total: "3", Band: "strong", Components: "little interest: several days +1, feeling down: more than half the days +2"}},
		Conversation: []bff.Message{
			{Role: bff.RolePatient, Text: "I've been feeling low"},
			{Role: bff.RoleAssistant, Text: "How often have you had little interest or pleasure in doing things?"},
			{Role: bff.RolePatient, Text: "several days"},
			{Role: bff.RoleAssistant, Text: "Thank you. A clinician will review this."},
		},
		Provenance: bff.Provenance{Release: p("2026.11.2"), ServerModel: p("rules-1"), PromptHash: p("sha256:ab12"),
			SourceCommit: p("0c0ffee"), DirectoryHash: p("sha256:cd34"), RuntimeProfile: p("default"), PromptProfile: p("intake"),
			VoiceProfile: p("plain"), AuditRef: p("aud_9f8e7d"), LatencyMS: f(1234), ProtocolCount: f(12)},
	}
}

func intake(status string) *bff.Intake {
	return &bff.Intake{ID: "enc_demo_0a1b2c", Status: status, CreatedAt: created, ExpiresAt: created.Add(2 * time.Hour)}
}

func document(t *testing.T, in fhir.Input) (*fhirtest.Bundle, []byte) {
	t.Helper()
	doc, err := fhir.Document(in)
	if err != nil {
		t.Fatal(err)
	}
	return fhirtest.CheckDocument(t, doc), doc
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			if len(x) == 0 {
				return nil
			}
			v = x[0].(map[string]any)[k]
		default:
			return nil
		}
	}
	return v
}

// observations returns the Observations coded code in the handoff system.
func observations(b *fhirtest.Bundle, code string) []map[string]any {
	var out []map[string]any
	for _, o := range b.Resources("Observation") {
		for _, c := range get(o, "code").(map[string]any)["coding"].([]any) {
			if c.(map[string]any)["code"] == code {
				out = append(out, o)
			}
		}
	}
	return out
}

func TestClosedIntake(t *testing.T) {
	h := closedHandoff()
	b, doc := document(t, fhir.Input{Handoff: h, Intake: intake(bff.StatusClosed), FetchedAt: fetched, Release: "2026.11.2+abc"})
	c := b.Composition()
	if c["status"] != "final" || c["date"] != "2026-11-23T09:12:30.25Z" || b.Timestamp != "2026-11-23T09:12:30.25Z" {
		t.Fatalf("composition status %v date %v, bundle timestamp %v", c["status"], c["date"], b.Timestamp)
	}
	var titles []string
	for _, s := range c["section"].([]any) {
		titles = append(titles, s.(map[string]any)["title"].(string))
	}
	if strings.Join(titles, ",") != "Subjective,Objective,Assessment,Plan,Safety" {
		t.Fatalf("sections %v", titles)
	}
	sub := c["section"].([]any)[0].(map[string]any)
	if div := get(sub, "text", "div").(string); !strings.Contains(div, "Low mood for 3 weeks.<br/>Sleeping poorly.") {
		t.Fatalf("subjective narrative %q", div)
	}
	safety := c["section"].([]any)[4].(map[string]any)
	if div := get(safety, "text", "div").(string); !strings.Contains(div, "No &lt;b&gt;red&lt;/b&gt; flags &amp; no chest pain.") {
		t.Fatalf("safety narrative not escaped: %q", div)
	}

	// The values travel as received.
	if pt := b.Resources("Patient"); len(pt) != 1 || pt[0]["gender"] != "female" || len(pt[0]) != 4 { // resourceType, id, meta, gender
		t.Fatalf("patient %v", pt)
	}
	for code, want := range map[string]string{"age": "34", "sex": "female", "pregnancy": "not pregnant", "intake_status": "complete", "active_protocol": "low_mood.v1"} {
		if o := observations(b, code); len(o) != 1 || o[0]["valueString"] != want || o[0]["status"] != "final" {
			t.Errorf("%s: %v", code, o)
		}
	}
	if o := observations(b, "candidate_protocols"); len(o) != 2 || o[1]["valueString"] != "fatigue.v1" {
		t.Errorf("candidate protocols %v", o)
	}
	if o := observations(b, "safety_status"); len(o) != 1 || get(o[0], "valueCodeableConcept", "coding", "code") != "cannot_miss_negative" ||
		get(o[0], "valueCodeableConcept", "coding", "system") != fhir.CSSafetyStatus {
		t.Errorf("safety status %v", o)
	}
	if o := observations(b, "disposition"); len(o) != 1 || get(o[0], "valueCodeableConcept", "coding", "code") != "clinician_review" ||
		get(o[0], "valueCodeableConcept", "text") != "Clinician review" {
		t.Errorf("disposition %v", o)
	}
	if o := observations(b, "safety_notes"); len(o) != 2 || o[1]["valueString"] != h.SafetyNotes[1] {
		t.Errorf("safety notes %v", o)
	}
	if o := observations(b, "urgent"); len(o) != 1 || o[0]["valueBoolean"] != false {
		t.Errorf("urgent %v", o)
	}
	if len(b.Resources("Flag")) != 0 {
		t.Error("a flag for an intake that is not urgent")
	}
	// PHQ-2 with its LOINC code, total as a number, components, band.
	sc := observations(b, "55758-7")
	if len(sc) != 1 || get(sc[0], "valueQuantity", "value") != 3.0 || get(sc[0], "component", "valueString") != h.Scores[0].Components {
		t.Fatalf("score %v", sc)
	}
	ra := b.Resources("RiskAssessment")
	if len(ra) != 1 || get(ra[0], "prediction", "qualitativeRisk", "coding", "code") != "strong" || b.Resolve(get(ra[0], "basis", "reference").(string)) == nil {
		t.Fatalf("risk assessment %v", ra)
	}
	// The conversation: a patient line first, then assistant/patient pairs.
	qr := b.Resources("QuestionnaireResponse")[0]
	items := qr["item"].([]any)
	if qr["status"] != "completed" || len(items) != 3 {
		t.Fatalf("questionnaire response %v", qr)
	}
	it := items[1].(map[string]any)
	if it["linkId"] != "turn-2" || it["text"] != h.Conversation[1].Text || get(it, "answer", "valueString") != "several days" {
		t.Fatalf("turn 2: %v", it)
	}
	if _, ok := items[0].(map[string]any)["text"]; ok || items[2].(map[string]any)["answer"] != nil {
		t.Fatalf("unpaired lines: %v", items)
	}
	// The engine and its run.
	dev := b.Resources("Device")[0]
	if !strings.Contains(string(doc), `"value": "rules-1"`) || len(dev["version"].([]any)) != 9 {
		t.Fatalf("device %v", dev)
	}
	prov := b.Resources("Provenance")[0]
	if get(prov, "agent", "who", "display") != "Clinical Intake Service engine, release 2026.11.2, model rules-1" {
		t.Errorf("provenance agent %v", prov["agent"])
	}
	if prov["recorded"] != "2026-11-23T09:12:31Z" || len(prov["entity"].([]any)) != 4 || get(prov, "entity", "what", "identifier", "value") != "aud_9f8e7d" {
		t.Fatalf("provenance %v", prov)
	}
	enc := b.Resources("Encounter")[0]
	if enc["status"] != "finished" || get(enc, "identifier", "value") != h.IntakeID || get(enc, "period", "start") != "2026-11-23T09:00:00Z" {
		t.Fatalf("encounter %v", enc)
	}

	// The same handoff gives the same bytes.
	again, _ := fhir.Document(fhir.Input{Handoff: closedHandoff(), Intake: intake(bff.StatusClosed), FetchedAt: fetched, Release: "2026.11.2+abc"})
	if !bytes.Equal(doc, again) {
		t.Fatal("the same handoff gave a different document")
	}
}

func TestUrgentIntake(t *testing.T) {
	h := closedHandoff()
	h.Urgent, h.SafetyStatus, h.Disposition, h.DispositionLabel = true, p("cannot_miss_positive"), p("urgent_escalation"), p("Call 999 now")
	h.Scores = nil
	b, _ := document(t, fhir.Input{Handoff: h, Intake: intake(bff.StatusClosed), FetchedAt: fetched})
	flags := b.Resources("Flag")
	if len(flags) != 1 || flags[0]["status"] != "active" || get(flags[0], "code", "coding", "code") != "urgent" {
		t.Fatalf("flags %v", flags)
	}
	if o := observations(b, "urgent"); len(o) != 1 || o[0]["valueBoolean"] != true {
		t.Fatalf("urgent %v", o)
	}
	if o := observations(b, "disposition"); get(o[0], "valueCodeableConcept", "coding", "code") != "urgent_escalation" {
		t.Fatalf("disposition %v", o)
	}
	safety := b.Composition()["section"].([]any)[4].(map[string]any)
	if !strings.Contains(get(safety, "text", "div").(string), "<b>Urgent</b>") {
		t.Fatal("the safety narrative does not say urgent")
	}
}

func TestOpenIntake(t *testing.T) {
	h := closedHandoff()
	h.Terminal, h.IntakeStatus, h.Scores, h.Disposition, h.DispositionLabel = false, p("needs_phq_down"), nil, p("continue_intake"), p("Continue")
	b, _ := document(t, fhir.Input{Handoff: h, Intake: intake(bff.StatusOpen), FetchedAt: fetched})
	c := b.Composition()
	if c["status"] != "preliminary" {
		t.Fatalf("an open intake's composition is %v", c["status"])
	}
	if st := b.Resources("QuestionnaireResponse")[0]["status"]; st != "in-progress" {
		t.Fatalf("questionnaire response %v", st)
	}
	if st := b.Resources("Encounter")[0]; st["status"] != "in-progress" || get(st, "period", "end") != nil {
		t.Fatalf("encounter %v", st)
	}
	for _, o := range b.Resources("Observation") {
		if o["status"] != "preliminary" {
			t.Fatalf("an open intake's observation is %v", o["status"])
		}
	}
}

func TestExpiredIntake(t *testing.T) {
	h := closedHandoff()
	h.Terminal, h.IntakeStatus, h.Scores, h.Disposition, h.DispositionLabel = false, p("needs_duration"), nil, nil, nil
	b, _ := document(t, fhir.Input{Handoff: h, Intake: intake(bff.StatusExpired), FetchedAt: fetched})
	if c := b.Composition(); c["status"] != "final" {
		t.Fatalf("an expired intake's composition is %v", c["status"])
	}
	if st := b.Resources("QuestionnaireResponse")[0]["status"]; st != "stopped" {
		t.Fatalf("questionnaire response %v", st)
	}
	if e := b.Resources("Encounter")[0]; e["status"] != "finished" || get(e, "period", "end") != "2026-11-23T11:00:00Z" {
		t.Fatalf("encounter %v", e)
	}
	if o := observations(b, "disposition"); len(o) != 0 {
		t.Fatalf("a null disposition became %v", o)
	}
}

// A handoff with every nullable field null and every list empty: nothing
// is made up, and it is still a valid document.
func TestNullFields(t *testing.T) {
	h := &bff.Handoff{IntakeID: "enc_demo_nulls", CapturedAt: captured}
	b, doc := document(t, fhir.Input{Handoff: h, Intake: intake(bff.StatusOpen), FetchedAt: fetched})
	if pt := b.Resources("Patient")[0]; pt["gender"] != nil {
		t.Fatalf("patient %v", pt)
	}
	// Only the urgency (a boolean, never null) is observed.
	if obs := b.Resources("Observation"); len(obs) != 1 || observations(b, "urgent") == nil {
		t.Fatalf("observations %v", obs)
	}
	if n := len(b.Resources("RiskAssessment")) + len(b.Resources("Flag")); n != 0 {
		t.Fatalf("%d risk assessments or flags from nothing", n)
	}
	if d := b.Resources("Device")[0]; d["version"] != nil || d["property"] != nil {
		t.Fatalf("device %v", d)
	}
	if pr := b.Resources("Provenance")[0]; pr["entity"] != nil {
		t.Fatalf("provenance %v", pr)
	}
	for _, s := range b.Composition()["section"].([]any)[:4] {
		if s := s.(map[string]any); s["title"] != "Subjective" && get(s, "emptyReason", "coding", "code") != "unavailable" {
			t.Fatalf("empty section %v", s)
		}
	}
	for _, word := range []string{"null", `""`} {
		if bytes.Contains(doc, []byte(word+",")) || bytes.Contains(doc, []byte(": "+word)) {
			t.Fatalf("the document carries %s: %s", word, doc)
		}
	}
}

// Values outside the known sets, and ones FHIR's code syntax refuses,
// still travel: as codes when they can, always as text.
func TestUnknownValuesTravel(t *testing.T) {
	h := closedHandoff()
	h.SafetyStatus, h.Disposition, h.DispositionLabel = p("  odd  value "), p("new_disposition"), nil
	h.Facts.Sex = p("intersex")
	h.Scores = []bff.Score{{Key: "made up", Total: "3/6", Band: "", Components: ""}}
	b, _ := document(t, fhir.Input{Handoff: h, Intake: intake(bff.StatusClosed), FetchedAt: fetched})
	if o := observations(b, "safety_status"); get(o[0], "valueCodeableConcept", "text") != "  odd  value " || get(o[0], "valueCodeableConcept", "coding") != nil {
		t.Fatalf("safety status %v", o)
	}
	if o := observations(b, "disposition"); get(o[0], "valueCodeableConcept", "coding", "code") != "new_disposition" {
		t.Fatalf("disposition %v", o)
	}
	if pt := b.Resources("Patient")[0]; pt["gender"] != nil || observations(b, "sex")[0]["valueString"] != "intersex" {
		t.Fatalf("sex: patient %v", pt)
	}
	if o := observations(b, "made up"); len(o) != 1 || o[0]["valueString"] != "3/6" {
		t.Fatalf("score %v", b.Resources("Observation"))
	}
}

// The checks catch a broken bundle: a reference to a missing entry, a
// missing required field, the Composition not first.
func TestChecksCatchBrokenDocuments(t *testing.T) {
	doc, err := fhir.Document(fhir.Input{Handoff: closedHandoff(), Intake: intake(bff.StatusClosed), FetchedAt: fetched})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	mutate := func(change func(entries []any) []any) []byte {
		_ = json.Unmarshal(doc, &m)
		m["entry"] = change(m["entry"].([]any))
		out, _ := json.Marshal(m)
		return out
	}
	dropPatient := mutate(func(e []any) []any { return append(e[:1:1], e[2:]...) })
	if err := fhirtest.DocumentRules(dropPatient); err == nil || !strings.Contains(err.Error(), "do not resolve") {
		t.Errorf("a dangling reference passed: %v", err)
	}
	swapped := mutate(func(e []any) []any { e[0], e[1] = e[1], e[0]; return e })
	if err := fhirtest.DocumentRules(swapped); err == nil {
		t.Error("a bundle whose first entry is not the Composition passed")
	}
	noStatus := mutate(func(e []any) []any { delete(e[0].(map[string]any)["resource"].(map[string]any), "status"); return e })
	if err := fhirtest.Cardinality(t, noStatus); err == nil || !strings.Contains(err.Error(), "Composition.status") {
		t.Errorf("a composition without status passed: %v", err)
	}
	sch := fhirtest.Schema(t)
	for name, broken := range map[string][]byte{
		"composition without author": mutate(func(e []any) []any { delete(e[0].(map[string]any)["resource"].(map[string]any), "author"); return e }),
		"unknown field":              mutate(func(e []any) []any { e[1].(map[string]any)["resource"].(map[string]any)["age"] = "34"; return e }),
		"bad gender": mutate(func(e []any) []any {
			e[1].(map[string]any)["resource"].(map[string]any)["gender"] = "intersex"
			return e
		}),
	} {
		v, _ := jsonUnmarshal(broken)
		if err := sch.Validate(v); err == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

func jsonUnmarshal(b []byte) (any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return v, d.Decode(&v)
}
