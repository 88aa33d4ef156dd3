package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clinical-intake/intake-web/sandbox/engine"
	"github.com/clinical-intake/intake-web/sandbox/rules"
	"go.yaml.in/yaml/v3"
)

func TestBuiltinLoads(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatalf("Builtin: %v", err)
	}
	if s.Name != "builtin" {
		t.Errorf("name %q, want builtin", s.Name)
	}
	files, _ := fs.Glob(builtinFiles, "builtin/*.yaml")
	total := 0
	for _, f := range files {
		data, _ := fs.ReadFile(builtinFiles, f)
		one, err := Load(f, data)
		if err != nil {
			t.Fatal(err)
		}
		total += len(one.Vignettes)
	}
	if len(files) < 3 || total != len(s.Vignettes) {
		t.Errorf("%d files with %d vignettes merged into %d", len(files), total, len(s.Vignettes))
	}
}

// TestBuiltinCoverage: at least 40 vignettes, every protocol of the sandbox
// named by a gold label, every class several times.
func TestBuiltinCoverage(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Vignettes) < 40 {
		t.Errorf("%d vignettes, want at least 40", len(s.Vignettes))
	}
	e, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	perProtocol := map[string]int{}
	perClass := map[Class]int{}
	for _, v := range s.Vignettes {
		perProtocol[v.Gold.Protocol]++
		perClass[v.Gold.Class]++
		if v.Gold.Protocol != "" && !slices.Contains(e.Protocols(), v.Gold.Protocol) {
			t.Errorf("%s: gold.protocol %q is not a sandbox protocol", v.ID, v.Gold.Protocol)
		}
	}
	for _, p := range e.Protocols() {
		if perProtocol[p] < 2 {
			t.Errorf("protocol %s: %d vignettes, want at least 2", p, perProtocol[p])
		}
	}
	for _, c := range Classes {
		if perClass[c] < 4 {
			t.Errorf("class %s: %d vignettes, want at least 4", c, perClass[c])
		}
	}
}

// TestBuiltinAgainstRulesEngine is the suite's acceptance test: every
// built-in vignette played against the sandbox's rules engine by the
// simulated patient ends in its gold class, protocol, score bands and red
// flags, except the vignettes marked `# finding:` in their YAML, which must
// end in another class (a finding that no longer holds is stale). It plays
// the suite on every voice of the engine (each words every question, fixed
// sentence and quick reply its own way, with the same decisions): every
// vignette must end in the same class on each, and the patient must
// understand every question of both (no simulator-limited result).
func TestBuiltinAgainstRulesEngine(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	findings := builtinFindings(t)
	finals := map[string]map[string]Class{} // vignette -> voice -> final class
	for _, voice := range rules.Voices() {
		e, err := rules.NewVoice(voice)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(voice, func(t *testing.T) { builtinOnVoice(t, e, s, findings, finals, voice) })
	}
	for _, v := range s.Vignettes {
		var first Class
		for i, voice := range rules.Voices() {
			got := finals[v.ID][voice]
			if i == 0 {
				first = got
			} else if got != first {
				t.Errorf("%s: class %q on voice %s but %q on %s: the outcome hangs on the engine's wording", v.ID, got, voice, first, rules.Voices()[0])
			}
		}
	}
}

