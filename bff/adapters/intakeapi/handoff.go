package intakeapi

import "github.com/clinical-intake/intake-web/bff"

// DomainHandoff converts a handoff as the client decoded it into the
// domain type.
func DomainHandoff(h *Handoff) *bff.Handoff {
	d := &bff.Handoff{
		IntakeID: h.EncounterID, CapturedAt: h.CapturedAt, Terminal: h.Terminal, Urgent: h.Urgent,
		IntakeStatus: str(h.IntakeStatus), SafetyStatus: str(h.SafetyStatus), SafetyNotes: h.SafetyNotes,
		Disposition: str(h.Disposition), DispositionLabel: h.DispositionLabel,
		SOAP:           bff.SOAP{Subjective: h.SOAP.Subjective, Objective: h.SOAP.Objective, Assessment: h.SOAP.Assessment, Plan: h.SOAP.Plan},
		Facts:          bff.Facts{Age: h.CapturedFacts.Age, Sex: h.CapturedFacts.Sex, Pregnancy: h.CapturedFacts.Pregnancy},
		ActiveProtocol: h.ActiveProtocol, CandidateProtocols: h.CandidateProtocols,
	}
	for _, s := range h.Scores {
		d.Scores = append(d.Scores, bff.Score{Key: s.Key, Total: s.Total, Band: string(s.Band), Components: s.Components})
	}
	for _, m := range h.Conversation {
		d.Conversation = append(d.Conversation, bff.Message{Role: string(m.Role), Text: m.Text})
	}
	p := h.Provenance
	d.Provenance = bff.Provenance{
		Release: p.Release, ServerModel: p.ServerModel, PromptHash: p.PromptHash, SourceCommit: p.SourceCommit,
		DirectoryHash: p.DirectoryHash, RuntimeProfile: p.RuntimeProfile, PromptProfile: p.PromptProfile,
		VoiceProfile: p.VoiceProfile, AuditRef: p.AuditRef, LatencyMS: p.LatencyMS, ProtocolCount: p.ProtocolCount,
	}
	return d
}

// str turns a typed nullable string into a plain one.
func str[T ~string](p *T) *string {
	if p == nil {
		return nil
	}
	v := string(*p)
	return &v
}
