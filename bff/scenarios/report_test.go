package scenarios

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestReportJSONKeys(t *testing.T) {
	a := res("a", Emergency, Emergency)
	b := res("b", Urgent, Routine)
	b2 := b
	b2.Repeat = 2
	rep := NewReport([]Result{a, b, b2, res("c", SelfCare, Urgent)})
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(top)); !slices.Equal(got, []string{"consistency", "results", "summary"}) { // b has two repeats
		t.Fatalf("top-level keys %v", got)
	}
	var sum struct {
		Vignettes   *int     `json:"vignettes"`
		Accuracy    *float64 `json:"accuracy"`
		UnderTriage *float64 `json:"under_triage"`
		OverTriage  *float64 `json:"over_triage"`
	}
	if err := json.Unmarshal(top["summary"], &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Vignettes == nil || *sum.Vignettes != 3 {
		t.Errorf("vignettes %v", sum.Vignettes)
	}
	// Fractions: 1 of 4 correct, 2 of 4 under (b twice), 1 of 4 over.
	if sum.Accuracy == nil || *sum.Accuracy != 0.25 || sum.UnderTriage == nil || *sum.UnderTriage != 0.5 || sum.OverTriage == nil || *sum.OverTriage != 0.25 {
		t.Errorf("rates: %s", top["summary"])
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(top["summary"], &raw)
	var perClass map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw["per_class"], &perClass); err != nil {
		t.Fatalf("per_class: %v in %s", err, top["summary"])
	}
	if got := slices.Sorted(maps.Keys(perClass)); !slices.Equal(got, []string{"emergency", "routine", "self_care", "urgent"}) {
		t.Errorf("per_class keys %v", got)
	}
	for c, fields := range perClass {
		for _, k := range []string{"n", "accuracy", "under_triage", "over_triage"} {
			if _, ok := fields[k]; !ok {
				t.Errorf("per_class.%s has no %q", c, k)
			}
		}
	}
	if string(perClass["urgent"]["under_triage"]) != "1" || string(perClass["urgent"]["n"]) != "2" {
		t.Errorf("per_class.urgent %v", perClass["urgent"])
	}
	var results []map[string]json.RawMessage
	if err := json.Unmarshal(top["results"], &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 4 {
		t.Fatalf("%d results, want one per vignette run (4)", len(results))
	}
	for _, k := range []string{"vignette_id", "repeat", "final", "turns", "provenance", "outcome"} {
		if _, ok := results[1][k]; !ok {
			t.Errorf("result has no %q: %s", k, top["results"])
		}
	}
	var o Outcome
	if err := json.Unmarshal(results[1]["outcome"], &o); err != nil || o.Triage != TriageUnder {
		t.Errorf("outcome %s (%v)", results[1]["outcome"], err)
	}
}

func TestReportCSV(t *testing.T) {
	a := res("a", Emergency, Urgent)
	a.Title = "=HYPERLINK(\"http://x\")"
	a.Gold.RedFlagsPositive = []string{"chest pain", "sweating"}
	a.RedFlagsFound = []string{"Red flag POSITIVE: chest pain."}
	a.Provenance.Release = "r1"
	b := res("b", Routine, Routine)
	b.Error = "upstream unavailable"
	var buf bytes.Buffer
	if err := NewReport([]Result{a, b}).WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("rows %q", rows)
	}
	col := func(row []string, name string) string { return row[slices.Index(csvHeader, name)] }
	checks := []struct{ name, want string }{
		{"title", "'=HYPERLINK(\"http://x\")"},
		{"triage", "under"},
		{"correct", "false"},
		{"red_flags_hit", "chest pain"},
		{"red_flags_missed", "sweating"},
		{"release", "r1"},
	}
	for _, c := range checks {
		if got := col(rows[1], c.name); got != c.want {
			t.Errorf("%s = %q, want %q", c.name, got, c.want)
		}
	}
	if col(rows[2], "triage") != "error" || col(rows[2], "error") != "upstream unavailable" {
		t.Errorf("failed row %q", rows[2])
	}
	if err := NewReport([]Result{a}).WriteCSV(failWriter{}); err == nil || !errors.Is(err, errWrite) {
		t.Errorf("writer error = %v", err)
	}
}

var errWrite = errors.New("disk full")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

// The reports carry every answer's reason: JSON in each result's answers,
// CSV in its answers and not_understood columns, with simulator-limited.
func TestReportsAccountForEveryAnswer(t *testing.T) {
	r := res("jaw", Emergency, Routine)
	p := NewPatient(conceptVignette(), understanding)
	var turns []Exchange
	msg := p.Opening()
	for _, q := range []string{"Does it spread?", "Do you smoke?"} {
		why := msg.Why
		turns = append(turns, Exchange{Message: msg.Text, Why: &why, Reply: q})
		msg, _ = p.Answer(q, nil)
	}
	why := msg.Why
	turns = append(turns, Exchange{Message: msg.Text, Why: &why, Reply: "Goodbye.", Terminal: true})
	Account(&r, turns)
	rep := NewReport([]Result{r})
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Summary struct {
			SimulatorLimited int     `json:"simulator_limited"`
			Coverage         float64 `json:"coverage"`
		} `json:"summary"`
		Results []struct {
			SimulatorLimited bool `json:"simulator_limited"`
			Answers          []struct {
				Reason string `json:"reason"`
				Why    struct {
					Kind string `json:"kind"`
				} `json:"why"`
			} `json:"answers"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary.SimulatorLimited != 1 || back.Summary.Coverage != 0.5 || !back.Results[0].SimulatorLimited ||
		len(back.Results[0].Answers) != 3 || back.Results[0].Answers[2].Why.Kind != "not_understood" || back.Results[0].Answers[1].Reason == "" {
		t.Fatalf("the JSON report: %s", data)
	}
	var b bytes.Buffer
	if err := rep.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) string { return rows[1][slices.Index(rows[0], name)] }
	if col("simulator_limited") != "true" || col("not_understood") != "Do you smoke?" ||
		!strings.Contains(col("answers"), "2. yes, it goes up into my jaw [concept spread") ||
		!strings.Contains(col("answers"), "3. I'm not sure what you mean. [not understood") {
		t.Fatalf("the CSV row: %q", rows[1])
	}
}
