package web

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// The mapping from bff's domain types to templates' view types. State fields
// pass through unchanged: nothing here computes or overrides them.

func turnsURL(intakeID string) string { return "/intakes/" + intakeID + "/turns" }

func eventsURL(intakeID string, index int) string {
	return fmt.Sprintf("/intakes/%s/turns/%d/events", intakeID, index)
}

func turnView(t *bff.Turn, csrf string) templates.TurnView {
	v := templates.TurnView{
		Index:        t.Index,
		Message:      t.Message,
		Reply:        t.Reply,
		Status:       string(t.Status),
		Pending:      t.Status.Pending(),
		Failed:       t.Status == bff.TurnFailed,
		ErrorMessage: t.ErrorMessage,
	}
	if v.Pending {
		v.EventsURL = eventsURL(t.IntakeID, t.Index)
	}
	return v
}

// withRetry offers "Send again" on a failed turn known not to have landed,
// when it is the intake's last turn and the intake is open: once anything
// was sent after it, sending it again would make the message a duplicate.
func withRetry(v templates.TurnView, t *bff.Turn, last bool, in *bff.Intake, csrf string, now time.Time) templates.TurnView {
	if last && t.Retryable() && in.Open(now) {
		v.Retry = templates.RetryForm{Action: turnsURL(t.IntakeID), CSRF: csrf, SubmissionID: newSubmissionID(), Of: t.Index}
	}
	return v
}

func stateView(in *bff.Intake) templates.StateView {
	return templates.StateView{
		Urgent:           in.Urgent,
		SafetyStatus:     in.SafetyStatus,
		DispositionLabel: in.DispositionLabel,
		Disposition:      in.Disposition,
		Terminal:         in.Terminal,
	}
}

// composerView is the message box for in; turns decide the quick replies
// (the last completed turn's choices) and whether a turn is still running.
func composerView(in *bff.Intake, turns []*bff.Turn, csrf string, now time.Time) templates.ComposerView {
	busy, choices := nextReplies(turns)
	return composerFor(in, busy, choices, csrf, now)
}

// nextReplies reports whether a turn is still running and, if not, the
// quick replies in force: the last completed turn's choices.
func nextReplies(turns []*bff.Turn) (busy bool, choices []string) {
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		if t.Status.Pending() {
			busy = true
		}
		if t.Status == bff.TurnCompleted {
			if !busy {
				choices = t.Choices
			}
			break
		}
	}
	return busy, choices
}

// composerFor is the message box for in.
func composerFor(in *bff.Intake, busy bool, choices []string, csrf string, now time.Time) templates.ComposerView {
	return templates.ComposerView{
		Open:         in.Open(now),
		Action:       turnsURL(in.ID),
		CSRF:         csrf,
		SubmissionID: newSubmissionID(),
		NewIntakeURL: "/",
		MaxChars:     bff.MaxMessageChars,
		Note:         composerNote(in, now),
		Busy:         busy,
		Choices:      choices,
	}
}

// composerNote says, where the message box was, why it is gone (the head
// explains the state at length).
func composerNote(in *bff.Intake, now time.Time) string {
	if emergency(in) {
		return "No more messages can be sent here."
	}
	if in.Status == bff.StatusExpired || (!in.Terminal && in.Status != bff.StatusClosed && !now.Before(in.ExpiresAt)) {
		return "No more messages can be sent: this intake expired. Its conversation stays readable here."
	}
	return "No more messages can be sent: this intake is complete."
}

func statusNote(in *bff.Intake, now time.Time) string {
	switch {
	case emergency(in):
		// The emergency card says what to do; nothing here may suggest
		// waiting for a clinician.
		if in.Terminal || in.Status == bff.StatusClosed {
			return "This intake has ended. Follow the urgent advice at the top of this page now."
		}
		return ""
	case in.Terminal || in.Status == bff.StatusClosed:
		return "This intake has ended, so no more messages can be sent: next, a clinician reads the summary of this conversation, and you do not need to do anything more here."
	case in.Status == bff.StatusExpired || !now.Before(in.ExpiresAt):
		return "This intake expired: it passed the service's two-hour session limit before it was complete. What was said stays readable; start a new intake to continue."
	case in.EncounterID == "":
		return "Your intake starts at the intake service with your first message. If the service is busy, you will see your place in the queue while it waits."
	}
	return ""
}

// emergency reports whether the intake is urgent or its disposition, as
// received, is an escalation (urgent_escalation and the like): its page
// leads with the engine's instruction. Nothing is recomputed: both are the
// service's own words.
func emergency(in *bff.Intake) bool {
	return in.Urgent || strings.Contains(in.Disposition, "escalation")
}

// emergencyView is the emergency card: the reply of the last completed turn
// (the one that made the intake urgent), unedited.
func emergencyView(in *bff.Intake, turns []*bff.Turn) templates.EmergencyView {
	if !emergency(in) {
		return templates.EmergencyView{}
	}
	for i := len(turns) - 1; i >= 0; i-- {
		if t := turns[i]; t.Status == bff.TurnCompleted && t.Reply != "" {
			return templates.EmergencyView{Show: true, Message: t.Reply, DispositionLabel: in.DispositionLabel}
		}
	}
	return templates.EmergencyView{Show: true, DispositionLabel: in.DispositionLabel}
}

func timeLeft(in *bff.Intake, now time.Time) string {
	if !in.Open(now) {
		return ""
	}
	d := in.ExpiresAt.Sub(now)
	if d < time.Minute {
		return "less than a minute left"
	}
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h == 0 {
		return strconv.Itoa(m) + " min left"
	}
	return fmt.Sprintf("%d h %d min left", h, m)
}

func (s *Server) intakePage(ctx context.Context, layout templates.Layout, in *bff.Intake, turns []*bff.Turn, now time.Time) templates.IntakePage {
	p := templates.IntakePage{
		Layout:     layout,
		ID:         in.ID,
		URL:        "/intakes/" + in.ID,
		Status:     in.Status,
		StatusNote: statusNote(in, now),
		TimeLeft:   timeLeft(in, now),
		ExpiresAt:  in.ExpiresAt.UTC().Format(time.RFC3339),
		State:      stateView(in),
		Emergency:  emergencyView(in, turns),
		Composer:   composerView(in, turns, layout.CSRF, now),
	}
	for i, t := range turns {
		tv := withRetry(turnView(t, layout.CSRF), t, i == len(turns)-1, in, layout.CSRF, now)
		if tv.Pending {
			p.EventsURL = tv.EventsURL
			tv.Queue = s.queueNote(ctx, t)
		}
		p.Turns = append(p.Turns, tv)
	}
	return p
}

func intakeLinks(ins []*bff.Intake) []templates.IntakeLink {
	out := make([]templates.IntakeLink, 0, len(ins))
	for _, in := range ins {
		opening, full := shorten(in.Opening, openingChars)
		out = append(out, templates.IntakeLink{
			URL:              "/intakes/" + in.ID,
			Opening:          opening,
			OpeningFull:      full,
			ActiveProtocol:   in.ActiveProtocol,
			Created:          in.CreatedAt.UTC().Format("2 Jan 2006, 15:04 UTC"),
			Status:           in.Status,
			DispositionLabel: in.DispositionLabel,
			Urgent:           in.Urgent,
			Turns:            in.TurnCount,
		})
	}
	return out
}

func newSubmissionID() string { return "sub_" + randomHex(12) }
