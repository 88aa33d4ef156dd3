package scenarios

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of a suite file.
const (
	// MaxFileBytes is the largest suite file, on the command line and in
	// the app's upload form alike: 200 KiB holds about 240 vignettes
	// written like the built-in ones (61 in 50 KB). The form says less only
	// when the server's body limit (HTTP_MAX_BODY_BYTES) leaves less room.
	MaxFileBytes      = 200 << 10
	MaxVignettes      = 500 // per file
	MaxOpeningChars   = 2000
	DefaultMaxTurns   = 15
	MaxMaxTurns       = 30
	maxAge            = 130
	bands             = "strong, mid, weak"
	sexes             = "female, male, other"
	knownDispositions = "urgent_escalation, clinician_review, self_care"
)

var idPattern = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// Problem is one rule a suite file breaks. Its text names the file, the
// line, the vignette (by id and 1-based position) and the field, then the
// rule, in words a suite's author reads without knowing Go or YAML's
// internals:
//
//	suite.yaml: line 41: vignette "chest-pain-arm" (3): gold.class: must be one of emergency, urgent, routine, self_care
type Problem struct {
	File     string // the name given to Load
	Line     int    // 1-based line of the file, 0 when the file as a whole is at fault
	Vignette string // id, "" when the file itself is at fault or the id is empty
	Index    int    // 1-based position in the file, 0 when the file itself is at fault
	Field    string // e.g. "gold.class", "facts[2].asks"
	Rule     string // what is wrong, e.g. "required"
	// Concept is the concept a fact names that the vocabulary does not
	// have, as written: a page can point to the vocabulary.
	Concept string
}

// Where is the problem's place in its file, without the file's name:
// `line 41: vignette "chest-pain-arm" (3): gold.class`; "" for the file as
// a whole.
func (p *Problem) Where() string {
	var parts []string
	if p.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", p.Line))
	}
	if p.Index > 0 {
		v := "vignette "
		if p.Vignette != "" {
			v += strconv.Quote(p.Vignette) + " "
		}
		parts = append(parts, v+fmt.Sprintf("(%d)", p.Index))
	}
	if p.Field != "" {
		parts = append(parts, p.Field)
	}
	return strings.Join(parts, ": ")
}

func (p *Problem) Error() string {
	if w := p.Where(); w != "" {
		return p.File + ": " + w + ": " + p.Rule
	}
	return p.File + ": " + p.Rule
}

