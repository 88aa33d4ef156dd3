package rules

import (
	"context"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// An emergency said in answer to a red-flag question still answers it: the
// handoff shows the red flag found beside the emergency, which decides
// (urgent, escalation). Both voices decide the same.
func TestEmergencyInAnswerRecordsTheRedFlag(t *testing.T) {
	for _, voice := range Voices() {
		e, err := NewVoice(voice)
		if err != nil {
			t.Fatal(err)
		}
		age := 45
		in := engine.Input{Demographics: engine.Demographics{AgeYears: &age, Sex: "male"},
			Patient: []string{"I've had tummy pain since yesterday", "yes, this morning it looked like coffee grounds"}}
		res, err := e.Evaluate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(res.SafetyNotes, "\n")
		if !res.Terminal || !res.Urgent || res.Disposition != engine.DispositionEscalate ||
			!strings.Contains(notes, "Emergency phrase at turn 2") || !strings.Contains(notes, "Red flag POSITIVE") {
			t.Errorf("%s: terminal %v urgent %v %s; notes:\n%s", voice, res.Terminal, res.Urgent, res.Disposition, notes)
		}
	}
}
