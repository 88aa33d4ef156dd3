package concepts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/scenarios.md lists every concept of the vocabulary, with its kind,
// so a suite's author can find them without reading the YAML.
func TestDocsListTheVocabulary(t *testing.T) {
	u, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "scenarios.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range u.Concepts() {
		if !strings.Contains(doc, "| `"+c.ID+"` | "+string(c.Kind)+" |") {
			t.Errorf("docs/scenarios.md does not list concept %s (%s)", c.ID, c.Kind)
		}
	}
}
