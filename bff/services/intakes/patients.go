package intakes

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// StartIntake validates the form and records a new intake owned by owner,
// at once: nothing is sent upstream yet. The intake is created at the
// service together with its first turn, in the queue for the key's budget,
// so starting never waits for a request slot and is never refused for one
// (only a spent quota refuses, when the first turn runs). Submitting the
// same form twice (same SubmissionID) gives the same intake.
func (p *Patients) StartIntake(ctx context.Context, owner string, f bff.StartForm) (*bff.Intake, error) {
	if err := bff.CheckSubmissionID(f.SubmissionID); err != nil {
		return nil, err
	}
	ni, err := f.Validate()
	if err != nil {
		return nil, err
	}
	if p.intakeQuota != nil {
		if err := p.intakeQuota(ctx); err != nil {
			return nil, intakeapi.Describe(err, p.now())
		}
	}
	now := p.now()
	in := &bff.Intake{
		ID:        newIntakeID(owner, f.SubmissionID),
		Owner:     owner,
		CreatedAt: now,
		// Provisional: the service's two hours start when it creates the
		// intake, and its own expiry replaces this one then.
		ExpiresAt: now.Add(bff.IntakeLifetime),
		UpdatedAt: now,
		Status:    bff.StatusOpen,
		AgeYears:  ni.AgeYears,
		Sex:       ni.Sex,
		History:   ni.History,
	}
	if err := p.intakes.CreateIntake(ctx, in); err != nil {
		if bff.ErrorCode(err) == bff.ECONFLICT && f.SubmissionID != "" {
			// The same form again: its intake, if it is this browser's.
			if prev, err2 := p.owned(ctx, owner, in.ID); err2 == nil {
				return prev, nil
			}
		}
		return nil, fmt.Errorf("store new intake: %w", err)
	}
	p.log.Info("intake started", "intake_id", in.ID)
	bff.AnnounceChange(p.feed, in)
	return in, nil
}

// newIntakeID is the app's id of a new intake. With a submission id it is
// derived from the owner and the submission, so a double submission of the
// start form finds the intake the first one made (the store's uniqueness
// decides, on any replica); without one it is random.
func newIntakeID(owner, submissionID string) string {
	if submissionID == "" {
		return "iw_" + randomID() + randomID()[:8]
	}
	sum := sha256.Sum256([]byte("intake\x00" + owner + "\x00" + submissionID))
	return "iw_" + hex.EncodeToString(sum[:12])
}

