package safety

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// Subject is what a safety case is about: an engine release as the
// handoffs' provenance names it, and, when set, one voice of it (the
// engine's wording: a release's figures hold only for the voices they
// were measured on).
type Subject struct {
	Release string `json:"release"`
	Voice   string `json:"voice,omitempty"`
}

// String is the subject for people: "sandbox-2026.08" or
// "sandbox-2026.08, voice conversational-en/1".
func (s Subject) String() string {
	if s.Voice == "" {
		return s.Release
	}
	return s.Release + ", voice " + s.Voice
}

// Run is one finished scenario run of a subject, with every item that has
// a result: the evidence a safety case rests on.
type Run struct {
	ID       string    `json:"id"`
	Label    string    `json:"label,omitempty"`
	Suite    string    `json:"suite,omitempty"`
	Finished time.Time `json:"finished"`
	Items    []Item    `json:"items"`
}

// Item is one play of a run: its place in the run (for links to its
// transcript) and its result.
type Item struct {
	Seq    int              `json:"seq"`
	Result scenarios.Result `json:"result"`
}

// State is how a check, a control or a hazard stands against the evidence.
type State string

// The states, from the worst.
const (
	Unmet      State = "unmet"       // the evidence falls short
	NoEvidence State = "no_evidence" // no run of the subject played what it looks at
	Met        State = "met"
	// Recorded: a named test, listed for the reader; the app does not run
	// it, so it neither meets nor fails the control.
	Recorded State = "recorded"
)

// Label is the state in words.
func (s State) Label() string {
	switch s {
	case Unmet:
		return "not met"
	case NoEvidence:
		return "no evidence"
	case Met:
		return "met"
	case Recorded:
		return "test recorded"
	}
	return string(s)
}

func worse(a, b State) State {
	rank := func(s State) int { return slices.Index([]State{Unmet, NoEvidence, Met, Recorded}, s) }
	if rank(b) < rank(a) {
		return b
	}
	return a
}

// Check is one piece of evidence evaluated: on which run, the figure, and
// the plays that fall short.
type Check struct {
	Evidence    Evidence `json:"evidence"`
	Description string   `json:"description"`
	State       State    `json:"state"`
	// Run is the newest run of the subject that played what the evidence
	// looks at ("" when none did); N the plays (or vignettes compared,
	// for flips) counted, Value the figure as a fraction.
	Run     string    `json:"run,omitempty"`
	N       int       `json:"n"`
	Value   float64   `json:"value"`
	Figure  string    `json:"figure"`
	Failing []Failing `json:"failing,omitempty"`
}

// Failing is one play that falls short of a check: the item to open.
type Failing struct {
	Run        string `json:"run"`
	Seq        int    `json:"seq"`
	VignetteID string `json:"vignette_id"`
	Title      string `json:"title"`
	Variation  string `json:"variation,omitempty"`
	Repeat     int    `json:"repeat"`
	Why        string `json:"why"`
}

// ControlResult is a control with its checks; its State is the worst of
// theirs (a control with only recorded tests is Recorded).
type ControlResult struct {
	Control
	State  State   `json:"state"`
	Checks []Check `json:"checks"`
}

// HazardResult is a hazard with its controls evaluated; its State is the
// worst of its controls' (Recorded when it has none evaluated).
type HazardResult struct {
	Hazard
	State    State           `json:"state"`
	Controls []ControlResult `json:"control_results"`
}

// RunRef is a run an evaluation looked at, and the hash of its items.
type RunRef struct {
	ID       string    `json:"id"`
	Label    string    `json:"label,omitempty"`
	Suite    string    `json:"suite,omitempty"`
	Finished time.Time `json:"finished"`
	Items    int       `json:"items"`
	Hash     string    `json:"hash"`
}

// Evaluation is a hazard log evaluated against a subject's runs: what a
// release view shows live and what a decision freezes.
type Evaluation struct {
	Subject    Subject        `json:"subject"`
	LogVersion int            `json:"log_version"`
	System     string         `json:"system"`
	Runs       []RunRef       `json:"runs"` // newest first
	Hazards    []HazardResult `json:"hazards"`
	// Counts of controls by state.
	Controls, Met, Unmet, NoEvidence, Recorded int
	// Hash is the content hash of the evidence: the subject, the log's
	// version and content, and every run's items (Snapshot).
	Hash string `json:"hash"`
}

