package scenarios

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Report is a run's scores and its results, the JSON the command line
// writes with -json and the Scenarios pages export: its top level has
// "summary" (with "vignettes", "accuracy", "under_triage", "over_triage"
// as fractions and "per_class" by urgency class name) and "results", one
// entry per vignette run (repeats included).
type Report struct {
	Summary Summary  `json:"summary"`
	Results []Result `json:"results"`
	// Flips compares the varied plays with the unvaried ones (nil when
	// nothing was varied); Consistency the repeats (nil without repeats).
	Flips       *FlipReport        `json:"flips,omitempty"`
	Consistency *ConsistencyReport `json:"consistency,omitempty"`
}

// NewReport scores results and keeps a copy of each with its Outcome
// filled in; results itself is not changed.
func NewReport(results []Result) *Report {
	r := &Report{Summary: Score(results), Results: make([]Result, len(results)), Flips: Flips(results), Consistency: Consistency(results)}
	for i, x := range results {
		o := Assess(x)
		x.Outcome = &o
		r.Results[i] = x
	}
	return r
}

// csvHeader names the CSV's columns, one row per result.
var csvHeader = []string{
	"vignette_id", "title", "repeat", "gold", "final", "triage", "correct",
	"disposition", "urgent", "safety_status", "protocol", "gold_protocol",
	"turns", "terminal", "red_flags_hit", "red_flags_missed", "false_alarms",
	"bands_expected", "bands_agreed",
	"release", "prompt_hash", "directory_hash", "server_model", "voice_profile", "error",
	"simulator_limited", "questions", "understood", "not_understood", "answers", "variation",
	"on_reviewed", "on_automatic", "on_not_understood", "provisional",
}

// WriteCSV writes one row per result after a header (csvHeader's columns);
// lists are joined with "; ". A cell that a spreadsheet would read as a
// formula (starting with =, +, -, @, tab or carriage return) is prefixed
// with an apostrophe, since titles and engine texts are not trusted. It
// returns w's error, wrapped (an internal error).
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("scenarios: write csv: %w", err)
	}
	for _, x := range r.Results {
		o := Assess(x)
		proto := ""
		if o.ProtocolMatch != nil {
			proto = x.Gold.Protocol
		}
		row := []string{
			x.VignetteID, x.Title, strconv.Itoa(x.Repeat), string(x.Gold.Class), string(x.Final),
			string(o.Triage), strconv.FormatBool(o.Correct()),
			x.Disposition, strconv.FormatBool(x.Urgent), x.SafetyStatus, x.Protocol, proto,
			strconv.Itoa(x.Turns), strconv.FormatBool(x.Terminal),
			strings.Join(o.RedFlagsHit, "; "), strings.Join(o.RedFlagsMissed, "; "), strings.Join(o.FalseAlarms, "; "),
			strconv.Itoa(o.BandsExpected), strconv.Itoa(o.BandsAgreed),
			x.Provenance.Release, x.Provenance.PromptHash, x.Provenance.DirectoryHash, x.Provenance.ServerModel, x.Provenance.VoiceProfile, x.Error,
			strconv.FormatBool(o.SimulatorLimited), strconv.Itoa(x.Questions), strconv.Itoa(x.Understood),
			strings.Join(notUnderstood(x), " | "), answersText(x), x.Variation,
			strconv.Itoa(x.Basis.Reviewed), strconv.Itoa(x.Basis.Automatic), strconv.Itoa(x.Basis.NotUnderstood), strconv.FormatBool(x.Provisional),
		}
		for i, c := range row {
			row[i] = defuseCell(c)
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("scenarios: write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("scenarios: write csv: %w", err)
	}
	return nil
}

func defuseCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// notUnderstood are the engine questions of r the patient could not place.
func notUnderstood(r Result) []string {
	var out []string
	for _, a := range r.Answers {
		if !a.Why.Understood() {
			out = append(out, a.Question)
		}
	}
	return out
}

// answersText is every patient message of r with why it was said, one per
// line: "2. yes, it goes up into my jaw [concept spread → facts[1]]".
func answersText(r Result) string {
	var b strings.Builder
	for _, a := range r.Answers {
		fmt.Fprintf(&b, "%d. %s [%s]\n", a.Turn, a.Message, a.Reason)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
