package safety

import (
	"strings"
	"testing"
	"time"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

func TestRiskMatrixIsDCB0129s(t *testing.T) {
	// The guidance's matrix, rows very high to very low, columns minor to
	// catastrophic.
	want := [][]Risk{
		{3, 4, 4, 5, 5},
		{2, 3, 3, 4, 5},
		{2, 2, 3, 3, 4},
		{1, 2, 2, 3, 4},
		{1, 1, 2, 2, 3},
	}
	for i, l := range Likelihoods() {
		for j, s := range Severities() {
			if got := RiskOf(s, l); got != want[i][j] {
				t.Errorf("RiskOf(%s, %s) = %d, want %d", s, l, got, want[i][j])
			}
		}
	}
	if RiskOf(0, Medium) != 0 || RiskOf(Major, 6) != 0 {
		t.Error("a severity or likelihood off the matrix has a rating")
	}
	for _, w := range []string{"Catastrophic", "very_high", "Very-High", " very  low "} {
		_, e1 := ParseSeverity(w)
		_, e2 := ParseLikelihood(w)
		if e1 != nil && e2 != nil {
			t.Errorf("%q read as neither a severity nor a likelihood", w)
		}
	}
}

func TestStarterLogLoadsAndRoundTrips(t *testing.T) {
	l := Starter()
	if len(l.Hazards) != 6 {
		t.Fatalf("starter log has %d hazards, want the issue's 6", len(l.Hazards))
	}
	for _, h := range l.Hazards {
		if len(h.Controls) == 0 {
			t.Errorf("hazard %s has no control", h.ID)
		}
		for _, c := range h.Controls {
			if len(c.Evidence) == 0 {
				t.Errorf("control %s points at nothing that tests it", c.ID)
			}
		}
	}
	data, err := l.Marshal(3)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseLog(data)
	if err != nil {
		t.Fatalf("the exported log does not load: %v\n%s", err, data)
	}
	a, _ := l.Marshal(3)
	b, _ := back.Marshal(3)
	if string(a) != string(b) {
		t.Fatalf("round trip changed the log:\n%s\n---\n%s", a, b)
	}
}

func TestParseLogNamesLineAndField(t *testing.T) {
	good := string(starterYAML)
	for _, tc := range []struct{ name, from, to, want string }{
		{"threshold out of range", "min: 0.95}", "min: 95}", "line 24: hazards[0].controls[0].evidence[0].min"},
		{"unknown severity", "{severity: catastrophic, likelihood: medium}", "{severity: deadly, likelihood: medium}", `line 18: "deadly" is not a severity`},
		{"duplicate control", "id: C1.2", "id: C1.1", "hazards[0].controls[1].id: C1.1 is the id of another control"},
		{"unknown field", "owner: engineering lead\n    status: open\n  - id: H5", "owner: engineering lead\n    colour: red\n    status: open\n  - id: H5", "field colour not found"},
		{"unknown kind", "{kind: reviewed_readings}", "{kind: vibes}", "evidence[0].kind: must be one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(good, tc.from, tc.to, 1)
			if bad == good {
				t.Fatalf("the test's edit %q found nothing", tc.from)
			}
			_, err := ParseLog([]byte(bad))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseLog: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func result(id string, gold, final scenarios.Class) scenarios.Result {
	return scenarios.Result{VignetteID: id, Title: id, Repeat: 1, Gold: scenarios.Gold{Class: gold}, Final: final, Terminal: true}
}

func ptr(f float64) *float64 { return &f }

func oneControl(e ...Evidence) *Log {
	return &Log{System: "test", Hazards: []Hazard{{ID: "H1", Title: "h", Owner: "o", Status: StatusOpen,
		Initial: Assessment{Catastrophic, Medium}, Residual: Assessment{Catastrophic, VeryLow},
		Controls: []Control{{ID: "C1", Title: "c", Evidence: e}}}}}
}

func run(id string, finished time.Time, results ...scenarios.Result) Run {
	r := Run{ID: id, Finished: finished}
	for i, res := range results {
		r.Items = append(r.Items, Item{Seq: i, Result: res})
	}
	return r
}

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// Twenty emergencies, one under-triaged: 95% accurate, 5% under-triaged.
func emergencies(id string, finished time.Time, misses int) Run {
	var rs []scenarios.Result
	for i := range 20 {
		final := scenarios.Emergency
		if i < misses {
			final = scenarios.Routine
		}
		rs = append(rs, result(strings.Repeat("e", i+1), scenarios.Emergency, final))
	}
	rs = append(rs, result("sore-throat", scenarios.SelfCare, scenarios.Routine)) // not selected
	return run(id, finished, rs...)
}

func TestThresholdsAreApplied(t *testing.T) {
	for _, tc := range []struct {
		name   string
		e      Evidence
		misses int
		want   State
	}{
		{"accuracy at the threshold", Evidence{Kind: Accuracy, Class: scenarios.Emergency, Min: ptr(0.95)}, 1, Met},
		{"accuracy below it", Evidence{Kind: Accuracy, Class: scenarios.Emergency, Min: ptr(0.95)}, 2, Unmet},
		{"accuracy of every vignette", Evidence{Kind: Accuracy, Min: ptr(0.95)}, 0, Met},
		{"accuracy of every vignette, the self-care one wrong", Evidence{Kind: Accuracy, Min: ptr(1)}, 0, Unmet},
		{"under-triage at the threshold", Evidence{Kind: UnderTriage, Tags: []string{"emergency"}, Max: ptr(0.05)}, 1, Met},
		{"under-triage above it", Evidence{Kind: UnderTriage, Tags: []string{"emergency"}, Max: ptr(0.05)}, 2, Unmet},
		{"named vignettes all correct", Evidence{Kind: Vignettes, Vignettes: []string{"eee*"}}, 2, Met},
		{"a named vignette wrong", Evidence{Kind: Vignettes, Vignettes: []string{"ee"}}, 2, Unmet},
		{"nothing selected played", Evidence{Kind: Accuracy, Class: scenarios.Urgent, Min: ptr(0.5)}, 0, NoEvidence},
		{"a test is recorded, not evaluated", Evidence{Kind: Test, Test: "TestX"}, 5, Recorded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := oneControl(tc.e)
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
			ev := Evaluate(l, 1, Subject{Release: "r1"}, []Run{emergencies("sr_1", t0, tc.misses)})
			c := ev.Hazards[0].Controls[0]
			if c.State != tc.want {
				t.Fatalf("control %s with %d misses, want %s: %s", c.State, tc.misses, tc.want, c.Checks[0].Figure)
			}
			if tc.want == Unmet && len(c.Checks[0].Failing) == 0 {
				t.Fatal("an unmet check lists no failing play")
			}
			if got := len(ev.UnmetControls()); (tc.want == Unmet || tc.want == NoEvidence) != (got == 1) {
				t.Fatalf("UnmetControls: %d", got)
			}
		})
	}
}

func TestFailingPlaysNameTheirItems(t *testing.T) {
	ev := Evaluate(oneControl(Evidence{Kind: UnderTriage, Class: scenarios.Emergency, Max: ptr(0)}), 1, Subject{Release: "r1"},
		[]Run{emergencies("sr_1", t0, 2)})
	f := ev.Hazards[0].Controls[0].Checks[0].Failing
	if len(f) != 2 || f[0].Run != "sr_1" || f[0].Seq != 0 || f[1].Seq != 1 || !strings.Contains(f[0].Why, "under-triaged: routine where the gold class is emergency") {
		t.Fatalf("failing: %+v", f)
	}
}

func TestTheNewestRunThatPlayedItIsTheEvidence(t *testing.T) {
	l := oneControl(Evidence{Kind: Accuracy, Class: scenarios.Emergency, Min: ptr(0.95)})
	old, newer := emergencies("sr_old", t0, 0), emergencies("sr_new", t0.Add(time.Hour), 5)
	ev := Evaluate(l, 1, Subject{Release: "r1"}, []Run{old, newer})
	if c := ev.Hazards[0].Controls[0]; c.State != Unmet || c.Checks[0].Run != "sr_new" {
		t.Fatalf("the newest run's figures are not the evidence: %s on %s", c.State, c.Checks[0].Run)
	}
	// A newer run that played no emergency leaves the evidence where it was.
	other := run("sr_other", t0.Add(2*time.Hour), result("sore-throat", scenarios.SelfCare, scenarios.SelfCare))
	ev = Evaluate(l, 1, Subject{Release: "r1"}, []Run{old, newer, other})
	if c := ev.Hazards[0].Controls[0]; c.Checks[0].Run != "sr_new" {
		t.Fatalf("evidence taken from a run that played none of it: %s", c.Checks[0].Run)
	}
}

func TestFlipRateAndReviewedReadings(t *testing.T) {
	asWritten := result("chest", scenarios.Emergency, scenarios.Emergency)
	varied := asWritten
	varied.Variation, varied.Final = "typos", scenarios.Routine
	lay := asWritten
	lay.Variation = "lay"
	provisional := result("throat", scenarios.SelfCare, scenarios.SelfCare)
	provisional.Provisional = true
	r := run("sr_1", t0, asWritten, varied, lay, provisional)
	for _, tc := range []struct {
		name string
		e    Evidence
		want State
	}{
		{"a downward flip over the rate", Evidence{Kind: FlipRate, Max: ptr(0.4)}, Unmet},
		{"a downward flip within the rate", Evidence{Kind: FlipRate, Max: ptr(0.5)}, Met},
		{"only the variation named counts", Evidence{Kind: FlipRate, Variations: []string{"lay"}, Max: ptr(0)}, Met},
		{"the variation named flipped", Evidence{Kind: FlipRate, Variations: []string{"typos"}, Max: ptr(0)}, Unmet},
		{"a provisional play", Evidence{Kind: Reviewed}, Unmet},
		{"no provisional play among those selected", Evidence{Kind: Reviewed, Class: scenarios.Emergency}, Met},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Evaluate(oneControl(tc.e), 1, Subject{Release: "r1"}, []Run{r})
			c := ev.Hazards[0].Controls[0]
			if c.State != tc.want {
				t.Fatalf("%s, want %s: %s", c.State, tc.want, c.Checks[0].Figure)
			}
			if tc.want == Unmet && (len(c.Checks[0].Failing) != 1 || c.Checks[0].Failing[0].Seq == 0) {
				t.Fatalf("failing: %+v", c.Checks[0].Failing)
			}
		})
	}
}

func TestSnapshotChangesWithTheEvidence(t *testing.T) {
	l := Starter()
	s := Subject{Release: "r1"}
	a := emergencies("sr_1", t0, 0)
	h := Snapshot(l, 1, s, []Run{a})
	if h != Snapshot(l, 1, s, []Run{emergencies("sr_1", t0, 0)}) {
		t.Fatal("the same evidence hashes differently")
	}
	changed := emergencies("sr_1", t0, 0)
	changed.Items[3].Result.Final = scenarios.Urgent
	for name, other := range map[string]string{
		"a result changed": Snapshot(l, 1, s, []Run{changed}),
		"a run added":      Snapshot(l, 1, s, []Run{a, emergencies("sr_2", t0, 0)}),
		"another version":  Snapshot(l, 2, s, []Run{a}),
		"another subject":  Snapshot(l, 1, Subject{Release: "r1", Voice: "v"}, []Run{a}),
	} {
		if other == h {
			t.Errorf("%s: the snapshot's hash did not change", name)
		}
	}
}
