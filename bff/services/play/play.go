// Package play plays a scenario suite against the intake service through
// the app's own client: each vignette's simulated patient answers the
// engine turn by turn until the intake ends or the turn limit, and the
// handoff gives what the engine concluded. Every turn is a blocking call
// with an Idempotency-Key derived from the run, the encounter, the vignette,
// the repeat and the turn: a retried turn replays instead of driving the
// engine twice. Play goes step by step and tells its caller each step, so a
// durable run (bff/services/scenarioruns) can keep them and resume after a restart.
package play

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff/adapters/intakeapi"
	"github.com/clinical-intake/intake-web/bff/scenarios"
	"github.com/clinical-intake/intake-web/bff/scenarios/variations"
)

// Options of a run.
type Options struct {
	RunID   string // names the run in idempotency keys; required
	Repeats int    // runs of each vignette (0 = 1)
	// Parallel is how many vignette runs are played at once (0 = 1):
	// what the key's budget can feed (scenarioruns.Parallel).
	Parallel int
	// Variations are played after each vignette's unvaried play, in this
	// order (bff/scenarios/variations names them); a swap the vignette
	// does not mark neutral is left out. Seed chooses their random parts.
	Variations []string
	Seed       uint64
	// Progress is told after each vignette run, from one goroutine at a
	// time (may be nil).
	Progress func(done, total int, r *scenarios.Result)
}

// Run plays every vignette of s Repeats times, Parallel at a time, at the
// client's background priority so live patients go first. A vignette that
// fails (the service refused, a quota ran out) is a result with its Error
// set; Run returns early only when ctx ends. The results are in play order
// (repeat by repeat, vignettes in suite order), whichever ended first.
func Run(ctx context.Context, client *intakeapi.Client, s *scenarios.Suite, o Options) ([]scenarios.Result, error) {
	repeats := max(o.Repeats, 1)
	plays := Plays(s, o.Variations, o.Seed)
	total := len(plays) * repeats
	out := make([]scenarios.Result, total)
	played := make([]bool, total)
	ctx = intakeapi.WithPriority(ctx, intakeapi.PriorityBackground)
	type done struct {
		i int
		r scenarios.Result
	}
	ended := make(chan done)
	width := min(max(o.Parallel, 1), max(total, 1))
	next, inFlight, n := 0, 0, 0
	for {
		for ctx.Err() == nil && inFlight < width && next < total {
			i := next
			p, rep := plays[i%len(plays)], 1+i/len(plays)
			next++
			inFlight++
			go func() {
				r := One(ctx, client, p.Vignette, o.RunID, rep)
				r.Variation = p.Variation
				ended <- done{i, r}
			}()
		}
		if inFlight == 0 {
			break
		}
		d := <-ended
		inFlight--
		if ctx.Err() != nil {
			continue // stopped half way: not a result
		}
		out[d.i], played[d.i] = d.r, true
		n++
		if o.Progress != nil {
			o.Progress(n, total, &out[d.i])
		}
	}
	var res []scenarios.Result
	for i, ok := range played {
		if ok {
			res = append(res, out[i])
		}
	}
	return res, ctx.Err()
}

// A Vignette is one vignette as played under one variation ("" for none).
type Vignette struct {
	Variation string
	Vignette  *scenarios.Vignette
}

// Plays lists what a run of s plays each repeat: every vignette, in
// suite order, then each of names that applies to it (variations.Apply).
func Plays(s *scenarios.Suite, names []string, seed uint64) []Vignette {
	var out []Vignette
	for i := range s.Vignettes {
		v := &s.Vignettes[i]
		out = append(out, Vignette{Vignette: v})
		for _, n := range names {
			if w, ok := variations.Apply(v, n, seed); ok {
				out = append(out, Vignette{Variation: n, Vignette: w})
			}
		}
	}
	return out
}

// One plays a vignette once, from the start, keeping nothing.
func One(ctx context.Context, client *intakeapi.Client, v *scenarios.Vignette, runID string, repeat int) scenarios.Result {
	r, _, err := Play(ctx, client, v, runID, repeat, State{}, nil, nil)
	if err != nil && r.Error == "" {
		r.Error = err.Error()
	}
	return r
}

// State is how far one play of a vignette has come: what a durable run
// records after every step, and where a resumed play starts.
type State struct {
	// EncounterID is the intake created upstream ("" before).
	EncounterID string
	// Turns are the exchanges so far, in order.
	Turns []scenarios.Exchange
}

// Save is told the state after every step: the intake was created (spent
// 0) or a turn was answered (spent 1: counted once, when its answer is
// recorded, whether it came fresh or as a replay of an unrecorded send).
// An error stops the play and is returned: a
// run that can no longer record its progress must not drive the engine on.
type Save func(st State, spent int) error

