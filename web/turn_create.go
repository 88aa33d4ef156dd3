package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/templates"
)

// createTurn sends a patient message. With JavaScript (Accept: JSON) it
// answers 202 at once with the turn's events URL and the rendered pending
// exchange, and the turn streams. Without, the turn is a blocking call with
// an Idempotency-Key; the handler waits for it and redirects back to the
// conversation (post-redirect-get). A refused message is shown again in the
// box with the reason beside it.
func (s *Server) createTurn(c *fiber.Ctx) error {
	id := param(c, "id")
	message := utils.CopyString(c.FormValue("message"))
	submission := utils.CopyString(c.FormValue("submission_id"))
	owner := s.owner(c, false)
	if of := c.FormValue("retry_of"); of != "" {
		// A "Send again" form: only while its turn is still the last one and
		// known not to have landed (a second click or a stale tab would
		// otherwise send the message twice).
		n, _ := strconv.Atoi(of)
		if err := s.patients.CheckRetry(c.UserContext(), owner, id, n); err != nil {
			if !wantsJSON(c) && bff.ErrorCode(err) == bff.ECONFLICT {
				return c.Redirect("/intakes/"+id, http.StatusSeeOther)
			}
			return err
		}
	}
	refund, err := s.takeTurnSlot(owner)
	if err != nil {
		if wantsJSON(c) {
			return err
		}
		return s.refusedTurnPage(c, owner, id, message, err)
	}
	if wantsJSON(c) {
		t, err := s.patients.SendTurn(c.UserContext(), owner, id, message, submission)
		if err != nil {
			refund()
			return s.unsaved(err)
		}
		html, ferr := fragment(c.UserContext(), templates.TurnItem(turnView(t, s.csrfToken(c))))
		if ferr != nil {
			return ferr
		}
		return c.Status(http.StatusAccepted).JSON(fiber.Map{
			"index": t.Index, "status": t.Status, "events_url": eventsURL(id, t.Index), "turn_html": html,
		})
	}
	// Without a script to follow a stream, the turn is one blocking call
	// keyed by the form's submission id: a resubmitted form replays it.
	t, err := s.patients.SendTurnBlocking(c.UserContext(), owner, id, message, submission)
	if err != nil {
		refund()
		return s.refusedTurnPage(c, owner, id, message, s.unsaved(err))
	}
	// No script will follow the stream: wait for the reply (a turn takes up
	// to the gateway's 240 s), then show the page.
	ctx, cancel := context.WithTimeout(c.UserContext(), 5*time.Minute)
	defer cancel()
	s.patients.WaitSettled(ctx, id, t.Index)
	return c.Redirect("/intakes/"+id+"#turn-"+itoa(t.Index), http.StatusSeeOther)
}

// refusedTurnPage shows the conversation again with the refused message in
// the box and the reason beside it.
func (s *Server) refusedTurnPage(c *fiber.Ctx, owner, id, message string, err error) error {
	if code := bff.ErrorCode(err); code == bff.ENOTFOUND || code == bff.EINTERNAL {
		return err
	}
	in, turns, lerr := s.patients.Intake(c.UserContext(), owner, id)
	if lerr != nil {
		return lerr
	}
	page := s.intakePage(c.UserContext(), s.layout(c, "Intake conversation"), in, turns, s.now())
	page.Composer.Message, page.Composer.Error = message, bff.ErrorMessage(err)
	return render(c, refusal(c, err), templates.IntakePageView(page))
}

// takeTurnSlot spends one of the session's turns per minute; the refund is
// for a turn that was then refused.
func (s *Server) takeTurnSlot(owner string) (refund func(), err error) {
	refund, wait := s.caps.turns.take(owner, s.now())
	if wait > 0 {
		return nil, bff.Errorf(bff.ERATELIMIT,
			"You are sending messages faster than this app allows (%d a minute from one browser). Wait %s, then send again: your message is kept.",
			s.cfg.Limits.TurnsPerMinute, waitWords(wait))
	}
	return refund, nil
}
