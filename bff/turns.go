package bff

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
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

// start runs t detached from any request, on its own copy: the caller keeps
// reading the one it has.
func (s *Service) start(queued *Turn) {
	t := new(Turn)
	*t = *queued
	key := TurnKey(t.IntakeID, t.Index)
	s.hub.Open(key)
	s.running.Add(1)
	go func() {
		defer s.running.Done()
		defer s.hub.Close(key)
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("turn runner panic", "encounter_id", t.IntakeID, "turn", t.Index, "panic", v)
				s.fail(context.WithoutCancel(s.base), t, "internal", "Something went wrong on our side while sending your message.")
			}
		}()
		s.run(s.base, t)
	}()
}

// callCtx is the context of a patient turn's upstream calls: its priority,
// its queue progress published to the turn's stream, and a request id.
func (s *Service) callCtx(ctx context.Context, t *Turn) context.Context {
	key := TurnKey(t.IntakeID, t.Index)
	progress := func(p intakeapi.Progress) {
		s.hub.Publish(key, EventQueued, QueuedData{Position: p.Position, WaitSeconds: int(math.Ceil(p.Wait.Seconds()))})
	}
	ctx = intakeapi.WithProgress(intakeapi.WithPriority(ctx, intakeapi.PriorityPatientTurn), progress)
	if t.requestID == "" {
		t.requestID = fmt.Sprintf("turn-%s-%d", t.IntakeID, t.Index)
	}
	return intakeapi.WithRequestID(ctx, t.requestID)
}

// whileInProgress calls send until it is not refused with turn_in_progress:
// the service may still be producing the previous reply (after a dropped
// stream it runs to its end upstream). The refusal applied nothing, so
// waiting and sending again is safe. It gives up after about 30 s.
func (s *Service) whileInProgress(ctx context.Context, t *Turn, send func() error) error {
	err := send()
	for wait := 500 * time.Millisecond; intakeapi.IsTurnInProgress(err) && wait <= 16*time.Second; wait *= 2 {
		s.log.Info("previous reply still in progress upstream; waiting", "encounter_id", t.IntakeID, "turn", t.Index, "wait", wait)
		s.hub.Publish(TurnKey(t.IntakeID, t.Index), EventQueued, QueuedData{Position: 1, WaitSeconds: int(math.Ceil(wait.Seconds()))})
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		err = send()
	}
	return err
}

// IdempotencyKey is the key of a blocking turn: derived from the intake and
// the browser's submission id, so every resend of one submission replays.
func IdempotencyKey(t *Turn) string {
	sum := sha256.Sum256([]byte(t.IntakeID + "\x00" + t.SubmissionID))
	return "iw1-" + hex.EncodeToString(sum[:20])
}

// run drives one turn upstream to its end and settles it.
func (s *Service) run(ctx context.Context, t *Turn) {
	if t.Blocking {
		s.runBlocking(ctx, t)
		return
	}
	key := TurnKey(t.IntakeID, t.Index)
	log := s.log.With("encounter_id", t.IntakeID, "turn", t.Index)
	cctx := s.callCtx(ctx, t)
	var st *intakeapi.TurnStream
	err := s.whileInProgress(ctx, t, func() (err error) {
		st, err = s.client.StreamTurn(cctx, t.IntakeID, t.Message)
		return err
	})
	if err != nil {
		log.Warn("turn refused before its stream", "err", err)
		s.settleRefused(ctx, t, err)
		return
	}
	defer st.Close()
	t.Status = TurnStreaming
	t.Release = st.Meta().Release
	if err := s.turns.UpdateTurn(ctx, t); err != nil {
		log.Error("record streaming turn", "err", err)
	}
	s.hub.Publish(key, EventStarted, struct{}{})
	var reply strings.Builder
	for st.Next() {
		switch ev := st.Event().(type) {
		case intakeapi.MessageDelta:
			reply.WriteString(ev.Text)
			s.hub.Publish(key, EventDelta, DeltaData{Text: ev.Text})
		case intakeapi.MessageCompleted:
			s.hub.Publish(key, EventCompleted, CompletedData{ElapsedMS: ev.ElapsedMS})
		case intakeapi.HandoffCompiling:
			s.hub.Publish(key, EventCompiling, CompilingData{Terminal: ev.Terminal})
		case intakeapi.HandoffProgress:
			s.hub.Publish(key, EventProgress, ProgressData{Chars: ev.Chars})
		}
	}
	if err := st.Err(); err != nil {
		log.Warn("turn stream failed; reconciling from the handoff", "err", err)
		s.reconcile(ctx, t)
		return
	}
	s.complete(ctx, t, st.Turn(), st.Meta().Release)
}

// runBlocking sends a blocking turn with its idempotency key. The client
// already retries a 502 and a 500 once with the key, and 503s with backoff;
// a turn that still got no answer is sent again with the same key (a replay
// if it landed), and only then reconciled from the handoff.
func (s *Service) runBlocking(ctx context.Context, t *Turn) {
	key := TurnKey(t.IntakeID, t.Index)
	cctx := s.callCtx(ctx, t)
	t.Status = TurnStreaming
	if err := s.turns.UpdateTurn(ctx, t); err != nil {
		s.log.Error("record running turn", "encounter_id", t.IntakeID, "turn", t.Index, "err", err)
	}
	s.hub.Publish(key, EventStarted, struct{}{})
	var (
		up   *intakeapi.Turn
		meta intakeapi.Meta
		err  error
	)
	for attempt := 1; attempt <= 3; attempt++ {
		err = s.whileInProgress(ctx, t, func() (err error) {
			up, meta, err = s.client.Turn(cctx, t.IntakeID, t.Message, IdempotencyKey(t))
			return err
		})
		if !errors.Is(err, intakeapi.ErrTransport) || ctx.Err() != nil {
			break
		}
		s.log.Warn("blocking turn got no answer; sending it again with its key", "encounter_id", t.IntakeID, "turn", t.Index, "attempt", attempt)
	}
	if err != nil {
		s.settleRefused(ctx, t, err)
		return
	}
	if meta.Replayed {
		s.log.Info("blocking turn answered by an idempotent replay", "encounter_id", t.IntakeID, "turn", t.Index)
	}
	s.complete(ctx, t, up, meta.Release)
}

// Recover settles the turns a previous run of the app left pending (it
// stopped mid-turn): blocking turns are sent again with their key (a replay
// if they landed), streaming turns are reconciled from the handoff. Browsers
// following them get the outcome on their stream.
func (s *Service) Recover(ctx context.Context) (int, error) {
	pending, err := s.turns.PendingTurns(ctx)
	if err != nil {
		return 0, err
	}
	for _, t := range pending {
		s.log.Warn("settling a turn left pending by the last run", "encounter_id", t.IntakeID, "turn", t.Index, "blocking", t.Blocking, "status", t.Status)
		key := TurnKey(t.IntakeID, t.Index)
		s.hub.Open(key)
		s.running.Add(1)
		go func(t *Turn) {
			defer s.running.Done()
			defer s.hub.Close(key)
			if t.Blocking {
				s.runBlocking(s.base, t)
			} else {
				s.reconcile(s.base, t)
			}
		}(t)
	}
	return len(pending), nil
}

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