// UnmetControls lists the controls not met or without evidence, in log
// order: what `-fail-on unmet-controls` refuses.
func (e *Evaluation) UnmetControls() []ControlResult {
	var out []ControlResult
	for _, h := range e.Hazards {
		for _, c := range h.Controls {
			if c.State == Unmet || c.State == NoEvidence {
				out = append(out, c)
			}
		}
	}
	return out
}

// Evaluate evaluates every control of log (version) against runs, the
// subject's finished runs: each piece of evidence on the newest run that
// played what it looks at.
func Evaluate(log *Log, version int, subject Subject, runs []Run) *Evaluation {
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b Run) int {
		return cmp.Or(b.Finished.Compare(a.Finished), cmp.Compare(b.ID, a.ID))
	})
	ev := &Evaluation{Subject: subject, LogVersion: version, System: log.System}
	for _, r := range runs {
		ev.Runs = append(ev.Runs, RunRef{ID: r.ID, Label: r.Label, Suite: r.Suite, Finished: r.Finished.UTC(), Items: len(r.Items), Hash: runHash(r)})
	}
	for _, h := range log.Hazards {
		hr := HazardResult{Hazard: h, State: Recorded}
		for _, c := range h.Controls {
			cr := ControlResult{Control: c, State: Recorded}
			if len(c.Evidence) == 0 {
				cr.State = NoEvidence
			}
			for _, e := range c.Evidence {
				ch := check(e, runs)
				cr.Checks = append(cr.Checks, ch)
				cr.State = worse(cr.State, ch.State)
			}
			hr.State = worse(hr.State, cr.State)
			hr.Controls = append(hr.Controls, cr)
			switch cr.State {
			case Met:
				ev.Met++
			case Unmet:
				ev.Unmet++
			case NoEvidence:
				ev.NoEvidence++
			default:
				ev.Recorded++
			}
			ev.Controls++
		}
		ev.Hazards = append(ev.Hazards, hr)
	}
	ev.Hash = Snapshot(log, version, subject, runs)
	return ev
}

// check evaluates e on the newest run with something to count.
func check(e Evidence, runs []Run) Check {
	c := Check{Evidence: e, Description: e.Describe(), State: NoEvidence, Figure: "no run of this release played it"}
	if e.Kind == Test {
		c.State, c.Figure = Recorded, "run by the project's test suite, not by the app"
		return c
	}
	for _, r := range runs {
		if got, ok := checkRun(e, r); ok {
			return got
		}
	}
	return c
}

