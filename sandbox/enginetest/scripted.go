// Package enginetest holds a tiny scripted engine for tests of the service and
// its clients, where the conversation itself is not under test. Binaries never
// import it: they run the rules engine.
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Scripted answers by keyword in the latest patient message:
//
//   - containing "emergency": terminal, urgent, urgent_escalation,
//     cannot_miss_positive;
//   - containing "done": terminal, self_care, cannot_miss_negative;
//   - containing "engine-fault": Evaluate fails (the service answers 502);
//   - anything else: a two-line reply that quotes the message, choices
//     "Yes"/"No", continue_intake.
//
// The reply to turn n always starts with "Reply n:", so tests can tell turns
// apart and count them.
type Scripted struct{}

// ErrFault is returned for a message containing "engine-fault".
var ErrFault = errors.New("scripted engine fault")

// Evaluate implements engine.Engine.
func (Scripted) Evaluate(_ context.Context, in engine.Input) (engine.Result, error) {
	n := len(in.Patient)
	r := engine.Result{
		SafetyStatus:       engine.SafetyNoRedFlagsYet,
		Disposition:        engine.DispositionContinue,
		DispositionLabel:   "Intake in progress",
		IntakeStatus:       "needs_presenting_complaint",
		CandidateProtocols: []string{},
		Scores:             []engine.Score{},
		SafetyNotes:        []string{},
	}
	if n == 0 {
		return r, nil
	}
	last := strings.ToLower(in.Patient[n-1])
	r.SOAP.Subjective = "Patient reports: " + in.Patient[0]
	r.ActiveProtocol = "scripted.v1"
	r.CandidateProtocols = []string{"scripted.v1"}
	switch {
	case strings.Contains(last, "engine-fault"):
		return engine.Result{}, ErrFault
	case strings.Contains(last, "emergency"):
		r.Reply = fmt.Sprintf("Reply %d: This needs urgent attention. Please call emergency services now.", n)
		r.Terminal, r.Urgent = true, true
		r.SafetyStatus = engine.SafetyCannotMissPositive
		r.SafetyNotes = []string{"Scripted red flag reported."}
		r.Disposition, r.DispositionLabel = engine.DispositionEscalate, "Urgent escalation"
		r.IntakeStatus = engine.IntakeStatusComplete
		r.SOAP.Plan = "Immediate escalation."
	case strings.Contains(last, "done"):
		r.Reply = fmt.Sprintf("Reply %d: Thank you. Your answers are complete.", n)
		r.Terminal = true
		r.SafetyStatus = engine.SafetyCannotMissNegative
		r.Disposition, r.DispositionLabel = engine.DispositionSelfCare, "Self-care advice"
		r.IntakeStatus = engine.IntakeStatusComplete
		r.Scores = []engine.Score{{Key: "scripted_score", Total: "1", Band: engine.BandWeak, Components: "done +1"}}
		r.SOAP.Plan = "Self-care."
	default:
		r.Reply = fmt.Sprintf("Reply %d: You said %q.\n  Anything else?", n, in.Patient[n-1])
		r.Choices = []string{"Yes", "No"}
	}
	return r, nil
}

// Identity implements engine.Engine.
func (Scripted) Identity() engine.Identity {
	return engine.Identity{
		ServerModel:    "scripted-test-engine/0",
		PromptHash:     "sha256:scripted",
		DirectoryHash:  "sha256:scripted",
		ProtocolCount:  1,
		RuntimeProfile: "test",
		PromptProfile:  "test",
		VoiceProfile:   "test",
	}
}

// ExactWords is an engine for tests of what the app does with a flip under
// variations, where the engine's language is not under test: it escalates
// when the opening message is exactly Words and sends every other opening
// home at once. Any variation that changes those words is then a downward
// flip, whatever the rules engine of the day has learned to read (tests
// that leaned on the rules engine missing a misspelt keyword broke when it
// learned spelling tolerance).
type ExactWords struct{ Words string }

// Evaluate implements engine.Engine.
func (e ExactWords) Evaluate(_ context.Context, in engine.Input) (engine.Result, error) {
	r := engine.Result{
		SafetyStatus:       engine.SafetyNoRedFlagsYet,
		Disposition:        engine.DispositionContinue,
		DispositionLabel:   "Intake in progress",
		IntakeStatus:       "needs_presenting_complaint",
		CandidateProtocols: []string{},
		Scores:             []engine.Score{},
		SafetyNotes:        []string{},
	}
	if len(in.Patient) == 0 {
		return r, nil
	}
	r.SOAP.Subjective = "Patient reports: " + in.Patient[0]
	r.ActiveProtocol, r.CandidateProtocols = "scripted.v1", []string{"scripted.v1"}
	r.Terminal, r.IntakeStatus = true, engine.IntakeStatusComplete
	if in.Patient[0] == e.Words {
		r.Reply = "This needs urgent attention. Please call emergency services now."
		r.Urgent, r.SafetyStatus = true, engine.SafetyCannotMissPositive
		r.Disposition, r.DispositionLabel = engine.DispositionEscalate, "Urgent escalation"
		r.SafetyNotes = []string{"Scripted red flag reported."}
		r.SOAP.Plan = "Immediate escalation."
		return r, nil
	}
	r.Reply = "Thank you. This can be looked after at home."
	r.SafetyStatus = engine.SafetyCannotMissNegative
	r.Disposition, r.DispositionLabel = engine.DispositionSelfCare, "Self-care advice"
	r.SOAP.Plan = "Self-care."
	return r, nil
}

// Identity implements engine.Engine.
func (ExactWords) Identity() engine.Identity { return Scripted{}.Identity() }
