package scenarios

import (
	"slices"
	"strings"
)

// Provenance is the engine's run identity as its handoff reported it (""
// where the engine sent null).
type Provenance struct {
	Release       string `json:"release"`
	PromptHash    string `json:"prompt_hash"`
	DirectoryHash string `json:"directory_hash"` // the protocol library's hash
	ServerModel   string `json:"server_model"`
	// VoiceProfile is how the engine words its messages (the sandbox's
	// plain or conversational voice): a run's figures are worth something
	// only if they hold across voices.
	VoiceProfile string `json:"voice_profile,omitempty"`
}

// Message is one line of a played conversation.
type Message struct {
	Role string `json:"role"` // "patient" or "assistant"
	Text string `json:"text"`
}

// Result is one play of one vignette (one repeat): what the engine
// concluded, copied from its last turn and handoff, and the gold it is
// scored against. It holds data only; Assess and Score judge it.
type Result struct {
	VignetteID string `json:"vignette_id"`
	Title      string `json:"title"`
	Repeat     int    `json:"repeat"` // 1-based
	// Variation names how the patient spoke (bff/scenarios/variations); ""
	// for the vignette as written. Scores and comparisons count only
	// unvaried results; Flips compares the varied ones with them.
	Variation string `json:"variation,omitempty"`
	Gold      Gold   `json:"gold"`

	// Final is ClassOf(Disposition, Urgent) of the last turn; NoClass when
	// the intake did not finish (the turn limit came first).
	Final        Class             `json:"final"`
	Disposition  string            `json:"disposition"`
	Urgent       bool              `json:"urgent"`
	SafetyStatus string            `json:"safety_status"`
	Protocol     string            `json:"protocol"` // the handoff's active_protocol
	Scores       map[string]string `json:"scores"`   // score key -> band
	// RedFlagsFound are the handoff's texts that show something positive
	// (PositiveNotes of its safety notes); RedFlagsNegative those that
	// screen red flags negative. Gold red flags are matched in them.
	RedFlagsFound    []string `json:"red_flags_found"`
	RedFlagsNegative []string `json:"red_flags_negative"`

	Turns      int        `json:"turns"` // patient messages sent, the opening included
	Terminal   bool       `json:"terminal"`
	Provenance Provenance `json:"provenance"`
	Transcript []Message  `json:"transcript"`
	// Answers say why the simulated patient said each of its messages, in
	// order, the opening first.
	Answers []Answer `json:"answers,omitempty"`
	// Questions counts the engine messages the patient answered; Understood
	// those it placed (by a fact's asks, a concept, an open question, the
	// demographics, or its default for a concept no fact covers).
	// Coverage() is their ratio: the simulator coverage.
	Questions  int `json:"questions"`
	Understood int `json:"understood"`
	// Readings counts the questions by how the patient read them: by a
	// concept, as an open question, with a quick reply, by a fact's asks,
	// not understood, or below the margin (Why.Reading).
	Readings Readings `json:"readings,omitempty"`
	// SimulatorLimited: the patient did not understand at least one of the
	// engine's questions, so the course of the intake depended on the
	// simulator, not only on the engine. Such a result is counted apart
	// and never in the engine's rates.
	SimulatorLimited bool `json:"simulator_limited"`
	// Basis counts the answers by what they rest on (reviewed readings,
	// automatic ones, not understood); Provisional: an answer that changed
	// the outcome (Answer.Decisive) rests on a reading nobody reviewed
	// (a fact's asks, the vignette's own words, aside).
	Basis       Basis `json:"basis"`
	Provisional bool  `json:"provisional"`
	// Error says why the play could not be completed (the app or the
	// transport failed, not the engine's decision); such a result is not
	// scored. "" for a completed play, terminal or not.
	Error string `json:"error,omitempty"`

	// Outcome is Assess of the result, filled by NewReport for the report's
	// readers; Score and Compare ignore it and assess afresh.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// SplitSafetyNotes sorts a handoff's safety notes into those that show
// something positive and those that screen red flags negative. A note is
// negative when it has the word "negative" and not the word "positive"
// (the sandbox's "Cannot-miss red flags screened negative: ..."); every
// other note, an emergency phrase or a positive or not-excluded red flag,
// counts as positive.
func SplitSafetyNotes(notes []string) (positive, negative []string) {
	for _, n := range notes {
		w := textWords(n)
		if slices.Contains(w, "negative") && !slices.Contains(w, "positive") {
			negative = append(negative, n)
		} else {
			positive = append(positive, n)
		}
	}
	return positive, negative
}

// Triage is how a result's final class stands against its gold class.
type Triage string

// Triage outcomes.
const (
	TriageCorrect Triage = "correct" // the gold class (and an accepted disposition)
	// TriageDisposition is the gold class with a disposition the gold does
	// not accept: wrong, neither under nor over.
	TriageDisposition Triage = "wrong_disposition"
	TriageUnder       Triage = "under" // less urgent than gold, or undecided
	TriageOver        Triage = "over"  // more urgent than gold
	// TriageUndecided is an intake that ended undecided when the gold is
	// self-care: wrong, but nothing is less urgent than self-care.
	TriageUndecided Triage = "undecided"
	TriageError     Triage = "error" // not scored: Result.Error, or no gold class
)

// Outcome is the judgement of one result against its gold.
type Outcome struct {
	Triage Triage `json:"triage"`
	// RedFlagsHit are the gold positive red flags the handoff shows
	// positive, RedFlagsMissed the others, FalseAlarms the gold negative
	// ones it shows positive.
	RedFlagsHit    []string `json:"red_flags_hit"`
	RedFlagsMissed []string `json:"red_flags_missed"`
	FalseAlarms    []string `json:"false_alarms"`
	// ProtocolMatch is nil when the gold names no protocol.
	ProtocolMatch *bool `json:"protocol_match"`
	// BandsExpected are the gold's expected score bands, BandsAgreed those
	// the engine reported with the same band.
	BandsExpected int `json:"bands_expected"`
	BandsAgreed   int `json:"bands_agreed"`
	// SimulatorLimited copies the result's: Triage still says how the final
	// class stands against the gold, but the outcome is not the engine's
	// alone and is not scored.
	SimulatorLimited bool `json:"simulator_limited,omitempty"`
}

// Scored reports whether the outcome counts in the engine's rates: not an
// error, and not simulator-limited.
func (o Outcome) Scored() bool { return o.Triage != TriageError && !o.SimulatorLimited }

// Correct reports whether the final class is the gold one with an accepted
// disposition.
func (o Outcome) Correct() bool { return o.Triage == TriageCorrect }

// Assess judges r against its gold:
//
//   - Triage: a result with Error, or a gold class not among Classes, is
//     TriageError (not scored). A final class equal to the gold is correct
//     when the gold lists no dispositions or lists r.Disposition (exactly),
//     else TriageDisposition. A final class more urgent than the gold is
//     over-triage, less urgent is under-triage. An undecided intake
//     (NoClass) is under-triage (the patient was sent nowhere, which for a
//     safety figure counts as too little), except against a self-care gold,
//     where it is TriageUndecided.
//   - Red flags: a gold phrase is shown positive when it occurs,
//     case-insensitively, as a substring of one of r.RedFlagsFound.
//   - Protocol: equal ignoring case and surrounding space.
//   - Score bands: an expected key the engine did not report disagrees.
func Assess(r Result) Outcome {
	o := Outcome{Triage: triageOf(r), SimulatorLimited: r.SimulatorLimited && r.Error == ""}
	for _, f := range r.Gold.RedFlagsPositive {
		if shownPositive(f, r.RedFlagsFound) {
			o.RedFlagsHit = append(o.RedFlagsHit, f)
		} else {
			o.RedFlagsMissed = append(o.RedFlagsMissed, f)
		}
	}
	for _, f := range r.Gold.RedFlagsNegative {
		if shownPositive(f, r.RedFlagsFound) {
			o.FalseAlarms = append(o.FalseAlarms, f)
		}
	}
	if want := strings.TrimSpace(r.Gold.Protocol); want != "" {
		m := strings.EqualFold(want, strings.TrimSpace(r.Protocol))
		o.ProtocolMatch = &m
	}
	for key, band := range r.Gold.Scores {
		o.BandsExpected++
		if got, ok := r.Scores[key]; ok && strings.EqualFold(got, band) {
			o.BandsAgreed++
		}
	}
	return o
}

func triageOf(r Result) Triage {
	gold := r.Gold.Class.Rank()
	if r.Error != "" || gold >= len(Classes) {
		return TriageError
	}
	final := r.Final.Rank()
	switch {
	case final == gold:
		if len(r.Gold.Dispositions) == 0 || slices.Contains(r.Gold.Dispositions, r.Disposition) {
			return TriageCorrect
		}
		return TriageDisposition
	case final < gold:
		return TriageOver
	case final >= len(Classes) && r.Gold.Class == SelfCare:
		return TriageUndecided
	}
	return TriageUnder
}

func shownPositive(flag string, texts []string) bool {
	flag = strings.ToLower(strings.TrimSpace(flag))
	if flag == "" {
		return false
	}
	for _, t := range texts {
		if strings.Contains(strings.ToLower(t), flag) {
			return true
		}
	}
	return false
}

// Summary is the scores of a run. Rates are fractions (0-1) of the scored
// results (every repeat counts once; results with an error are not
// scored); a rate over nothing is 0, with its count beside it saying so.
type Summary struct {
	Vignettes int `json:"vignettes"` // distinct vignette ids among the results
	Runs      int `json:"runs"`      // results, repeats included
	Scored    int `json:"scored"`
	Errors    int `json:"errors"` // results not scored: the play failed
	// SimulatorLimited counts the results not scored because the simulated
	// patient did not understand a question (Result.SimulatorLimited);
	// PerClass counts them by gold class too.
	SimulatorLimited int `json:"simulator_limited"`
	// Coverage is the simulator coverage over every result that answered a
	// question: the engine's questions understood over those asked.
	Coverage  float64 `json:"coverage"`
	Questions int     `json:"questions"`
	// Readings counts every result's questions by how the patient read
	// them (Result.Readings).
	Readings Readings `json:"readings"`
	// Basis counts every result's answers by what they rest on;
	// Provisional the results whose outcome rests on an unreviewed
	// reading (Result.Provisional): the figures are provisional while it
	// is not 0.
	Basis       Basis `json:"basis"`
	Provisional int   `json:"provisional"`

	Accuracy    float64 `json:"accuracy"`
	UnderTriage float64 `json:"under_triage"`
	OverTriage  float64 `json:"over_triage"`
	// PerClass has every class of Classes, by gold class.
	PerClass map[Class]ClassSummary `json:"per_class"`

	// Confusion counts scored results: rows the gold class, columns the
	// final class, both in Classes order. Undecided counts, by gold row,
	// the scored results whose final class is NoClass.
	Confusion [4][4]int `json:"confusion"`
	Undecided [4]int    `json:"undecided"`
	// WrongDisposition counts diagonal results whose disposition the gold
	// does not accept (so Accuracy can be below the diagonal's share).
	WrongDisposition int `json:"wrong_disposition"`

	RedFlagsExpected int     `json:"red_flags_expected"` // gold positive flags over scored results
	RedFlagRecall    float64 `json:"red_flag_recall"`
	RedFlagsMissed   int     `json:"red_flags_missed"`
	FalseAlarms      int     `json:"false_alarms"`

	ProtocolsChecked int     `json:"protocols_checked"`
	ProtocolMatch    float64 `json:"protocol_match"`

	BandsChecked       int     `json:"bands_checked"`
	ScoreBandAgreement float64 `json:"score_band_agreement"`

	MeanTurns float64 `json:"mean_turns"` // over scored results

	// Provenance is the first result's; MixedProvenance says another
	// result reported a different one.
	Provenance      Provenance `json:"provenance"`
	MixedProvenance bool       `json:"mixed_provenance"`
}

// ClassSummary is the scores of the scored results of one gold class.
type ClassSummary struct {
	N int `json:"n"` // scored
	// SimulatorLimited counts this class's results left out of N because
	// the simulated patient did not understand a question.
	SimulatorLimited int     `json:"simulator_limited"`
	Correct          int     `json:"correct"`
	Under            int     `json:"under"`
	Over             int     `json:"over"`
	Accuracy         float64 `json:"accuracy"`
	UnderTriage      float64 `json:"under_triage"`
	OverTriage       float64 `json:"over_triage"`
}

// Score summarises the unvaried results (Unvaried); see Assess for how
// each is judged.
func Score(results []Result) Summary {
	results = Unvaried(results)
	s := Summary{Runs: len(results), PerClass: map[Class]ClassSummary{}, Readings: Readings{}}
	ids := map[string]bool{}
	var correct, under, over, turns, flagsHit, protoMatch, bandsAgreed, understood int
	per := make([]ClassSummary, len(Classes))
	for i, r := range results {
		ids[r.VignetteID] = true
		if i == 0 {
			s.Provenance = r.Provenance
		} else if r.Provenance != s.Provenance {
			s.MixedProvenance = true
		}
		s.Questions += r.Questions
		understood += r.Understood
		s.Readings.add(r.Readings)
		s.Basis.add(r.Basis)
		if r.Provisional {
			s.Provisional++
		}
		o := Assess(r)
		if o.SimulatorLimited {
			s.SimulatorLimited++
			if g := r.Gold.Class.Rank(); g < len(Classes) {
				per[g].SimulatorLimited++
			}
			continue
		}
		if !o.Scored() {
			s.Errors++
			continue
		}
		s.Scored++
		g := r.Gold.Class.Rank()
		per[g].N++
		if f := r.Final.Rank(); f < len(Classes) {
			s.Confusion[g][f]++
		} else {
			s.Undecided[g]++
		}
		switch o.Triage {
		case TriageCorrect:
			correct++
			per[g].Correct++
		case TriageUnder:
			under++
			per[g].Under++
		case TriageOver:
			over++
			per[g].Over++
		case TriageDisposition:
			s.WrongDisposition++
		}
		turns += r.Turns
		s.RedFlagsExpected += len(r.Gold.RedFlagsPositive)
		flagsHit += len(o.RedFlagsHit)
		s.RedFlagsMissed += len(o.RedFlagsMissed)
		s.FalseAlarms += len(o.FalseAlarms)
		if o.ProtocolMatch != nil {
			s.ProtocolsChecked++
			if *o.ProtocolMatch {
				protoMatch++
			}
		}
		s.BandsChecked += o.BandsExpected
		bandsAgreed += o.BandsAgreed
	}
	s.Vignettes = len(ids)
	s.Accuracy = frac(correct, s.Scored)
	s.UnderTriage = frac(under, s.Scored)
	s.OverTriage = frac(over, s.Scored)
	for i, c := range Classes {
		p := per[i]
		p.Accuracy, p.UnderTriage, p.OverTriage = frac(p.Correct, p.N), frac(p.Under, p.N), frac(p.Over, p.N)
		s.PerClass[c] = p
	}
	s.Coverage = 1
	if s.Questions > 0 {
		s.Coverage = frac(understood, s.Questions)
	}
	s.RedFlagRecall = frac(flagsHit, s.RedFlagsExpected)
	s.ProtocolMatch = frac(protoMatch, s.ProtocolsChecked)
	s.ScoreBandAgreement = frac(bandsAgreed, s.BandsChecked)
	if s.Scored > 0 {
		s.MeanTurns = float64(turns) / float64(s.Scored)
	}
	return s
}

func frac(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Unvaried is the results played as the vignette is written (Variation
// ""): those the scores and comparisons count. results itself when all are.
func Unvaried(results []Result) []Result {
	if !slices.ContainsFunc(results, func(r Result) bool { return r.Variation != "" }) {
		return results
	}
	out := make([]Result, 0, len(results))
	for _, r := range results {
		if r.Variation == "" {
			out = append(out, r)
		}
	}
	return out
}
