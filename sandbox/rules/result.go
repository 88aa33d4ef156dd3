package rules

import (
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// Intake statuses: what the intake still needs.
const (
	needsComplaint     = "needs_presenting_complaint"
	needsMainComplaint = "needs_main_complaint"
	needsAge           = "needs_age"
	needsSex           = "needs_sex"
	needsPregnancy     = "needs_pregnancy_status"
	needsRedFlags      = "needs_red_flag_screen"
	needsHistory       = "needs_symptom_questions"
)

// result turns the session into the engine's answer for the last message.
func (s *session) result() engine.Result {
	r := s.e.replies
	res := engine.Result{
		Choices:            []string{},
		SafetyStatus:       engine.SafetyNoRedFlagsYet,
		SafetyNotes:        []string{},
		Disposition:        engine.DispositionContinue,
		DispositionLabel:   r.LabelInProgress,
		IntakeStatus:       needsComplaint,
		CandidateProtocols: []string{},
		Scores:             []engine.Score{},
		Facts:              s.capturedFacts(),
	}
	for _, p := range s.candidates {
		res.CandidateProtocols = append(res.CandidateProtocols, p.ID)
	}
	if s.active != nil && !s.isOutside() {
		res.ActiveProtocol = s.active.ID
		if sc, ok := s.score(); ok {
			res.Scores = append(res.Scores, sc)
		}
	}
	switch {
	case s.emergency != nil || s.redFlag != nil:
		res.SafetyStatus = engine.SafetyCannotMissPositive
	case s.redFlagsNegative():
		res.SafetyStatus = engine.SafetyCannotMissNegative
	}
	res.SafetyNotes = s.safetyNotes()
	res.SOAP = s.soap()
	if len(s.msgs) == 0 {
		return res
	}

	switch s.phase {
	case phaseDone:
		res.Reply = s.closingReply()
		res.Terminal = true
		// A same-day escalation is urgent_escalation without urgent: care
		// today, not immediate review (docs/protocols.md).
		res.Urgent = s.disposition == engine.DispositionEscalate && s.sameDay == ""
		res.Disposition = s.disposition
		res.DispositionLabel = s.label()
		res.IntakeStatus = engine.IntakeStatusComplete
	case phaseMainProblem:
		res.Reply = joinSentences(s.prefix, r.AskMainProblem)
		// The protocols closest to what was read, and "Something else";
		// every title only for a library without outside.json (a test's).
		offered := s.e.lib.protocols
		if s.e.lib.outside != nil {
			offered = s.e.lib.closest(s.msgs)
		}
		for _, p := range offered {
			res.Choices = append(res.Choices, p.shownTitle)
		}
		if s.e.lib.outside != nil {
			res.Choices = append(res.Choices, s.e.lib.outside.p.shownTitle)
		}
	case phaseWhich:
		res.Reply = joinSentences(s.prefix, r.AskWhichProblem)
		res.IntakeStatus = needsMainComplaint
		for _, p := range s.candidates {
			res.Choices = append(res.Choices, p.shownTitle)
		}
	case phaseQuestion:
		q := s.pending
		intro := ""
		switch {
		case s.committed && s.isOutside():
			intro = s.outsideIntro()
		case s.committed:
			intro = strings.ReplaceAll(r.Committed, "{complaint}", s.active.shownTerm)
		}
		ask := q.Ask
		if s.asked[q.Fact] > 1 && q.AskAgain != "" {
			ask = q.AskAgain
		}
		res.Reply = joinSentences(s.prefix, intro, ask)
		res.Choices = append(res.Choices, q.Choices...)
		res.IntakeStatus = s.needs(q)
	}
	return res
}

func (s *session) needs(q *Question) string {
	switch {
	case q.Fact == factAge:
		return needsAge
	case q.Fact == factSex:
		return needsSex
	case q.Fact == factPregnancy:
		return needsPregnancy
	case s.isRedFlag(q.Fact):
		return needsRedFlags
	}
	return needsHistory
}

func joinSentences(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, " ")
}

func (s *session) capturedFacts() engine.Facts {
	var f engine.Facts
	// An age the patient would not give stays null rather than a word a
	// client might try to read as a number.
	if a, ok := s.facts[factAge]; ok && a.hasNum {
		v := a.value
		f.Age = &v
	}
	if a, ok := s.facts[factSex]; ok {
		v := a.value
		f.Sex = &v
	}
	if a, ok := s.facts[factPregnancy]; ok {
		v := a.value
		f.Pregnancy = &v
	}
	return f
}

// closingReply is the last reply: what happens next, why when it is urgent,
// and the advice the protocol gives for the outcome. The SOAP plan quotes it,
// so the handoff claims nothing the patient was not told.
func (s *session) closingReply() string {
	r := s.e.replies
	advice := ""
	if s.active != nil {
		advice = s.active.Advice[s.disposition]
	}
	call := r.UrgentCall
	if s.sameDay != "" {
		call, _ = r.sameDay(s.sameDay)
	}
	switch {
	case s.unidentified:
		return r.CloseUnidentified
	case s.emergency != nil:
		reply, advice := s.emergency.reply()
		call = r.UrgentCall
		if s.emergency.categories[0].CallNow {
			call = r.UrgentCallNow
		}
		return joinSentences(reply, call, advice)
	case s.redFlag != nil:
		why := s.redFlag.Reply
		if s.facts[s.redFlag.Fact].value == valUnsure {
			why = r.UrgentUnclear
		} else if why == "" {
			why = r.UrgentBecause
		}
		if s.redFlag.Advice != "" {
			advice = s.redFlag.Advice
		}
		return joinSentences(why, call, advice)
	case s.disposition == engine.DispositionSelfCare:
		return joinSentences(r.CloseSelfCare, advice, r.SafetyNetSelf)
	case s.disposition == engine.DispositionReview:
		return joinSentences(r.CloseReview, advice, r.SafetyNetReview)
	}
	return joinSentences(r.UrgentBecause, call, advice)
}

// label is the disposition label of the outcome so far.
func (s *session) label() string {
	if s.phase == phaseDone && s.disposition == engine.DispositionEscalate && s.sameDay != "" {
		return s.e.replies.LabelSameDay
	}
	return s.e.replies.label(s.dispositionSoFar())
}
