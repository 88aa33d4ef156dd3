// Package play plays a scenario suite against the intake service through
// the app's own client: each vignette's simulated patient answers the
// engine turn by turn until the intake ends or the turn limit, and the
// handoff gives what the engine concluded. Every turn is a blocking call
// with an Idempotency-Key derived from the run, the encounter, the vignette,
// the repeat and the turn: a retried turn replays instead of driving the
// engine twice. (Resuming a whole run after a restart needs the encounters
// it created kept: that is the durable run's job, not this package's.)
package play

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/clinical-intake/intake-web/bff/intakeapi"
	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// Options of a run.
type Options struct {
	RunID   string // names the run in idempotency keys; required
	Repeats int    // runs of each vignette (0 = 1)
	// Progress is told after each vignette run (may be nil).
	Progress func(done, total int, r *scenarios.Result)
}

// Run plays every vignette of s Repeats times, one after another (the key
// allows six requests a minute: parallel runs would only queue), at the
// client's background priority so live patients go first. A vignette that
// fails (the service refused, a quota ran out) is a result with its Error
// set; Run returns early only when ctx ends.
func Run(ctx context.Context, client *intakeapi.Client, s *scenarios.Suite, o Options) ([]scenarios.Result, error) {
	repeats := max(o.Repeats, 1)
	total := len(s.Vignettes) * repeats
	var out []scenarios.Result
	ctx = intakeapi.WithPriority(ctx, intakeapi.PriorityBackground)
	for rep := 1; rep <= repeats; rep++ {
		for i := range s.Vignettes {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			r := One(ctx, client, &s.Vignettes[i], o.RunID, rep)
			out = append(out, r)
			if o.Progress != nil {
				o.Progress(len(out), total, &out[len(out)-1])
			}
		}
	}
	return out, nil
}

// One plays a vignette once.
func One(ctx context.Context, client *intakeapi.Client, v *scenarios.Vignette, runID string, repeat int) scenarios.Result {
	r := scenarios.Result{VignetteID: v.ID, Title: v.Title, Repeat: repeat, Gold: v.Gold}
	var sex intakeapi.Sex
	switch v.Sex {
	case "":
	case "other":
		sex = "intersex" // the spec's word (docs/scenarios.md)
	default:
		sex = intakeapi.Sex(v.Sex)
	}
	in, _, err := client.CreateIntake(ctx, intakeapi.NewIntake{AgeYears: v.AgeYears, Sex: sex, PatientHistory: v.History})
	if err != nil {
		r.Error = "create intake: " + err.Error()
		return r
	}
	p := scenarios.NewPatient(v)
	msg := p.Opening()
	var last *intakeapi.Turn
	for turn := 1; ; turn++ {
		t, _, err := client.Turn(ctx, in.EncounterID, msg, Key(runID, in.EncounterID, v.ID, repeat, turn))
		if err != nil {
			r.Error = fmt.Sprintf("turn %d: %v", turn, err)
			break
		}
		last, r.Turns = t, turn
		if t.Terminal {
			break
		}
		reply, ok := p.Answer(t.AssistantMessage, t.Choices)
		if !ok {
			break // the turn limit: the engine decided nothing in time
		}
		msg = reply
	}
	if last != nil {
		r.Terminal, r.Urgent = last.Terminal, last.Urgent
		if last.Disposition != nil {
			r.Disposition = string(*last.Disposition)
		}
		if last.SafetyStatus != nil {
			r.SafetyStatus = string(*last.SafetyStatus)
		}
	}
	if r.Terminal {
		r.Final = scenarios.ClassOf(r.Disposition, r.Urgent)
	}
	h, _, err := client.Handoff(ctx, in.EncounterID)
	if err != nil {
		if r.Error == "" {
			r.Error = "read the handoff: " + err.Error()
		}
		return r
	}
	fromHandoff(&r, h)
	return r
}

// fromHandoff takes what the engine recorded: the protocol, the score
// bands, the positive safety notes, the provenance and the conversation.
func fromHandoff(r *scenarios.Result, h *intakeapi.Handoff) {
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