// Problems are the *Problem values err holds (Load's errors.Join of them,
// or an error wrapping it), in order; none for any other error.
func Problems(err error) []*Problem {
	switch e := err.(type) {
	case *Problem:
		return []*Problem{e}
	case interface{ Unwrap() []error }:
		var out []*Problem
		for _, e := range e.Unwrap() {
			out = append(out, Problems(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		return Problems(e.Unwrap())
	}
	return nil
}

// NotLoaded is the line that heads a suite file's problems: "mine.yaml
// does not load: 3 problems"; "" when err holds none.
func NotLoaded(err error) string {
	ps := Problems(err)
	if len(ps) == 0 {
		return ""
	}
	return fmt.Sprintf("%s does not load: %s", ps[0].File, count(len(ps), "problem"))
}

// ProblemList is err for a person reading a terminal: a suite file's
// problems one a line under NotLoaded's line, or err's own text.
func ProblemList(err error) string {
	ps := Problems(err)
	if len(ps) == 0 {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(NotLoaded(err))
	for _, p := range ps {
		b.WriteString("\n  ")
		if w := p.Where(); w != "" {
			b.WriteString(w + ": ")
		}
		b.WriteString(p.Rule)
	}
	return b.String()
}

// count is "1 problem", "3 problems".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Load decodes and validates one suite file; name (the file's name) is used
// in errors and, without its extension, as the suite's name when the file
// has no `suite:` field. Decoding is strict: an unknown field is an error.
// The error is nil or an errors.Join of every *Problem found, in the
// order of their lines: a file that is not text, or not YAML, is one
// Problem; otherwise unknown fields and wrong types are reported with
// every rule the rest breaks. MaxTurns is set to DefaultMaxTurns where it
// is 0.
func Load(name string, data []byte) (*Suite, error) {
	if len(data) > MaxFileBytes {
		return nil, &Problem{File: name, Rule: fmt.Sprintf("the file is %d KiB: at most %d KiB is accepted; split the suite into smaller files",
			(len(data)+1023)>>10, MaxFileBytes>>10)}
	}
	if p := notText(name, data); p != nil {
		return nil, p
	}
	root, probs := parse(name, data)
	if root == nil {
		return nil, joinProblems(probs)
	}
	pos := placesOf(root)
	s, typeProbs := decode(name, data, pos)
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	vocab, err := Understanding()
	if err != nil {
		return nil, err
	}
	for _, p := range validate(name, s, vocab, pos) {
		if !coveredBy(p, typeProbs) {
			probs = append(probs, p)
		}
	}
	probs = append(probs, typeProbs...)
	for _, p := range probs {
		if p.Line == 0 {
			p.Line = pos.line(p.Index, p.Field)
		}
	}
	slices.SortStableFunc(probs, func(a, b *Problem) int { return a.Line - b.Line })
	if len(probs) > 0 {
		return nil, joinProblems(probs)
	}
	for i := range s.Vignettes {
		if s.Vignettes[i].MaxTurns == 0 {
			s.Vignettes[i].MaxTurns = DefaultMaxTurns
		}
	}
	return s, nil
}

// joinProblems is the error of probs: the one Problem, or their errors.Join.
func joinProblems(probs []*Problem) error {
	if len(probs) == 1 {
		return probs[0]
	}
	errs := make([]error, len(probs))
	for i, p := range probs {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// LoadFile reads and loads a suite file (see Load). A missing file's error
// says so and matches fs.ErrNotExist; other read errors are wrapped.
func LoadFile(path string) (*Suite, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no suite file %s: %w", path, fs.ErrNotExist)
	} else if err != nil {
		return nil, fmt.Errorf("scenarios: open suite: %w", err)
	}
	defer f.Close()
	// Read one byte past the limit so Load can tell a file that is too big.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scenarios: read suite %s: %w", path, err)
	}
	return Load(path, data)
}

// notASuite is the rule a file breaks when it is not a YAML mapping.
const notASuite = "the file must be a mapping with `vignettes:` (a list of vignettes) at its top"

// signatures are the first bytes of files people upload by mistake.
var signatures = []struct{ magic, what string }{
	{"\x89PNG\r\n\x1a\n", "a PNG image"},
	{"\xff\xd8\xff", "a JPEG image"},
	{"GIF87a", "a GIF image"},
	{"GIF89a", "a GIF image"},
	{"II*\x00", "a TIFF image"},
	{"MM\x00*", "a TIFF image"},
	{"%PDF-", "a PDF document"},
	{"PK\x03\x04", "a ZIP archive (a Word, Excel or OpenDocument file is one)"},
	{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a Word or Excel document"},
	{"\x1f\x8b", "a gzip archive"},
	{"{\\rtf", "an RTF document"},
	{"\xff\xfe", "UTF-16 text (save it as UTF-8)"},
	{"\xfe\xff", "UTF-16 text (save it as UTF-8)"},
}

// notText is the Problem of a file that is not UTF-8 text, or is text of
// another kind (a web page), said as what it looks like; nil for text.
func notText(name string, data []byte) *Problem {
	notSuite := func(what string) *Problem {
		return &Problem{File: name, Rule: "this is not a YAML suite file: it looks like " + what}
	}
	for _, s := range signatures {
		if bytes.HasPrefix(data, []byte(s.magic)) {
			return notSuite(s.what)
		}
	}
	if len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP" {
		return notSuite("a WebP image")
	}
	head := strings.ToLower(string(bytes.TrimSpace(data[:min(len(data), 64)])))
	if strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") {
		return notSuite("a web page (HTML)")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return notSuite("a binary file, not text")
	}
	if !utf8.Valid(data) {
		bad := 0
		for len(data[bad:]) > 0 {
			r, n := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		return &Problem{File: name, Line: 1 + bytes.Count(data[:bad], []byte("\n")),
			Rule: "the file is not UTF-8 text (this line has the first character it cannot read): save it as UTF-8"}
	}
	return nil
}

// yamlError is a syntax error of the YAML parser: "yaml: line 3: ...".
var yamlError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// topVignettes finds a `vignettes:` line at the top of a file.
var topVignettes = regexp.MustCompile(`(?m)^vignettes\s*:`)

// parse reads the file's one YAML document; nil and the Problems when it is
// empty, not YAML, more than one document or not a mapping.
func parse(name string, data []byte) (*yaml.Node, []*Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, []*Problem{{File: name, Rule: "the file is empty: " + notASuite}}
	} else if err != nil {
		p := syntaxProblem(name, data, err)
		if !topVignettes.Match(data) {
			return nil, []*Problem{{File: name, Line: firstContentLine(data), Rule: notASuite + ", and this file has no `vignettes:` line"}, p}
		}
		return nil, []*Problem{p}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, []*Problem{{File: name, Line: extra.Line, Rule: "more than one YAML document (a `---` line starts another): a suite file is one"}}
	}
	if len(doc.Content) != 1 {
		return nil, []*Problem{{File: name, Rule: "the file is empty: " + notASuite}}
	}
	root := doc.Content[0]
	switch {
	case root.Kind == yaml.MappingNode:
		return root, nil
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
		return nil, []*Problem{{File: name, Rule: "the file is empty: " + notASuite}}
	case root.Kind == yaml.SequenceNode:
		return nil, []*Problem{{File: name, Line: root.Line, Rule: notASuite + "; this file starts with a list: put `vignettes:` on a line above it and indent the list under it"}}
	}
	return nil, []*Problem{{File: name, Line: root.Line, Rule: notASuite + "; this file starts with plain text"}}
}

// firstContentLine is the first line that is neither blank nor a comment.
func firstContentLine(data []byte) int {
	for i, l := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return i + 1
		}
	}
	return 1
}

// yamlSyntax says the parser's messages in words, the most common first.
var yamlSyntax = []struct{ says, means string }{
	{"mapping values are not allowed", "a value holds \": \" (put it in quotes: answer: \"yes: it hurts\"), or a field is indented wrongly"},
	{"did not find expected key", "the indentation does not line up with the lines above"},
	{"did not find expected '-' indicator", "the indentation does not line up with the lines above"},
	{"did not find expected node content", "a value is missing, or a [ ] or { } list is not closed"},
	{"could not find expected ':'", "this line is neither `field: value` nor a list item (`- ...`)"},
	{"found unexpected end of stream", "the file ends inside a quoted value or a [ ] or { } list: a quote or a bracket is not closed"},
	{"found unknown escape character", "a \\ in double quotes that is not an escape: write \\\\, or use single quotes"},
	{"found character that cannot start any token", "a character that cannot start a value here (such as @, ` or %): put the value in quotes"},
}

// syntaxProblem is the Problem of a file the YAML parser refuses. The
// parser names the line where the enclosing block starts for some errors
// (an item indented wrongly on line 9 is "line 1: did not find expected
// '-' indicator"), so the line at fault is found apart: the end of the
// shortest start of the file, from the parser's line on, that fails to
// parse, when it fails with the same error (found by bisection: a dozen
// parses for the largest file).
func syntaxProblem(name string, data []byte, err error) *Problem {
	m := yamlError.FindStringSubmatch(err.Error())
	if m == nil {
		return &Problem{File: name, Rule: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(k int) string {
		var n yaml.Node
		if err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n); err != nil {
			if mm := yamlError.FindStringSubmatch(err.Error()); mm != nil {
				return mm[2]
			}
			return err.Error()
		}
		return ""
	}
	if lo := max(line, 1); lo <= len(lines) {
		k := lo + sort.Search(len(lines)-lo+1, func(i int) bool { return fails(lo+i) != "" })
		if k <= len(lines) && fails(k) == msg {
			line = k
		}
	}
	says := msg
	for _, s := range yamlSyntax {
		if strings.Contains(msg, s.says) {
			says = s.means
			break
		}
	}
	if line >= 1 && line <= len(lines) && bytes.ContainsRune(lines[line-1], '\t') {
		says = "a tab character: YAML indents with spaces, never tabs"
	}
	return &Problem{File: name, Line: line, Rule: "not valid YAML: " + says}
}

// places are where each field of a suite file is: the line of every key,
// and what is at each line, by vignette and field path ("facts[2].concept",
// as validate names them).
type places struct {
	vignettes []vignettePlace
	at        map[place]int // the line of a field (its key) or a list item
	keys      map[int][]keyPlace
	values    map[int][]valuePlace // the values on each line
}

type valuePlace struct {
	place
	tag, value string
}

type place struct {
	index int    // 1-based vignette, 0 for the file itself
	field string // path within it
}

type vignettePlace struct {
	line int
	id   string
}

type keyPlace struct {
	name  string
	owner place // the mapping the key is in
}

func placesOf(root *yaml.Node) *places {
	ps := &places{at: map[place]int{}, keys: map[int][]keyPlace{}, values: map[int][]valuePlace{}}
	ps.mapping(root, place{})
	return ps
}

func (ps *places) mapping(n *yaml.Node, owner place) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ps.keys[k.Line] = append(ps.keys[k.Line], keyPlace{k.Value, owner})
		here := place{owner.index, join(owner.field, k.Value)}
		ps.at[here] = k.Line
		if owner == (place{}) && k.Value == "vignettes" && v.Kind == yaml.SequenceNode {
			ps.values[v.Line] = append(ps.values[v.Line], valuePlace{here, v.Tag, ""})
			for j, item := range v.Content {
				vp := vignettePlace{line: item.Line}
				for k := 0; item.Kind == yaml.MappingNode && k+1 < len(item.Content); k += 2 {
					if item.Content[k].Value == "id" {
						vp.id = item.Content[k+1].Value
					}
				}
				ps.vignettes = append(ps.vignettes, vp)
				ps.node(item, place{index: j + 1})
			}
			continue
		}
		ps.node(v, here)
	}
}

