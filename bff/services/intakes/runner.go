package intakes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff"
	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
)

// start runs t, just created and leased to this replica, detached from
// any request, on its own copies: the caller keeps reading the ones it has.
func (r *Runner) start(queued *bff.Turn, owner *bff.Intake) {
	t, in := new(bff.Turn), new(bff.Intake)
	*t, *in = *queued, *owner
	r.launch(t, in)
}

// launch works t in its own goroutine, with its stream open until it ends.
// in may be nil (read first). A queued turn first waits for the key's slot
// with no goroutine of its own (intakeapi.Client.Queue: a patient waiting
// behind thousands costs a small record, not a parked stack); its work
// starts when the slot comes, and its first call goes on it.
func (r *Runner) launch(t *bff.Turn, in *bff.Intake) {
	key := bff.TurnKey(t.IntakeID, t.Index)
	if in == nil { // taken over: continue the events the others saw
		if err := r.hub.Resume(r.base, key); err != nil {
			r.log.Error("read the events of a turn taken over", "intake_id", t.IntakeID, "turn", t.Index, "err", err)
		}
	} else {
		r.hub.Open(key)
	}
	r.track()
	// One countdown for all of the turn's calls: a first message's
	// creation and turn are shown as one wait.
	ctx := withCountdown(r.base)
	if in == nil || t.Status != bff.TurnQueued {
		go r.body(ctx, t, in, nil)
		return
	}
	var fu *intakeapi.FollowUp
	first, op := r.callCtx(ctx, t), intakeapi.OpStreamTurn
	switch {
	case in.EncounterID == "":
		fu = new(intakeapi.FollowUp)
		first, op = createCtx(first, fu), intakeapi.OpCreateIntake
	case t.Blocking:
		op = intakeapi.OpTurn
	}
	r.client.Queue(first, op, func(g *intakeapi.Grant) {
		defer g.Drop() // its call was not made: nothing sent
		r.body(intakeapi.WithGrant(ctx, g), t, in, fu)
	})
}

// body is the life of t's goroutine: its work, then its stream closed.
func (r *Runner) body(ctx context.Context, t *bff.Turn, in *bff.Intake, fu *intakeapi.FollowUp) {
	r.step(t, func() func() { return r.work(ctx, t, in, fu) })
}

// step runs do, a step of t's life; what do hands on runs next on a fresh
// goroutine (a reply's stream is read on one whose stack holds a few
// frames, not the one the turn's sending grew: 2-4 KiB per turn in flight,
// not 8), and t's stream is closed once no step is left.
func (r *Runner) step(t *bff.Turn, do func() func()) {
	var next func()
	defer func() {
		if v := recover(); v != nil {
			next = nil
			r.log.Error("turn runner panic", "intake_id", t.IntakeID, "turn", t.Index, "panic", v)
			r.fail(context.WithoutCancel(r.base), t, "internal", "Something went wrong on our side while sending your message.")
		}
		if next != nil {
			go r.step(t, func() func() { next(); return nil })
			return
		}
		r.hub.Close(bff.TurnKey(t.IntakeID, t.Index))
		r.untrack()
	}()
	next = do()
}

// work drives one of this replica's turns to its end. A queued turn is sent
// (its intake created upstream first when it has not been yet: the two wait
// in the queue together; fu is the creation's follow-up when its wait was
// made already). A turn that was already streaming when it came to
// this replica (its replica died, or the app restarted) may have reached the
// service, so it is never sent blind: a blocking turn is sent again with its
// key (a replay if it landed), a streaming one is reconciled from the
// handoff. It returns what is left when it hands the turn on (run).
func (r *Runner) work(ctx context.Context, t *bff.Turn, in *bff.Intake, fu *intakeapi.FollowUp) func() {
	if in == nil {
		var err error
		if in, err = r.intakes.Intake(ctx, t.IntakeID); err != nil {
			r.log.Error("read the intake of a turn taken over", "intake_id", t.IntakeID, "turn", t.Index, "err", err)
			r.fail(ctx, t, "internal", "Something went wrong on our side while sending your message.")
			return nil
		}
	}
	switch {
	case t.Status == bff.TurnQueued:
		if in.EncounterID == "" {
			if fu == nil {
				fu = new(intakeapi.FollowUp)
			}
			if !r.create(ctx, t, in, fu) {
				return nil
			}
			ctx = context.WithValue(ctx, justCreated{}, fu)
		}
		return r.run(ctx, t, in)
	case t.Blocking:
		r.runBlocking(ctx, t, in)
	default:
		r.reconcile(ctx, t, in, false)
	}
	return nil
}

