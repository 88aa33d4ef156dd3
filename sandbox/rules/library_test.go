package rules

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestIdentity(t *testing.T) {
	e := newEngine(t)
	id := e.Identity()
	if id.ProtocolCount != 21 || len(e.Protocols()) != 21 {
		t.Fatalf("protocol_count %d, protocols %v", id.ProtocolCount, e.Protocols())
	}
	for name, v := range map[string]string{"directory_hash": id.DirectoryHash, "prompt_hash": id.PromptHash} {
		if !strings.HasPrefix(v, "sha256:") || len(v) != len("sha256:")+64 {
			t.Errorf("%s = %q, want sha256:<64 hex>", name, v)
		}
	}
	if id.ServerModel != "intake-rules-engine/"+Version {
		t.Errorf("server_model = %q", id.ServerModel)
	}
	if id.RuntimeProfile == "" || id.PromptProfile == "" || id.VoiceProfile == "" {
		t.Errorf("empty profile in %+v", id)
	}
	scored := 0
	for _, p := range e.lib.protocols {
		if p.Score != nil {
			scored++
		}
	}
	if scored < 4 {
		t.Errorf("%d protocols compute a score, want at least 4", scored)
	}
}

func TestPromptHashFollowsTheReplies(t *testing.T) {
	a, b := defaultReplies(), defaultReplies()
	b.CloseReview += " "
	ha, _ := a.hash()
	hb, _ := b.hash()
	if ha == hb {
		t.Fatal("changing a reply template left prompt_hash unchanged")
	}
}

// A minimal valid protocol; the cases below break it one way at a time.
const validProtocol = `{
  "id": "demo.v1", "title": "Demo", "patient_term": "demo", "triggers": ["demo"],
  "red_flags": [
    {"fact": "rf1", "label": "RF1", "ask": "rf1?", "ask_again": "again rf1?", "keywords": ["rf one"], "safety_note": "note 1"},
    {"fact": "rf2", "label": "RF2", "ask": "rf2?", "ask_again": "again rf2?", "keywords": ["rf two"], "safety_note": "note 2"}
  ],
  "questions": [
    {"fact": "q1", "label": "Q1", "ask": "q1?", "ask_again": "again q1?", "kind": "yes_no", "keywords": ["thing one"]},
    {"fact": "q2", "label": "Q2", "ask": "q2?", "ask_again": "again q2?", "kind": "yes_no", "keywords": ["thing two"]},
    {"fact": "days", "label": "Days", "ask": "how long?", "ask_again": "again how long?", "kind": "duration", "choices": ["A few days"]}
  ],
  "score": {"key": "demo_score", "name": "Demo", "source": "Someone 2001",
    "components": [{"label": "q1", "fact": "q1", "in": ["yes"], "points": 1}],
    "bands": [{"min": 1, "band": "strong", "meaning": "a"}, {"min": 0, "band": "mid", "meaning": "b"}, {"min": -100, "band": "weak", "meaning": "c"}]},
  "dispositions": [
    {"when": [{"fact": "q2", "in": ["yes"]}, {"fact": "days", "min": 3}], "disposition": "clinician_review", "reason": "r"},
    {"when": [], "disposition": "self_care", "reason": "s"}
  ],
  "advice": {"self_care": "rest"},
  "soap": {"subjective": "{opening}", "objective": "{reported}", "assessment": "{score}",
    "plan": {"self_care": "p", "clinician_review": "p", "urgent_escalation": "p"}}
}`