// ErrQuota marks a play stopped by a spent daily quota (the service's, or
// the key's budget refusing to spend more today): nothing is lost, the play
// resumes from its state after the reset.
var ErrQuota = errors.New("play: a daily quota is spent")

// Play plays v from st (the zero State: from the start) until the engine
// ends the intake or the patient's turn limit, then reads the handoff. It
// returns the result and the handoff's JSON as the service sent it.
//
// A resumed play never asks the engine again for what st holds: the
// recorded exchanges are replayed to a new simulated patient, which
// answers them exactly as before (it is deterministic), and the next turn
// goes out with the Idempotency-Key it had before a restart, so a turn the
// service ran but whose reply was never recorded comes back as a replay.
//
// The error is not nil, and the result incomplete, when ctx ended, save
// failed, or a quota is spent (wrapping ErrQuota): the caller keeps the
// state it saved and may resume. Every other failure (the service refused
// the intake, a turn failed after the client's retries, the intake expired)
// is a finished result with its Error set, and a nil error.
//
// rv (may be nil) holds the readings people reviewed: an engine message
// with a reviewed reading for the release that sent it (the reply's
// x-service-release) is answered on that reading (Patient.AnswerFrom).
func Play(ctx context.Context, client *intakeapi.Client, v *scenarios.Vignette, runID string, repeat int, st State, save Save, rv scenarios.Reviews) (scenarios.Result, []byte, error) {
	r := scenarios.Result{VignetteID: v.ID, Title: v.Title, Repeat: repeat, Gold: v.Gold}
	if save == nil {
		save = func(State, int) error { return nil }
	}
	st.Turns = slices.Clone(st.Turns)
	if st.EncounterID == "" {
		in, _, err := client.CreateIntake(ctx, newIntake(v))
		if err != nil {
			if stop := interrupted(ctx, err); stop != nil {
				return r, nil, stop
			}
			r.Error = "create intake: " + err.Error()
			return r, nil, nil
		}
		st.EncounterID = in.EncounterID
		if err := save(st, 0); err != nil {
			return r, nil, err
		}
	}
	u, err := scenarios.Understanding()
	if err != nil {
		return r, nil, err
	}
	p := scenarios.NewPatient(v, u)
	msg, more := p.Opening(), true
	for _, e := range st.Turns { // replay what was recorded: no request
		if e.Terminal {
			more = false
			break
		}
		if msg, more = p.AnswerFrom(rv, e.Release, e.Reply, e.Choices); !more {
			break
		}
	}
	for more {
		n := len(st.Turns) + 1
		t, meta, err := sendTurn(ctx, client, st.EncounterID, msg.Text, Key(runID, st.EncounterID, v.ID, repeat, n))
		if err != nil {
			if stop := interrupted(ctx, err); stop != nil {
				return r, nil, stop
			}
			r.Error = fmt.Sprintf("turn %d: %v", n, err)
			break
		}
		e := exchange(msg, t, meta)
		st.Turns = append(st.Turns, e)
		// One turn of the quota either way: a replay answers a send of this
		// play's whose reply was never recorded (before a restart, or on
		// the client's own retry), and that send was charged.
		if err := save(st, 1); err != nil {
			return r, nil, err
		}
		if e.Terminal {
			break
		}
		msg, more = p.AnswerFrom(rv, e.Release, t.AssistantMessage, t.Choices)
	}
	conclude(&r, st.Turns)
	h, _, err := client.Handoff(ctx, st.EncounterID)
	if err != nil {
		if stop := interrupted(ctx, err); stop != nil {
			return r, nil, stop
		}
		if r.Error == "" {
			r.Error = "read the handoff: " + err.Error()
		}
		return r, nil, nil
	}
	FromHandoff(&r, h)
	return r, []byte(h.Raw), nil
}

// sendTurn sends a blocking turn, and sends it again with the same key
// while the service still runs an earlier send of it: a resumed play's
// first turn may be one the app sent before it stopped, whose reply the
// service is still producing. The service then answers turn_in_progress,
// or intake_closed when that send ended the intake, until it has stored
// the reply; the same key then replays it. Neither refusal applied
// anything, and a play never sends after a terminal reply it recorded, so
// waiting and sending again never drives a turn twice. It gives up after
// about a minute (a reply takes 20-40 s).
func sendTurn(ctx context.Context, client *intakeapi.Client, encounter, text, key string) (*intakeapi.Turn, intakeapi.Meta, error) {
	t, meta, err := client.Turn(ctx, encounter, text, key)
	for wait := time.Second; refusedWhileRunning(err) && wait <= 32*time.Second; wait *= 2 {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return t, meta, err
		case <-timer.C:
		}
		t, meta, err = client.Turn(ctx, encounter, text, key)
	}
	return t, meta, err
}

