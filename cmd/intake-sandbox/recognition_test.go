package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecognitionScores: each way the engine can get an opening right or
// wrong lands in its own column.
func TestRecognitionScores(t *testing.T) {
	cases := []struct {
		name string
		p    phrase
		want int
		o    outcome
		ok   bool
		t    tally
	}{
		{"committed", phrase{Expected: "rash"}, wantProtocol, outcome{committed: "rash"}, true, tally{n: 1, inScope: 1, committed: 1, nonEmergencies: 1}},
		{"also ok", phrase{Expected: "rash", AlsoOK: []string{"sore_throat"}}, wantProtocol, outcome{committed: "sore_throat"}, true, tally{n: 1, inScope: 1, committed: 1, nonEmergencies: 1}},
		{"offered", phrase{Expected: "rash"}, wantProtocol, outcome{offered: []string{"headache", "rash"}}, true, tally{n: 1, inScope: 1, offered: 1, nonEmergencies: 1}},
		{"wrong commit", phrase{Expected: "rash"}, wantProtocol, outcome{committed: "headache"}, false, tally{n: 1, inScope: 1, wrong: 1, nonEmergencies: 1}},
		{"not recognised", phrase{Expected: "rash"}, wantProtocol, outcome{}, false, tally{n: 1, inScope: 1, nonEmergencies: 1}},
		{"false alarm", phrase{Expected: "rash"}, wantProtocol, outcome{escalated: true, committed: "rash"}, false, tally{n: 1, inScope: 1, committed: 1, nonEmergencies: 1, falseAlarms: 1}},
		{"out of scope left alone", phrase{Expected: "out_of_scope"}, wantOutOfScope, outcome{offered: []string{"rash"}}, true, tally{n: 1, outOfScope: 1, nonEmergencies: 1}},
		{"false commit", phrase{Expected: "out_of_scope"}, wantOutOfScope, outcome{committed: "rash"}, false, tally{n: 1, outOfScope: 1, falseCommits: 1, nonEmergencies: 1}},
		{"escalated", phrase{Expected: "stroke"}, wantEmergency, outcome{escalated: true}, true, tally{n: 1, emergencies: 1, escalated: 1, categorised: 1}},
		{"escalated, category named", phrase{Expected: "stroke"}, wantEmergency, outcome{escalated: true, categories: []string{"stroke"}}, true, tally{n: 1, emergencies: 1, escalated: 1, categorised: 1, named: 1}},
		{"escalated, another category named", phrase{Expected: "stroke", AlsoOK: []string{"seizure"}}, wantEmergency, outcome{escalated: true, categories: []string{"seizure"}}, true, tally{n: 1, emergencies: 1, escalated: 1, categorised: 1, named: 1}},
		{"missed", phrase{Expected: "emergency"}, wantEmergency, outcome{sameDay: true}, false, tally{n: 1, emergencies: 1}},
	}
	for _, c := range cases {
		got, ok := score(c.p, c.want, c.o)
		if got != c.t || ok != c.ok {
			t.Errorf("%s: %+v ok=%v, want %+v ok=%v", c.name, got, ok, c.t, c.ok)
		}
	}
}

// TestRecognitionCommand reads both file shapes and prints the summary.
func TestRecognitionCommand(t *testing.T) {
	dir := t.TempDir()
	lay := filepath.Join(dir, "lay.json")
	held := filepath.Join(dir, "held.json")
	os.WriteFile(lay, []byte(`{"phrases": [{"phrase": "I have a sore throat", "category": "Throat", "expected": "sore_throat"}, {"phrase": "hmm", "category": "x", "expected": "unclear"}]}`), 0o600)
	os.WriteFile(held, []byte(`[{"text": "I have crushing chest pain going down my left arm", "kind": "emergency", "expected": "cardiac_chest_pain"}, {"text": "my hair is falling out", "kind": "out_of_scope", "expected": "out_of_scope"}]`), 0o600)
	round := filepath.Join(dir, "round.json")
	os.WriteFile(round, []byte(`{"round": 1, "cases": [{"id": "r1-1", "text": "he has a fever and a stiff neck", "kind": "emergency", "expected": "meningitis", "also": ["sepsis_or_meningitis"]}]}`), 0o600)
	var out, errs bytes.Buffer
	if err := run([]string{"recognition", "-list", lay, held, round}, &out, &errs, func(string) string { return "" }); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	for _, want := range []string{
		"(2 phrases, 1 unclear left out)",
		"recognised 100.0% of in-scope phrases (1 of 1",
		"emergencies escalated 100.0% (1 of 1; the labelled category named for 1 of 1)",
		"(1 phrases, 0 unclear left out)",
		"false commits out of scope 0.0%",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run([]string{"recognition", filepath.Join(dir, "none.json")}, &out, &errs, func(string) string { return "" }); err == nil {
		t.Error("a missing file is not an error")
	}
}
