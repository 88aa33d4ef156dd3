package enginetest

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Reworded is an engine for tests of what the app does when the simulated
// patient misreads a question: Engine's decisions, with some of its
// questions worded otherwise. Rewrites maps a wording Engine uses (a whole
// question, or any part of a reply) to the wording to send instead; every
// occurrence in a reply is replaced, left to right, and where two wordings
// start at the same place the longer wins (a rewrite of a sentence over
// one of its first word). Only the reply is
// reworded: the decisions, the choices, the clinical snapshot and the
// identity stay Engine's, and Engine reads only the patient's messages, so
// the conversation goes on as if the question had been asked in its own
// words.
type Reworded struct {
	Engine   engine.Engine
	Rewrites map[string]string
}

// Evaluate implements engine.Engine.
func (e Reworded) Evaluate(ctx context.Context, in engine.Input) (engine.Result, error) {
	r, err := e.Engine.Evaluate(ctx, in)
	if err != nil {
		return r, err
	}
	r.Reply = e.Reword(r.Reply)
	return r, nil
}

// Reword applies the rewrites to text.
func (e Reworded) Reword(text string) string {
	olds := make([]string, 0, len(e.Rewrites))
	for old := range e.Rewrites {
		if old != "" {
			olds = append(olds, old)
		}
	}
	slices.SortFunc(olds, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	pairs := make([]string, 0, 2*len(olds))
	for _, old := range olds {
		pairs = append(pairs, old, e.Rewrites[old])
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// Identity implements engine.Engine.
func (e Reworded) Identity() engine.Identity { return e.Engine.Identity() }
