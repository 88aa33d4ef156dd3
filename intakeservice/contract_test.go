package intakeservice_test

import (
	"encoding/json"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel/high/base"

	"github.com/clinical-intake/intake-web/intakeservice"
)

// The contract: the sandbox's OpenAPI document. These tests keep the Go
// types of this package and the document's schemas from drifting apart.
const documentPath = "openapi.yaml"

// bySchema maps every object schema of the document to its Go type. A new
// object schema, or a new struct type in this package, fails the test until
// it is listed here.
var bySchema = map[string]reflect.Type{
	"Health":                reflect.TypeFor[intakeservice.Health](),
	"CreateIntakeRequest":   reflect.TypeFor[intakeservice.CreateIntakeRequest](),
	"Demographics":          reflect.TypeFor[intakeservice.Demographics](),
	"Intake":                reflect.TypeFor[intakeservice.Intake](),
	"IntakeSummary":         reflect.TypeFor[intakeservice.Summary](),
	"Turn":                  reflect.TypeFor[intakeservice.Turn](),
	"Handoff":               reflect.TypeFor[intakeservice.Handoff](),
	"Soap":                  reflect.TypeFor[intakeservice.SOAP](),
	"CapturedFacts":         reflect.TypeFor[intakeservice.CapturedFacts](),
	"Score":                 reflect.TypeFor[intakeservice.Score](),
	"Message":               reflect.TypeFor[intakeservice.Message](),
	"Provenance":            reflect.TypeFor[intakeservice.Provenance](),
	"TurnRequest":           reflect.TypeFor[intakeservice.TurnRequest](),
	"ErrorEnvelope":         reflect.TypeFor[intakeservice.ErrorEnvelope](),
	"MessageDeltaEvent":     reflect.TypeFor[intakeservice.MessageDelta](),
	"MessageCompletedEvent": reflect.TypeFor[intakeservice.MessageCompleted](),
	"HandoffCompilingEvent": reflect.TypeFor[intakeservice.HandoffCompiling](),
	"HandoffProgressEvent":  reflect.TypeFor[intakeservice.HandoffProgress](),
	"StreamErrorEvent":      reflect.TypeFor[intakeservice.StreamError](),
	"FaultRequest":          reflect.TypeFor[intakeservice.FaultRequest](),
	"Fault":                 reflect.TypeFor[intakeservice.Fault](),
}

// Deliberate differences, each with its reason.
var (
	// Go fields the document does not have.
	notInDocument = map[string]string{
		"Turn.next_action": "in the spec's abridged overview, typeless; the sandbox does not send it",
		"Turn.trace_id":    "in the spec's abridged overview, typeless; the sandbox does not send it",
	}
	// Properties typed number that Go reads as an integer.
	numberAsInteger = map[string]string{}
	// Open enumerations whose known values are named only in prose: the
	// description that must name each constant in backquotes.
	openEnumProse = map[string]string{
		"SafetyStatus": "SafetyStatus",          // a component schema
		"Disposition":  "Disposition",           // a component schema
		"IntakeStatus": "Handoff.intake_status", // a property
	}
)

type contract struct {
	t          *testing.T
	schemas    map[string]*base.Schema
	consts     map[string][]string // Go type name -> its constants' values
	structs    []string            // the package's struct type names
	enumsSeen  map[string]bool
	structSeen map[string]bool
}

func load(t *testing.T) *contract {
	t.Helper()
	raw, err := os.ReadFile(documentPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{t: t, schemas: map[string]*base.Schema{}, enumsSeen: map[string]bool{}, structSeen: map[string]bool{}}
	for name, p := range m.Model.Components.Schemas.FromOldest() {
		s := p.Schema()
		if s == nil {
			t.Fatalf("schema %s: %v", name, p.GetBuildError())
		}
		c.schemas[name] = s
	}
	c.consts, c.structs = parsePackage(t)
	return c
}

// parsePackage reads this package's source: the string constants of each
// named type, and the names of its exported struct types.
func parsePackage(t *testing.T) (map[string][]string, []string) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string][]string{}
	var structs []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, sp := range g.Specs {
				switch sp := sp.(type) {
				case *ast.ValueSpec:
					id, ok := sp.Type.(*ast.Ident)
					if g.Tok != token.CONST || !ok {
						continue
					}
					for _, v := range sp.Values {
						if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							consts[id.Name] = append(consts[id.Name], s)
						}
					}
				case *ast.TypeSpec:
					if _, ok := sp.Type.(*ast.StructType); ok && sp.Name.IsExported() {
						structs = append(structs, sp.Name.Name)
					}
				}
			}
		}
	}
	if len(consts) == 0 || len(structs) == 0 {
		t.Fatal("found no constants or no struct types in the package source")
	}
	return consts, structs
}

