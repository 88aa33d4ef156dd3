// Running turns: each detached from the request that sent it, through the
// pacer, streaming or blocking; and, at start, the turns a previous run left
// pending.

package bff

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
)

// start runs t detached from any request, on its own copy: the caller keeps
// reading the one it has.
func (s *Service) start(queued *Turn) {
	t := new(Turn)
	*t = *queued
	key := TurnKey(t.IntakeID, t.Index)
	s.hub.Open(key)
	s.track()
	go func() {
		defer s.untrack()
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
		s.track()
		go func(t *Turn) {
			defer s.untrack()
			defer s.hub.Close(key)
			defer func() { // a panic here would kill the process
				if v := recover(); v != nil {
					s.log.Error("turn settlement panic", "encounter_id", t.IntakeID, "turn", t.Index, "panic", v)
				}
			}()
			if t.Blocking {
				s.runBlocking(s.base, t)
			} else {
				s.reconcile(s.base, t)
			}
		}(t)
	}
	return len(pending), nil
}
