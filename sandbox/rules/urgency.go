package rules

import (
	"errors"
	"fmt"
	"slices"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// urgencyFile says which escalations are same-day rather than emergency.
const urgencyFile = "urgency.json"

// Where a same-day escalation sends the patient.
const (
	sameDayGP = "gp" // the GP practice now, or NHS 111 / an urgent treatment centre when it is closed
	sameDayED = "ed" // an urgent treatment centre or emergency department today, no ambulance
)

type urgencyData struct {
	Comment string         `json:"comment"`
	SameDay []sameDayEntry `json:"same_day"`
}

// sameDayEntry names one red flag, or the urgent_escalation disposition
// rules that test one score, whose sources call for assessment today but
// not an ambulance.
type sameDayEntry struct {
	Protocol string `json:"protocol"`
	RedFlag  string `json:"red_flag,omitempty"`
	Score    string `json:"score,omitempty"`
	Where    string `json:"where"`
	Source   string `json:"source"`
}

// loadUrgency records the same-day entries on the protocols of lib.
func loadUrgency(data []byte, lib *library) error {
	var d urgencyData
	if err := decodeStrict(data, &d); err != nil {
		return fmt.Errorf("rules: %s: %w", urgencyFile, err)
	}
	byID := map[string]*Protocol{}
	for _, p := range lib.protocols {
		byID[p.ID] = p
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("rules: %s: "+format, append([]any{urgencyFile}, args...)...))
	}
	for i, en := range d.SameDay {
		where := fmt.Sprintf("same_day[%d] (%s %s%s)", i, en.Protocol, en.RedFlag, en.Score)
		p := byID[en.Protocol]
		switch {
		case p == nil:
			bad("%s: no such protocol", where)
			continue
		case en.Where != sameDayGP && en.Where != sameDayED:
			bad("%s: where must be %q or %q", where, sameDayGP, sameDayED)
		case en.Source == "":
			bad("%s: source is required", where)
		case (en.RedFlag == "") == (en.Score == ""):
			bad("%s: name exactly one of red_flag and score", where)
			continue
		}
		if p.sameDayFlags == nil {
			p.sameDayFlags, p.sameDayScores = map[string]string{}, map[string]string{}
		}
		if en.RedFlag != "" {
			if !slices.ContainsFunc(p.RedFlags, func(rf RedFlag) bool { return rf.Fact == en.RedFlag }) {
				bad("%s: no such red flag", where)
			} else if p.sameDayFlags[en.RedFlag] != "" {
				bad("%s: listed twice", where)
			}
			p.sameDayFlags[en.RedFlag] = en.Where
			continue
		}
		if len(p.escalatingRules(en.Score)) == 0 {
			bad("%s: no urgent_escalation disposition rule of the protocol tests that score", where)
		} else if p.sameDayScores[en.Score] != "" {
			bad("%s: listed twice", where)
		}
		p.sameDayScores[en.Score] = en.Where
	}
	return errors.Join(errs...)
}

// escalatingRules are p's urgent_escalation rules that test score.
func (p *Protocol) escalatingRules(score string) []*DispositionRule {
	var out []*DispositionRule
	for i := range p.Dispositions {
		r := &p.Dispositions[i]
		if r.Disposition != engine.DispositionEscalate {
			continue
		}
		if slices.ContainsFunc(r.When, func(c Condition) bool { return c.Score == score }) {
			out = append(out, r)
		}
	}
	return out
}

// sameDayRule is where a disposition rule's escalation sends the patient,
// "" for an emergency.
func (p *Protocol) sameDayRule(r *DispositionRule) string {
	if r == nil || r.Disposition != engine.DispositionEscalate {
		return ""
	}
	for score, where := range p.sameDayScores {
		if slices.Contains(p.escalatingRules(score), r) {
			return where
		}
	}
	return ""
}