// create creates t's intake upstream, in the queue with the patient's turn
// and its position shown on the turn's stream. False when it failed: t is
// failed, with why, and may be sent again (nothing of it reached the
// service).
func (r *Runner) create(ctx context.Context, t *bff.Turn, in *bff.Intake, fu *intakeapi.FollowUp) bool {
	// Its first turn follows at once (PriorityFirstTurn), in fu's place:
	// callers behind are shown a place that counts it.
	up, meta, err := r.client.CreateIntake(createCtx(r.callCtx(ctx, t), fu), intakeapi.NewIntake{AgeYears: in.AgeYears, Sex: intakeapi.Sex(in.Sex), PatientHistory: in.History})
	if err != nil {
		if r.abandoned(ctx, t) {
			return false
		}
		r.log.Warn("create intake upstream failed", "intake_id", in.ID, "turn", t.Index, "err", err)
		r.fail(ctx, t, bff.CodeNotStarted, "Your intake could not be started: "+bff.ErrorMessage(intakeapi.Describe(err, r.now())))
		return false
	}
	in.EncounterID, in.ExpiresAt, in.Status, in.Release, in.UpdatedAt = up.EncounterID, up.ExpiresAt, string(up.Status), meta.Release, r.now()
	if err := r.intakes.UpdateIntake(ctx, in); err != nil {
		// The intake exists upstream but not in the record: going on would
		// orphan the encounter the turn is about to use.
		r.log.Error("record the encounter of a new intake", "intake_id", in.ID, "encounter_id", up.EncounterID, "err", err)
		r.fail(ctx, t, "internal", "Something went wrong on our side while starting your intake.")
		return false
	}
	r.log.Info("intake created upstream", "intake_id", in.ID, "encounter_id", in.EncounterID, "release", meta.Release)
	bff.AnnounceChange(r.feed, in)
	return true
}

// markStreaming records that t is about to be sent (from here on it may
// reach the service, so whoever settles it after a crash reconciles rather
// than sends). False when t must not be sent: this replica lost its lease
// (another one has the turn), or the record failed (sending a turn stored as
// queued could send it twice: a replica taking it over would send it again).
func (r *Runner) markStreaming(ctx context.Context, t *bff.Turn) bool {
	t.Status = bff.TurnStreaming
	err := r.queue.MarkTurnStreaming(ctx, t)
	switch {
	case err == nil:
		return true
	case bff.ErrorCode(err) == bff.ECONFLICT:
		r.log.Warn("turn taken over by another replica; leaving it", "intake_id", t.IntakeID, "turn", t.Index)
		return false
	default:
		r.log.Error("record streaming turn; not sending it", "intake_id", t.IntakeID, "turn", t.Index, "err", err)
		t.Status = bff.TurnQueued
		r.fail(ctx, t, bff.CodeNotStarted, "Something went wrong on our side before your message was sent; nothing was sent. You can send it again.")
		return false
	}
}

// createCtx is the context of a patient's intake creation, from its
// turn's call context: it announces the first turn, tied to fu.
func createCtx(ctx context.Context, fu *intakeapi.FollowUp) context.Context {
	return intakeapi.WithAnnouncedFollowUp(ctx, fu)
}

// justCreated marks the context of a first turn whose intake was created
// upstream a moment ago (see intakeapi.PriorityFirstTurn).
type justCreated struct{}

