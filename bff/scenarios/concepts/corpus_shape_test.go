package concepts

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The shape of the engine-question corpus (testdata/corpus.yaml), checked
// before any code understands the questions: it decodes strictly, names only
// vocabulary concepts, has at least minCasesPerConcept cases per concept, no
// duplicated question, and every inverse concept is one the case asks about.

const minCasesPerConcept = 8

type corpusCase struct {
	Q        string    `yaml:"q"`
	Concepts *[]string `yaml:"concepts"` // a pointer: the key must be there, even as []
	Inverse  []string  `yaml:"inverse"`
}

type corpusFile struct {
	Cases []corpusCase `yaml:"cases"`
}

type vocabConcept struct {
	ID    string `yaml:"id"`
	Kind  string `yaml:"kind"`
	Yes   string `yaml:"yes"`
	Means string `yaml:"means"`
}

type vocabFile struct {
	Version  int            `yaml:"version"`
	Concepts []vocabConcept `yaml:"concepts"`
}

func decodeStrict(t *testing.T, path string, into any) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

func TestCorpusShape(t *testing.T) {
	var vocab vocabFile
	decodeStrict(t, "vocabulary.yaml", &vocab)
	kinds := map[string]string{}
	for _, c := range vocab.Concepts {
		kinds[c.ID] = c.Kind
	}
	if len(kinds) == 0 {
		t.Fatal("vocabulary.yaml has no concepts")
	}

	var corpus corpusFile
	raw := decodeStrict(t, filepath.Join("testdata", "corpus.yaml"), &corpus)
	if len(corpus.Cases) == 0 {
		t.Fatal("corpus.yaml has no cases")
	}
	for _, marker := range []string{"# round 1", "# round 2", "# round 3"} {
		if !bytes.Contains(raw, []byte(marker)) {
			t.Errorf("corpus.yaml has no %q block", marker)
		}
	}

	perConcept := map[string]int{}
	inversePer := map[string]int{}
	seen := map[string]int{}
	var inverseCases, multiCases, noneCases int
	for i, c := range corpus.Cases {
		n := i + 1
		q := strings.TrimSpace(c.Q)
		if q == "" {
			t.Errorf("case %d: empty q", n)
			continue
		}
		key := strings.ToLower(strings.Join(strings.Fields(q), " "))
		if prev, dup := seen[key]; dup {
			t.Errorf("case %d duplicates case %d: %q", n, prev, q)
		}
		seen[key] = n
		if c.Concepts == nil {
			t.Errorf("case %d (%q): no concepts key (write concepts: [] for none)", n, q)
			continue
		}
		asked := map[string]bool{}
		for _, id := range *c.Concepts {
			if _, ok := kinds[id]; !ok {
				t.Errorf("case %d (%q): concept %q is not in vocabulary.yaml", n, q, id)
			}
			if asked[id] {
				t.Errorf("case %d (%q): concept %q listed twice", n, q, id)
			}
			asked[id] = true
			perConcept[id]++
		}
		for _, id := range c.Inverse {
			if !asked[id] {
				t.Errorf("case %d (%q): inverse %q is not in its concepts", n, q, id)
			}
			if k := kinds[id]; k != "" && k != "yes_no" {
				t.Errorf("case %d (%q): inverse %q is a %s concept, not yes_no", n, q, id, k)
			}
			inversePer[id]++
		}
		switch len(*c.Concepts) {
		case 0:
			noneCases++
			if len(c.Inverse) > 0 {
				t.Errorf("case %d (%q): inverse without concepts", n, q)
			}
		case 1:
		default:
			multiCases++
		}
		if len(c.Inverse) > 0 {
			inverseCases++
		}
	}

	ids := make([]string, 0, len(kinds))
	for id := range kinds {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	minCount, minID := -1, ""
	var noInverse []string
	for _, id := range ids {
		n := perConcept[id]
		if n < minCasesPerConcept {
			t.Errorf("concept %s has %d cases, want at least %d", id, n, minCasesPerConcept)
		}
		if minCount < 0 || n < minCount {
			minCount, minID = n, id
		}
		if kinds[id] == "yes_no" && inversePer[id] == 0 {
			noInverse = append(noInverse, id)
		}
		t.Logf("%-26s %-6s cases %2d  inverse %d", id, kinds[id], n, inversePer[id])
	}
	t.Logf("cases %d; concepts %d; fewest cases per concept %d (%s)", len(corpus.Cases), len(ids), minCount, minID)
	t.Logf("inverse cases %d; two-or-more-concept cases %d; no-concept cases %d", inverseCases, multiCases, noneCases)
	t.Logf("yes_no concepts with no inverse phrasing: %v", noInverse)
}