func TestLibraryValidation(t *testing.T) {
	lx := newLexicon()
	load := func(files map[string]string) error {
		fsys := fstest.MapFS{}
		for name, data := range files {
			fsys["protocols/"+name] = &fstest.MapFile{Data: []byte(data)}
		}
		_, err := loadLibrary(fsys, lx)
		return err
	}
	if err := load(map[string]string{"demo.v1.json": validProtocol}); err != nil {
		t.Fatalf("valid protocol rejected: %v", err)
	}
	broken := map[string]struct {
		edit    func(string) string
		name    string
		wantErr string
	}{
		"unversioned id":     {func(s string) string { return strings.Replace(s, `"demo.v1"`, `"demo"`, 1) }, "demo.json", "versioned"},
		"file name mismatch": {func(s string) string { return s }, "other.v1.json", "must be named"},
		"unknown field":      {func(s string) string { return strings.Replace(s, `"title"`, `"titel": "x", "title"`, 1) }, "", "unknown field"},
		"score without source": {func(s string) string { return strings.Replace(s, `"source": "Someone 2001"`, `"source": ""`, 1) }, "",
			"source"},
		"unused question": {func(s string) string { return strings.Replace(s, `{"fact": "q2", "in": ["yes"]}, `, "", 1) }, "",
			`question "q2": its fact is not used`},
		"unknown fact in a rule": {func(s string) string { return strings.Replace(s, `"fact": "q2", "in"`, `"fact": "q9", "in"`, 1) }, "",
			`unknown fact "q9"`},
		"red flag without safety note": {func(s string) string { return strings.Replace(s, `"safety_note": "note 2"`, `"safety_note": ""`, 1) }, "",
			"safety_note"},
		"choice not understood": {func(s string) string { return strings.Replace(s, `["A few days"]`, `["Whenever"]`, 1) }, "",
			`choice "Whenever"`},
		"no default disposition": {func(s string) string {
			return strings.Replace(s, `"when": [], `, `"when": [{"fact": "q1", "in": ["no"]}], `, 1)
		}, "",
			"unconditional"},
		"unknown placeholder": {func(s string) string { return strings.Replace(s, `"{opening}"`, `"{nope}"`, 1) }, "",
			"unknown placeholder {nope}"},
		"only one red flag": {func(s string) string {
			return strings.Replace(s, `,
    {"fact": "rf2", "label": "RF2", "ask": "rf2?", "ask_again": "again rf2?", "keywords": ["rf two"], "safety_note": "note 2"}`, "", 1)
		}, "", "1 red flags"},
	}
	for name, b := range broken {
		t.Run(name, func(t *testing.T) {
			file := b.name
			if file == "" {
				file = "demo.v1.json"
			}
			err := load(map[string]string{file: b.edit(validProtocol)})
			if err == nil || !strings.Contains(err.Error(), b.wantErr) {
				t.Fatalf("error %v, want one mentioning %q", err, b.wantErr)
			}
		})
	}
	t.Run("duplicate id", func(t *testing.T) {
		err := load(map[string]string{"demo.v1.json": validProtocol, "demo.v2.json": validProtocol})
		if err == nil || !strings.Contains(err.Error(), "must be named") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestDirectoryHashFollowsTheFiles(t *testing.T) {
	lx := newLexicon()
	hash := func(extra string) string {
		fsys := fstest.MapFS{"protocols/demo.v1.json": {Data: []byte(validProtocol + extra)}}
		lib, err := loadLibrary(fsys, lx)
		if err != nil {
			t.Fatal(err)
		}
		return lib.hash
	}
	if a, b := hash(""), hash(""); a != b {
		t.Fatal("directory hash is not stable")
	}
	if hash("") == hash("\n") {
		t.Fatal("directory hash ignores a changed byte")
	}
	// The language files (emergency patterns, normalisation) count too.
	lang, err := fs.ReadFile(libraryFiles, emergenciesFile)
	if err != nil {
		t.Fatal(err)
	}
	withLang := func(data []byte) string {
		fsys := fstest.MapFS{"protocols/demo.v1.json": {Data: []byte(validProtocol)}, emergenciesFile: {Data: data}}
		lib, err := loadLibrary(fsys, lx)
		if err != nil {
			t.Fatal(err)
		}
		return lib.hash
	}
	if withLang(lang) == hash("") || withLang(lang) == withLang(append(slices.Clone(lang), '\n')) {
		t.Fatal("directory hash ignores the emergency patterns")
	}
	e := newEngine(t)
	if e.Identity().DirectoryHash == hash("") {
		t.Fatal("the embedded library hashes like the demo library")
	}
}
