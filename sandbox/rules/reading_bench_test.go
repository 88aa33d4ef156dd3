package rules

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// BenchmarkReadOpenings: the engine's first turn on every opening message
// of the blind rounds (testdata/rounds): reading a message into findings,
// the emergency categories and the protocols' recognition. One op is the
// whole set (docs/benchmarks.md, "Sandbox engine: reading messages").
func BenchmarkReadOpenings(b *testing.B) {
	names, err := filepath.Glob(filepath.Join("testdata", "rounds", "*.json"))
	if err != nil || len(names) == 0 {
		b.Fatalf("no rounds: %v", err)
	}
	var texts []string
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		var r struct {
			Cases []struct {
				Text string `json:"text"`
			} `json:"cases"`
			Left []struct {
				Text string `json:"text"`
			} `json:"left"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatal(err)
		}
		for _, c := range r.Cases {
			texts = append(texts, c.Text)
		}
		for _, c := range r.Left {
			texts = append(texts, c.Text)
		}
	}
	e := newEngine(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, text := range texts {
			if _, err := e.Evaluate(ctx, engine.Input{Patient: []string{text}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(texts)), "ns/message")
}