type goField struct {
	field     reflect.StructField
	omitEmpty bool
}

// jsonFields returns the JSON-visible fields of a struct type by name.
func jsonFields(typ reflect.Type) map[string]goField {
	out := map[string]goField{}
	for f := range typ.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		o := strings.Split(opts, ",")
		out[name] = goField{field: f, omitEmpty: slices.Contains(o, "omitempty") || slices.Contains(o, "omitzero")}
	}
	return out
}

func (c *contract) errorf(path, format string, a ...any) {
	c.t.Helper()
	c.t.Errorf("%s: "+format, append([]any{path}, a...)...)
}

// object checks a struct type against an object schema, both ways.
func (c *contract) object(path string, s *base.Schema, typ reflect.Type) {
	c.t.Helper()
	if typ.Kind() != reflect.Struct {
		c.errorf(path, "an object in the document, %s in Go", typ)
		return
	}
	c.structSeen[typ.Name()] = true
	fields := jsonFields(typ)
	if s.Properties != nil {
		for name, p := range s.Properties.FromOldest() {
			at := path + "." + name
			f, ok := fields[name]
			if !ok {
				c.errorf(at, "property of the document, no JSON field %q in %s", name, typ)
				continue
			}
			delete(fields, name)
			required := slices.Contains(s.Required, name)
			if required == f.omitEmpty {
				c.errorf(at, "required=%v in the document, but omitempty=%v on %s.%s", required, f.omitEmpty, typ.Name(), f.field.Name)
			}
			c.property(at, p, f.field.Type, required)
		}
	}
	for name, f := range fields {
		if _, ok := notInDocument[path+"."+name]; ok {
			continue
		}
		c.errorf(path+"."+name, "JSON field %s.%s is not a property in the document", typ.Name(), f.field.Name)
	}
	for _, r := range s.Required {
		if s.Properties == nil || s.Properties.GetOrZero(r) == nil {
			c.errorf(path, "requires %q, which it does not define", r)
		}
	}
}

