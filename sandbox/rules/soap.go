package rules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// placeholders lists what SOAP templates may use; soap() fills each.
func placeholders() []string {
	return []string{"{complaint}", "{opening}", "{messages}", "{history}", "{answers}", "{demographics}",
		"{reported}", "{red_flags}", "{score}", "{reason}", "{disposition_label}"}
}

// soap fills the protocol's templates (or, when no protocol was committed,
// the generic emergency ones or those of an intake without a main problem)
// from the captured facts. Each fact is stated once: the red-flag line
// carries the finding, so the reason is not repeated after it.
func (s *session) soap() engine.SOAP {
	if len(s.msgs) == 0 {
		return engine.SOAP{}
	}
	r := s.e.replies
	t, complaint := r.NoProtocolSOAP, "presenting problem"
	switch {
	case s.active != nil:
		t, complaint = s.active.SOAP, s.active.PatientTerm
	case s.emergency != nil:
		t = r.EmergencySOAP
	}
	plan := "Intake in progress: no plan yet."
	if s.phase == phaseDone {
		own := t.Plan[s.disposition]
		if s.sameDay != "" {
			_, own = r.sameDay(s.sameDay)
		}
		plan = own + " Patient was told: " + strconv.Quote(s.closingReply())
	}
	history := "None given."
	if h := strings.TrimSpace(s.demo.History); h != "" {
		history = strings.ReplaceAll(h, "\n", " ")
	}
	fill := strings.NewReplacer(
		"{complaint}", complaint,
		"{opening}", strconv.Quote(s.msgs[0].raw),
		"{messages}", s.messagesQuoted(),
		"{history}", history,
		"{answers}", s.answersInPatientWords(),
		"{demographics}", s.demographicsLine(),
		"{reported}", s.reportedLine(),
		"{red_flags}", s.redFlagLine(),
		"{score}", s.scoreLine(),
		"{reason}", s.reasonLine(),
		"{disposition_label}", s.label(),
	)
	return engine.SOAP{
		Subjective: tidy(fill.Replace(t.Subjective)),
		Objective:  tidy(fill.Replace(t.Objective)),
		Assessment: tidy(fill.Replace(t.Assessment)),
		Plan:       tidy(fill.Replace(plan)),
	}
}

// messagesQuoted quotes every patient message, in order, each once.
func (s *session) messagesQuoted() string {
	var parts []string
	seen := map[string]bool{}
	for _, m := range s.msgs {
		q := strconv.Quote(m.raw)
		if seen[q] {
			continue
		}
		seen[q] = true
		parts = append(parts, q)
	}
	return strings.Join(parts, "; ")
}