func refusedWhileRunning(err error) bool {
	return intakeapi.IsTurnInProgress(err) || intakeapi.IsCode(err, intakeapi.CodeIntakeClosed)
}

// interrupted returns the error that stops a play without finishing it:
// ctx's end, or a spent quota (wrapped in ErrQuota). nil for a failure
// that finishes the play.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var q *intakeapi.QuotaError
	if errors.As(err, &q) || intakeapi.IsCode(err, intakeapi.CodeQuotaExceeded) {
		return fmt.Errorf("%w: %v", ErrQuota, err)
	}
	return nil
}

func newIntake(v *scenarios.Vignette) intakeapi.NewIntake {
	var sex intakeapi.Sex
	switch v.Sex {
	case "":
	case "other":
		sex = "intersex" // the spec's word (docs/scenarios.md)
	default:
		sex = intakeapi.Sex(v.Sex)
	}
	return intakeapi.NewIntake{AgeYears: v.AgeYears, Sex: sex, PatientHistory: v.History}
}

func exchange(msg scenarios.Said, t *intakeapi.Turn, meta intakeapi.Meta) scenarios.Exchange {
	why := msg.Why
	e := scenarios.Exchange{Message: msg.Text, Why: &why, Reply: t.AssistantMessage, Choices: t.Choices,
		Terminal: t.Terminal, Urgent: t.Urgent, Replayed: meta.Replayed, Release: scenarios.ReleaseOf(meta.Release)}
	if t.Disposition != nil {
		e.Disposition = string(*t.Disposition)
	}
	if t.SafetyStatus != nil {
		e.SafetyStatus = string(*t.SafetyStatus)
	}
	return e
}

// conclude takes what the engine decided from the last exchange.
func conclude(r *scenarios.Result, turns []scenarios.Exchange) {
	r.Turns = len(turns)
	if len(turns) == 0 {
		return
	}
	scenarios.Account(r, turns)
	last := turns[len(turns)-1]
	r.Terminal, r.Urgent, r.Disposition, r.SafetyStatus = last.Terminal, last.Urgent, last.Disposition, last.SafetyStatus
	if r.Terminal {
		r.Final = scenarios.ClassOf(r.Disposition, r.Urgent)
	}
}

// FromHandoff takes what the engine recorded: the protocol, the score
// bands, the positive safety notes, the provenance and the conversation.
func FromHandoff(r *scenarios.Result, h *intakeapi.Handoff) {
	if h.ActiveProtocol != nil {
		r.Protocol = *h.ActiveProtocol
	}
	r.Scores = map[string]string{}
	for _, s := range h.Scores {
		r.Scores[s.Key] = string(s.Band)
	}
	r.RedFlagsFound, r.RedFlagsNegative = scenarios.SplitSafetyNotes(h.SafetyNotes)
	r.Provenance = scenarios.Provenance{
		Release: deref(h.Provenance.Release), PromptHash: deref(h.Provenance.PromptHash),
		DirectoryHash: deref(h.Provenance.DirectoryHash), ServerModel: deref(h.Provenance.ServerModel),
		VoiceProfile: deref(h.Provenance.VoiceProfile),
	}
	for _, m := range h.Conversation {
		r.Transcript = append(r.Transcript, scenarios.Message{Role: string(m.Role), Text: m.Text})
	}
}

// Key is the Idempotency-Key of a turn of a run. The encounter is in it: a
// key is the service's, whatever the intake, and must never replay another
// intake's answer.
func Key(runID, encounter, vignette string, repeat, turn int) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{"scenario", runID, encounter, vignette, fmt.Sprint(repeat), fmt.Sprint(turn)}, "\x00")))
	return "sc1-" + hex.EncodeToString(sum[:20])
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Order puts first, keeping each group in its order, the vignettes a
// cut-short run must have answered: emergencies that flipped before,
// other emergencies, other vignettes that flipped before (flipped holds
// their ids), then the rest. A vignette's variations stay together, after
// its unvaried play.
func Order(plays []Vignette, flipped map[string]bool) []Vignette {
	rank := func(v *scenarios.Vignette) int {
		e, f := v.Gold.Class == scenarios.Emergency, flipped[v.ID]
		switch {
		case e && f:
			return 0
		case e:
			return 1
		case f:
			return 2
		}
		return 3
	}
	out := slices.Clone(plays)
	slices.SortStableFunc(out, func(a, b Vignette) int { return rank(a.Vignette) - rank(b.Vignette) })
	return out
}