// property checks one property (or array item) against its Go type.
func (c *contract) property(path string, p *base.SchemaProxy, typ reflect.Type, required bool) {
	c.t.Helper()
	p = unwrapRef(p)
	s := p.Schema()
	if s == nil {
		c.errorf(path, "schema does not build: %v", p.GetBuildError())
		return
	}
	nullable := slices.Contains(s.Type, "null")
	if typ.Kind() == reflect.Pointer {
		if !nullable && required {
			c.errorf(path, "a pointer in Go, but required and not nullable in the document")
		}
		typ = typ.Elem()
	} else if nullable {
		c.errorf(path, "nullable in the document, but %s in Go (want a pointer)", typ)
	}
	if ref := p.GetReference(); ref != "" {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if want, ok := bySchema[name]; ok {
			if typ != want {
				c.errorf(path, "refers to %s, which is %s in Go, but the field is %s", name, want, typ)
			}
			return // checked on its own
		}
	}
	var kinds []string
	for _, k := range s.Type {
		if k != "null" {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		c.errorf(path, "want exactly one non-null type in the document, got %v", s.Type)
		return
	}
	switch kinds[0] {
	case "string":
		if s.Format == "date-time" {
			if typ != reflect.TypeFor[time.Time]() {
				c.errorf(path, "a date-time in the document, %s in Go (want time.Time)", typ)
			}
			return
		}
		if typ.Kind() != reflect.String {
			c.errorf(path, "a string in the document, %s in Go", typ)
			return
		}
		c.enum(path, s, typ)
	case "integer":
		if !isInt(typ) {
			c.errorf(path, "an integer in the document, %s in Go", typ)
		}
	case "number":
		_, asInt := numberAsInteger[path]
		if !(typ.Kind() == reflect.Float64 || asInt && isInt(typ)) {
			c.errorf(path, "a number in the document, %s in Go (want float64)", typ)
		}
	case "boolean":
		if typ.Kind() != reflect.Bool {
			c.errorf(path, "a boolean in the document, %s in Go", typ)
		}
	case "array":
		if typ.Kind() != reflect.Slice || s.Items == nil || !s.Items.IsA() {
			c.errorf(path, "an array with items in the document, %s in Go", typ)
			return
		}
		c.property(path+"[]", s.Items.A, typ.Elem(), true)
	case "object":
		c.object(path, s, typ)
	default:
		c.errorf(path, "type %q is not checked", kinds[0])
	}
}

// unwrapRef returns the referenced schema of a $ref with sibling keywords
// (a description, say), which libopenapi presents as an allOf of the
// reference and the siblings; the siblings carry no type.
func unwrapRef(p *base.SchemaProxy) *base.SchemaProxy {
	s := p.Schema()
	if s == nil || len(s.Type) > 0 || len(s.AllOf) == 0 {
		return p
	}
	for _, m := range s.AllOf {
		if m.IsReference() {
			return m
		}
	}
	return p
}

func isInt(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

// enum checks the constants of a string type against the document's values.
func (c *contract) enum(path string, s *base.Schema, typ reflect.Type) {
	c.t.Helper()
	var values []string
	for _, n := range s.Enum {
		values = append(values, n.Value)
	}
	closed := len(values) > 0
	if s.Const != nil {
		values = append(values, s.Const.Value)
	}
	if len(values) == 0 {
		for _, n := range s.Examples {
			values = append(values, n.Value)
		}
		closed = len(values) > 0
	}
	consts, named := c.consts[typ.Name()]
	switch {
	case len(values) > 0 && !named:
		c.errorf(path, "values %v in the document, but %s has no constants", values, typ)
	case closed:
		if !sameSet(values, consts) {
			c.errorf(path, "the document lists %v, the constants of %s are %v", sorted(values), typ.Name(), sorted(consts))
		}
		c.enumsSeen[typ.Name()] = true
	case len(values) > 0: // a const: one of the type's values
		if !slices.Contains(consts, values[0]) {
			c.errorf(path, "const %q is not a constant of %s", values[0], typ.Name())
		}
	case named:
		if _, ok := openEnumProse[typ.Name()]; !ok {
			c.errorf(path, "%s has constants but the document gives no values here", typ.Name())
		}
	}
}

func sameSet(a, b []string) bool { return slices.Equal(sorted(a), sorted(b)) }

func sorted(a []string) []string {
	a = slices.Clone(a)
	sort.Strings(a)
	return slices.Compact(a)
}

func TestTypesMatchTheDocument(t *testing.T) {
	c := load(t)
	for name, s := range c.schemas {
		if !slices.Contains(s.Type, "object") {
			continue
		}
		typ, ok := bySchema[name]
		if !ok {
			t.Errorf("object schema %s has no Go type in bySchema", name)
			continue
		}
		c.object(name, s, typ)
	}
	for name := range bySchema {
		if _, ok := c.schemas[name]; !ok {
			t.Errorf("bySchema lists %s, which the document does not define", name)
		}
	}
	for _, name := range c.structs {
		if !c.structSeen[name] {
			t.Errorf("struct type %s is not checked against any schema of the document", name)
		}
	}
	for name, where := range openEnumProse {
		var desc string
		if schema, prop, ok := strings.Cut(where, "."); ok {
			desc = c.schemas[schema].Properties.GetOrZero(prop).Schema().Description
		} else {
			desc = c.schemas[where].Description
		}
		for _, v := range c.consts[name] {
			if !strings.Contains(desc, "`"+v+"`") {
				t.Errorf("%s: constant %q is not named in the description of %s", name, v, where)
			}
		}
		c.enumsSeen[name] = true
	}
	for name := range c.consts {
		if !c.enumsSeen[name] {
			t.Errorf("the constants of %s are not checked against the document", name)
		}
	}
}

// The stream's event names and data schemas are the document's x-sse-events.
func TestEventsMatchTheDocument(t *testing.T) {
	raw, err := os.ReadFile(documentPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	op := m.Model.Paths.PathItems.GetOrZero("/v1/intakes/{encounter_id}/turns").Post
	mt := op.Responses.Codes.GetOrZero("200").Content.GetOrZero("text/event-stream")
	node := mt.Extensions.GetOrZero("x-sse-events")
	if node == nil {
		t.Fatal("no x-sse-events on the streaming turn response")
	}
	got := map[string]string{} // event name -> schema name
	for i := 0; i+1 < len(node.Content); i += 2 {
		val := node.Content[i+1]
		for j := 0; j+1 < len(val.Content); j += 2 {
			if val.Content[j].Value == "$ref" {
				got[node.Content[i].Value] = strings.TrimPrefix(val.Content[j+1].Value, "#/components/schemas/")
			}
		}
	}
	type named interface{ EventName() string }
	want := map[string]string{intakeservice.EventTurnCompleted: "Turn"}
	for schema, typ := range bySchema {
		if ev, ok := reflect.New(typ).Elem().Interface().(named); ok {
			want[ev.EventName()] = schema
		}
	}
	for _, name := range []string{intakeservice.EventMessageDelta, intakeservice.EventMessageCompleted, intakeservice.EventHandoffCompiling, intakeservice.EventHandoffProgress, intakeservice.EventTurnCompleted, intakeservice.EventError} {
		if _, ok := want[name]; !ok {
			t.Errorf("event %s has no type with that EventName", name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("x-sse-events %v, Go events %v", got, want)
	}
}

// Times encode as the sandbox sends them, UTC with milliseconds, in the
// field's place; any RFC 3339 time decodes.
func TestTimesEncodeWithMilliseconds(t *testing.T) {
	at := time.Date(2026, 8, 3, 12, 0, 0, 120_456_789, time.FixedZone("x", 2*3600))
	in := intakeservice.Intake{EncounterID: "enc_a_b", Status: intakeservice.StateOpen, CreatedAt: at, ExpiresAt: at.Add(2 * time.Hour)}
	b, err := json.Marshal(in)
	if want := `{"encounter_id":"enc_a_b","status":"open","created_at":"2026-08-03T10:00:00.120Z","expires_at":"2026-08-03T12:00:00.120Z"}`; err != nil || string(b) != want {
		t.Fatalf("encoded %s, %v\nwant    %s", b, err, want)
	}
	var back intakeservice.Intake
	if err := json.Unmarshal(b, &back); err != nil || !back.CreatedAt.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("decoded %+v, %v", back, err)
	}

	sum, err := json.Marshal(intakeservice.Summary{EncounterID: "e", Status: intakeservice.StateClosed, TurnCount: 2, CreatedAt: at, ExpiresAt: at})
	if want := `{"encounter_id":"e","status":"closed","turn_count":2,"created_at":"2026-08-03T10:00:00.120Z","expires_at":"2026-08-03T10:00:00.120Z","last_safety_status":null,"last_disposition":null}`; err != nil || string(sum) != want {
		t.Fatalf("summary %s, %v\nwant    %s", sum, err, want)
	}

	// A note that looks like the field is a string value, escaped: left alone.
	trap := `"captured_at":"2026-08-03T12:00:00.120456789+02:00"`
	h := &intakeservice.Handoff{EncounterID: "e", CapturedAt: at, SafetyNotes: []string{trap}, Raw: json.RawMessage(`{"x":1}`)}
	tb, err := json.Marshal(&intakeservice.Turn{Handoff: h})
	if err != nil {
		t.Fatal(err)
	}
	s := string(tb)
	if !strings.Contains(s, `"handoff":{"encounter_id":"e","captured_at":"2026-08-03T10:00:00.120Z","terminal":false`) ||
		!strings.Contains(s, `"safety_notes":["\"captured_at\":\"2026-08-03T12:00:00.120456789+02:00\""]`) ||
		strings.Contains(s, `"x"`) || strings.Contains(s, "Raw") {
		t.Fatalf("turn %s", tb)
	}
}

// A decoded handoff keeps its bytes; unknown enum values are kept.
func TestHandoffKeepsRawAndUnknownValues(t *testing.T) {
	raw := `{"encounter_id":"enc_a_b","captured_at":"2026-08-03T10:00:00.123456Z","safety_status":"something_new","extra":[1, 2]}`
	var turn intakeservice.Turn
	if err := json.Unmarshal([]byte(`{"terminal":true,"handoff":`+raw+`}`), &turn); err != nil {
		t.Fatal(err)
	}
	h := turn.Handoff
	if string(h.Raw) != raw || *h.SafetyStatus != "something_new" || h.CapturedAt.Nanosecond() != 123456000 {
		t.Fatalf("%+v", h)
	}
	if !turn.NeedsReconcile() {
		t.Fatal("a turn without state fields needs reconciling")
	}
}

// Both the sandbox and the app import this package, so it imports only the
// standard library: the sandbox must import nothing of the app.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") {
			t.Errorf("package intakeservice imports %s", imp)
		}
	}
}
