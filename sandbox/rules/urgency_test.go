package rules

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// docs/protocols.md says, per red flag, whether it is same-day or an
// emergency, as urgency.json has it.
func TestDocsListUrgency(t *testing.T) {
	e := newEngine(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocols.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	class := func(where string) string {
		if where == "" {
			return "emergency"
		}
		return "same day (`" + where + "`)"
	}
	for _, p := range e.lib.protocols {
		for _, rf := range p.RedFlags {
			row := "| `" + p.ID + "` | `" + rf.Fact + "` | " + class(p.sameDayFlags[rf.Fact]) + " | "
			if !strings.Contains(doc, row) {
				t.Errorf("docs/protocols.md has no row %q", row)
			}
		}
		for score, where := range p.sameDayScores {
			row := "| `" + p.ID + "` | " + p.Score.Name
			if p.Score.Key != score || !strings.Contains(doc, row) || !strings.Contains(doc, class(where)) {
				t.Errorf("docs/protocols.md has no row for %s score %s (%s)", p.ID, score, class(where))
			}
		}
	}
}

// urgency.json is checked when New loads it.
func TestUrgencyFileIsChecked(t *testing.T) {
	// The library without urgency.json: every red flag an emergency.
	fsys := fstest.MapFS{}
	names, _ := fs.Glob(libraryFiles, "*/*.json")
	for _, n := range names {
		data, _ := fs.ReadFile(libraryFiles, n)
		fsys[n] = &fstest.MapFile{Data: data}
	}
	bare, err := loadLibrary(fsys, newLexicon())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range bare.protocols {
		if len(p.sameDayFlags)+len(p.sameDayScores) > 0 {
			t.Errorf("%s: same-day escalations without urgency.json", p.ID)
		}
	}
	good := `{"same_day": [{"protocol": "sore_throat.v1", "red_flag": "trismus", "where": "gp", "source": "s"}]}`
	for name, body := range map[string]string{
		"unknown protocol": `{"same_day": [{"protocol": "nope.v1", "red_flag": "x", "where": "gp", "source": "s"}]}`,
		"unknown red flag": `{"same_day": [{"protocol": "sore_throat.v1", "red_flag": "nope", "where": "gp", "source": "s"}]}`,
		"unknown where":    `{"same_day": [{"protocol": "sore_throat.v1", "red_flag": "trismus", "where": "home", "source": "s"}]}`,
		"no source":        `{"same_day": [{"protocol": "sore_throat.v1", "red_flag": "trismus", "where": "gp"}]}`,
		"both":             `{"same_day": [{"protocol": "cough_fever.v1", "red_flag": "haemoptysis", "score": "crb65", "where": "gp", "source": "s"}]}`,
		"score not used":   `{"same_day": [{"protocol": "sore_throat.v1", "score": "centor_mcisaac", "where": "gp", "source": "s"}]}`,
		"twice":            `{"same_day": [{"protocol": "sore_throat.v1", "red_flag": "trismus", "where": "gp", "source": "s"}, {"protocol": "sore_throat.v1", "red_flag": "trismus", "where": "ed", "source": "s"}]}`,
		"unknown field":    `{"same_day": [{"protocol": "sore_throat.v1", "red_flag": "trismus", "where": "gp", "source": "s", "urgent": false}]}`,
	} {
		lib, err := loadLibrary(fsys, newLexicon())
		if err != nil {
			t.Fatal(err)
		}
		if err := loadUrgency([]byte(body), lib); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	lib, _ := loadLibrary(fsys, newLexicon())
	if err := loadUrgency([]byte(good), lib); err != nil {
		t.Errorf("a good file refused: %v", err)
	}
}
