package bff

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
)

// Limits of the start form, mirroring the service's (spec, Limits) so that
// no bad request reaches it.
const (
	MaxAge          = 130
	MaxHistoryChars = 4000
	MaxMessageChars = 8000
	// MaxSubmissionIDBytes bounds the form's submission id, which is kept
	// with each turn (and, for a start, in memory for ten minutes). The app
	// makes them 28 bytes ("sub_" and 24 hex digits); anything much longer
	// was not made by the app's forms, and is refused before it is stored.
	MaxSubmissionIDBytes = 128
)

// checkSubmissionID applies MaxSubmissionIDBytes.
func checkSubmissionID(id string) error {
	if len(id) > MaxSubmissionIDBytes {
		return Invalid("submission_id", "The form's submission id is %s bytes; the limit is %d. Reload the page for a fresh form.", thousands(len(id)), MaxSubmissionIDBytes)
	}
	return nil
}

// StartForm is the start page's form as the browser sent it.
type StartForm struct {
	Age          string
	Sex          string
	History      string
	Synthetic    bool
	SubmissionID string
}

// FormError is an EINVALID error about several fields at once.
type FormError struct {
	Fields map[string]string // form field -> message
}

func (e *FormError) Error() string { return fmt.Sprintf("invalid form: %d field(s)", len(e.Fields)) }

// validate returns the request the form describes, or a *FormError naming
// every field at fault.
func (f StartForm) validate() (intakeapi.NewIntake, error) {
	var ni intakeapi.NewIntake
	bad := map[string]string{}
	if a := strings.TrimSpace(f.Age); a != "" {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 || n > MaxAge {
			bad["age"] = fmt.Sprintf("Age must be a whole number from 0 to %d, or left empty.", MaxAge)
		} else {
			ni.AgeYears = &n
		}
	}
	switch f.Sex {
	case "", "female", "male", "intersex":
		ni.Sex = intakeapi.Sex(f.Sex)
	default:
		bad["sex"] = "Sex must be female, male, intersex, or left unanswered."
	}
	if n := utf8.RuneCountInString(f.History); n > MaxHistoryChars {
		bad["history"] = fmt.Sprintf("Medical history must be at most %s characters; it has %s.", thousands(MaxHistoryChars), thousands(n))
	}
	ni.PatientHistory = f.History
	if !f.Synthetic {
		bad["synthetic"] = "Confirm that this is a synthetic scenario: real patient data must never be entered."
	}
	if len(bad) > 0 {
		return ni, &FormError{Fields: bad}
	}
	return ni, nil
}

// creation is one intake being created, shared by a double submission.
type creation struct {
	done chan struct{}
	in   *Intake
	err  error
	at   time.Time
}

// StartIntake validates the form, creates the intake upstream and records it
// as owned by owner. Submitting the same form twice (same SubmissionID) gives
// the same intake.
func (s *Service) StartIntake(ctx context.Context, owner string, f StartForm) (*Intake, error) {
	if err := checkSubmissionID(f.SubmissionID); err != nil {
		return nil, err
	}
	ni, err := f.validate()
	if err != nil {
		return nil, err
	}
	key := owner + "\x00" + f.SubmissionID
	s.mu.Lock()
	for k, c := range s.creating { // forget old submissions
		if s.now().Sub(c.at) > 10*time.Minute {
			delete(s.creating, k)
		}
	}
	if c := s.creating[key]; c != nil && f.SubmissionID != "" {
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.in, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := &creation{done: make(chan struct{}), at: s.now()}
	s.creating[key] = c
	s.mu.Unlock()

	c.in, c.err = s.createIntake(ctx, owner, ni)
	if c.err != nil {
		s.mu.Lock()
		delete(s.creating, key) // a failed attempt may be submitted again
		s.mu.Unlock()
	}
	close(c.done)
	return c.in, c.err
}

func (s *Service) createIntake(ctx context.Context, owner string, ni intakeapi.NewIntake) (*Intake, error) {
	var last atomic.Pointer[intakeapi.Progress]
	wctx, cancel := context.WithTimeout(ctx, s.createWait)
	defer cancel()
	wctx = intakeapi.WithProgress(intakeapi.WithPriority(wctx, intakeapi.PriorityCreateIntake), func(p intakeapi.Progress) { last.Store(&p) })
	up, meta, err := s.client.CreateIntake(wctx, ni)
	if err != nil {
		s.log.Warn("create intake failed upstream", "err", err)
		if p := last.Load(); p != nil && wctx.Err() != nil && ctx.Err() == nil {
			// Still queued when the wait ran out: nothing was sent.
			return nil, &Error{Code: ERATELIMIT, Message: fmt.Sprintf(
				"The intake service is busy: the service key's requests for the next minute are taken (you were number %d in line, about %d s to go). Nothing was sent and your answers are kept: press Start intake again in a minute.",
				p.Position, int(math.Ceil(p.Wait.Seconds())))}
		}
		return nil, upstreamError(err, s.now())
	}
	in := &Intake{
		ID:        up.EncounterID,
		Owner:     owner,
		CreatedAt: up.CreatedAt,
		ExpiresAt: up.ExpiresAt,
		UpdatedAt: s.now(),
		Status:    string(up.Status),
		AgeYears:  ni.AgeYears,
		Sex:       string(ni.Sex),
		History:   ni.PatientHistory,
		Release:   meta.Release,
	}
	if err := s.intakes.CreateIntake(ctx, in); err != nil {
		return nil, fmt.Errorf("store new intake: %w", err)
	}
	s.log.Info("intake created", "encounter_id", in.ID, "release", meta.Release)
	s.changed(in)
	return in, nil
}

// Intake returns owner's intake with its turns. Anyone else's intake, or
// one that does not exist, is ENOTFOUND: the two are indistinguishable.
func (s *Service) Intake(ctx context.Context, owner, id string) (*Intake, []*Turn, error) {
	in, err := s.owned(ctx, owner, id)
	if err != nil {
		return nil, nil, err
	}
	turns, err := s.turns.Turns(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return in, turns, nil
}

// IntakesOf returns owner's intakes, newest first.
func (s *Service) IntakesOf(ctx context.Context, owner string) ([]*Intake, error) {
	if owner == "" {
		return nil, nil
	}
	return s.intakes.IntakesByOwner(ctx, owner)
}

func (s *Service) owned(ctx context.Context, owner, id string) (*Intake, error) {
	notFound := Errorf(ENOTFOUND, "There is no intake at this address for this browser.")
	if owner == "" || id == "" {
		return nil, notFound
	}
	in, err := s.intakes.Intake(ctx, id)
	if ErrorCode(err) == ENOTFOUND || (err == nil && in.Owner != owner) {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	s.markExpired(ctx, in)
	return in, nil
}

// markExpired records that an open intake passed its expires_at, which the
// service reports as expired from then on.
func (s *Service) markExpired(ctx context.Context, in *Intake) {
	if in.Status == StatusOpen && !s.now().Before(in.ExpiresAt) {
		in.Status = StatusExpired
		in.UpdatedAt = s.now()
		if err := s.intakes.UpdateIntake(ctx, in); err != nil {
			s.log.Error("record expiry", "encounter_id", in.ID, "err", err)
		}
	}
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	return s[:len(s)-3] + "," + s[len(s)-3:]
}