func builtinOnVoice(t *testing.T, e *rules.Engine, s *Suite, findings map[string]string, finals map[string]map[string]Class, voice string) {
	table := map[string]map[Class]int{}
	questions, understood := 0, 0
	for _, v := range s.Vignettes {
		t.Run(v.ID, func(t *testing.T) {
			res, transcript, whys := acceptPlay(t, e, v)
			got := NoClass
			if res.Terminal {
				got = ClassOf(res.Disposition, res.Urgent)
			}
			if finals[v.ID] == nil {
				finals[v.ID] = map[string]Class{}
			}
			finals[v.ID][voice] = got
			for _, w := range whys {
				questions++
				if w.Understood() {
					understood++
				} else {
					t.Errorf("a question not understood: simulator-limited\n%s", transcript)
				}
			}
			if table[v.Gold.Protocol] == nil {
				table[v.Gold.Protocol] = map[Class]int{}
			}
			table[v.Gold.Protocol][v.Gold.Class]++
			why, finding := findings[v.ID]
			switch {
			case finding && got == v.Gold.Class:
				t.Errorf("marked as a finding (%s) but the engine now gives the gold class %s", why, got)
			case !finding && got != v.Gold.Class:
				t.Errorf("class %q, gold %q\n%s", got, v.Gold.Class, transcript)
			}
			if finding {
				t.Logf("finding: engine %q, gold %q: %s", got, v.Gold.Class, why)
			}
			if v.Gold.Protocol != "" && res.ActiveProtocol != v.Gold.Protocol {
				t.Errorf("protocol %q, gold %q\n%s", res.ActiveProtocol, v.Gold.Protocol, transcript)
			}
			if len(v.Gold.Dispositions) > 0 && !finding && !slices.Contains(v.Gold.Dispositions, res.Disposition) {
				t.Errorf("disposition %q, gold %v", res.Disposition, v.Gold.Dispositions)
			}
			for key, band := range v.Gold.Scores {
				i := slices.IndexFunc(res.Scores, func(s engine.Score) bool { return s.Key == key })
				if i < 0 {
					t.Errorf("score %s not reported, gold band %s\n%s", key, band, transcript)
				} else if res.Scores[i].Band != band {
					t.Errorf("score %s band %s (total %s), gold %s\n%s", key, res.Scores[i].Band, res.Scores[i].Total, band, transcript)
				}
			}
			positive := acceptPositiveNotes(res.SafetyNotes)
			for _, rf := range v.Gold.RedFlagsPositive {
				if !strings.Contains(positive, strings.ToLower(rf)) {
					t.Errorf("red flag %q not found positive in %q", rf, res.SafetyNotes)
				}
			}
			for _, rf := range v.Gold.RedFlagsNegative {
				if strings.Contains(positive, strings.ToLower(rf)) {
					t.Errorf("red flag %q found positive in %q", rf, res.SafetyNotes)
				}
			}
		})
	}
	for _, p := range slices.Sorted(maps.Keys(table)) {
		t.Logf("%-24s %v", cmp.Or(p, "(none: emergency at once)"), table[p])
	}
	t.Logf("voice %s: %d of %d engine questions understood", voice, understood, questions)
}

// acceptPositiveNotes is the safety notes that report something positive,
// lowercased: not the list of red flags screened negative.
func acceptPositiveNotes(notes []string) string {
	var b strings.Builder
	for _, n := range notes {
		if !strings.HasPrefix(n, "Cannot-miss red flags screened negative") {
			b.WriteString(strings.ToLower(n) + "\n")
		}
	}
	return b.String()
}

// acceptPlay drives the engine as the service does (every message so far on
// each call), answered by the simulated patient, until a terminal reply or
// the vignette's turn limit.
func acceptPlay(t *testing.T, e *rules.Engine, v Vignette) (engine.Result, string, []Why) {
	t.Helper()
	d := engine.Demographics{AgeYears: v.AgeYears, Sex: v.Sex, History: v.History}
	if d.Sex == "other" {
		d.Sex = "intersex" // the start form's word for it
	}
	u, err := Understanding()
	if err != nil {
		t.Fatal(err)
	}
	p := NewPatient(&v, u)
	msgs := []string{p.Opening().Text}
	var whys []Why
	var b strings.Builder
	for {
		res, err := e.Evaluate(context.Background(), engine.Input{Demographics: d, Patient: msgs})
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		fmt.Fprintf(&b, "  patient: %s\n  engine: %s %v [%s]\n", msgs[len(msgs)-1], res.Reply, res.Choices, res.Disposition)
		if res.Terminal {
			return res, b.String(), whys
		}
		said, ok := p.Answer(res.Reply, res.Choices)
		if !ok {
			return res, b.String(), whys
		}
		fmt.Fprintf(&b, "    (why: %s)\n", said.Why)
		msgs = append(msgs, said.Text)
		whys = append(whys, said.Why)
	}
}

