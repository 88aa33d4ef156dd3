// Accepting turns: the checks before anything is sent upstream, the events a
// turn publishes, and reading turns back.

package bff

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
)

// The events a turn publishes to the relay: the browser's stream carries
// them under these names (package web adds rendered HTML to the last one).
const (
	EventQueued    = "queued"    // QueuedData: waiting for the pacer
	EventStarted   = "started"   // {}: the upstream reply has begun
	EventDelta     = "delta"     // DeltaData: the next fragment of the reply
	EventCompleted = "completed" // CompletedData: reply text complete
	EventCompiling = "compiling" // CompilingData: the handoff is compiling
	EventProgress  = "progress"  // ProgressData
	EventFinal     = "final"     // SettledData: the turn completed
	EventFailed    = "failed"    // SettledData: the turn did not land
)

// Event payloads.
type (
	QueuedData struct {
		Position    int `json:"position"`
		WaitSeconds int `json:"wait_seconds"`
	}
	DeltaData struct {
		Text string `json:"text"`
	}
	CompletedData struct {
		ElapsedMS int64 `json:"elapsed_ms"`
	}
	CompilingData struct {
		Terminal bool `json:"terminal"`
	}
	ProgressData struct {
		Chars int `json:"chars"`
	}
	SettledData struct {
		Index   int    `json:"index"`
		Status  string `json:"status"`
		Message string `json:"message,omitempty"` // for failed turns
	}
)

// SendTurn records a patient message as a turn of owner's intake and starts
// it in the background as a streaming turn; it returns at once with the
// queued turn. Sending the same SubmissionID again returns the turn it
// created.
func (s *Service) SendTurn(ctx context.Context, owner, intakeID, message, submissionID string) (*Turn, error) {
	return s.sendTurn(ctx, owner, intakeID, message, submissionID, false)
}

// SendTurnBlocking is SendTurn for browsers without JavaScript: the turn is
// one blocking call whose Idempotency-Key derives from the submission id, so
// a resubmitted form, a retry or a restart replays it instead of driving the
// engine twice. The caller waits for it with WaitSettled.
func (s *Service) SendTurnBlocking(ctx context.Context, owner, intakeID, message, submissionID string) (*Turn, error) {
	if submissionID == "" {
		submissionID = "gen_" + randomID()
	}
	return s.sendTurn(ctx, owner, intakeID, message, submissionID, true)
}

func (s *Service) sendTurn(ctx context.Context, owner, intakeID, message, submissionID string, blocking bool) (*Turn, error) {
	if s.closing.Load() {
		return nil, Errorf(EUNAVAILABLE, "The app is restarting. Please send your message again in a moment; nothing was sent.")
	}
	if err := checkSubmissionID(submissionID); err != nil {
		return nil, err
	}
	in, err := s.owned(ctx, owner, intakeID)
	if err != nil {
		return nil, err
	}
	if submissionID != "" {
		if t, err := s.turns.TurnBySubmission(ctx, intakeID, submissionID); err == nil {
			return t, nil
		} else if ErrorCode(err) != ENOTFOUND {
			return nil, err
		}
	}
	switch {
	case in.Terminal || in.Status == StatusClosed:
		// The spec's rule 3: after terminal, nothing is sent upstream.
		return nil, Errorf(ECONFLICT, "This intake has ended; no more messages can be sent.")
	case in.Status == StatusExpired:
		return nil, Errorf(EGONE, "This intake passed its two-hour limit. Start a new intake; this one stays readable.")
	}
	if err := checkMessage(message); err != nil {
		return nil, err
	}
	t := &Turn{IntakeID: intakeID, SubmissionID: submissionID, Message: message, Status: TurnQueued, Blocking: blocking}
	if err := s.turns.CreateTurn(ctx, t); err != nil {
		if ErrorCode(err) == ECONFLICT && submissionID != "" {
			if prev, err2 := s.turns.TurnBySubmission(ctx, intakeID, submissionID); err2 == nil {
				return prev, nil // a concurrent double submit won the race
			}
			return nil, Errorf(ECONFLICT, "Your previous message is still being answered; please wait for the reply.")
		}
		return nil, err
	}
	t.requestID = intakeapi.RequestID(ctx) // the browser request's id follows the turn
	s.start(t)
	return t, nil
}

// checkMessage applies the service's message rule (1 to 8,000 characters)
// and refuses a blank message, which no patient means to send.
func checkMessage(m string) error {
	n := utf8.RuneCountInString(m)
	switch {
	case strings.TrimSpace(m) == "":
		return Invalid("message", "Type a message before sending.")
	case n > MaxMessageChars:
		return Invalid("message", "Your message is %s characters; the limit is %s. Please shorten it.", thousands(n), thousands(MaxMessageChars))
	}
	return nil
}

// Turn returns a turn of owner's intake, with the intake.
func (s *Service) Turn(ctx context.Context, owner, intakeID string, index int) (*Intake, *Turn, error) {
	in, err := s.owned(ctx, owner, intakeID)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.turns.Turn(ctx, intakeID, index)
	if err != nil {
		return nil, nil, err
	}
	return in, t, nil
}

// WaitSettled blocks until the turn's stream publishes its final or failed
// event, the stream ends, or ctx ends.
func (s *Service) WaitSettled(ctx context.Context, intakeID string, index int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, found := s.hub.Follow(ctx, TurnKey(intakeID, index), 0)
	if !found {
		return
	}
	for ev := range events {
		if ev.Name == EventFinal || ev.Name == EventFailed {
			return
		}
	}
}

// CheckRetry allows sending a failed turn's text again only while that turn
// is the intake's last and is known not to have landed.
func (s *Service) CheckRetry(ctx context.Context, owner, intakeID string, index int) error {
	if _, err := s.owned(ctx, owner, intakeID); err != nil {
		return err
	}
	turns, err := s.turns.Turns(ctx, intakeID)
	if err != nil {
		return err
	}
	if n := len(turns); n == 0 || turns[n-1].Index != index || !turns[n-1].Retryable() {
		return Errorf(ECONFLICT, "This message was already sent again, or something was sent after it.")
	}
	return nil
}

// Codes of failed turns set by the app itself (others are the service's).
const (
	CodeNotLanded   = "not_landed"  // reconciliation proved it did not land
	CodeUnconfirmed = "unconfirmed" // the handoff could not be read to tell
)

// Retryable reports whether a failed turn is known not to have landed, so
// sending its text again cannot make the engine see it twice.
func (t *Turn) Retryable() bool {
	if t.Status != TurnFailed {
		return false
	}
	switch t.ErrorCode {
	case CodeNotLanded, string(intakeapi.CodeRateLimited), string(intakeapi.CodeTurnInProgress):
		return true
	}
	return false
}
