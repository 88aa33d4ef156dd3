package scenarios

import (
	"fmt"

	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
)

// Understanding is the understanding by meaning the simulated patients use:
// the concept vocabulary and its cues (bff/scenarios/concepts), built
// afresh on each call from embedded files (about a millisecond; call it
// once per play or suite, not per question).
func Understanding() (Understander, error) {
	u, err := concepts.Load()
	if err != nil {
		return nil, fmt.Errorf("scenarios: the concept understanding: %w", err)
	}
	return byMeaning{u}, nil
}

// byMeaning adapts concepts.Understanding to Understander: it adds each
// concept's kind, which the patient needs to tell open questions.
type byMeaning struct{ u *concepts.Understanding }

func (b byMeaning) Understand(message string) []Asked {
	ms := b.u.Understand(message)
	out := make([]Asked, 0, len(ms))
	for _, m := range ms {
		c, _ := b.u.Concept(m.Concept)
		out = append(out, Asked{Concept: m.Concept, Kind: string(c.Kind), Inverse: m.Inverse, Cue: m.Cue})
	}
	return out
}

func (b byMeaning) Known(id string) bool {
	_, ok := b.u.Concept(id)
	return ok
}

func (b byMeaning) Areas(text string) []string { return b.u.Areas(text) }