// callCtx is the context of a patient turn's upstream calls: its priority,
// its queue progress published to the turn's stream, and a request id.
func (r *Runner) callCtx(ctx context.Context, t *bff.Turn) context.Context {
	key := bff.TurnKey(t.IntakeID, t.Index)
	cd := countdownOf(ctx)
	progress := func(p intakeapi.Progress) {
		r.hub.Publish(key, bff.EventQueued, cd.show(p, r.now(), p.Paused))
	}
	prio := intakeapi.PriorityPatientTurn
	if fu, _ := ctx.Value(justCreated{}).(*intakeapi.FollowUp); fu != nil {
		prio = intakeapi.PriorityFirstTurn
		ctx = intakeapi.AsFollowUpOf(ctx, fu)
	}
	ctx = intakeapi.WithProgress(intakeapi.WithPriority(ctx, prio), progress)
	if t.RequestID == "" {
		t.RequestID = fmt.Sprintf("turn-%s-%d", t.IntakeID, t.Index)
	}
	return intakeapi.WithRequestID(ctx, t.RequestID)
}

// whileInProgress calls send until it is not refused with turn_in_progress:
// the service may still be producing the previous reply (after a dropped
// stream it runs to its end upstream). The refusal applied nothing, so
// waiting and sending again is safe. It gives up after about 30 r.
func (r *Runner) whileInProgress(ctx context.Context, t *bff.Turn, send func() error) error {
	err := send()
	for wait := 500 * time.Millisecond; intakeapi.IsTurnInProgress(err) && wait <= 16*time.Second; wait *= 2 {
		r.log.Info("previous reply still in progress upstream; waiting", "intake_id", t.IntakeID, "turn", t.Index, "wait", wait)
		r.hub.Publish(bff.TurnKey(t.IntakeID, t.Index), bff.EventQueued, countdownOf(ctx).show(intakeapi.Progress{Position: 1, Wait: wait}, r.now(), true))
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
func IdempotencyKey(t *bff.Turn) string {
	sum := sha256.Sum256([]byte(t.IntakeID + "\x00" + t.SubmissionID))
	return "iw1-" + hex.EncodeToString(sum[:20])
}

// run sends one turn upstream and returns the rest of its life: reading
// the reply's stream to its end, then settling it (nil when it ended
// here).
func (r *Runner) run(ctx context.Context, t *bff.Turn, in *bff.Intake) func() {
	if t.Blocking {
		r.runBlocking(ctx, t, in)
		return nil
	}
	log := r.log.With("intake_id", t.IntakeID, "turn", t.Index)
	if !r.markStreaming(ctx, t) {
		return nil
	}
	cctx := r.callCtx(ctx, t)
	var st *intakeapi.TurnStream
	err := r.whileInProgress(ctx, t, func() (err error) {
		st, err = r.client.StreamTurn(cctx, in.EncounterID, t.Message)
		return err
	})
	if err != nil {
		log.Warn("turn refused before its stream", "err", err)
		r.settleRefused(ctx, t, in, err)
		return nil
	}
	t.Release = st.Meta().Release
	r.hub.Publish(bff.TurnKey(t.IntakeID, t.Index), bff.EventStarted, struct{}{})
	return func() { r.relay(ctx, t, in, st) }
}

// relay publishes the events of t's reply to its stream as they come and
// settles t at the end: completed, or reconciled when the stream broke.
func (r *Runner) relay(ctx context.Context, t *bff.Turn, in *bff.Intake, st *intakeapi.TurnStream) {
	defer st.Close()
	key := bff.TurnKey(t.IntakeID, t.Index)
	var reply strings.Builder
	for st.Next() {
		switch ev := st.Event().(type) {
		case intakeapi.MessageDelta:
			reply.WriteString(ev.Text)
			r.hub.Publish(key, bff.EventDelta, bff.DeltaData{Text: ev.Text})
		case intakeapi.MessageCompleted:
			r.hub.Publish(key, bff.EventCompleted, bff.CompletedData{ElapsedMS: int64(ev.ElapsedMS)})
		case intakeapi.HandoffCompiling:
			r.hub.Publish(key, bff.EventCompiling, bff.CompilingData{Terminal: ev.Terminal})
		case intakeapi.HandoffProgress:
			r.hub.Publish(key, bff.EventProgress, bff.ProgressData{Chars: ev.Chars})
		}
	}
	if err := st.Err(); err != nil {
		r.log.Warn("turn stream failed; reconciling from the handoff", "intake_id", t.IntakeID, "turn", t.Index, "err", err)
		cutOff := reply.Len() > 0
		r.hub.Publish(key, bff.EventInterrupted, bff.InterruptedData{CutOff: cutOff})
		r.reconcile(ctx, t, in, cutOff)
		return
	}
	r.complete(ctx, t, in, st.Turn(), st.Meta().Release)
}

// runBlocking sends a blocking turn with its idempotency key. The client
// already retries a 502 and a 500 once with the key, and 503s with backoff;
// a turn that still got no answer is sent again with the same key (a replay
// if it landed), and only then reconciled from the handoff.
func (r *Runner) runBlocking(ctx context.Context, t *bff.Turn, in *bff.Intake) {
	key := bff.TurnKey(t.IntakeID, t.Index)
	cctx := r.callCtx(ctx, t)
	if !r.markStreaming(ctx, t) {
		return
	}
	r.hub.Publish(key, bff.EventStarted, struct{}{})
	var (
		up   *intakeapi.Turn
		meta intakeapi.Meta
		err  error
	)
	for attempt := 1; attempt <= 3; attempt++ {
		err = r.whileInProgress(ctx, t, func() (err error) {
			up, meta, err = r.client.Turn(cctx, in.EncounterID, t.Message, IdempotencyKey(t))
			return err
		})
		if !errors.Is(err, intakeapi.ErrTransport) || ctx.Err() != nil {
			break
		}
		r.log.Warn("blocking turn got no answer; sending it again with its key", "intake_id", t.IntakeID, "turn", t.Index, "attempt", attempt)
	}
	if err != nil {
		r.settleRefused(ctx, t, in, err)
		return
	}
	if meta.Replayed {
		r.log.Info("blocking turn answered by an idempotent replay", "intake_id", t.IntakeID, "turn", t.Index)
	}
	r.complete(ctx, t, in, up, meta.Release)
}

// settleRefused settles a turn whose upstream call failed before a stream
// started. A 4xx means it was not applied; anything else (5xx, no answer)
// is reconciled from the handoff, as docs/architecture.md explains (reconcile, never guess).
func (r *Runner) settleRefused(ctx context.Context, t *bff.Turn, in *bff.Intake, err error) {
	if r.abandoned(ctx, t) {
		return
	}
	ae, isAPI := intakeapi.AsError(err)
	switch {
	case isAPI && ae.Code == intakeapi.CodeIntakeClosed:
		r.refreshClosed(ctx, in, bff.StatusClosed)
	case isAPI && ae.Code == intakeapi.CodeIntakeExpired:
		r.refreshClosed(ctx, in, bff.StatusExpired)
	case isAPI && ae.Status >= 500, errors.Is(err, intakeapi.ErrTransport):
		r.reconcile(ctx, t, in, false)
		return
	}
	r.fail(ctx, t, codeOf(err), bff.ErrorMessage(intakeapi.Describe(err, r.now())))
}

func codeOf(err error) string {
	if ae, ok := intakeapi.AsError(err); ok && ae.Code != "" {
		return string(ae.Code)
	}
	return bff.ErrorCode(intakeapi.Describe(err, time.Time{}))
}

// complete records a turn the service answered in full, and its intake
// after it, in one write.
func (r *Runner) complete(ctx context.Context, t *bff.Turn, in *bff.Intake, up *intakeapi.Turn, release string) {
	now := r.now()
	t.Status, t.CompletedAt, t.Release = bff.TurnCompleted, &now, release
	t.Reply, t.Choices = up.AssistantMessage, up.Choices
	t.Terminal, t.Urgent = up.Terminal, up.Urgent
	t.SafetyStatus, t.Disposition, t.DispositionLabel = str(up.SafetyStatus), str(up.Disposition), up.DispositionLabel
	in.TurnCount, in.Release, in.UpdatedAt = up.TurnIndex, release, now
	in.Urgent = up.Urgent
	if up.Terminal {
		in.Terminal, in.Status = true, bff.StatusClosed
	}
	if up.NeedsReconcile() {
		// The turn landed but its state read failed: the handoff has the state.
		r.log.Warn("turn completed with null state; reading the handoff", "intake_id", t.IntakeID, "turn", t.Index)
		if h := r.readHandoff(ctx, in); h != nil {
			applyHandoffState(in, h)
		}
	} else {
		in.SafetyStatus, in.Disposition, in.DispositionLabel = deref(t.SafetyStatus), deref(t.Disposition), deref(t.DispositionLabel)
	}
	if up.Terminal && up.Handoff != nil {
		r.handoffs.Put(ctx, in.ID, up.Handoff, release)
		if up.Handoff.ActiveProtocol != nil { // the final word, over an earlier read
			in.ActiveProtocol = *up.Handoff.ActiveProtocol
		}
	}
	if !r.settle(ctx, t, in) {
		return
	}
	r.count(bff.TurnCompleted)
	// The patient first; the worklists after (with several replicas,
	// announcing is a round trip to the database).
	r.hub.Publish(bff.TurnKey(t.IntakeID, t.Index), bff.EventFinal, bff.SettledData{Index: t.Index, Status: string(t.Status), Turn: t, Intake: in, Choices: t.Choices, Last: true})
	bff.AnnounceChange(r.feed, in)
}

// settle writes settled t (and in, when not nil). False when another
// replica took t over: it settles and announces t itself.
func (r *Runner) settle(ctx context.Context, t *bff.Turn, in *bff.Intake) bool {
	err := r.queue.SettleTurn(ctx, t, in)
	switch {
	case err == nil:
		return true
	case bff.ErrorCode(err) == bff.ECONFLICT:
		r.log.Warn("turn taken over by another replica before it settled here; leaving it", "intake_id", t.IntakeID, "turn", t.Index)
		return false
	default:
		// Announced anyway: the browser is told what happened, and the
		// turn, still pending in the store, is settled again after its
		// lease runs out (reconciled, never sent twice).
		r.log.Error("record settled turn", "intake_id", t.IntakeID, "turn", t.Index, "err", err)
		return true
	}
}

// reconcile reads the handoff and settles t from it: if the conversation
// holds t's message where t would be, t landed and its reply is taken from
// there; otherwise t is failed and may be retried. cutOff says part of the
// reply had streamed before the stream broke: the message did reach the
// service, so a turn that did not land is not said to have "not reached" it.
func (r *Runner) reconcile(ctx context.Context, t *bff.Turn, in *bff.Intake, cutOff bool) {
	if r.abandoned(ctx, t) {
		return
	}
	if in.EncounterID == "" { // never created upstream: nothing of it landed
		r.fail(ctx, t, bff.CodeNotLanded, "Your message did not reach the intake service. You can send it again.")
		return
	}
	h := r.readHandoff(ctx, in)
	if h == nil {
		r.fail(ctx, t, bff.CodeUnconfirmed, "We could not confirm whether your message reached the intake service. Please reload in a moment.")
		return
	}
	prior, err := r.completedBefore(ctx, t)
	if err != nil {
		r.log.Error("count completed turns", "intake_id", t.IntakeID, "err", err)
		r.fail(ctx, t, "internal", "Something went wrong on our side while sending your message.")
		return
	}
	reply, landed := landedReply(h.Conversation, prior, t.Message)
	r.reconciled.Add(1)
	if !landed {
		msg := "Your message did not reach the intake service. You can send it again."
		if cutOff {
			msg = "The reply was cut off, and the intake service did not keep your message. You can send it again."
		}
		r.fail(ctx, t, bff.CodeNotLanded, msg)
		return
	}
	up := &intakeapi.Turn{
		EncounterID:      in.EncounterID,
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
	r.log.Info("turn reconciled: it landed", "intake_id", t.IntakeID, "turn", t.Index)
	r.complete(ctx, t, in, up, t.Release)
}

// abandoned reports whether the app is stopping past its grace period: the
// turn stays pending in the store, and the next start settles it (Recover).
func (r *Runner) abandoned(ctx context.Context, t *bff.Turn) bool {
	if ctx.Err() == nil {
		return false
	}
	r.log.Warn("turn abandoned at shutdown; the next start settles it", "intake_id", t.IntakeID, "turn", t.Index)
	return true
}

// landedReply reports whether the turn with message m landed, and its
// reply. The turn being reconciled is the intake's last (no turn is sent
// while one is pending), so if it landed its message is the service's last
// patient message, after at least the prior ones the app saw completed.
// The app's count alone would not do: an earlier turn failed as unconfirmed
// may have landed, and then m is one place later than the count says.
func landedReply(conv []intakeapi.Message, prior int, m string) (string, bool) {
	last, patients := -1, 0
	for i, msg := range conv {
		if msg.Role == intakeapi.RolePatient {
			last, patients = i, patients+1
		}
	}
	if patients <= prior || conv[last].Text != m {
		return "", false
	}
	if next := last + 1; next < len(conv) && conv[next].Role == intakeapi.RoleAssistant {
		return conv[next].Text, true
	}
	return "", true // landed, its reply not in the record yet
}

func (r *Runner) completedBefore(ctx context.Context, t *bff.Turn) (int, error) {
	turns, err := r.turns.Turns(ctx, t.IntakeID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range turns {
		if o.Index < t.Index && o.Status == bff.TurnCompleted {
			n++
		}
	}
	return n, nil
}

// readHandoff reads the handoff at reconciliation priority, a few times if
// the service is struggling; nil when it could not be read.
func (r *Runner) readHandoff(ctx context.Context, in *bff.Intake) *intakeapi.Handoff {
	for attempt := 1; attempt <= 3; attempt++ {
		h, _, err := r.handoffs.Read(ctx, in, intakeapi.PriorityReconciliation, false)
		if err == nil {
			return h
		}
		r.log.Warn("reading the handoff failed", "intake_id", in.ID, "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(attempt) * time.Second):
		}
	}
	return nil
}

// refreshClosed records that the service reported the intake closed or
// expired, with the state from its handoff.
func (r *Runner) refreshClosed(ctx context.Context, in *bff.Intake, status string) {
	in.Status, in.Terminal, in.UpdatedAt = status, status == bff.StatusClosed, r.now()
	if h := r.readHandoff(ctx, in); h != nil {
		applyHandoffState(in, h)
	}
	if err := r.intakes.UpdateIntake(ctx, in); err != nil {
		r.log.Error("record closed intake", "intake_id", in.ID, "err", err)
	}
}

func applyHandoffState(in *bff.Intake, h *intakeapi.Handoff) {
	in.SafetyStatus, in.Disposition, in.DispositionLabel = deref(str(h.SafetyStatus)), deref(str(h.Disposition)), deref(h.DispositionLabel)
	in.Urgent = h.Urgent
	if h.Terminal && in.Status == bff.StatusOpen {
		in.Status = bff.StatusClosed
	}
	in.Terminal = in.Terminal || (h.Terminal && in.Status == bff.StatusClosed)
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
func (r *Runner) fail(ctx context.Context, t *bff.Turn, code, message string) {
	now := r.now()
	t.Status, t.ErrorCode, t.ErrorMessage, t.CompletedAt = bff.TurnFailed, code, message, &now
	if !r.settle(ctx, t, nil) {
		return
	}
	r.count(bff.TurnFailed)
	// Read once per turn, so the streams following it render from the event.
	d := bff.SettledData{Index: t.Index, Status: string(t.Status), Message: message, Turn: t, Last: true}
	if in, err := r.intakes.Intake(ctx, t.IntakeID); err == nil {
		d.Intake = in
	}
	if turns, err := r.turns.Turns(ctx, t.IntakeID); err == nil {
		d.Choices = lastChoices(turns) // the suggestions still in force
	}
	r.hub.Publish(bff.TurnKey(t.IntakeID, t.Index), bff.EventFailed, d)
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

// lastChoices are the quick replies of the last completed turn.
func lastChoices(turns []*bff.Turn) []string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Status == bff.TurnCompleted {
			return turns[i].Choices
		}
	}
	return nil
}
