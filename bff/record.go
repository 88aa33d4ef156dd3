package bff

import (
	"context"
	"log/slog"
	"time"
)

// Record appends to the audit log. A failure is logged, not returned: the
// action itself has happened, and refusing it now would not undo it.
func Record(ctx context.Context, audit AuditStore, log *slog.Logger, at time.Time, actor, action, intakeID, detail string) {
	e := &AuditEntry{At: at, Actor: actor, Action: action, IntakeID: intakeID, Detail: detail}
	if err := audit.AddAudit(context.WithoutCancel(ctx), e); err != nil {
		log.Error("audit write failed", "action", action, "actor", actor, "err", err)
	}
}

// MarkExpired records that an open intake passed its expires_at, which the
// service reports as expired from then on. A failed write is logged: the
// intake is shown as expired either way.
func MarkExpired(ctx context.Context, intakes IntakeStore, log *slog.Logger, in *Intake, now time.Time) {
	if in.Status == StatusOpen && !now.Before(in.ExpiresAt) {
		in.Status, in.UpdatedAt = StatusExpired, now
		if err := intakes.UpdateIntake(ctx, in); err != nil {
			log.Error("record expiry", "intake_id", in.ID, "err", err)
		}
	}
}