func tidy(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (s *session) dispositionSoFar() string {
	if s.phase == phaseDone {
		return s.disposition
	}
	return engine.DispositionContinue
}

// answersInPatientWords quotes the patient's own reply for each asked
// question, and marks facts they volunteered.
func (s *session) answersInPatientWords() string {
	var parts []string
	for _, q := range s.protocolQuestions() {
		a, ok := s.facts[q.Fact]
		if !ok {
			continue
		}
		switch {
		case a.source == sourceVolunteered:
			parts = append(parts, fmt.Sprintf("%s: %s, %s", q.Label, s.display(q, a), volunteeredFrom(a)))
		case a.earlier != "":
			parts = append(parts, fmt.Sprintf("%s: %s, then %s", q.Label, strconv.Quote(a.earlier), strconv.Quote(a.words)))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s", q.Label, strconv.Quote(a.words)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Answers: " + strings.Join(parts, "; ") + "."
}

// protocolQuestions are the red flags then the questions of the committed
// protocol (demographics are reported separately).
func (s *session) protocolQuestions() []*Question {
	var qs []*Question
	if s.active == nil {
		return qs
	}
	for i := range s.active.redFlags {
		qs = append(qs, &s.active.redFlags[i])
	}
	for i := range s.active.Questions {
		qs = append(qs, &s.active.Questions[i])
	}
	return qs
}

// volunteeredFrom says where a volunteered fact was read, quoting the
// patient's words so a clinician can check the reading: the clauses that
// hold the question's words, else the whole message.
func volunteeredFrom(a answer) string {
	words := a.from
	if words == "" {
		words = a.words
	}
	return fmt.Sprintf("volunteered at turn %d: %s", a.turn, strconv.Quote(words))
}

func (s *session) display(q *Question, a answer) string {
	switch {
	case a.unsureTwice:
		return "unclear after asking twice"
	case q.Kind == kindDuration && a.approx != "":
		return a.approx
	case q.Kind == kindDuration && a.hasNum:
		return describeDays(a.num)
	case q.Kind == kindChoice:
		for _, o := range q.Options {
			if o.Value == a.value {
				return strings.ToLower(o.Label)
			}
		}
	}
	return a.value
}

func describeDays(d float64) string {
	switch {
	case d < 1:
		return "less than a day"
	case d == 1:
		return "about 1 day"
	}
	return fmt.Sprintf("about %s days", strconv.FormatFloat(d, 'f', -1, 64))
}

func (s *session) demographicsLine() string {
	var parts []string
	if a, ok := s.facts[factAge]; ok && a.hasNum {
		parts = append(parts, fmt.Sprintf("Age %s (%s)", a.value, a.source))
	} else if ok {
		parts = append(parts, "Age not given")
	}
	if a, ok := s.facts[factSex]; ok {
		parts = append(parts, fmt.Sprintf("sex %s (%s)", a.value, a.source))
	}
	if a, ok := s.facts[factPregnancy]; ok {
		parts = append(parts, fmt.Sprintf("possible pregnancy: %s", a.value))
	}
	if len(parts) == 0 {
		return "Demographics not captured"
	}
	return strings.Join(parts, "; ")
}

func (s *session) reportedLine() string {
	var parts []string
	for _, q := range s.protocolQuestions() {
		if a, ok := s.facts[q.Fact]; ok {
			how := ""
			if a.source == sourceVolunteered {
				how = " (volunteered, not asked)"
			}
			parts = append(parts, fmt.Sprintf("%s: %s%s", q.Label, s.display(q, a), how))
		}
	}
	if len(parts) == 0 {
		return "No symptom answers yet."
	}
	return "Reported: " + strings.Join(parts, "; ") + "."
}

func (s *session) redFlagLine() string {
	switch {
	case s.emergency != nil:
		return "Emergency phrase at turn " + strconv.Itoa(s.emergency.turn) + s.emergency.saidOf() + ": " + s.emergency.findings()
	case s.redFlag != nil:
		a := s.facts[s.redFlag.Fact]
		if a.value == valUnsure {
			return "Red flag NOT EXCLUDED (patient unsure): " + s.redFlag.finding()
		}
		return "Red flag POSITIVE: " + s.redFlag.finding()
	case s.unidentified:
		return ""
	case s.active == nil:
		return "Red flags not screened yet."
	case s.redFlagsNegative():
		return "Cannot-miss red flags screened negative: " + s.redFlagLabels() + "."
	}
	return "Red flag screen incomplete."
}

func (s *session) redFlagLabels() string {
	var labels []string
	for _, rf := range s.active.RedFlags {
		labels = append(labels, strings.ToLower(rf.Label))
	}
	return strings.Join(labels, ", ")
}

func (s *session) scoreLine() string {
	if s.active == nil || s.active.Score == nil {
		return "No scoring rule applies to this protocol."
	}
	sc, ok := s.score()
	if !ok {
		return s.active.Score.Name + " not completed."
	}
	return fmt.Sprintf("%s %s (%s: %s). Components: %s.", s.active.Score.Name, sc.Total, sc.Band, s.bandMeaning(sc), sc.Components)
}

// reasonLine is the disposition rule's reason. An emergency's or a red
// flag's reason is its note, which the red-flag line already gives.
func (s *session) reasonLine() string {
	switch {
	case s.phase != phaseDone:
		return "Intake in progress."
	case s.emergency != nil || s.redFlag != nil:
		return ""
	}
	return s.reason
}

// finding is the red flag's label and safety note, the label once: most
// notes begin with it ("Unable to pass urine: acute urinary retention…").
func (rf *RedFlag) finding() string {
	if strings.HasPrefix(strings.ToLower(rf.SafetyNote), strings.ToLower(rf.Label)+":") {
		return rf.SafetyNote
	}
	return rf.Label + ". " + rf.SafetyNote
}

// safetyNotes are clinician-facing: the red-flag result and, always, the
// sandbox disclaimer.
func (s *session) safetyNotes() []string {
	notes := []string{}
	if s.emergency != nil {
		notes = append(notes, fmt.Sprintf("Emergency phrase at turn %d (%s)%s: %s", s.emergency.turn, strconv.Quote(s.emergency.words), s.emergency.saidOf(), s.emergency.findings()))
	}
	if s.redFlag != nil {
		a := s.facts[s.redFlag.Fact]
		state := "POSITIVE"
		if a.value == valUnsure {
			state = "NOT EXCLUDED (patient unsure after asking twice)"
		}
		notes = append(notes, fmt.Sprintf("Red flag %s: %s", state, s.redFlag.finding()))
	}
	if s.phase == phaseDone && s.disposition == engine.DispositionEscalate && s.sameDay != "" {
		notes = append(notes, "Same-day escalation, not an emergency: the guidance for this finding calls for assessment today without an ambulance (urgent is false).")
	}
	if s.unidentified {
		notes = append(notes, s.reason)
	}
	if s.isOutside() {
		notes = append(notes, s.outsideNote())
	}
	if s.redFlagsNegative() {
		notes = append(notes, "Cannot-miss red flags screened negative: "+s.redFlagLabels()+".")
	}
	if s.active != nil {
		var others []string
		for _, p := range s.candidates {
			if p != s.active {
				others = append(others, strings.ToLower(p.Title))
			}
		}
		if len(others) > 0 {
			notes = append(notes, "Also named by the patient, not assessed by this intake: "+strings.Join(others, ", ")+".")
		}
	}
	if s.phase == phaseDone && s.emergency == nil && s.redFlag == nil && s.disposition == engine.DispositionEscalate {
		notes = append(notes, "Urgent by the protocol's disposition rules: "+s.reason)
	}
	return append(notes, s.e.replies.SandboxNote)
}
