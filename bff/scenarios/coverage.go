package scenarios

import (
	"strconv"
	"strings"
)

// Answer is one patient message of a result and why it was said.
type Answer struct {
	Turn     int    `json:"turn"`     // 1-based; 1 is the opening
	Question string `json:"question"` // the engine message it answered; "" for the opening
	Message  string `json:"message"`
	Why      Why    `json:"why"`
	// Reason is Why in one line for people (Why.String).
	Reason string `json:"reason"`
	// Decisive: the engine's disposition, safety status or urgent flag
	// changed with its reply to this answer: the answer changed the
	// outcome (docs/scenarios.md, "What the figures rest on").
	Decisive bool `json:"decisive,omitempty"`
}

// Basis counts a result's (or a run's) answers to engine questions by what
// they rest on: a reading a person reviewed, the automatic understanding
// (a fact's asks included), or nothing understood.
type Basis struct {
	Reviewed      int `json:"reviewed"`
	Automatic     int `json:"automatic"`
	NotUnderstood int `json:"not_understood"`
}

// Total is the answers counted.
func (b Basis) Total() int { return b.Reviewed + b.Automatic + b.NotUnderstood }

// Shares are the three counts over the total (0 each when none).
func (b Basis) Shares() (reviewed, automatic, notUnderstood float64) {
	t := b.Total()
	return frac(b.Reviewed, t), frac(b.Automatic, t), frac(b.NotUnderstood, t)
}

// String is the shares in words: "12.5% on reviewed readings, 85.0%
// automatic, 2.5% not understood, of 320 answers".
func (b Basis) String() string {
	if b.Total() == 0 {
		return "no answer to an engine question"
	}
	r, a, n := b.Shares()
	pc := func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
	answers := " answers"
	if b.Total() == 1 {
		answers = " answer"
	}
	return pc(r) + " on reviewed readings, " + pc(a) + " automatic, " + pc(n) + " not understood, of " + strconv.Itoa(b.Total()) + answers
}

func (b *Basis) add(o Basis) {
	b.Reviewed += o.Reviewed
	b.Automatic += o.Automatic
	b.NotUnderstood += o.NotUnderstood
}

// count counts one answer's why.
func (b *Basis) count(w Why) {
	switch {
	case w.Reviewed():
		b.Reviewed++
	case !w.Understood():
		b.NotUnderstood++
	default:
		b.Automatic++
	}
}

// Account fills r's Answers, Questions, Understood, Readings and
// SimulatorLimited from the exchanges of its play. Exchanges recorded
// without a reason (before reasons were kept) are left out of the counts.
func Account(r *Result, turns []Exchange) {
	r.Answers, r.Questions, r.Understood, r.SimulatorLimited, r.Readings = nil, 0, 0, false, nil
	r.Basis, r.Provisional = Basis{}, false
	for i, e := range turns {
		if e.Why == nil {
			continue
		}
		a := Answer{Turn: i + 1, Message: e.Message, Why: *e.Why, Reason: e.Why.String()}
		if i > 0 {
			prev := turns[i-1]
			a.Question = prev.Reply
			a.Decisive = e.Disposition != prev.Disposition || e.SafetyStatus != prev.SafetyStatus || e.Urgent != prev.Urgent
		}
		r.Answers = append(r.Answers, a)
		if e.Why.Kind == WhyOpening {
			continue
		}
		r.Basis.count(*e.Why)
		if a.Decisive && !e.Why.Reviewed() && e.Why.Reading() != ReadingAsks {
			r.Provisional = true
		}
		r.Questions++
		if r.Readings == nil {
			r.Readings = Readings{}
		}
		r.Readings[e.Why.Reading()]++
		if e.Why.Understood() {
			r.Understood++
		} else {
			r.SimulatorLimited = true
		}
	}
}

// Coverage is the share of the engine's questions the simulated patient
// understood (1 when it was asked none).
func (r Result) Coverage() float64 {
	if r.Questions == 0 {
		return 1
	}
	return float64(r.Understood) / float64(r.Questions)
}

// Readings counts the engine questions of a result, or a run, by how the
// patient read them (Why.Reading).
type Readings map[ReadingKind]int

// add adds o's counts to r.
func (r Readings) add(o Readings) {
	for k, n := range o {
		r[k] += n
	}
}

// String is the counts in words, in ReadingKinds order, kinds with none
// left out: "240 concept, 12 open question, 2 quick reply, 1 low margin".
func (r Readings) String() string {
	names := map[ReadingKind]string{
		ReadingConcept: "concept", ReadingOpen: "open question", ReadingQuickReply: "quick reply",
		ReadingAsks: "asks", ReadingNotUnderstood: "not understood", ReadingLowMargin: "low margin",
	}
	var parts []string
	for _, k := range ReadingKinds {
		if n := r[k]; n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+names[k])
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
