package scenarios

import (
	"strconv"
	"strings"

	"github.com/clinical-intake/intake-web/bff/scenarios/concepts"
)

// Asked is one thing an engine message asks about, as an Understander found
// it: a concept of the vocabulary (bff/scenarios/concepts/vocabulary.yaml).
type Asked struct {
	Concept string
	Kind    concepts.Kind
	// Inverse: the question asks the opposite of the concept's "yes" ("can
	// you walk on it?" for cannot_bear_weight).
	Inverse bool
	Cue     string // what matched, for the audit trail
	// Question numbers the questions of the message (0 first, in the order
	// asked) and Alt the alternatives within one (see concepts.Match):
	// the patient answers each question in a sentence of its own, and a
	// question's alternatives with one yes or no.
	Question, Alt int
	// Margin is how clearly the concept won (concepts.Match.Margin).
	Margin int
}

// Understander works out which concepts an engine message asks about,
// whatever its words. Understand returns them in the order asked, at most
// one per concept, and nothing for a message it cannot place. Known reports
// whether id is in its vocabulary. It never errs and is safe for
// concurrent use.
type Understander interface {
	Understand(message string) []Asked
	Known(id string) bool
	// Areas are the body areas and systems a text names ("belly":
	// abdomen), to tell which of an engine's complaint titles names the
	// patient's problem.
	Areas(text string) []string
	// Names reports whether a complaint title names what text is about
	// (no area the text does not name: "Low back pain" does not name a
	// sore knee); Covered whether every area the text names is named by
	// one of the titles (concepts.Understanding.Names and Covered).
	Names(title, text string) bool
	Covered(titles []string, text string) bool
}

// WhyKind is what decided a patient message.
type WhyKind string

// The reasons for a patient message.
const (
	WhyOpening WhyKind = "opening" // the vignette's opening
	WhyAsks    WhyKind = "asks"    // a fact whose asks matched the words
	WhyConcept WhyKind = "concept" // a fact stated by the concept asked
	// WhyOpen: an open question ("what is the main problem?"): the
	// complaint restated, or the quick reply that names it.
	WhyOpen WhyKind = "open"
	// WhyDemographics: age or sex, from the vignette's demographics.
	WhyDemographics WhyKind = "demographics"
	// WhyDefault: the question was understood but no fact covers it: the
	// vignette's default.
	WhyDefault WhyKind = "default"
	// WhyNotKnown: the question was understood, about a value (how long,
	// where, how old) that no fact and no demographic gives: "I'm not
	// sure."
	WhyNotKnown WhyKind = "not_known"
	// WhyNotUnderstood: no fact's asks match and no concept was found: the
	// vignette's answer for unknown questions. The result is
	// simulator-limited.
	WhyNotUnderstood WhyKind = "not_understood"
	// WhyLowMargin: concepts were found, but one of them won its words
	// below concepts.MinMargin (a tie with another reading): the patient
	// does not trust the reading and gives its answer for unknown
	// questions. The result is simulator-limited.
	WhyLowMargin WhyKind = "low_margin"
)

// ReadingKind is how the patient read an engine message, for the counts of
// a report: by a concept, as an open question (the complaint in words, or
// a quick reply naming it), by a fact's asks, not at all, or too narrowly
// to trust.
type ReadingKind string

// The kinds of reading.
const (
	ReadingConcept       ReadingKind = "concept"
	ReadingOpen          ReadingKind = "open"
	ReadingQuickReply    ReadingKind = "quick_reply"
	ReadingAsks          ReadingKind = "asks"
	ReadingNotUnderstood ReadingKind = "not_understood"
	ReadingLowMargin     ReadingKind = "low_margin"
)

// ReadingKinds lists the kinds in the order reports print them.
var ReadingKinds = []ReadingKind{ReadingConcept, ReadingOpen, ReadingQuickReply, ReadingAsks, ReadingNotUnderstood, ReadingLowMargin}

// Reading is the kind of reading behind a patient message; "" for the
// opening, which reads nothing.
func (w Why) Reading() ReadingKind {
	switch w.Kind {
	case WhyOpening:
		return ""
	case WhyAsks:
		return ReadingAsks
	case WhyOpen:
		if w.Choice != "" {
			return ReadingQuickReply
		}
		return ReadingOpen
	case WhyNotUnderstood:
		return ReadingNotUnderstood
	case WhyLowMargin:
		return ReadingLowMargin
	}
	return ReadingConcept
}

