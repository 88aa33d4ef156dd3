// Settling turns: recording what the service answered, and reconciling from
// the handoff whenever the answer is missing, failed or incomplete.

package bff

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
)

// settleRefused settles a turn whose upstream call failed before a stream
// started. A 4xx means it was not applied; anything else (5xx, no answer)
// is reconciled from the handoff, as DESIGN.md decision 4 asks.
func (s *Service) settleRefused(ctx context.Context, t *Turn, err error) {
	if s.abandoned(ctx, t) {
		return
	}
	ae, isAPI := intakeapi.AsError(err)
	switch {
	case isAPI && ae.Code == intakeapi.CodeIntakeClosed:
		s.refreshClosed(ctx, t.IntakeID, StatusClosed)
	case isAPI && ae.Code == intakeapi.CodeIntakeExpired:
		s.refreshClosed(ctx, t.IntakeID, StatusExpired)
	case isAPI && ae.Status >= 500, errors.Is(err, intakeapi.ErrTransport):
		s.reconcile(ctx, t)
		return
	}
	s.fail(ctx, t, codeOf(err), ErrorMessage(upstreamError(err, s.now())))
}

func codeOf(err error) string {
	if ae, ok := intakeapi.AsError(err); ok && ae.Code != "" {
		return string(ae.Code)
	}
	return ErrorCode(upstreamError(err, time.Time{}))
}

// complete records a turn the service answered in full.
func (s *Service) complete(ctx context.Context, t *Turn, up *intakeapi.Turn, release string) {
	now := s.now()
	t.Status, t.CompletedAt, t.Release = TurnCompleted, &now, release
	t.Reply, t.Choices = up.AssistantMessage, up.Choices
	t.Terminal, t.Urgent = up.Terminal, up.Urgent
	t.SafetyStatus, t.Disposition, t.DispositionLabel = str(up.SafetyStatus), str(up.Disposition), up.DispositionLabel
	if err := s.turns.UpdateTurn(ctx, t); err != nil {
		s.log.Error("record completed turn", "encounter_id", t.IntakeID, "turn", t.Index, "err", err)
	}
	s.count(TurnCompleted)
	in, err := s.intakes.Intake(ctx, t.IntakeID)
	if err != nil {
		s.log.Error("load intake to record a turn", "encounter_id", t.IntakeID, "err", err)
		s.hub.Publish(TurnKey(t.IntakeID, t.Index), EventFinal, SettledData{Index: t.Index, Status: string(t.Status)})
		return
	}
	in.TurnCount, in.Release, in.UpdatedAt = up.TurnIndex, release, now
	in.Urgent = up.Urgent
	if up.Terminal {
		in.Terminal, in.Status = true, StatusClosed
	}
	if up.NeedsReconcile() {
		// The turn landed but its state read failed: the handoff has the state.
		s.log.Warn("turn completed with null state; reading the handoff", "encounter_id", t.IntakeID, "turn", t.Index)
		if h := s.readHandoff(ctx, t.IntakeID); h != nil {
			applyHandoffState(in, h)
		}
	} else {
		in.SafetyStatus, in.Disposition, in.DispositionLabel = deref(t.SafetyStatus), deref(t.Disposition), deref(t.DispositionLabel)
	}
	if up.Terminal && up.Handoff != nil {
		s.storeHandoff(ctx, up.Handoff, release)
		if in.ActiveProtocol == "" && up.Handoff.ActiveProtocol != nil {
			in.ActiveProtocol = *up.Handoff.ActiveProtocol
		}
	}
	if err := s.intakes.UpdateIntake(ctx, in); err != nil {
		s.log.Error("record intake after a turn", "encounter_id", t.IntakeID, "err", err)
	}
	s.changed(in)
	s.hub.Publish(TurnKey(t.IntakeID, t.Index), EventFinal, SettledData{Index: t.Index, Status: string(t.Status)})
}

// reconcile reads the handoff and settles t from it: if the conversation
// holds t's message where t would be, t landed and its reply is taken from
// there; otherwise t is failed and may be retried.
func (s *Service) reconcile(ctx context.Context, t *Turn) {
	if s.abandoned(ctx, t) {
		return
	}
	h := s.readHandoff(ctx, t.IntakeID)
	if h == nil {
		s.fail(ctx, t, CodeUnconfirmed, "We could not confirm whether your message reached the intake service. Please reload in a moment.")
		return
	}
	prior, err := s.completedBefore(ctx, t)
	if err != nil {
		s.log.Error("count completed turns", "encounter_id", t.IntakeID, "err", err)
		s.fail(ctx, t, "internal", "Something went wrong on our side while sending your message.")
		return
	}
	reply, landed := landedReply(h.Conversation, prior, t.Message)
	s.reconciled.Add(1)
	if !landed {
		s.fail(ctx, t, CodeNotLanded, "Your message did not reach the intake service. You can send it again.")
		return
	}
	up := &intakeapi.Turn{
		EncounterID:      t.IntakeID,
		TurnIndex:        prior + 1,
		AssistantMessage: reply,
		Choices:          []string{}, // the handoff does not carry quick replies
		Terminal:         h.Terminal,
		Urgent:           h.Urgent,
		SafetyStatus:     h.SafetyStatus,
		Disposition:      h.Disposition,
		DispositionLabel: h.DispositionLabel,
	}
	if h.Terminal {
		up.Handoff = h
	}
	s.log.Info("turn reconciled: it landed", "encounter_id", t.IntakeID, "turn", t.Index)
	s.complete(ctx, t, up, t.Release)
}

