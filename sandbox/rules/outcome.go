package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// decide applies the protocol's disposition rules: the first whose
// conditions all hold wins; the last rule has none.
func (s *session) decide() *DispositionRule {
	score, complete := s.score()
	for i := range s.active.Dispositions {
		if rule := &s.active.Dispositions[i]; s.holds(rule.When, score, complete) {
			return rule
		}
	}
	// Unreachable: the loader insists on an unconditional last rule.
	return &DispositionRule{Disposition: engine.DispositionReview, Reason: "No disposition rule applied."}
}

func (s *session) holds(conds []Condition, score engine.Score, scored bool) bool {
	for _, c := range conds {
		if c.Score != "" {
			if !scored || !slices.Contains(c.Bands, score.Band) {
				return false
			}
			continue
		}
		if !s.factMatches(c.Fact, c.In, c.Min, c.Max) {
			return false
		}
	}
	return true
}

// factMatches tests a captured fact against a list of values or a numeric
// range (inclusive). A missing fact never matches.
func (s *session) factMatches(fact string, in []string, lo, hi *float64) bool {
	a, ok := s.facts[fact]
	if !ok {
		return false
	}
	if len(in) > 0 && !slices.Contains(in, a.value) {
		return false
	}
	if lo != nil || hi != nil {
		if !a.hasNum || (lo != nil && a.num < *lo) || (hi != nil && a.num > *hi) {
			return false
		}
	}
	return true
}

// score computes the protocol's scoring rule once every fact it needs is
// captured; before that it reports complete=false.
func (s *session) score() (engine.Score, bool) {
	if s.active == nil || s.active.Score == nil {
		return engine.Score{}, false
	}
	rule := s.active.Score
	total := 0
	var parts []string
	for _, c := range rule.Components {
		if _, ok := s.facts[c.Fact]; !ok {
			return engine.Score{}, false
		}
		if s.factMatches(c.Fact, c.In, c.Min, c.Max) {
			total += c.Points
			parts = append(parts, fmt.Sprintf("%s %+d", c.Label, c.Points))
		} else {
			parts = append(parts, c.Label+" 0")
		}
	}
	band := rule.Bands[len(rule.Bands)-1]
	for _, b := range rule.Bands {
		if total >= b.Min {
			band = b
			break
		}
	}
	return engine.Score{
		Key:        rule.Key,
		Total:      strconv.Itoa(total),
		Band:       band.Band,
		Components: strings.Join(parts, ", "),
	}, true
}

// bandMeaning is the published meaning of the band a score fell in.
func (s *session) bandMeaning(sc engine.Score) string {
	for _, b := range s.active.Score.Bands {
		if b.Band == sc.Band {
			return b.Meaning
		}
	}
	return ""
}