func (ps *places) node(n *yaml.Node, here place) {
	ps.values[n.Line] = append(ps.values[n.Line], valuePlace{here, n.Tag, n.Value})
	switch n.Kind {
	case yaml.MappingNode:
		ps.mapping(n, here)
	case yaml.SequenceNode:
		for j, item := range n.Content {
			p := place{here.index, fmt.Sprintf("%s[%d]", here.field, j+1)}
			ps.at[p] = item.Line
			ps.node(item, p)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// line is the line of a vignette's field, or of the nearest field holding
// it, or of the vignette; 0 when none is in the file.
func (ps *places) line(index int, field string) int {
	for f := field; f != ""; f = parent(f) {
		if l, ok := ps.at[place{index, f}]; ok {
			return l
		}
	}
	if index > 0 && index <= len(ps.vignettes) {
		return ps.vignettes[index-1].line
	}
	return 0
}

// parent is the path holding field: "facts[2]" for "facts[2].concept",
// "facts" for "facts[2]", "" for "facts".
func parent(field string) string {
	if i := strings.LastIndexAny(field, ".["); i >= 0 {
		return field[:i]
	}
	return ""
}

// vignette is the id of the vignette at index, "" when none.
func (ps *places) vignette(index int) string {
	if index > 0 && index <= len(ps.vignettes) {
		return ps.vignettes[index-1].id
	}
	return ""
}

// The decoder's messages (yaml.v3's TypeError): a field the format does not
// have, a value of the wrong type, a key given twice.
var (
	unknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type (\S+)$`)
	wrongType    = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	keyTwice     = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line (\d+)$`)
)

// decode decodes the file strictly into a Suite. What does not fit the
// format is a Problem each, naming the field and the line; the rest of the
// file is decoded all the same, so its rules are checked too.
func decode(name string, data []byte, pos *places) (*Suite, []*Problem) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Suite
	var te *yaml.TypeError
	if err := dec.Decode(&s); errors.As(err, &te) {
		var probs []*Problem
		for _, msg := range te.Errors {
			probs = append(probs, typeProblem(name, msg, pos))
		}
		return &s, probs
	} else if err != nil { // parse has read the file: not expected
		return &s, []*Problem{{File: name, Rule: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	return &s, nil
}

// typeProblem says one of the decoder's messages as a Problem.
func typeProblem(name, msg string, pos *places) *Problem {
	p := &Problem{File: name, Rule: msg}
	at := func(line string, pl place) {
		p.Line, _ = strconv.Atoi(line)
		p.Index, p.Field, p.Vignette = pl.index, pl.field, pos.vignette(pl.index)
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		l, _ := strconv.Atoi(m[1])
		owner := place{}
		for _, k := range pos.keys[l] {
			if k.name == m[2] {
				owner = k.owner
			}
		}
		at(m[1], place{owner.index, join(owner.field, m[2])})
		what, fields := formatType(m[3])
		p.Rule = fmt.Sprintf("not a field of %s; its fields are %s", what, strings.Join(fields, ", "))
	} else if m := wrongType.FindStringSubmatch(msg); m != nil {
		l, _ := strconv.Atoi(m[1])
		// The value on that line with that tag (and text, which the
		// message cuts after 7 characters).
		var v valuePlace
		for _, c := range pos.values[l] {
			if c.tag == "!!"+m[2] && strings.HasPrefix(c.value, strings.TrimSuffix(m[3], "...")) {
				v = c
				break
			}
		}
		at(m[1], v.place)
		got := map[string]string{"str": "text", "int": "a number", "float": "a number", "bool": "true or false",
			"seq": "a list", "map": "a mapping (field: value lines)", "null": "nothing"}[m[2]]
		if got == "" {
			got = "!!" + m[2]
		}
		if text := cmp.Or(v.value, m[3]); text != "" && (m[2] == "str" || m[2] == "int" || m[2] == "float" || m[2] == "bool") {
			if r := []rune(text); len(r) > 40 {
				text = string(r[:40]) + "…"
			}
			got += " " + strconv.Quote(text)
		}
		p.Rule = fmt.Sprintf("must be %s, not %s", goTypeWords(m[4]), got)
	} else if m := keyTwice.FindStringSubmatch(msg); m != nil {
		l, _ := strconv.Atoi(m[1])
		owner := place{}
		for _, k := range pos.keys[l] {
			if k.name == m[2] {
				owner = k.owner
			}
		}
		at(m[1], place{owner.index, join(owner.field, m[2])})
		p.Rule = "given twice: also on line " + m[3]
	}
	return p
}

// formatTypes are the types of a suite file's mappings, by the name the
// decoder gives them, with words for them.
var formatTypes = map[string]struct {
	what string
	t    reflect.Type
}{
	"scenarios.Suite":    {"a suite file's top level", reflect.TypeFor[Suite]()},
	"scenarios.Vignette": {"a vignette", reflect.TypeFor[Vignette]()},
	"scenarios.Fact":     {"a fact", reflect.TypeFor[Fact]()},
	"scenarios.Gold":     {"gold", reflect.TypeFor[Gold]()},
}

// formatType is the words for a mapping's type and its fields, in order.
func formatType(goType string) (string, []string) {
	ft, ok := formatTypes[goType]
	if !ok {
		return "this mapping", nil
	}
	var fields []string
	for f := range ft.t.Fields() {
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			fields = append(fields, tag)
		}
	}
	return ft.what, fields
}

// goTypeWords is the words for the type a value had to be.
func goTypeWords(goType string) string {
	switch goType {
	case "int", "*int":
		return "a whole number"
	case "string", "scenarios.Class":
		return "text"
	case "[]string":
		return "a list of texts"
	case "[]scenarios.Vignette":
		return "a list of vignettes, each starting with -"
	case "[]scenarios.Fact":
		return "a list of facts, each starting with -"
	case "map[string]string":
		return "a mapping of names to values ({centor_mcisaac: weak})"
	case "scenarios.Suite":
		return "a mapping with `vignettes:`"
	}
	if ft, ok := formatTypes[goType]; ok {
		_, fields := formatType(goType)
		return fmt.Sprintf("%s: a mapping of its fields (%s)", ft.what, strings.Join(fields, ", "))
	}
	return goType
}

// coveredBy reports whether p follows from one of the decoder's problems:
// a rule of a field (or of a field inside one) whose value could not be
// decoded ("gold.class: required" when gold is text).
func coveredBy(p *Problem, decoded []*Problem) bool {
	for _, d := range decoded {
		if d.Index != p.Index || strings.HasPrefix(d.Rule, "not a field of") || strings.HasPrefix(d.Rule, "given twice") {
			continue
		}
		if d.Field == "" || p.Field == d.Field || strings.HasPrefix(p.Field, d.Field+".") || strings.HasPrefix(p.Field, d.Field+"[") {
			return true
		}
	}
	return false
}

// validate checks every rule of the format the decoded suite can break;
// pos says which fields the file has.
func validate(name string, s *Suite, vocab Understander, pos *places) []*Problem {
	var errs []*Problem
	if _, given := pos.at[place{field: "vignettes"}]; !given {
		errs = append(errs, &Problem{File: name, Field: "vignettes", Rule: "required: " + notASuite})
	} else if len(s.Vignettes) == 0 {
		errs = append(errs, &Problem{File: name, Field: "vignettes", Rule: "at least one vignette"})
	}
	if len(s.Vignettes) > MaxVignettes {
		errs = append(errs, &Problem{File: name, Field: "vignettes", Rule: fmt.Sprintf("%d vignettes, at most %d", len(s.Vignettes), MaxVignettes)})
	}
	seen := map[string]int{}
	for i := range s.Vignettes {
		v := &s.Vignettes[i]
		bad := func(field, format string, args ...any) *Problem {
			p := &Problem{File: name, Vignette: v.ID, Index: i + 1, Field: field, Rule: fmt.Sprintf(format, args...)}
			errs = append(errs, p)
			return p
		}
		switch {
		case v.ID == "":
			bad("id", "required")
		case !idPattern.MatchString(v.ID):
			bad("id", "must be 1 to 64 of a-z, 0-9, _ and -")
		case seen[v.ID] > 0:
			bad("id", "duplicate of vignette (%d)", seen[v.ID])
		default:
			seen[v.ID] = i + 1
		}
		if strings.TrimSpace(v.Opening) == "" {
			bad("opening", "required")
		} else if n := len([]rune(v.Opening)); n > MaxOpeningChars {
			bad("opening", "%d characters, at most %d", n, MaxOpeningChars)
		}
		switch v.Sex {
		case "", "female", "male", "other":
		default:
			bad("sex", "must be one of %s, or left out", sexes)
		}
		for j, n := range v.Neutral {
			switch {
			case n != "sex" && n != "age":
				bad(fmt.Sprintf("neutral[%d]", j+1), "must be sex or age, got %q", n)
			case n == "sex" && v.Sex != "female" && v.Sex != "male":
				bad(fmt.Sprintf("neutral[%d]", j+1), "sex can be swapped only when sex is female or male")
			case n == "age" && (v.AgeYears == nil || *v.AgeYears < 18):
				bad(fmt.Sprintf("neutral[%d]", j+1), "age can be swapped only for an adult's age_years (18 or more)")
			}
		}
		if v.AgeYears != nil && (*v.AgeYears < 0 || *v.AgeYears > maxAge) {
			bad("age_years", "must be 0 to %d", maxAge)
		}
		if v.MaxTurns < 0 || v.MaxTurns > MaxMaxTurns {
			bad("max_turns", "must be 1 to %d (0 or left out: %d)", MaxMaxTurns, DefaultMaxTurns)
		}
		for j, f := range v.Facts {
			field := fmt.Sprintf("facts[%d]", j+1)
			if len(f.Asks) == 0 && strings.TrimSpace(f.Concept) == "" {
				bad(field, "needs concept or asks")
			}
			if c := strings.TrimSpace(f.Concept); c != "" && !vocab.Known(c) {
				bad(field+".concept", "%q is not in the concept vocabulary", c).Concept = c
			}
			for k, a := range f.Asks {
				if strings.TrimSpace(a) == "" {
					bad(fmt.Sprintf("%s.asks[%d]", field, k+1), "must not be empty")
				}
			}
			if strings.TrimSpace(f.Answer) == "" && strings.TrimSpace(f.Choose) == "" {
				bad(field, "needs answer or choose")
			}
		}
		switch v.Gold.Class {
		case "":
			bad("gold.class", "required: one of %s", classNames())
		case Emergency, Urgent, Routine, SelfCare:
		default:
			bad("gold.class", "must be one of %s", classNames())
		}
		for j, d := range v.Gold.Dispositions {
			switch d {
			case "urgent_escalation", "clinician_review", "self_care":
			default:
				bad(fmt.Sprintf("gold.dispositions[%d]", j+1), "must be one of %s", knownDispositions)
			}
		}
		for _, key := range slices.Sorted(maps.Keys(v.Gold.Scores)) {
			switch v.Gold.Scores[key] {
			case "strong", "mid", "weak":
			default:
				bad("gold.scores."+key, "must be one of %s", bands)
			}
		}
	}
	return errs
}

// classNames lists Classes for error messages.
func classNames() string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
