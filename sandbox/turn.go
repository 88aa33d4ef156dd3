package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/clinical-intake/intake-web/intakeservice"
	"github.com/clinical-intake/intake-web/sandbox/engine"
)

func (s *Service) create(w http.ResponseWriter, r *http.Request, owner string) {
	body, aerr := readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	req, aerr := parseCreate(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	// The snapshot of a new intake comes from the engine, outside the lock.
	initial, err := s.cfg.Engine.Evaluate(r.Context(), engine.Input{Demographics: req.demo})
	if err != nil {
		s.log.Error("engine failed on a new intake", "err", err)
		writeError(w, &apiError{status: http.StatusBadGateway, code: codeUpstreamError, message: "The engine failed on this call; retry once."})
		return
	}
	s.mu.Lock()
	now := s.now()
	l := s.limitsOf(owner)
	l.roll(now)
	if s.cfg.IntakesPerDay > 0 && l.intakes >= s.cfg.IntakesPerDay {
		s.mu.Unlock()
		writeError(w, quotaError("intakes", s.cfg.IntakesPerDay, now))
		return
	}
	l.intakes++
	in := &intake{
		id:      "enc_" + s.keys[owner] + "_" + randomHex(8),
		owner:   owner,
		created: now,
		expires: now.Add(s.cfg.SessionTTL),
		demo:    req.demo,
		initial: initial,
	}
	s.intakes[in.id] = in
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, intakeservice.Intake{EncounterID: in.id, Status: intakeservice.StateOpen, CreatedAt: in.created, ExpiresAt: in.expires})
}

func quotaError(what string, limit int, now time.Time) *apiError {
	return &apiError{status: http.StatusTooManyRequests, code: codeQuotaExceeded,
		message: fmt.Sprintf("The daily quota of %d %s for this key is used up; it resets at %s.", limit, what, stamp(nextReset(now)))}
}

// turnPlan is an accepted turn: the engine's result and how it will be told.
type turnPlan struct {
	in       *intake
	index    int
	message  string
	result   engine.Result
	fault    string
	started  time.Time
	schedule []step
}