// abandoned reports whether the app is stopping past its grace period: the
// turn stays pending in the store, and the next start settles it (Recover).
func (s *Service) abandoned(ctx context.Context, t *Turn) bool {
	if ctx.Err() == nil {
		return false
	}
	s.log.Warn("turn abandoned at shutdown; the next start settles it", "encounter_id", t.IntakeID, "turn", t.Index)
	return true
}

// landedReply finds, after the first prior patient messages, the patient
// message m and the assistant reply that follows it.
func landedReply(conv []intakeapi.Message, prior int, m string) (string, bool) {
	seen := 0
	for i, msg := range conv {
		if msg.Role != intakeapi.RolePatient {
			continue
		}
		if seen == prior {
			if msg.Text != m {
				return "", false
			}
			for _, next := range conv[i+1:] {
				if next.Role == intakeapi.RoleAssistant {
					return next.Text, true
				}
				break
			}
			return "", true
		}
		seen++
	}
	return "", false
}

func (s *Service) completedBefore(ctx context.Context, t *Turn) (int, error) {
	turns, err := s.turns.Turns(ctx, t.IntakeID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range turns {
		if o.Index < t.Index && o.Status == TurnCompleted {
			n++
		}
	}
	return n, nil
}

// readHandoff reads the handoff at reconciliation priority, a few times if
// the service is struggling; nil when it could not be read.
func (s *Service) readHandoff(ctx context.Context, id string) *intakeapi.Handoff {
	rctx := intakeapi.WithPriority(ctx, intakeapi.PriorityReconciliation)
	for attempt := 1; attempt <= 3; attempt++ {
		h, meta, err := s.client.Handoff(rctx, id)
		if err == nil {
			if h.Terminal {
				s.storeHandoff(ctx, h, meta.Release)
			}
			return h
		}
		s.log.Warn("reading the handoff failed", "encounter_id", id, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
	return nil
}

func (s *Service) storeHandoff(ctx context.Context, h *intakeapi.Handoff, release string) {
	raw, err := []byte(h.Raw), error(nil)
	if len(raw) == 0 { // a handoff we built (reconciliation), not one received
		raw, err = json.Marshal(h)
	}
	if err != nil {
		s.log.Error("encode handoff", "encounter_id", h.EncounterID, "err", err)
		return
	}
	sh := &StoredHandoff{IntakeID: h.EncounterID, JSON: raw, Terminal: h.Terminal, FetchedAt: s.now(), Release: release}
	if err := s.handoffs.PutHandoff(ctx, sh); err != nil {
		s.log.Error("store handoff", "encounter_id", h.EncounterID, "err", err)
	}
}

// refreshClosed records that the service reported the intake closed or
// expired, with the state from its handoff.
func (s *Service) refreshClosed(ctx context.Context, id, status string) {
	in, err := s.intakes.Intake(ctx, id)
	if err != nil {
		return
	}
	in.Status, in.Terminal, in.UpdatedAt = status, status == StatusClosed, s.now()
	if h := s.readHandoff(ctx, id); h != nil {
		applyHandoffState(in, h)
	}
	if err := s.intakes.UpdateIntake(ctx, in); err != nil {
		s.log.Error("record closed intake", "encounter_id", id, "err", err)
	}
}

func applyHandoffState(in *Intake, h *intakeapi.Handoff) {
	in.SafetyStatus, in.Disposition, in.DispositionLabel = deref(str(h.SafetyStatus)), deref(str(h.Disposition)), deref(h.DispositionLabel)
	in.Urgent = h.Urgent
	if h.Terminal && in.Status == StatusOpen {
		in.Status = StatusClosed
	}
	in.Terminal = in.Terminal || (h.Terminal && in.Status == StatusClosed)
	if h.ActiveProtocol != nil {
		in.ActiveProtocol = *h.ActiveProtocol
	}
	turns := 0
	for _, m := range h.Conversation {
		if m.Role == intakeapi.RolePatient {
			turns++
		}
	}
	in.TurnCount = turns
}

// fail marks t failed with a message the patient can read.
func (s *Service) fail(ctx context.Context, t *Turn, code, message string) {
	now := s.now()
	t.Status, t.ErrorCode, t.ErrorMessage, t.CompletedAt = TurnFailed, code, message, &now
	if err := s.turns.UpdateTurn(ctx, t); err != nil {
		s.log.Error("record failed turn", "encounter_id", t.IntakeID, "turn", t.Index, "err", err)
	}
	s.count(TurnFailed)
	s.hub.Publish(TurnKey(t.IntakeID, t.Index), EventFailed, SettledData{Index: t.Index, Status: string(t.Status), Message: message})
}

// str turns a typed nullable string into a plain one.
func str[T ~string](p *T) *string {
	if p == nil {
		return nil
	}
	v := string(*p)
	return &v
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