// checkRun evaluates e on run r; false when r played nothing e counts.
func checkRun(e Evidence, r Run) (Check, bool) {
	c := Check{Evidence: e, Description: e.Describe(), Run: r.ID}
	fail := func(it Item, why string) {
		c.Failing = append(c.Failing, Failing{Run: r.ID, Seq: it.Seq, VignetteID: it.Result.VignetteID, Title: it.Result.Title,
			Variation: it.Result.Variation, Repeat: it.Result.Repeat, Why: why})
	}
	var selected []Item
	for _, it := range r.Items {
		if e.Selects(it.Result) {
			selected = append(selected, it)
		}
	}
	switch e.Kind {
	case Accuracy, UnderTriage, Vignettes:
		bad := 0
		for _, it := range selected {
			o := scenarios.Assess(it.Result)
			if it.Result.Variation != "" || !o.Scored() {
				continue
			}
			c.N++
			wrong := !o.Correct()
			if e.Kind == UnderTriage {
				wrong = o.Triage == scenarios.TriageUnder
			}
			if wrong {
				bad++
				fail(it, triageWhy(it.Result, o))
			}
		}
		if c.N == 0 {
			return c, false
		}
		switch e.Kind {
		case Accuracy:
			c.Value = float64(c.N-bad) / float64(c.N)
			c.State = stateOf(c.Value >= deref(e.Min)-1e-9)
			c.Figure = fmt.Sprintf("%d of %d correct (%s); at least %s needed", c.N-bad, c.N, pct(c.Value), pct(deref(e.Min)))
		case UnderTriage:
			c.Value = float64(bad) / float64(c.N)
			c.State = stateOf(c.Value <= deref(e.Max)+1e-9)
			c.Figure = fmt.Sprintf("%d of %d under-triaged (%s); at most %s allowed", bad, c.N, pct(c.Value), pct(deref(e.Max)))
		default:
			c.Value = float64(c.N-bad) / float64(c.N)
			c.State = stateOf(bad == 0)
			c.Figure = fmt.Sprintf("%d of %d plays correct", c.N-bad, c.N)
		}
	case Reviewed:
		bad := 0
		for _, it := range selected {
			if it.Result.Error != "" {
				continue
			}
			c.N++
			if it.Result.Provisional {
				bad++
				fail(it, "provisional: an answer that changed the outcome rests on an unreviewed reading")
			}
		}
		if c.N == 0 {
			return c, false
		}
		c.Value = float64(bad) / float64(c.N)
		c.State = stateOf(bad == 0)
		c.Figure = fmt.Sprintf("%d of %d plays provisional", bad, c.N)
	case FlipRate:
		results := make([]scenarios.Result, len(selected))
		for i, it := range selected {
			results[i] = it.Result
		}
		fr := scenarios.Flips(results)
		if fr == nil {
			return c, false
		}
		counts := func(v string) bool { return len(e.Variations) == 0 || slices.Contains(e.Variations, v) }
		down := 0
		for _, row := range fr.Rows {
			if row.Class == "" && counts(row.Variation) {
				c.N += row.Compared
				down += row.Down
			}
		}
		if c.N == 0 {
			return c, false
		}
		for _, f := range fr.Flips {
			if f.Direction != scenarios.FlipDown || !counts(f.Variation) {
				continue
			}
			for _, it := range selected {
				if it.Result.VignetteID == f.VignetteID && it.Result.Variation == f.Variation && it.Result.Repeat == f.VariedRepeat {
					fail(it, fmt.Sprintf("flipped down by %s: %s as written, %s varied", f.Variation, classWord(f.Base), classWord(f.Varied)))
					break
				}
			}
		}
		c.Value = float64(down) / float64(c.N)
		c.State = stateOf(c.Value <= deref(e.Max)+1e-9)
		c.Figure = fmt.Sprintf("%d of %d vignette×variation pairs flipped down (%s); at most %s allowed", down, c.N, pct(c.Value), pct(deref(e.Max)))
	}
	return c, true
}

func stateOf(ok bool) State {
	if ok {
		return Met
	}
	return Unmet
}

func classWord(c scenarios.Class) string {
	if c == scenarios.NoClass {
		return "undecided"
	}
	return strings.ReplaceAll(string(c), "_", "-")
}

func triageWhy(r scenarios.Result, o scenarios.Outcome) string {
	switch o.Triage {
	case scenarios.TriageUnder:
		return fmt.Sprintf("under-triaged: %s where the gold class is %s", classWord(r.Final), classWord(r.Gold.Class))
	case scenarios.TriageOver:
		return fmt.Sprintf("over-triaged: %s where the gold class is %s", classWord(r.Final), classWord(r.Gold.Class))
	case scenarios.TriageDisposition:
		return fmt.Sprintf("disposition %s not accepted for the vignette", r.Disposition)
	case scenarios.TriageUndecided:
		return "undecided"
	}
	return string(o.Triage)
}

// runHash is the content hash of one run: its id and every item's seq and
// result, in seq order.
func runHash(r Run) string {
	items := slices.Clone(r.Items)
	slices.SortFunc(items, func(a, b Item) int { return cmp.Compare(a.Seq, b.Seq) })
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(r.ID)
	for _, it := range items {
		_ = enc.Encode(it)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Snapshot is the content hash of the evidence of a decision: the
// subject, the log's version and content, and each run's id and items
// (runHash), runs in the order given. Any change to a run's results, a run
// added or removed, or another log gives another hash.
func Snapshot(log *Log, version int, subject Subject, runs []Run) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode(subject)
	_ = enc.Encode(version)
	_ = enc.Encode(log)
	for _, r := range runs {
		_ = enc.Encode(runHash(r))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
