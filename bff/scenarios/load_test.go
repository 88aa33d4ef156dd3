package scenarios

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const validSuite = `suite: smoke
vignettes:
  - id: sore-throat-1
    title: Sore throat, weak McIsaac
    age_years: 30
    sex: male
    history: none
    opening: "I have a sore throat"
    facts:
      - asks: [fever]
        answer: "no"
      - asks: [how long, "days*"]
        choose: "1 to 2 days"
        answer: "two days"
    default: "no"
    max_turns: 12
    gold:
      class: self_care
      dispositions: [self_care]
      red_flags_positive: []
      red_flags_negative: [stridor]
      protocol: sore_throat.v1
      scores: {centor_mcisaac: weak}
  - id: chest_2
    opening: "crushing chest pain"
    gold: {class: emergency}
`

func TestLoadValid(t *testing.T) {
	s, err := Load("suite.yaml", []byte(validSuite))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Name != "smoke" || len(s.Vignettes) != 2 {
		t.Fatalf("suite %q with %d vignettes", s.Name, len(s.Vignettes))
	}
	v := s.Vignettes[0]
	if v.ID != "sore-throat-1" || v.Title == "" || v.AgeYears == nil || *v.AgeYears != 30 || v.Sex != "male" || v.History != "none" ||
		v.Opening != "I have a sore throat" || v.Default != "no" || v.MaxTurns != 12 {
		t.Errorf("vignette %+v", v)
	}
	if len(v.Facts) != 2 || v.Facts[1].Choose != "1 to 2 days" || v.Facts[1].Answer != "two days" || v.Facts[1].Asks[1] != "days*" {
		t.Errorf("facts %+v", v.Facts)
	}
	g := v.Gold
	if g.Class != SelfCare || g.Protocol != "sore_throat.v1" || g.Scores["centor_mcisaac"] != "weak" ||
		len(g.Dispositions) != 1 || len(g.RedFlagsNegative) != 1 {
		t.Errorf("gold %+v", g)
	}
	if w := s.Vignettes[1]; w.MaxTurns != DefaultMaxTurns || w.AgeYears != nil {
		t.Errorf("second vignette: max_turns %d (want the default %d), age %v", w.MaxTurns, DefaultMaxTurns, w.AgeYears)
	}
}

