package intakes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/upstream"
)

// creation is one intake being created, shared by a double submission.
type creation struct {
	done chan struct{}
	in   *bff.Intake
	err  error
	at   time.Time
}

// StartIntake validates the form, creates the intake upstream and records it
// as owned by owner. Submitting the same form twice (same SubmissionID) gives
// the same intake.
func (p *Patients) StartIntake(ctx context.Context, owner string, f bff.StartForm) (*bff.Intake, error) {
	if err := bff.CheckSubmissionID(f.SubmissionID); err != nil {
		return nil, err
	}
	ni, err := f.Validate()
	if err != nil {
		return nil, err
	}
	key := owner + "\x00" + f.SubmissionID
	p.mu.Lock()
	for k, c := range p.creating { // forget old submissions
		if p.now().Sub(c.at) > 10*time.Minute {
			delete(p.creating, k)
		}
	}
	if c := p.creating[key]; c != nil && f.SubmissionID != "" {
		p.mu.Unlock()
		select {
		case <-c.done:
			return c.in, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &creation{done: make(chan struct{}), at: p.now()}
	p.creating[key] = c
	p.mu.Unlock()

	c.in, c.err = p.createIntake(ctx, owner, ni)
	if c.err != nil {
		p.mu.Lock()
		delete(p.creating, key) // a failed attempt may be submitted again
		p.mu.Unlock()
	}
	close(c.done)
	return c.in, c.err
}

func (p *Patients) createIntake(ctx context.Context, owner string, ni bff.NewIntake) (*bff.Intake, error) {
	var last atomic.Pointer[intakeapi.Progress]
	wctx, cancel := context.WithTimeout(ctx, p.createWait)
	defer cancel()
	wctx = intakeapi.WithProgress(intakeapi.WithPriority(wctx, intakeapi.PriorityCreateIntake), func(p intakeapi.Progress) { last.Store(&p) })
	up, meta, err := p.client.CreateIntake(wctx, intakeapi.NewIntake{AgeYears: ni.AgeYears, Sex: intakeapi.Sex(ni.Sex), PatientHistory: ni.History})
	if err != nil {
		p.log.Warn("create intake failed upstream", "err", err)
		if p := last.Load(); p != nil && wctx.Err() != nil && ctx.Err() == nil {
			// Still queued when the wait ran out: nothing was sent.
			return nil, &bff.Error{Code: bff.ERATELIMIT, Message: fmt.Sprintf(
				"The intake service is busy: the service key's requests for the next minute are taken (you were number %d in line, about %d s to go). Nothing was sent and your answers are kept: press Start intake again in a minute.",
				p.Position, int(math.Ceil(p.Wait.Seconds())))}
		}
		return nil, upstream.Describe(err, p.now())
	}
	in := &bff.Intake{
		ID:        up.EncounterID,
		Owner:     owner,
		CreatedAt: up.CreatedAt,
		ExpiresAt: up.ExpiresAt,
		UpdatedAt: p.now(),
		Status:    string(up.Status),
		AgeYears:  ni.AgeYears,
		Sex:       ni.Sex,
		History:   ni.History,
		Release:   meta.Release,
	}
	if err := p.intakes.CreateIntake(ctx, in); err != nil {
		return nil, fmt.Errorf("store new intake: %w", err)
	}
	p.log.Info("intake created", "encounter_id", in.ID, "release", meta.Release)
	bff.AnnounceChange(p.feed, in)
	return in, nil
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
	if submissionID != "" {
		if t, err := p.turns.TurnBySubmission(ctx, intakeID, submissionID); err == nil {
			return t, nil
		} else if bff.ErrorCode(err) != bff.ENOTFOUND {
			return nil, err
		}
	}
	switch {
	case in.Terminal || in.Status == bff.StatusClosed:
		// The spec's rule 3: after terminal, nothing is sent upstream.
		return nil, bff.Errorf(bff.ECONFLICT, "This intake has ended; no more messages can be sent.")
	case in.Status == bff.StatusExpired:
		return nil, bff.Errorf(bff.EGONE, "This intake passed its two-hour limit. Start a new intake; this one stays readable.")
	}
	if err := bff.CheckMessage(message); err != nil {
		return nil, err
	}
	t := &bff.Turn{IntakeID: intakeID, SubmissionID: submissionID, Message: message, Status: bff.TurnQueued, Blocking: blocking}
	if err := p.turns.CreateTurn(ctx, t); err != nil {
		if bff.ErrorCode(err) == bff.ECONFLICT && submissionID != "" {
			if prev, err2 := p.turns.TurnBySubmission(ctx, intakeID, submissionID); err2 == nil {
				return prev, nil // a concurrent double submit won the race
			}
			return nil, bff.Errorf(bff.ECONFLICT, "Your previous message is still being answered; please wait for the reply.")
		}
		return nil, err
	}
	t.RequestID = intakeapi.RequestID(ctx) // the browser request's id follows the turn
	p.runner.start(t)
	return t, nil
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
