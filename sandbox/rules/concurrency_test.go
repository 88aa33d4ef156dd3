package rules

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// TestOneEngineServesConversationsAtOnce: the sandbox shares one Engine
// between every intake it serves, so readings run on many goroutines at
// once over the same lexicon (its speller built lazily on first use). Four
// goroutines read every complaint opening, each with a "yes" after it, and
// every result equals the one read alone.
//
// scripts/test runs this package's corpora without -race (they are readings
// on one goroutine, several times slower under the detector and with
// nothing for it to find) and this test again with -race: it is where a data
// race in the engine would show.
func TestOneEngineServesConversationsAtOnce(t *testing.T) {
	var inputs []engine.Input
	for _, c := range readCorpora[complaintCorpus](t, "complaints") {
		for i, m := range c.Match {
			if i%5 == 0 { // a fifth of each protocol: every protocol, in seconds under -race
				inputs = append(inputs, engine.Input{Patient: []string{m, "yes"}})
			}
		}
	}
	alone, err := New()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]engine.Result, len(inputs))
	for i, in := range inputs {
		if want[i], err = alone.Evaluate(context.Background(), in); err != nil {
			t.Fatalf("%q alone: %v", in.Patient, err)
		}
	}

	shared, err := New() // fresh: its lazy parts are built under contention
	if err != nil {
		t.Fatal(err)
	}
	const goroutines = 4
	got := make([][]engine.Result, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		got[g] = make([]engine.Result, len(inputs))
		wg.Go(func() {
			for k := range inputs {
				i := (k + g*len(inputs)/goroutines) % len(inputs) // each starts elsewhere
				r, err := shared.Evaluate(context.Background(), inputs[i])
				if err != nil {
					errs[g] = err
					return
				}
				got[g][i] = r
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		for i, in := range inputs {
			if !reflect.DeepEqual(got[g][i], want[i]) {
				t.Errorf("goroutine %d read %q otherwise than alone:\n got %+v\nwant %+v", g, in.Patient, got[g][i], want[i])
			}
		}
	}
	t.Logf("%d conversations on %d goroutines", len(inputs), goroutines)
}
