// Package safety is the clinical safety case of an engine release, after
// DCB0129 (the manufacturer's clinical risk management): a hazard log
// (hazards, their causes and effects, their risk before and after controls
// on the 5 × 5 matrix), the controls and the scenario evidence each names,
// the evaluation of that evidence against an engine release's runs, and the
// snapshot a release decision freezes. It is core: no network, no
// database; docs/safety.md describes the workflow.
package safety

import (
	"fmt"
	"strings"
)

// Severity is how bad the harm of a hazard is, 1 (minor) to 5
// (catastrophic), in DCB0129's words.
type Severity int

// The severities of DCB0129's guidance.
const (
	Minor        Severity = 1
	Significant  Severity = 2
	Considerable Severity = 3
	Major        Severity = 4
	Catastrophic Severity = 5
)

// Likelihood is how likely the harm is, 1 (very low) to 5 (very high).
type Likelihood int

// The likelihoods of DCB0129's guidance.
const (
	VeryLow  Likelihood = 1
	Low      Likelihood = 2
	Medium   Likelihood = 3
	High     Likelihood = 4
	VeryHigh Likelihood = 5
)

var severityWords = [...]string{"", "minor", "significant", "considerable", "major", "catastrophic"}

var likelihoodWords = [...]string{"", "very low", "low", "medium", "high", "very high"}

// String is the severity's word ("catastrophic"); "" when out of range.
func (s Severity) String() string {
	if s < Minor || s > Catastrophic {
		return ""
	}
	return severityWords[s]
}

// String is the likelihood's words ("very high"); "" when out of range.
func (l Likelihood) String() string {
	if l < VeryLow || l > VeryHigh {
		return ""
	}
	return likelihoodWords[l]
}

// Severities lists the severities from minor to catastrophic: the matrix's
// columns.
func Severities() []Severity {
	return []Severity{Minor, Significant, Considerable, Major, Catastrophic}
}

// Likelihoods lists the likelihoods from very high to very low: the
// matrix's rows, as DCB0129's guidance draws it.
func Likelihoods() []Likelihood { return []Likelihood{VeryHigh, High, Medium, Low, VeryLow} }

// ParseSeverity reads a severity's word, any case, "_" or "-" for a space.
func ParseSeverity(s string) (Severity, error) {
	w := normalWord(s)
	for i, x := range severityWords {
		if i > 0 && x == w {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a severity: one of minor, significant, considerable, major, catastrophic", s)
}

// ParseLikelihood reads a likelihood's words, any case, "_" or "-" for a space.
func ParseLikelihood(s string) (Likelihood, error) {
	w := normalWord(s)
	for i, x := range likelihoodWords {
		if i > 0 && x == w {
			return Likelihood(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a likelihood: one of very low, low, medium, high, very high", s)
}

func normalWord(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("_", " ", "-", " ").Replace(strings.ToLower(s))), " ")
}

// matrix is DCB0129's risk matrix: [likelihood][severity] → risk rating,
// both 1-based (index 0 unused).
var matrix = [6][6]Risk{
	VeryLow:  {0, 1, 1, 2, 2, 3},
	Low:      {0, 1, 2, 2, 3, 4},
	Medium:   {0, 2, 2, 3, 3, 4},
	High:     {0, 2, 3, 3, 4, 5},
	VeryHigh: {0, 3, 4, 4, 5, 5},
}

// Risk is a clinical risk rating, 1 (acceptable) to 5 (unacceptable).
type Risk int

// RiskOf is the rating of a severity and a likelihood on DCB0129's matrix;
// 0 when either is out of range.
func RiskOf(s Severity, l Likelihood) Risk {
	if s.String() == "" || l.String() == "" {
		return 0
	}
	return matrix[l][s]
}

// String is what the rating means, in the guidance's words.
func (r Risk) String() string {
	switch r {
	case 1:
		return "acceptable, no further action"
	case 2:
		return "acceptable where documented"
	case 3:
		return "undesirable: acceptable only if further reduction is impractical"
	case 4:
		return "mandatory elimination or control to reduce risk"
	case 5:
		return "unacceptable"
	}
	return ""
}

// Assessment is a severity and a likelihood: a hazard's risk before or
// after its controls.
type Assessment struct {
	Severity   Severity   `json:"severity"`
	Likelihood Likelihood `json:"likelihood"`
}

// Risk is the assessment's rating.
func (a Assessment) Risk() Risk { return RiskOf(a.Severity, a.Likelihood) }
