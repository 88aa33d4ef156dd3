package rules

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// turn is one step of a transcript: what the patient said and what the
// engine answered.
type turn struct {
	Patient string
	Result  engine.Result
}

// script is a synthetic conversation: demographics and patient messages.
type script struct {
	Age      int // 0 = not given
	Sex      string
	History  string
	Messages []string
}

func (s script) demographics() engine.Demographics {
	d := engine.Demographics{Sex: s.Sex, History: s.History}
	if s.Age > 0 {
		age := s.Age
		d.AgeYears = &age
	}
	return d
}

func newEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := New()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// run feeds the script to Evaluate one message at a time, as the service
// does (every message so far on each call), and returns the transcript. It
// fails the test if the engine goes on after a terminal turn.
func run(t testing.TB, e *Engine, s script) []turn {
	t.Helper()
	var out []turn
	for i := range s.Messages {
		res, err := e.Evaluate(context.Background(), engine.Input{
			Demographics: s.demographics(),
			Patient:      s.Messages[:i+1],
		})
		if err != nil {
			t.Fatalf("turn %d: Evaluate: %v", i+1, err)
		}
		out = append(out, turn{Patient: s.Messages[i], Result: res})
		if res.Terminal && i < len(s.Messages)-1 {
			t.Fatalf("turn %d is terminal (%s) but the script has %d more messages; transcript:\n%s",
				i+1, res.Disposition, len(s.Messages)-i-1, dump(out))
		}
	}
	return out
}

func last(tr []turn) engine.Result {
	return tr[len(tr)-1].Result
}

func dump(tr []turn) string {
	var b strings.Builder
	for i, x := range tr {
		b.WriteString("  patient ")
		b.WriteString(string(rune('0' + (i+1)/10)))
		b.WriteString(string(rune('0' + (i+1)%10)))
		b.WriteString(": " + x.Patient + "\n  engine: " + x.Result.Reply + " " + strings.Join(x.Result.Choices, "|") +
			" [" + x.Result.Disposition + ", " + x.Result.SafetyStatus + ", " + x.Result.IntakeStatus + "]\n")
	}
	return b.String()
}

// newLexicon is the lexicon of the embedded lexicon.json, for tests of the
// text functions.
func newLexicon() *lexicon {
	data, err := fs.ReadFile(libraryFiles, lexiconFile)
	if err == nil {
		var lx *lexicon
		if lx, err = loadLexicon(data); err == nil {
			return lx
		}
	}
	panic(err)
}
