package web

import (
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// showHandoff is the clinician's view of an intake's handoff.
func (s *Server) showHandoff(c *fiber.Ctx) error {
	return s.renderHandoff(c, false, "", "")
}

// refreshHandoff re-reads an open intake's handoff, then shows it (PRG).
func (s *Server) refreshHandoff(c *fiber.Ctx) error {
	id := param(c, "id")
	rec, err := s.reviews.Handoff(c.UserContext(), clinicianOf(c), id, true)
	if err != nil {
		return err
	}
	if !rec.Stale { // a stale copy says so on the page itself
		s.setFlash(c, "Handoff refreshed.")
	}
	return c.Redirect("/clinician/intakes/"+id, http.StatusSeeOther)
}

// reviewHandoff marks the handoff reviewed, with an optional note.
func (s *Server) reviewHandoff(c *fiber.Ctx) error {
	id := param(c, "id")
	note := utils.CopyString(c.FormValue("note"))
	if _, err := s.reviews.MarkReviewed(c.UserContext(), clinicianOf(c), id, note); err != nil {
		if bff.ErrorCode(err) == bff.EINVALID {
			return s.renderHandoff(c, false, note, bff.ErrorMessage(err))
		}
		return err
	}
	s.setFlash(c, "Review saved.")
	return c.Redirect("/clinician/intakes/"+id+"#reviews", http.StatusSeeOther)
}

// downloadHandoff serves the handoff JSON exactly as the service sent it.
func (s *Server) downloadHandoff(c *fiber.Ctx) error {
	id := param(c, "id")
	raw, err := s.reviews.RawHandoff(c.UserContext(), clinicianOf(c), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="handoff-`+id+`.json"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(raw)
}

// downloadFHIR serves the handoff as a FHIR R4 document (docs/fhir.md).
func (s *Server) downloadFHIR(c *fiber.Ctx) error {
	id := param(c, "id")
	doc, err := s.reviews.FHIRHandoff(c.UserContext(), clinicianOf(c), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/fhir+json")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="handoff-`+id+`.fhir.json"`)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(doc)
}

func (s *Server) renderHandoff(c *fiber.Ctx, refresh bool, note, noteErr string) error {
	id := param(c, "id")
	rec, err := s.reviews.Handoff(c.UserContext(), clinicianOf(c), id, refresh)
	if err != nil {
		return err
	}
	page := handoffPage(s.clinicianLayout(c, "Handoff "+id), rec)
	page.ReviewNote, page.ReviewError = note, noteErr
	status := http.StatusOK
	if noteErr != "" {
		status = http.StatusUnprocessableEntity
	}
	return render(c, status, templates.HandoffPageView(page))
}

// handoffPage maps a handoff to its page, every field as received.
func handoffPage(l templates.Layout, rec *bff.HandoffRecord) templates.HandoffPage {
	h, in := rec.Handoff, rec.Intake
	p := templates.HandoffPage{
		Layout: l, ID: in.ID, BackURL: "/clinician", Status: in.Status,
		Urgent: h.Urgent, Terminal: h.Terminal,
		CapturedAt: clock(h.CapturedAt), FetchedAt: clock(rec.FetchedAt), Release: rec.Release, EngineRelease: val(h.Provenance.Release),
		Stale: rec.Stale, StaleReason: rec.StaleReason,
		DownloadURL: "/clinician/intakes/" + in.ID + "/handoff.json", CSRF: l.CSRF,
		FHIRURL:      "/clinician/intakes/" + in.ID + "/handoff.fhir.json",
		SafetyStatus: val(h.SafetyStatus), Disposition: val(h.Disposition), DispositionLabel: val(h.DispositionLabel),
		IntakeStatus:   val(h.IntakeStatus),
		SOAP:           templates.SOAPView{Subjective: h.SOAP.Subjective, Objective: h.SOAP.Objective, Assessment: h.SOAP.Assessment, Plan: h.SOAP.Plan},
		SafetyNotes:    h.SafetyNotes,
		Facts:          capturedFacts(h.Facts),
		ActiveProtocol: val(h.ActiveProtocol), CandidateProtocols: h.CandidateProtocols,
		ReviewAction: "/clinician/intakes/" + in.ID + "/review",
	}
	if !h.Terminal {
		p.RefreshAction = "/clinician/intakes/" + in.ID + "/refresh"
	}
	for _, sc := range h.Scores {
		p.Scores = append(p.Scores, templates.ScoreView{Key: sc.Key, Total: sc.Total, Band: string(sc.Band), Components: sc.Components})
	}
	for _, m := range h.Conversation {
		p.Conversation = append(p.Conversation, templates.MessageView{Role: string(m.Role), Text: m.Text})
	}
	p.Provenance = provenanceFacts(h.Provenance)
	for _, r := range rec.Reviews {
		p.Reviews = append(p.Reviews, templates.ReviewView{By: r.Clinician, At: clock(r.ReviewedAt), Note: r.Note})
	}
	return p
}

// capturedFacts lists the demographic facts a handoff captured.
func capturedFacts(f bff.Facts) []templates.Fact {
	return []templates.Fact{
		{Name: "age", Label: "Age", Value: val(f.Age)},
		{Name: "sex", Label: "Sex", Value: val(f.Sex)},
		{Name: "pregnancy", Label: "Pregnancy", Value: val(f.Pregnancy)},
	}
}

// provenanceFacts lists every provenance field in the spec's order.
func provenanceFacts(pv bff.Provenance) []templates.Fact {
	num := func(f *float64) string {
		if f == nil {
			return ""
		}
		return strconv.FormatFloat(*f, 'f', -1, 64)
	}
	return []templates.Fact{
		{Name: "release", Label: "Engine release", Value: val(pv.Release)},
		{Name: "server_model", Label: "Model run", Value: val(pv.ServerModel)},
		{Name: "prompt_hash", Label: "Prompt hash", Value: val(pv.PromptHash)},
		{Name: "source_commit", Label: "Source commit", Value: val(pv.SourceCommit)},
		{Name: "directory_hash", Label: "Protocol library hash", Value: val(pv.DirectoryHash)},
		{Name: "runtime_profile", Label: "Runtime profile", Value: val(pv.RuntimeProfile)},
		{Name: "prompt_profile", Label: "Prompt profile", Value: val(pv.PromptProfile)},
		{Name: "voice_profile", Label: "Voice profile", Value: val(pv.VoiceProfile)},
		{Name: "audit_ref", Label: "Audit reference (quote in support requests)", Value: val(pv.AuditRef), Copy: true},
		{Name: "latency_ms", Label: "Latency (ms)", Value: num(pv.LatencyMS)},
		{Name: "protocol_count", Label: "Protocols in library", Value: num(pv.ProtocolCount)},
	}
}

// val shows a nullable typed string as received, "" for null.
func val[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}