func TestLoadNamesTheSuiteAfterTheFile(t *testing.T) {
	s, err := Load("dir/my-suite.yaml", []byte(strings.Replace(validSuite, "suite: smoke\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "my-suite" {
		t.Errorf("name %q, want my-suite", s.Name)
	}
}

// one is a single-vignette suite whose vignette has the given fields
// (indented YAML lines) in place of the default ones.
func one(fields string) string {
	return "vignettes:\n  - " + strings.TrimPrefix(strings.ReplaceAll(fields, "\n", "\n    "), "    ")
}

const okFields = `id: v1
opening: hello
gold: {class: routine}`

func TestLoadRules(t *testing.T) {
	long := strings.Repeat("é", MaxOpeningChars+1) // characters, not bytes
	cases := []struct {
		name, yaml, want string
	}{
		{"id required", one("opening: hi\ngold: {class: routine}"), `suite.yaml: line 2: vignette (1): id: required`},
		{"id charset", one("id: Chest Pain\nopening: hi\ngold: {class: routine}"), `suite.yaml: line 2: vignette "Chest Pain" (1): id: must be 1 to 64 of a-z, 0-9, _ and -`},
		{"id length", one("id: " + strings.Repeat("a", 65) + "\nopening: hi\ngold: {class: routine}"), `(1): id: must be 1 to 64`},
		{"id unique", "vignettes:\n  - {id: a, opening: hi, gold: {class: routine}}\n  - {id: b, opening: hi, gold: {class: routine}}\n  - {id: a, opening: hi, gold: {class: routine}}\n",
			`suite.yaml: line 4: vignette "a" (3): id: duplicate of vignette (1)`},
		{"opening required", one("id: v1\ngold: {class: routine}"), `suite.yaml: line 2: vignette "v1" (1): opening: required`},
		{"opening blank", one("id: v1\nopening: '   '\ngold: {class: routine}"), `"v1" (1): opening: required`},
		{"opening length", one("id: v1\nopening: " + long + "\ngold: {class: routine}"), `"v1" (1): opening: 2001 characters, at most 2000`},
		{"sex", one(okFields + "\nsex: intersex"), `"v1" (1): sex: must be one of female, male, other, or left out`},
		{"age negative", one(okFields + "\nage_years: -1"), `"v1" (1): age_years: must be 0 to 130`},
		{"neutral unknown", one(okFields + "\nneutral: [height]"), `"v1" (1): neutral[1]: must be sex or age, got "height"`},
		{"neutral sex not given", one(okFields + "\nneutral: [sex]"), `"v1" (1): neutral[1]: sex can be swapped only when sex is female or male`},
		{"neutral age of a child", one(okFields + "\nage_years: 9\nneutral: [age]"), `"v1" (1): neutral[1]: age can be swapped only for an adult's age_years (18 or more)`},
		{"age too high", one(okFields + "\nage_years: 131"), `"v1" (1): age_years: must be 0 to 130`},
		{"max_turns negative", one(okFields + "\nmax_turns: -1"), `"v1" (1): max_turns: must be 1 to 30 (0 or left out: 15)`},
		{"max_turns too high", one(okFields + "\nmax_turns: 31"), `"v1" (1): max_turns: must be 1 to 30`},
		{"fact asks", one(okFields + "\nfacts:\n  - {answer: yes}"), `"v1" (1): facts[1]: needs concept or asks`},
		{"fact concept", one(okFields + "\nfacts:\n  - {concept: chest_ache, answer: yes}"), `line 6: vignette "v1" (1): facts[1].concept: "chest_ache" is not in the concept vocabulary`},
		{"fact asks blank", one(okFields + "\nfacts:\n  - {asks: [fever, ' '], answer: yes}"), `"v1" (1): facts[1].asks[2]: must not be empty`},
		{"fact answer or choose", one(okFields + "\nfacts:\n  - {asks: [fever], answer: yes}\n  - {asks: [cough]}"), `"v1" (1): facts[2]: needs answer or choose`},
		{"gold.class required", one("id: v1\nopening: hi"), `"v1" (1): gold.class: required: one of emergency, urgent, routine, self_care`},
		{"gold.class valid", one("id: chest-pain-arm\nopening: hi\ngold: {class: ambulance}"),
			`suite.yaml: line 4: vignette "chest-pain-arm" (1): gold.class: must be one of emergency, urgent, routine, self_care`},
		{"gold.dispositions", one("id: v1\nopening: hi\ngold: {class: urgent, dispositions: [continue_intake]}"),
			`"v1" (1): gold.dispositions[1]: must be one of urgent_escalation, clinician_review, self_care`},
		{"gold.scores band", one("id: v1\nopening: hi\ngold: {class: routine, scores: {crb65: high}}"), `"v1" (1): gold.scores.crb65: must be one of strong, mid, weak`},
		{"unknown field", one(okFields + "\nurgency: high"),
			`suite.yaml: line 5: vignette "v1" (1): urgency: not a field of a vignette; its fields are id, title, age_years, sex, history, neutral, opening, complaint, facts, default, unknown, max_turns, gold`},
		{"unknown field names its vignette", "vignettes:\n  - {id: a, opening: hi, gold: {class: routine}}\n  - id: b\n    opening: hi\n    colour: red\n    gold: {class: routine}\n",
			`suite.yaml: line 5: vignette "b" (2): colour: not a field of a vignette; its fields are id,`},
		{"unknown top-level field", "name: x\n" + one(okFields), `suite.yaml: line 1: name: not a field of a suite file's top level; its fields are suite, vignettes`},
		{"wrong type", one(okFields + "\nage_years: old"), `suite.yaml: line 5: vignette "v1" (1): age_years: must be a whole number, not text "old"`},
		{"wrong type of a list", one(okFields + "\nfacts: {concept: fever}"), `suite.yaml: line 5: vignette "v1" (1): facts: must be a list of facts, each starting with -, not a mapping`},
		{"a vignette that is text", "vignettes:\n  - chest pain\n", `suite.yaml: line 2: vignette (1): must be a vignette: a mapping of its fields (id, title,`},
		{"a key twice", one(okFields + "\nopening: again"), `suite.yaml: line 5: vignette "v1" (1): opening: given twice: also on line 3`},
		{"unknown gold field", one("id: v1\nopening: hi\ngold: {class: routine, protocols: [x]}"),
			`suite.yaml: line 4: vignette "v1" (1): gold.protocols: not a field of gold; its fields are class, dispositions, red_flags_positive, red_flags_negative, protocol, scores`},
		{"no vignettes", "suite: empty\nvignettes: []\n", `suite.yaml: line 2: vignettes: at least one vignette`},
		{"no vignettes field", "suite: empty\n", "suite.yaml: vignettes: required: the file must be a mapping with `vignettes:` (a list of vignettes) at its top"},
		{"empty file", "", "suite.yaml: the file is empty: the file must be a mapping with `vignettes:`"},
		{"only comments", "# nothing yet\n", "suite.yaml: the file is empty: the file must be a mapping with `vignettes:`"},
		{"two documents", one(okFields) + "\n---\nsuite: x\n", "suite.yaml: line 5: more than one YAML document (a `---` line starts another): a suite file is one"},
		{"not YAML", "vignettes: [", `suite.yaml: line 1: not valid YAML: a value is missing, or a [ ] or { } list is not closed`},
		{"a colon in a value", one(okFields + "\ncomplaint: pain: in my chest"), `suite.yaml: line 5: not valid YAML: a value holds ": " (put it in quotes`},
		{"a tab", "vignettes:\n\t- id: v1\n", `suite.yaml: line 2: not valid YAML: a tab character: YAML indents with spaces, never tabs`},
		// The parser says line 2 (the list's start); the item at fault is on line 5.
		{"indentation", "vignettes:\n  - id: v1\n    opening: hi\n    gold: {class: routine}\n   title: x\n", `suite.yaml: line 5: not valid YAML: the indentation does not line up with the lines above`},
		{"a list at the top", "- id: v1\n  opening: hi\n", "suite.yaml: line 1: the file must be a mapping with `vignettes:` (a list of vignettes) at its top; this file starts with a list: put `vignettes:` on a line above it"},
		{"Latin-1", "vignettes:\n  - id: v1\n    opening: caf\xe9\n", `suite.yaml: line 3: the file is not UTF-8 text (this line has the first character it cannot read): save it as UTF-8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("suite.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("loaded:\n%s", c.yaml)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
			if p := new(Problem); !errors.As(err, &p) {
				t.Errorf("%v is not a *Problem", err)
			}
		})
	}
}

// TestLoadReportsEveryProblem: all problems of all vignettes at once, each
// its own *Problem, in file order.
func TestLoadReportsEveryProblem(t *testing.T) {
	data := `vignettes:
  - {id: ok, opening: hi, gold: {class: routine}}
  - {id: BAD, opening: hi, sex: x, gold: {class: routine}}
  - {id: third, gold: {class: maybe}, max_turns: 99}
`
	_, err := Load("s.yaml", []byte(data))
	want := []string{
		`s.yaml: line 3: vignette "BAD" (2): id: must be 1 to 64 of a-z, 0-9, _ and -`,
		`s.yaml: line 3: vignette "BAD" (2): sex: must be one of female, male, other, or left out`,
		`s.yaml: line 4: vignette "third" (3): opening: required`,
		`s.yaml: line 4: vignette "third" (3): max_turns: must be 1 to 30 (0 or left out: 15)`,
		`s.yaml: line 4: vignette "third" (3): gold.class: must be one of emergency, urgent, routine, self_care`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("error\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
	var p *Problem
	if !errors.As(err, &p) || p.Vignette != "BAD" || p.Index != 2 || p.Field != "id" || p.Line != 3 {
		t.Errorf("first problem %+v", p)
	}
	if p.Error() != want[0] {
		t.Errorf("first problem says %q, want %q", p.Error(), want[0])
	}
}

// TestLoadSaysWhatAFileIsNot: a file that is not a YAML suite is said so
// in words, never with the decoder's ("invalid leading UTF-8 octet",
// "cannot unmarshal !!str ... into scenarios.Suite").
func TestLoadSaysWhatAFileIsNot(t *testing.T) {
	const mapping = "the file must be a mapping with `vignettes:` (a list of vignettes) at its top"
	cases := []struct{ name, data, want string }{
		{"photo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00", "photo.png: this is not a YAML suite file: it looks like a PNG image"},
		{"scan.jpg", "\xff\xd8\xff\xe0\x00\x10JFIF\x00", "scan.jpg: this is not a YAML suite file: it looks like a JPEG image"},
		{"suite.pdf", "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "suite.pdf: this is not a YAML suite file: it looks like a PDF document"},
		{"suite.docx", "PK\x03\x04\x14\x00\x06\x00\x08\x00", "suite.docx: this is not a YAML suite file: it looks like a ZIP archive (a Word, Excel or OpenDocument file is one)"},
		{"suite.html", "<!DOCTYPE html>\n<html><body>vignettes:</body></html>\n", "suite.html: this is not a YAML suite file: it looks like a web page (HTML)"},
		{"data.bin", "vignettes:\x00\x01\x02", "data.bin: this is not a YAML suite file: it looks like a binary file, not text"},
		{"notes.txt", "Chest pain cases to try\nA man of 58 with crushing chest pain\n", "notes.txt: line 1: " + mapping + "; this file starts with plain text"},
		{"notes.txt", "\n# my notes\nPatient: a man of 58\nHe has crushing chest pain.\n",
			"notes.txt: line 3: " + mapping + ", and this file has no `vignettes:` line\n" +
				"notes.txt: line 4: not valid YAML: this line is neither `field: value` nor a list item (`- ...`)"},
		{"cases.csv", "id,opening,class\nv1,chest pain,emergency\n", "cases.csv: line 1: " + mapping + "; this file starts with plain text"},
	}
	for _, c := range cases {
		_, err := Load(c.name, []byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, c.want)
			continue
		}
		for _, goWords := range []string{"octet", "unmarshal", "!!", "scenarios.", "yaml:"} {
			if strings.Contains(err.Error(), goWords) {
				t.Errorf("%s: the error says %q: %v", c.name, goWords, err)
			}
		}
		if len(Problems(err)) == 0 {
			t.Errorf("%s: no *Problem in %v", c.name, err)
		}
	}
}

// TestLoadReportsAnUnknownFieldWithTheRest: a field the format does not
// have, or a value of the wrong type, is one problem among the others, in
// the order of their lines; a field whose value could not be read brings
// no second problem of its own ("gold.class: required" when gold is text).
func TestLoadReportsAnUnknownFieldWithTheRest(t *testing.T) {
	data := `suite: mixed
vignettes:
  - id: v1
    opening: hi
    urgency: high
    gold: {class: ambulance}
  - id: v2
    age_years: old
    gold: {class: routine}
  - id: v3
    opening: hi
    gold: emergency
`
	_, err := Load("s.yaml", []byte(data))
	want := []string{
		`s.yaml: line 5: vignette "v1" (1): urgency: not a field of a vignette; its fields are id, title, age_years, sex, history, neutral, opening, complaint, facts, default, unknown, max_turns, gold`,
		`s.yaml: line 6: vignette "v1" (1): gold.class: must be one of emergency, urgent, routine, self_care`,
		`s.yaml: line 7: vignette "v2" (2): opening: required`,
		`s.yaml: line 8: vignette "v2" (2): age_years: must be a whole number, not text "old"`,
		`s.yaml: line 12: vignette "v3" (3): gold: must be gold: a mapping of its fields (class, dispositions, red_flags_positive, red_flags_negative, protocol, scores), not text "emergency"`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("error\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// TestProblemList: the command line's text, one problem a line under a
// line naming the file; each Problem carries its parts, and a concept the
// vocabulary lacks is named apart so a page can link to the vocabulary.
func TestProblemList(t *testing.T) {
	_, err := Load("dir/s.yaml", []byte(one(okFields+"\nfacts:\n  - {concept: chest_ache, answer: yes}\n  - {asks: [cough]}")))
	want := "dir/s.yaml does not load: 2 problems\n" +
		"  line 6: vignette \"v1\" (1): facts[1].concept: \"chest_ache\" is not in the concept vocabulary\n" +
		"  line 7: vignette \"v1\" (1): facts[2]: needs answer or choose"
	if got := ProblemList(err); got != want {
		t.Errorf("ProblemList:\n%s\nwant\n%s", got, want)
	}
	ps := Problems(err)
	if len(ps) != 2 || ps[0].Concept != "chest_ache" || ps[1].Concept != "" || ps[0].Line != 6 || ps[1].Field != "facts[2]" {
		t.Errorf("Problems: %+v", ps)
	}
	_, err = Load("one.yaml", []byte("vignettes: []\n"))
	if got := ProblemList(err); got != "one.yaml does not load: 1 problem\n  line 1: vignettes: at least one vignette" {
		t.Errorf("one problem: %q", got)
	}
	if got := ProblemList(errors.New("no suite file x.yaml")); got != "no suite file x.yaml" {
		t.Errorf("another error: %q", got)
	}
}

func TestLoadLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("vignettes:\n")
	for i := range MaxVignettes + 1 {
		fmt.Fprintf(&b, "  - {id: v%d, opening: hi, gold: {class: routine}}\n", i)
	}
	if _, err := Load("big.yaml", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "big.yaml: line 1: vignettes: 501 vignettes, at most 500") {
		t.Errorf("501 vignettes: %v", err)
	}
	// Exactly 500 load.
	exact := b.String()[:strings.LastIndex(strings.TrimSuffix(b.String(), "\n"), "\n")+1]
	if s, err := Load("ok.yaml", []byte(exact)); err != nil || len(s.Vignettes) != MaxVignettes {
		t.Errorf("500 vignettes: %v", err)
	}

	huge := one(okFields) + "\n# " + strings.Repeat("x", MaxFileBytes) + "\n"
	if _, err := Load("huge.yaml", []byte(huge)); err == nil || err.Error() != "huge.yaml: the file is 201 KiB: at most 200 KiB is accepted; split the suite into smaller files" {
		t.Errorf("a file over 200 KiB: %v", err)
	}
	if p := new(Problem); !errors.As(func() error { _, err := Load("huge.yaml", []byte(huge)); return err }(), &p) {
		t.Error("a file over 200 KiB is not a *Problem")
	}
	// Exactly the limit loads.
	exact = one(okFields) + "\n#"
	exact += strings.Repeat("x", MaxFileBytes-len(exact))
	if _, err := Load("limit.yaml", []byte(exact)); err != nil {
		t.Errorf("a file of %d bytes: %v", len(exact), err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte(validSuite), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadFile(path)
	if err != nil || len(s.Vignettes) != 2 {
		t.Fatalf("LoadFile: %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no suite file") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(one("id: v1\nopening: hi")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+`: line 2: vignette "v1" (1): gold.class`) {
		t.Errorf("invalid file: %v", err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, []byte(one(okFields)+"\n# "+strings.Repeat("x", MaxFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(huge); err == nil || !strings.Contains(err.Error(), "at most 200 KiB is accepted") {
		t.Errorf("file over 200 KiB: %v", err)
	}
}

// TestBuiltinDuplicateAcrossFiles: ids are unique across the built-in
// files, and the error names both places.
func TestBuiltinDuplicateAcrossFiles(t *testing.T) {
	fsys := fstest.MapFS{
		"d/a.yaml": {Data: []byte("vignettes:\n  - {id: x, opening: hi, gold: {class: routine}}\n")},
		"d/b.yaml": {Data: []byte("vignettes:\n  - {id: y, opening: hi, gold: {class: routine}}\n  - {id: x, opening: hi, gold: {class: routine}}\n")},
		"d/c.yaml": {Data: []byte("vignettes:\n  - {id: z, opening: hi, gold: {class: nope}}\n")},
	}
	_, err := loadDir(fsys, "d")
	want := `d/b.yaml: vignette "x" (2): id: duplicate of d/a.yaml vignette (1)` + "\n" +
		`d/c.yaml: line 2: vignette "z" (1): gold.class: must be one of emergency, urgent, routine, self_care`
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	s, err := loadDir(fstest.MapFS{"d/a.yaml": {Data: []byte("vignettes:\n  - {id: x, opening: hi, gold: {class: routine}}\n")}}, "d")
	if err != nil || s.Name != "builtin" || len(s.Vignettes) != 1 {
		t.Errorf("one file: %v", err)
	}
}

func TestBuiltinPartsAddUpToBuiltin(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	parts, err := BuiltinParts()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range parts {
		if !strings.HasPrefix(p.Name, BuiltinName+"/") || len(p.Vignettes) == 0 {
			t.Errorf("part %q: %d vignettes", p.Name, len(p.Vignettes))
		}
		n += len(p.Vignettes)
	}
	if len(parts) < 2 || n != len(all.Vignettes) {
		t.Errorf("%d parts with %d vignettes, built-in suite has %d", len(parts), n, len(all.Vignettes))
	}
}
