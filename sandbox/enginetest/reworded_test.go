package enginetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
	"github.com/clinical-intake/intake-web/sandbox/rules"
)

// TestRewordedRewordsOnlyTheReply: every occurrence of a wording is
// replaced, the longer wording first; choices, decisions, identity and
// errors stay the wrapped engine's.
func TestRewordedRewordsOnlyTheReply(t *testing.T) {
	e := Reworded{Engine: Scripted{}, Rewrites: map[string]string{
		"Anything else?": "Is there more?",
		"Anything":       "Something",
		"said":           "told me",
	}}
	in := engine.Input{Patient: []string{"my head hurts, said twice"}}
	want, err := Scripted{}.Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	wantReply := `Reply 1: You told me "my head hurts, told me twice".` + "\n  Is there more?"
	if got.Reply != wantReply {
		t.Errorf("reply %q, want %q", got.Reply, wantReply)
	}
	got.Reply, want.Reply = "", ""
	if strings.Join(got.Choices, "|") != strings.Join(want.Choices, "|") || got.Disposition != want.Disposition || got.Terminal != want.Terminal {
		t.Errorf("the decisions changed: %+v, want %+v", got, want)
	}
	if e.Identity() != (Scripted{}).Identity() {
		t.Errorf("identity %+v, want the wrapped engine's", e.Identity())
	}
	if _, err := e.Evaluate(context.Background(), engine.Input{Patient: []string{"engine-fault"}}); !errors.Is(err, ErrFault) {
		t.Errorf("a fault of the wrapped engine: %v, want %v", err, ErrFault)
	}
}

// TestRewordedRulesEngineDecidesAsBefore: the rules engine's drooling
// question worded otherwise is still answered as the drooling question.
func TestRewordedRulesEngineDecidesAsBefore(t *testing.T) {
	const (
		asked = "Are you drooling, or unable to swallow your own saliva?"
		words = "Does spit pool in your mouth because you can't get it past your throat?"
	)
	r, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	e := Reworded{Engine: r, Rewrites: map[string]string{asked: words}}
	age := 30
	in := engine.Input{Demographics: engine.Demographics{AgeYears: &age, Sex: "female"}, Patient: []string{"I have had a sore throat for 3 days"}}
	first, err := e.Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Reply, words) || strings.Contains(first.Reply, asked) {
		t.Fatalf("first reply %q: want %q in place of %q", first.Reply, words, asked)
	}
	in.Patient = append(in.Patient, "yes")
	next, err := e.Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !next.Urgent {
		t.Errorf("a yes to the reworded drooling question: %q, %s; want the rules engine's urgent escalation", next.Reply, next.Disposition)
	}
}
