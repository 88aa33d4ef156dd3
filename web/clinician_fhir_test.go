package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/bff/fhir/fhirtest"
)

// The FHIR download: clinicians only, the FHIR media type, a valid R4
// document of the handoff the service sent (no upstream call for a closed
// intake), audited as a FHIR download and not as a view; offered on the
// handoff page and in the worklist's rows.
func TestHandoffAsFHIRDocument(t *testing.T) {
	t.Parallel()
	a := startApp(t, withClinician(t, "dr.ada"))
	patient := a.browser()
	calm := patient.start()
	patient.say(calm, "hello")
	patient.say(calm, "I am done")
	urgent := patient.start()
	patient.say(urgent, "this is an emergency")
	open := patient.start()
	patient.say(open, "still talking")
	id := func(path string) string { return strings.TrimPrefix(path, "/intakes/") }
	url := func(path string) string { return "/clinician/intakes/" + id(path) + "/handoff.fhir.json" }

	// No sign-in, or only a patient's session: no document.
	if p := a.browser().get(url(calm)); p.status != http.StatusUnauthorized {
		t.Fatalf("without sign-in: %d", p.status)
	}
	if p := patient.get(url(calm)); p.status != http.StatusUnauthorized || strings.Contains(p.body, "Bundle") {
		t.Fatalf("a patient session: %d", p.status)
	}

	doc := a.browser()
	doc.signIn("dr.ada", clinPassword)
	if p := doc.get("/clinician/intakes/enc_nobody_00/handoff.fhir.json"); p.status != http.StatusNotFound {
		t.Fatalf("no such intake: %d", p.status)
	}
	audit := func() string { return doc.get("/clinician/audit").body }
	count := func(body, action string) int {
		return strings.Count(body, `<td class="mono" data-label="Action">`+action+`</td>`)
	}
	before := audit()

	// A closed intake: from the store, no upstream read.
	reads := a.sb.Service.Stats().Requests["handoff"]
	p := doc.get(url(calm))
	if got := a.sb.Service.Stats().Requests["handoff"]; got != reads {
		t.Fatalf("a closed intake's FHIR document cost %d upstream reads", got-reads)
	}
	if p.status != http.StatusOK || p.header.Get("Content-Type") != "application/fhir+json" ||
		p.header.Get("Content-Disposition") != `attachment; filename="handoff-`+id(calm)+`.fhir.json"` {
		t.Fatalf("download: %d %q %q", p.status, p.header.Get("Content-Type"), p.header.Get("Content-Disposition"))
	}
	b := fhirtest.CheckDocument(t, []byte(p.body))
	if c := b.Composition(); c["status"] != "final" {
		t.Fatalf("a closed intake's composition is %v", c["status"])
	}
	enc := b.Resources("Encounter")[0]
	// FHIR's encounter identifier is the service's encounter id, not the app's.
	if ids := enc["identifier"].([]any); ids[0].(map[string]any)["value"] != a.encounter(t, calm) || a.encounter(t, calm) == "" || enc["status"] != "finished" {
		t.Fatalf("encounter %v", enc)
	}
	upstream := a.upstreamHandoff(t, id(calm))
	for _, want := range []string{`"cannot_miss_negative"`, `"scripted_score"`, `"scripted-test-engine/0"`} {
		if !strings.Contains(upstream, want) || !strings.Contains(p.body, want) {
			t.Errorf("the handoff's %s is not in the document", want)
		}
	}

	// Audited once as a FHIR download, not as a view.
	after := audit()
	if count(after, "download_fhir") != count(before, "download_fhir")+1 || count(after, "view_handoff") != count(before, "view_handoff") {
		t.Fatalf("audit: download_fhir %d -> %d, view_handoff %d -> %d", count(before, "download_fhir"), count(after, "download_fhir"),
			count(before, "view_handoff"), count(after, "view_handoff"))
	}

	// Urgent: a Flag. Open: a preliminary composition.
	if b := fhirtest.CheckDocument(t, []byte(doc.get(url(urgent)).body)); len(b.Resources("Flag")) != 1 {
		t.Fatal("an urgent intake's document has no Flag")
	}
	if b := fhirtest.CheckDocument(t, []byte(doc.get(url(open)).body)); b.Composition()["status"] != "preliminary" {
		t.Fatalf("an open intake's composition is %v", b.Composition()["status"])
	}

	// Offered on the handoff page and in the worklist's rows.
	if h := doc.get("/clinician/intakes/" + id(calm)).body; !strings.Contains(h, `href="`+url(calm)+`"`) {
		t.Error("the handoff page does not offer the FHIR document")
	}
	list := doc.get("/clinician").body
	for _, in := range []string{calm, urgent, open} {
		if !strings.Contains(list, `href="`+url(in)+`"`) {
			t.Errorf("the worklist row of %s does not offer the FHIR document", id(in))
		}
	}
}