// bff.Intake returns owner's intake with its turns. Anyone else's intake, or
// one that does not exist, is ENOTFOUND: the two are indistinguishable.
func (p *Patients) Intake(ctx context.Context, owner, id string) (*bff.Intake, []*bff.Turn, error) {
	in, err := p.owned(ctx, owner, id)
	if err != nil {
		return nil, nil, err
	}
	turns, err := p.turns.Turns(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return in, turns, nil
}

// IntakesOf returns owner's intakes, newest first.
func (p *Patients) IntakesOf(ctx context.Context, owner string) ([]*bff.Intake, error) {
	if owner == "" {
		return nil, nil
	}
	ins, err := p.intakes.IntakesByOwner(ctx, owner)
	if err != nil {
		return nil, err
	}
	// The opening message tells one's intakes apart; a browser has a few
	// (intakes per hour are capped), so one small read each.
	for _, in := range ins {
		if t, err := p.turns.Turn(ctx, in.ID, 1); err == nil {
			in.Opening = t.Message
		} else if bff.ErrorCode(err) != bff.ENOTFOUND {
			return nil, err
		}
	}
	return ins, nil
}

func (p *Patients) owned(ctx context.Context, owner, id string) (*bff.Intake, error) {
	notFound := bff.Errorf(bff.ENOTFOUND, "There is no intake at this address for this browser.")
	if owner == "" || id == "" {
		return nil, notFound
	}
	in, err := p.intakes.Intake(ctx, id)
	if bff.ErrorCode(err) == bff.ENOTFOUND || (err == nil && in.Owner != owner) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	bff.MarkExpired(ctx, p.intakes, p.log, in, p.now())
	return in, nil
}

// SendTurn records a patient message as a turn of owner's intake and starts
// it in the background as a streaming turn; it returns at once with the
// queued turn. Sending the same SubmissionID again returns the turn it
// created.
func (p *Patients) SendTurn(ctx context.Context, owner, intakeID, message, submissionID string) (*bff.Turn, error) {
	return p.sendTurn(ctx, owner, intakeID, message, submissionID, false)
}

// SendTurnBlocking is SendTurn for browsers without JavaScript: the turn is
// one blocking call whose Idempotency-Key derives from the submission id, so
// a resubmitted form, a retry or a restart replays it instead of driving the
// engine twice. The caller waits for it with WaitSettled.
func (p *Patients) SendTurnBlocking(ctx context.Context, owner, intakeID, message, submissionID string) (*bff.Turn, error) {
	if submissionID == "" {
		submissionID = "gen_" + randomID()
	}
	return p.sendTurn(ctx, owner, intakeID, message, submissionID, true)
}

func (p *Patients) sendTurn(ctx context.Context, owner, intakeID, message, submissionID string, blocking bool) (*bff.Turn, error) {
	if p.runner.closing.Load() {
		return nil, bff.Errorf(bff.EUNAVAILABLE, "The app is restarting. Please send your message again in a moment; nothing was sent.")
	}
	if err := bff.CheckSubmissionID(submissionID); err != nil {
		return nil, err
	}
	in, err := p.owned(ctx, owner, intakeID)
	if err != nil {
		return nil, err
	}
	// A resubmission is found by CreateTurn's conflict, not by a read first:
	// every statement of the hot path counts (docs/benchmarks.md).
	if refusal := p.refusal(in); refusal != nil {
		if t := p.submitted(ctx, intakeID, submissionID); t != nil {
			return t, nil // the form of the turn that ended it, sent again
		}
		return nil, refusal
	}
	if err := bff.CheckMessage(message); err != nil {
		return nil, err
	}
	now := p.now()
	t := &bff.Turn{IntakeID: intakeID, SubmissionID: submissionID, Message: message, Status: bff.TurnQueued, Blocking: blocking,
		LeaseOwner: p.runner.replica, LeaseUntil: now.Add(p.runner.lease)}
	if err := p.turns.CreateTurn(ctx, t); err != nil {
		if bff.ErrorCode(err) == bff.ECONFLICT && submissionID != "" {
			if prev := p.submitted(ctx, intakeID, submissionID); prev != nil {
				return prev, nil // sent before, or a concurrent double submit won the race
			}
			return nil, bff.Errorf(bff.ECONFLICT, "Your previous message is still being answered; please wait for the reply.")
		}
		return nil, err
	}
	t.RequestID = intakeapi.RequestID(ctx) // the browser request's id follows the turn
	p.runner.start(t, in)
	return t, nil
}

// refusal is why in takes no more messages, nil when it does.
func (p *Patients) refusal(in *bff.Intake) error {
	switch {
	case in.Terminal || in.Status == bff.StatusClosed:
		// The spec's rule 3: after terminal, nothing is sent upstream.
		return bff.Errorf(bff.ECONFLICT, "This intake has ended; no more messages can be sent.")
	case in.Status == bff.StatusExpired:
		return bff.Errorf(bff.EGONE, "This intake passed its two-hour limit. Start a new intake; this one stays readable.")
	}
	return nil
}

// submitted is the turn a submission id made, nil if none (or no id).
func (p *Patients) submitted(ctx context.Context, intakeID, submissionID string) *bff.Turn {
	if submissionID == "" {
		return nil
	}
	t, err := p.turns.TurnBySubmission(ctx, intakeID, submissionID)
	if err != nil {
		return nil
	}
	return t
}

// bff.Turn returns a turn of owner's intake, with the intake.
func (p *Patients) Turn(ctx context.Context, owner, intakeID string, index int) (*bff.Intake, *bff.Turn, error) {
	in, err := p.owned(ctx, owner, intakeID)
	if err != nil {
		return nil, nil, err
	}
	t, err := p.turns.Turn(ctx, intakeID, index)
	if err != nil {
		return nil, nil, err
	}
	return in, t, nil
}

// WaitSettled blocks until the turn's stream publishes its final or failed
// event, the stream ends, or ctx ends.
func (p *Patients) WaitSettled(ctx context.Context, intakeID string, index int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, found := p.hub.Follow(ctx, bff.TurnKey(intakeID, index), 0)
	if !found {
		return
	}
	for ev := range events {
		if ev.Name == bff.EventFinal || ev.Name == bff.EventFailed {
			return
		}
	}
}

// CheckRetry allows sending a failed turn's text again only while that turn
// is the intake's last and is known not to have landed.
func (p *Patients) CheckRetry(ctx context.Context, owner, intakeID string, index int) error {
	if _, err := p.owned(ctx, owner, intakeID); err != nil {
		return err
	}
	turns, err := p.turns.Turns(ctx, intakeID)
	if err != nil {
		return err
	}
	if n := len(turns); n == 0 || turns[n-1].Index != index || !turns[n-1].Retryable() {
		return bff.Errorf(bff.ECONFLICT, "This message was already sent again, or something was sent after it.")
	}
	return nil
}

// FollowTurn delivers the turn's events after after, then live ones.
func (p *Patients) FollowTurn(ctx context.Context, intakeID string, index int, after int64) (<-chan bff.Event, bool) {
	return p.hub.Follow(ctx, bff.TurnKey(intakeID, index), after)
}

// randomID is 16 random hex digits.
func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