func (s *Service) turn(w http.ResponseWriter, r *http.Request, owner, id string) {
	body, aerr := readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	req, aerr := parseTurn(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	idemKey := r.Header.Get(headerIdempotencyKey)
	if req.stream {
		idemKey = "" // idempotency does not apply to streaming turns (spec rule 4)
	} else if _, present := r.Header[http.CanonicalHeaderKey(headerIdempotencyKey)]; present && !validIdempotencyKey(idemKey) {
		writeError(w, errInvalid("Idempotency-Key must be 1 to %d printable ASCII characters without spaces.", maxIdempotencyKeyLen))
		return
	}

	plan, replay, aerr := s.accept(r.Context(), owner, id, req.message, idemKey)
	switch {
	case aerr != nil:
		writeError(w, aerr)
	case replay != nil:
		w.Header().Set(headerReplay, "true")
		w.Header().Set("Content-Type", contentTypeJSON)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(replay)
	case req.stream:
		s.stream(w, plan)
	default:
		s.block(w, plan, owner, idemKey)
	}
}

// accept runs every check of a turn, in the order README choice 2 gives,
// then runs the engine and applies the turn. It returns a stored response
// when the idempotency key was seen before.
func (s *Service) accept(ctx context.Context, owner, id, message, idemKey string) (*turnPlan, []byte, *apiError) {
	msgHash := sha256.Sum256([]byte(message))
	s.mu.Lock()
	now := s.now()
	if idemKey != "" {
		if e := s.idem[owner+"\x00"+idemKey]; e != nil && now.Sub(e.stored) < idempotencyRetention {
			s.mu.Unlock()
			if e.encounterID != id || e.message != msgHash {
				return nil, nil, errInvalid("This Idempotency-Key was already used for a different intake or message; use a new key for a new turn.")
			}
			return nil, e.body, nil
		}
	}
	in, aerr := s.lookup(owner, id)
	if aerr == nil {
		aerr = s.checkOpen(in, now)
	}
	if aerr != nil {
		s.mu.Unlock()
		return nil, nil, aerr
	}
	fault := s.popFault(in)
	if aerr := s.preProcessingFault(fault, id); aerr != nil {
		s.mu.Unlock()
		return nil, nil, aerr
	}
	l := s.limitsOf(owner)
	l.roll(now)
	if s.cfg.TurnsPerDay > 0 && l.turns >= s.cfg.TurnsPerDay {
		s.mu.Unlock()
		return nil, nil, quotaError("turns", s.cfg.TurnsPerDay, now)
	}
	l.turns++
	s.runs++
	in.busy = true
	input := engine.Input{Demographics: in.demo, Patient: make([]string, 0, len(in.turns)+1)}
	for _, t := range in.turns {
		input.Patient = append(input.Patient, t.patient)
	}
	input.Patient = append(input.Patient, message)
	s.mu.Unlock()

	// The turn runs to its end whatever the client does: detach from its context.
	res, err := s.cfg.Engine.Evaluate(context.WithoutCancel(ctx), input)
	if err != nil {
		s.log.Error("engine failed on a turn", "encounter_id", id, "err", err)
		s.mu.Lock()
		in.busy = false
		s.mu.Unlock()
		return nil, nil, &apiError{status: http.StatusBadGateway, code: codeUpstreamError, message: "The engine failed on this call; retry once with the same Idempotency-Key.", encounterID: id}
	}
	plan := &turnPlan{in: in, message: message, result: res, fault: fault, started: now, index: len(input.Patient)}
	plan.schedule = s.scheduleFor(res.Reply, fault == faultSlowStart)
	if fault != faultStreamError {
		s.apply(plan)
	}
	return plan, nil, nil
}

// checkOpen refuses turns on closed, expired and busy intakes.
func (s *Service) checkOpen(in *intake, now time.Time) *apiError {
	switch in.status(now) {
	case "closed":
		return &apiError{status: http.StatusConflict, code: codeIntakeClosed, encounterID: in.id,
			message: "The intake reached a terminal state; no more turns are accepted. Read the handoff."}
	case "expired":
		return &apiError{status: http.StatusGone, code: codeIntakeExpired, encounterID: in.id,
			message: "The intake passed its two-hour session limit; create a new intake. The handoff stays readable."}
	}
	if in.busy {
		return &apiError{status: http.StatusConflict, code: codeTurnInProgress, encounterID: in.id,
			message: "The previous reply is still streaming; send the next turn after message.completed."}
	}
	return nil
}

// apply records the turn: from now on it is in the handoff.
func (s *Service) apply(p *turnPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.in.turns = append(p.in.turns, appliedTurn{
		patient:  p.message,
		result:   p.result,
		at:       s.now(),
		auditRef: "aud_" + randomHex(10),
		latency:  p.total(),
	})
	if p.result.Terminal {
		p.in.closed = true
	}
}

// turnBody is the Turn object of the plan, as the blocking response and the
// turn.completed event carry it. The caller must not hold s.mu.
func (s *Service) turnBody(p *turnPlan) intakeservice.Turn {
	r := p.result
	t := intakeservice.Turn{
		EncounterID:      p.in.id,
		TurnIndex:        p.index,
		AssistantMessage: r.Reply,
		Choices:          nonNil(r.Choices),
		Terminal:         r.Terminal,
		Urgent:           r.Urgent,
		SafetyStatus:     opt[intakeservice.SafetyStatus](r.SafetyStatus),
		Disposition:      opt[intakeservice.Disposition](r.Disposition),
		DispositionLabel: optStr(r.DispositionLabel),
	}
	if p.fault == faultNullState {
		t.SafetyStatus, t.Disposition, t.DispositionLabel = nil, nil, nil
	}
	if r.Terminal {
		s.mu.Lock()
		h := s.handoff(p.in)
		s.mu.Unlock()
		t.Handoff = &h
	}
	return t
}

// block answers a blocking turn after the time the reply would take.
func (s *Service) block(w http.ResponseWriter, p *turnPlan, owner, idemKey string) {
	s.sleep(p.total())
	if p.fault == faultStreamError {
		s.mu.Lock()
		p.in.busy = false
		s.mu.Unlock()
		writeError(w, &apiError{status: http.StatusBadGateway, code: codeUpstreamError, encounterID: p.in.id,
			message: "The engine failed on this call; retry once with the same Idempotency-Key."})
		return
	}
	body, _ := json.Marshal(s.turnBody(p))
	// The stored response and the end of busy are one step: a retry with
	// the same key in between would find the intake free and no stored
	// response, and run the turn a second time.
	s.mu.Lock()
	if idemKey != "" {
		s.sweepIdempotency()
		s.idem[owner+"\x00"+idemKey] = &idemEntry{encounterID: p.in.id, message: sha256.Sum256([]byte(p.message)), body: body, stored: s.now()}
	}
	p.in.busy = false
	s.mu.Unlock()
	if p.fault == faultStreamDrop {
		// The turn landed and its response is stored, but the client never
		// sees it: the connection is cut.
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// sweepIdempotency drops stored responses past retention. Caller holds s.mu.
func (s *Service) sweepIdempotency() {
	if len(s.idem) < 1024 {
		return
	}
	now := s.now()
	for k, e := range s.idem {
		if now.Sub(e.stored) >= idempotencyRetention {
			delete(s.idem, k)
		}
	}
}

// sleep waits d, or until the service is closed.
func (s *Service) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.done:
	}
}
