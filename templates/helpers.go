package templates

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Defaults used when a view leaves a field at its zero value.
const (
	defaultStartAction = "/intakes"
	defaultSignOutURL  = "/signout"
	defaultMaxChars    = 8000
	defaultHistoryMax  = 4000
	defaultAgeMax      = 130
	notReported        = "not reported yet"
)

// thousands formats n with comma separators: 8000 -> "8,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// runes counts Unicode code points, as the server and app.js count them.
func runes(s string) int { return utf8.RuneCountInString(s) }

// counterText is the character counter: "12 / 8,000".
func counterText(s string, max int) string {
	return thousands(runes(s)) + " / " + thousands(max)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orNotReported(s string) string { return orDefault(s, notReported) }

func maxChars(c ComposerView) int {
	if c.MaxChars > 0 {
		return c.MaxChars
	}
	return defaultMaxChars
}

func historyMax(l StartLimits) int {
	if l.HistoryMax > 0 {
		return l.HistoryMax
	}
	return defaultHistoryMax
}

func ageMax(l StartLimits) int {
	if l.AgeMax > 0 {
		return l.AgeMax
	}
	return defaultAgeMax
}

// describedBy joins the ids of the elements that describe a field, skipping
// empty ones.
func describedBy(ids ...string) string {
	out := ids[:0:0]
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return strings.Join(out, " ")
}

// errID returns the id of a field's error element when the field has an error.
func errID(errs FieldErrors, field string) string {
	if errs[field] != "" {
		return field + "-error"
	}
	return ""
}

// hasFieldErrors reports whether any error (field or form-level) is set.
func hasFieldErrors(errs FieldErrors) bool {
	for _, m := range errs {
		if m != "" {
			return true
		}
	}
	return false
}

// startFieldOrder is the order of the start form's fields in the error summary.
var startFieldOrder = []struct{ Key, ID string }{
	{"age", "age"},
	{"sex", "sex"},
	{"history", "history"},
	{"synthetic", "synthetic"},
}

type summaryItem struct{ Href, Message string }

func startErrorSummary(errs FieldErrors) []summaryItem {
	var items []summaryItem
	for _, f := range startFieldOrder {
		if m := errs[f.Key]; m != "" {
			items = append(items, summaryItem{Href: "#" + f.ID, Message: m})
		}
	}
	return items
}

// turnsLabel is "1 turn", "3 turns".
func turnsLabel(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return strconv.Itoa(n) + " turns"
}

// statusLabel capitalises an intake status for display ("open" -> "Open")
// without changing unknown values.
func statusLabel(s string) string {
	switch s {
	case "open":
		return "Open"
	case "closed":
		return "Closed"
	case "expired":
		return "Expired"
	case "":
		return "Unknown"
	}
	return s
}

// turnStatusText is the note shown under a reply that is not complete yet.
func turnStatusText(t TurnView) string {
	switch t.Status {
	case "queued":
		if q := t.Queue; q.Position > 0 {
			return queueWords(q)
		}
		return "Waiting in line: the intake service answers only a few requests a minute…"
	case "streaming":
		return "Writing a reply…"
	}
	return "Waiting for the reply…"
}

// queueWords says a queued turn's place and wait, as of when the page was
// made (the script, when it runs, counts down from there).
func queueWords(q QueueView) string {
	where := "next in line"
	if q.Position > 1 {
		where = ordinal(q.Position) + " in line"
	}
	wait := "any moment now"
	if q.WaitSeconds > 0 {
		wait = "in about " + waitWords(q.WaitSeconds)
	}
	if q.ServiceAsked {
		return fmt.Sprintf("The service asked us to wait longer: about %s more. Your message is %s; your turn %s.", waitWords(max(q.AddedSeconds, 1)), where, wait)
	}
	return fmt.Sprintf("Waiting: your message is %s; your turn %s. The intake service answers only a few requests a minute.", where, wait)
}

// waitWords is "42 s" or "1 min 05 s", as the page's countdown says it.
func waitWords(secs int) string {
	if secs < 60 {
		return strconv.Itoa(secs) + " s"
	}
	return fmt.Sprintf("%d min %02d s", secs/60, secs%60)
}

// ordinal is "1st", "2nd", "3rd", "4th", "11th", "22nd".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}

// withEvents gives the page's pending turn the page's events URL when the
// turn has none of its own.
func withEvents(t TurnView, url string) TurnView {
	if t.Pending && !t.Failed && t.EventsURL == "" {
		t.EventsURL = url
	}
	return t
}

func errorHeading(p ErrorPage) string {
	if p.Heading != "" {
		return p.Heading
	}
	switch p.Status {
	case 400:
		return "The request could not be understood"
	case 403:
		return "This action is not allowed"
	case 404:
		return "Page not found"
	case 409:
		return "This intake has ended"
	case 410:
		return "This intake has expired"
	case 429:
		return "Too many requests"
	case 502, 503, 504:
		return "The intake service is not responding"
	}
	return "Something went wrong"
}

func composerNote(c ComposerView) string {
	return orDefault(c.Note, "This conversation has ended. No more messages can be sent.")
}

func sexOptions() []struct{ Value, Label string } {
	return []struct{ Value, Label string }{
		// Left out, the engine asks for it first (the sandbox's choices:
		// female, male or intersex): the label and the hint say so rather
		// than promise a "prefer not to say" the conversation does not offer.
		{"", "Not given: the assistant will ask"},
		{"female", "Female"},
		{"male", "Male"},
		{"intersex", "Intersex"},
	}
}

// safetyPlain is the plain words of a known safety_status value: patients
// read them instead of the code, clinicians beside the code as received.
// Unknown values (and none) have no words: they are shown as they are,
// since putting them in words would be a guess (the spec's rule 2).
func safetyPlain(s string) string {
	switch s {
	case "no_red_flags_yet":
		return "no warning signs found so far"
	case "cannot_miss_negative":
		return "the serious causes checked for were not found"
	case "cannot_miss_positive":
		return "a sign of a possibly serious problem was found"
	}
	return ""
}

// dispositionPlain is the plain words of a known disposition value, for
// patients when the service sent no disposition_label (the label, when
// there is one, is always what they read). An urgent escalation is an
// emergency only with the urgent flag; without it, it is care today (the
// sandbox's same-day outcome, docs/protocols.md). Unknown values have none.
func dispositionPlain(d string, urgent bool) string {
	switch d {
	case "continue_intake":
		return "Intake in progress"
	case "self_care":
		return "Self-care advice"
	case "clinician_review":
		return "A clinician should review this"
	case "urgent_escalation":
		if !urgent {
			return "Urgent: be seen today"
		}
		return "Urgent: seek emergency care now"
	}
	return ""
}

// patientDisposition is what a patient reads for the disposition: the
// service's label, else the plain words of a known value, else the value as
// received (nothing else is true), else "not reported yet".
func patientDisposition(s StateView) string {
	return orNotReported(orDefault(s.DispositionLabel, orDefault(dispositionPlain(s.Disposition, s.Urgent), s.Disposition)))
}

// sentence starts plain words with a capital letter.
func sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// replyTimeLead and replyTime say how long a reply takes with the upstream
// this app is configured for: the embedded sandbox answers in a few seconds,
// the real service (a model pass per turn) in 20 to 40.
func replyTimeLead(l Layout) string {
	if l.Embedded {
		return "Each reply takes"
	}
	return "Each reply takes about"
}

func replyTime(l Layout) string {
	if l.Embedded {
		return "a few seconds"
	}
	return "20 to 40 seconds"
}

// nothingChanged reports a comparison with no vignette to adjudicate.
func nothingChanged(p ScenarioComparePage) bool {
	return len(p.Regressions)+len(p.SetAside)+len(p.Others)+len(p.Improvements) == 0
}

// nothingText says there is nothing to adjudicate, and what that leaves
// out: gold labels that changed and varied plays that flipped down.
func nothingText(p ScenarioComparePage) string {
	s := "Nothing to adjudicate: the engine's answer to no vignette as written differs between these two runs."
	if n := len(p.GoldChanges); n > 0 {
		s += " " + plural(n, "gold label", "gold labels") + " changed (listed below): a change of the suite, not of the engine."
	}
	for _, x := range []struct {
		name string
		sc   ScenarioCompareScope
	}{{"base", p.BaseScope}, {"head", p.HeadScope}} {
		if x.sc.Varied > 0 {
			s += " The " + x.name + "'s " + plural(x.sc.Varied, "varied play is", "varied plays are") + " not compared"
			if x.sc.FlipsDown > 0 {
				s += ", and " + strconv.Itoa(x.sc.FlipsDown) + " flipped down" + " against its own plays as written (listed below)"
			}
			s += "."
		}
	}
	return s + " The adjudication form appears beside each vignette whose outcome regressed, changed or improved; compare two runs that differ, such as runs before and after a change to the engine or to the suite."
}

// plural is "1 play" or "3 plays".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// scopeText is what a comparison took of one run: "61 plays as written,
// 60 scored; 1 not scored (failed or simulator-limited); 472 varied plays
// (Typing errors, Terse) left out, 2 flipped down and 1 up".
func scopeText(sc ScenarioCompareScope) string {
	s := plural(sc.Plays, "play", "plays") + " as written, " + strconv.Itoa(sc.Scored) + " scored and compared"
	if sc.NotScored > 0 {
		s += "; " + strconv.Itoa(sc.NotScored) + " not scored (failed, or the simulated patient did not understand a question), left out"
	}
	if sc.Varied > 0 {
		s += "; " + plural(sc.Varied, "varied play", "varied plays") + " (" + sc.Variations + ") left out: against this run's plays as written, " +
			strconv.Itoa(sc.FlipsDown) + " flipped down and " + strconv.Itoa(sc.FlipsUp) + " up (listed below)"
	} else {
		s += "; no varied plays"
	}
	return s + "."
}
