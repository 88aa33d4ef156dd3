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
}

// Account fills r's Answers, Questions, Understood, Readings and
// SimulatorLimited from the exchanges of its play. Exchanges recorded
// without a reason (before reasons were kept) are left out of the counts.
func Account(r *Result, turns []Exchange) {
	r.Answers, r.Questions, r.Understood, r.SimulatorLimited, r.Readings = nil, 0, 0, false, nil
	for i, e := range turns {
		if e.Why == nil {
			continue
		}
		a := Answer{Turn: i + 1, Message: e.Message, Why: *e.Why, Reason: e.Why.String()}
		if i > 0 {
			a.Question = turns[i-1].Reply
		}
		r.Answers = append(r.Answers, a)
		if e.Why.Kind == WhyOpening {
			continue
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
