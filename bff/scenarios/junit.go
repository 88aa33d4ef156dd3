package scenarios

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// JUnit is how WriteJUnit names and dates the run.
type JUnit struct {
	Suite    string    // the suite's name: the testsuite's name and each case's class prefix
	Time     time.Time // when the run started
	Hostname string    // "" = localhost
	// Properties are written as the testsuite's properties (the engine's
	// release, the variations, the seed), in this order.
	Properties [][2]string
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr,omitempty"` // not in the Ant schema: left out when 0
	Time       string          `xml:"time,attr"`
	Package    string          `xml:"package,attr"`
	ID         int             `xml:"id,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out"`
	SystemErr  string          `xml:"system-err"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
}

// junitSkipped says why in its text: Jenkins's older junit-4 schema allows
// no attribute on it (the newer junit-10 a message), and text is valid in
// both.
type junitSkipped struct {
	Text string `xml:",chardata"`
}

type junitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes r as JUnit XML, one test case per result (vignette ×
// variation × repeat): a failure for an under-triage or a downward flip
// (both transcripts in its text, unvaried first), an error for a play
// that failed, skipped for a simulator-limited result. The document is
// valid against Jenkins's junit-4.xsd and xunit's junit-10.xsd, the
// schemas CI systems read (TestWriteJUnit checks the first), and, when no
// play is simulator-limited, against the Ant schema (windyroad/JUnit-Schema)
// too, which has no skipped element or count: one testsuite inside
// testsuites, every required attribute, at most one of failure, error and
// skipped per case, properties (never empty) first and system-out/err
// last.
func WriteJUnit(w io.Writer, r *Report, j JUnit) error {
	s := junitSuite{Name: j.Suite, Timestamp: j.Time.UTC().Format("2006-01-02T15:04:05"), Hostname: j.Hostname,
		Time: "0", Package: "scenarios", Properties: []junitProperty{}}
	if s.Name == "" {
		s.Name = "scenarios"
	}
	if s.Hostname == "" {
		s.Hostname = "localhost"
	}
	for _, p := range j.Properties {
		s.Properties = append(s.Properties, junitProperty{Name: p[0], Value: p[1]})
	}
	if len(s.Properties) == 0 {
		// The Ant schema requires properties, Jenkins's a property in them.
		s.Properties = append(s.Properties, junitProperty{Name: "suite", Value: s.Name})
	}
	flips := map[[2]string]Flip{}
	if r.Flips != nil {
		for _, f := range r.Flips.Flips {
			flips[[2]string{f.VignetteID, f.Variation}] = f
		}
	}
	byKey := map[string]*Result{}
	repeats := map[string]int{}
	for i := range r.Results {
		x := &r.Results[i]
		byKey[fmt.Sprintf("%s\x00%s\x00%d", x.VignetteID, x.Variation, x.Repeat)] = x
		repeats[x.VignetteID] = max(repeats[x.VignetteID], x.Repeat)
	}
	find := func(id, variation string, repeat int) *Result {
		return byKey[fmt.Sprintf("%s\x00%s\x00%d", id, variation, repeat)]
	}
	for _, x := range r.Results {
		name := x.Variation
		if name == "" {
			name = "unvaried"
		}
		if repeats[x.VignetteID] > 1 {
			name += fmt.Sprintf(" (repeat %d)", x.Repeat)
		}
		c := junitCase{Name: name, Classname: s.Name + "." + x.VignetteID, Time: "0"}
		o := Assess(x)
		var why []string
		if o.Scored() && o.Triage == TriageUnder {
			why = append(why, fmt.Sprintf("under-triage: %s, gold %s", classWord(x.Final), x.Gold.Class))
		}
		f, flipped := flips[[2]string{x.VignetteID, x.Variation}]
		flipped = flipped && f.Direction == FlipDown && x.Variation != "" && x.Final == f.Varied
		if flipped {
			why = append(why, fmt.Sprintf("downward flip under %s: %s unvaried, %s varied", x.Variation, classWord(f.Base), classWord(f.Varied)))
		}
		switch {
		case x.Error != "":
			s.Errors++
			c.Error = &junitProblem{Message: x.Error, Type: "play_failed", Text: transcriptText("", &x)}
		case len(why) > 0:
			s.Failures++
			typ := "under_triage"
			if flipped {
				typ = "downward_flip"
			}
			text := ""
			if flipped {
				if base := find(x.VignetteID, "", f.BaseRepeat); base != nil {
					text = transcriptText("unvaried (repeat "+fmt.Sprint(base.Repeat)+")", base) + "\n"
				}
			}
			text += transcriptText(name, &x)
			c.Failure = &junitProblem{Message: strings.Join(why, "; "), Type: typ, Text: text}
		case o.SimulatorLimited:
			s.Skipped++
			c.Skipped = &junitSkipped{Text: fmt.Sprintf("simulator-limited: %d of %d engine questions understood", x.Understood, x.Questions)}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("scenarios: write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return fmt.Errorf("scenarios: write junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("scenarios: write junit: %w", err)
	}
	return nil
}

func classWord(c Class) string {
	if c == NoClass {
		return "no decision"
	}
	return string(c)
}

// transcriptText is a result's conversation, one message a line, under a
// heading naming the play and how it ended.
func transcriptText(heading string, x *Result) string {
	var b strings.Builder
	if heading != "" {
		fmt.Fprintf(&b, "== %s: %s (gold %s)\n", heading, classWord(x.Final), x.Gold.Class)
	}
	for _, m := range x.Transcript {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Text)
	}
	if len(x.Transcript) == 0 {
		for _, a := range x.Answers {
			if a.Question != "" {
				fmt.Fprintf(&b, "assistant: %s\n", a.Question)
			}
			fmt.Fprintf(&b, "patient: %s\n", a.Message)
		}
	}
	return b.String()
}