// builtinFindings reads the `# finding:` comments of the built-in files:
// vignette id to the comment's text. A finding comment sits anywhere inside
// its vignette (the built-ins put it above gold.class).
func builtinFindings(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := fs.Glob(builtinFiles, "builtin/*.yaml")
	for _, f := range files {
		data, _ := fs.ReadFile(builtinFiles, f)
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value != "vignettes" {
				continue
			}
			for _, item := range root.Content[i+1].Content {
				var id, comments string
				var walk func(n *yaml.Node)
				walk = func(n *yaml.Node) {
					comments += n.HeadComment + "\n" + n.LineComment + "\n"
					for k, c := range n.Content {
						if n.Kind == yaml.MappingNode && k%2 == 0 && c.Value == "id" && n == item {
							id = n.Content[k+1].Value
						}
						walk(c)
					}
				}
				walk(item)
				if _, text, ok := strings.Cut(comments, "# finding:"); ok {
					out[id], _, _ = strings.Cut(strings.TrimSpace(text), "\n")
				}
			}
		}
	}
	return out
}

// TestDocsScenarios: the example in docs/scenarios.md is Example, which
// loads; its field table is Fields, row for row; and its table lists every
// built-in vignette with its gold class and finding mark.
func TestDocsScenarios(t *testing.T) {
	data, err := os.ReadFile("../../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	_, rest, _ := strings.Cut(doc, "```yaml\n")
	example, _, _ := strings.Cut(rest, "```")
	if example != Example() {
		t.Errorf("the example of docs/scenarios.md is not bff/scenarios/example.yaml:\n%s", example)
	}
	if s, err := Load("example.yaml", []byte(Example())); err != nil || len(s.Vignettes) != 1 {
		t.Errorf("the example does not load: %v", err)
	}
	for _, f := range Fields() { // the example uses every field
		leaf := strings.TrimSuffix(f.Name[strings.LastIndex(f.Name, ".")+1:], "[]")
		if !regexp.MustCompile(`(?m)^[ -]*` + leaf + `:`).MatchString(Example()) {
			t.Errorf("the example does not use %s", f.Name)
		}
	}
	_, table, _ := strings.Cut(doc, "| field | type | rule | meaning |\n|---|---|---|---|\n")
	table, _, _ = strings.Cut(table, "\n\n")
	var want []string
	for _, f := range Fields() {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %s |", f.Name, f.Type, f.Rule, f.Meaning))
	}
	if got := strings.Split(table, "\n"); !slices.Equal(got, want) {
		t.Errorf("the field table of docs/scenarios.md is not Fields:\n%s\nwant\n%s", table, strings.Join(want, "\n"))
	}
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	findings := builtinFindings(t)
	for _, v := range s.Vignettes {
		class := string(v.Gold.Class)
		if _, ok := findings[v.ID]; ok {
			class += " (finding)"
		}
		if row := fmt.Sprintf("| %s | `%s` |", class, v.ID); !strings.Contains(doc, row) {
			t.Errorf("docs/scenarios.md has no row %q", row)
		}
	}
	if n := fmt.Sprintf("%d vignettes in", len(s.Vignettes)); !strings.Contains(doc, n) {
		t.Errorf("docs/scenarios.md does not say %q", n)
	}
}

// TestOutsideVignettesScreenedByMeaning: the built-in patients whose
// complaint is outside every protocol (builtin/outside.yaml) are told so,
// and answer every question of the generic screen from a fact stated by
// concept (never the default "no", never words of the sandbox), so the
// screen is asked and answered by meaning; the handoff names what they
// said and commits to no protocol.
func TestOutsideVignettesScreenedByMeaning(t *testing.T) {
	s, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	e, err := rules.New()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range s.Vignettes {
		if !strings.HasPrefix(v.ID, "toothache-outside-") {
			continue
		}
		n++
		res, transcript, whys := acceptPlay(t, e, v)
		notes := strings.Join(res.SafetyNotes, "\n")
		if res.ActiveProtocol != "" || !strings.Contains(notes, "Outside every protocol") || !strings.Contains(strings.ToLower(notes), strings.ReplaceAll(strings.ToLower(v.Opening[:20]), "'", "")) {
			t.Errorf("%s: protocol %q, notes %q:\n%s", v.ID, res.ActiveProtocol, res.SafetyNotes, transcript)
		}
		if !strings.Contains(transcript, "cannot assess that here") {
			t.Errorf("%s: never told plainly that it is outside what is covered:\n%s", v.ID, transcript)
		}
		for i, w := range whys {
			if w.Kind != WhyConcept {
				t.Errorf("%s: answer %d not from a fact stated by concept (%s):\n%s", v.ID, i+1, w, transcript)
			}
		}
	}
	if n < 3 {
		t.Errorf("%d outside vignettes, want 3", n)
	}
}
