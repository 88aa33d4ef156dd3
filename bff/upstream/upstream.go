// Package upstream holds what the core's services share about the Clinical
// Intake Service: its errors told in words a person can act on, and its
// handoffs read through the client, kept in the store and decoded once into
// the domain type.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/pacer"
)

// Describe maps what the client or the pacer reported to an *bff.Error a
// person can be shown. The original is logged by the caller.
func Describe(err error, now time.Time) error {
	if err == nil {
		return nil
	}
	if be := (*bff.Error)(nil); errors.As(err, &be) {
		return be // already in words (an intake not created upstream yet, say)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return bff.Errorf(bff.EUNAVAILABLE, "The intake service did not answer in time. Please try again.")
	}
	var qe *pacer.QuotaError
	if errors.As(err, &qe) {
		return QuotaMessage(qe.Quota, qe.ResetAt, now)
	}
	ae, ok := intakeapi.AsError(err)
	if !ok {
		return bff.Errorf(bff.EUNAVAILABLE, "The intake service could not be reached. Please try again in a moment.")
	}
	switch ae.Code {
	case intakeapi.CodeRateLimited:
		return &bff.Error{Code: bff.ERATELIMIT, RetryAfter: ae.RetryAfter, Message: fmt.Sprintf("The intake service is busy; please try again in %d seconds.", int(math.Ceil(max(ae.RetryAfter, time.Second).Seconds())))}
	case intakeapi.CodeQuotaExceeded:
		return QuotaMessage("turns or intakes", time.Time{}, now)
	case intakeapi.CodeIntakeClosed:
		return bff.Errorf(bff.ECONFLICT, "This intake has ended; no more messages can be sent.")
	case intakeapi.CodeIntakeExpired:
		return bff.Errorf(bff.EGONE, "This intake passed its two-hour limit. Start a new intake; this one stays readable.")
	case intakeapi.CodeNotFound:
		return bff.Errorf(bff.ENOTFOUND, "The intake service no longer knows this intake.")
	case intakeapi.CodeTurnInProgress:
		return bff.Errorf(bff.ECONFLICT, "The previous reply is still being written; please wait for it.")
	case intakeapi.CodeInvalidRequest:
		return bff.Errorf(bff.EINVALID, "The intake service refused the request: %s", ae.Message)
	}
	return bff.Errorf(bff.EUNAVAILABLE, "The intake service is having trouble. Please try again in a moment.")
}

// QuotaMessage says which daily quota is spent and when it resets (00:00
// UTC when reset is zero).
func QuotaMessage(what string, reset, now time.Time) *bff.Error {
	if reset.IsZero() {
		y, m, d := now.UTC().Date()
		reset = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
	}
	left := reset.Sub(now).Round(time.Minute)
	return &bff.Error{Code: bff.EQUOTA, Message: fmt.Sprintf("Today's %s for this service key are used up. They reset at 00:00 UTC (in %d h %02d min).",
		what, int(left.Hours()), int(left.Minutes())%60)}
}

// Handoff converts a handoff as the client decoded it into the domain type.
func Handoff(h *intakeapi.Handoff) *bff.Handoff {
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

// Handoffs reads handoffs through the client and keeps them in the store.
type Handoffs struct {
	Client *intakeapi.Client
	Store  bff.HandoffStore
	Now    func() time.Time
	Log    *slog.Logger
}

// Read reads the handoff of the intake in (by its encounter id) from the
// service at priority p. A terminal one is stored under in.ID (it never
// changes); so is any other when keep. An intake not yet created upstream
// has none: ECONFLICT, saying so.
func (hs *Handoffs) Read(ctx context.Context, in *bff.Intake, p intakeapi.Priority, keep bool) (*intakeapi.Handoff, string, error) {
	if in.EncounterID == "" {
		return nil, "", bff.Errorf(bff.ECONFLICT, "This intake has not reached the intake service yet: it starts with the patient's first message.")
	}
	h, meta, err := hs.Client.Handoff(intakeapi.WithPriority(ctx, p), in.EncounterID)
	if err != nil {
		return nil, "", err
	}
	if keep || h.Terminal {
		hs.Put(ctx, in.ID, h, meta.Release)
	}
	return h, meta.Release, nil
}

// Put stores h as received (its raw bytes; a handoff the app assembled
// itself is encoded) under the app's intake id. A failure is logged: the
// caller has the handoff.
func (hs *Handoffs) Put(ctx context.Context, intakeID string, h *intakeapi.Handoff, release string) {
	raw, err := []byte(h.Raw), error(nil)
	if len(raw) == 0 {
		raw, err = json.Marshal(h)
	}
	if err != nil {
		hs.Log.Error("encode handoff", "encounter_id", h.EncounterID, "err", err)
		return
	}
	sh := &bff.StoredHandoff{IntakeID: intakeID, JSON: raw, Terminal: h.Terminal, FetchedAt: hs.Now(), Release: release}
	if err := hs.Store.PutHandoff(context.WithoutCancel(ctx), sh); err != nil {
		hs.Log.Error("store handoff", "encounter_id", h.EncounterID, "err", err)
	}
}

// Decode decodes a stored handoff into the domain type.
func Decode(sh *bff.StoredHandoff) (*bff.Handoff, error) {
	var h intakeapi.Handoff
	if err := json.Unmarshal(sh.JSON, &h); err != nil {
		return nil, fmt.Errorf("decode stored handoff of %s: %w", sh.IntakeID, err)
	}
	return Handoff(&h), nil
}
