package scenarios

import (
	"fmt"
	"sync"

	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
)

// builtUnderstanding is built once per process: it is read from files embedded
// in the binary and never changes after, so it is as constant as they are,
// and building it costs about 4 ms and 2 MB (BenchmarkLoad in concepts),
// too much to repeat for every suite file loaded and every item played.
var builtUnderstanding = sync.OnceValues(func() (*concepts.Understanding, error) {
	u, err := concepts.Load()
	if err != nil {
		return nil, fmt.Errorf("scenarios: the concept understanding: %w", err)
	}
	return u, nil
})

// Understanding is the understanding by meaning the simulated patients use:
// the concept vocabulary and its cues (bff/scenarios/concepts). It is safe
// for concurrent use; its error is a fault of the build.
func Understanding() (Understander, error) {
	u, err := builtUnderstanding()
	if err != nil {
		return nil, err
	}
	return byMeaning{u}, nil
}

// Vocabulary is the concept vocabulary a fact's `concept` names, in the
// order of its file, each concept with its group (a copy).
func Vocabulary() ([]concepts.Concept, error) {
	u, err := builtUnderstanding()
	if err != nil {
		return nil, err
	}
	return u.Concepts(), nil
}

// byMeaning adapts concepts.Understanding to Understander: it adds each
// concept's kind, which the patient needs to tell open questions.
type byMeaning struct{ u *concepts.Understanding }

func (b byMeaning) Understand(message string) []Asked {
	ms := b.u.Understand(message)
	out := make([]Asked, 0, len(ms))
	for _, m := range ms {
		c, _ := b.u.Concept(m.Concept)
		out = append(out, Asked{Concept: m.Concept, Kind: c.Kind, Inverse: m.Inverse, Cue: m.Cue, Question: m.Question, Alt: m.Alt, Margin: m.Margin})
	}
	return out
}

func (b byMeaning) Known(id string) bool {
	_, ok := b.u.Concept(id)
	return ok
}

func (b byMeaning) Areas(text string) []string { return b.u.Areas(text) }

func (b byMeaning) Names(title, text string) bool { return b.u.Names(title, text) }

func (b byMeaning) Covered(titles []string, text string) bool { return b.u.Covered(titles, text) }