// Why is why the simulated patient said one message: kept with the
// exchange, shown on the item page and in the reports.
type Why struct {
	Kind WhyKind `json:"kind"`
	// Concepts the engine message was understood to ask about, in order.
	Concepts []string `json:"concepts,omitempty"`
	// Facts are the 1-based indexes of the vignette's facts that answered.
	Facts []int `json:"facts,omitempty"`
	// Ask is the ask that matched (WhyAsks); Cue the understanding's cue.
	Ask string `json:"ask,omitempty"`
	Cue string `json:"cue,omitempty"`
	// Choice is the quick reply chosen, exactly as offered.
	Choice string `json:"choice,omitempty"`
	// Inverted: the question was worded as the opposite of its concept, and
	// the answer's leading yes or no was turned to keep its meaning.
	Inverted bool `json:"inverted,omitempty"`
	// Margin is the reading's margin, the least of its concepts'
	// (concepts.Match.Margin); 0 where no concept was read.
	Margin int `json:"margin,omitempty"`
	// ReviewedBy and ReviewedOn (a date, 2006-01-02): the message was
	// answered on a reading a person reviewed for this question and
	// release (Patient.AnswerFrom), not on the automatic understanding.
	ReviewedBy string `json:"reviewed_by,omitempty"`
	ReviewedOn string `json:"reviewed_on,omitempty"`
}

// Reviewed reports whether the message was answered on a reviewed reading.
func (w Why) Reviewed() bool { return w.ReviewedBy != "" }

// Understood reports whether the message answered a question the patient
// placed and trusted (everything but WhyNotUnderstood and WhyLowMargin).
func (w Why) Understood() bool { return w.Kind != WhyNotUnderstood && w.Kind != WhyLowMargin }

// String is the reason in one line for people, e.g.
// "concept spread (cue: spread + arm|jaw) → facts[1], yes/no turned", and
// "; reviewed by dr.ada on 2026-11-28" after a reviewed reading.
func (w Why) String() string {
	if w.Reviewed() {
		return w.reason() + "; reviewed by " + w.ReviewedBy + " on " + w.ReviewedOn
	}
	return w.reason()
}

func (w Why) reason() string {
	var b strings.Builder
	switch w.Kind {
	case WhyOpening:
		return "the vignette's opening"
	case WhyAsks:
		b.WriteString("asks " + quote(w.Ask))
	case WhyConcept:
		b.WriteString("concept " + strings.Join(w.Concepts, " + "))
	case WhyOpen:
		b.WriteString("open question (" + strings.Join(w.Concepts, " + ") + "): the complaint")
	case WhyDemographics:
		b.WriteString("concept " + strings.Join(w.Concepts, " + ") + ": from the demographics")
	case WhyDefault:
		b.WriteString("concept " + strings.Join(w.Concepts, " + ") + ": no fact, the vignette's default")
	case WhyNotKnown:
		b.WriteString("concept " + strings.Join(w.Concepts, " + ") + ": a value the vignette does not give")
	case WhyNotUnderstood:
		return "not understood: the vignette's answer for unknown questions"
	case WhyLowMargin:
		b.WriteString("low margin (" + strconv.Itoa(w.Margin) + "): " + strings.Join(w.Concepts, " or ") + " read too narrowly to trust; the vignette's answer for unknown questions")
		if w.Cue != "" {
			b.WriteString(" (cue: " + w.Cue + ")")
		}
		return b.String()
	default:
		return string(w.Kind)
	}
	if w.Cue != "" {
		b.WriteString(" (cue: " + w.Cue + ")")
	}
	for i, f := range w.Facts {
		if i == 0 {
			b.WriteString(" → ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString("facts[" + strconv.Itoa(f) + "]")
	}
	if w.Choice != "" {
		b.WriteString(", chose " + quote(w.Choice))
	}
	if w.Inverted {
		b.WriteString(", yes/no turned for an opposite question")
	}
	return b.String()
}

func quote(s string) string { return "“" + s + "”" }
