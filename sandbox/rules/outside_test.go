package rules

import (
	"encoding/json"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

// screenNo answers every question of the generic screen "no".
func screenNo(e *Engine) []string {
	return slices.Repeat([]string{"no"}, len(e.lib.outside.p.RedFlags))
}

// TestOutsideSaidPlainly: a complaint no loaded protocol claims (pain at the
// tooth) is said plainly in the patient's words, screened by the generic
// questions, and closed as clinician review with a safety note naming what
// the patient said; no protocol is reported as committed.
func TestOutsideSaidPlainly(t *testing.T) {
	e := newEngine(t)
	opening := "My tooth aches a bit."
	tr := run(t, e, script{Age: 30, Sex: "male", Messages: append([]string{opening}, screenNo(e)...)})
	first := tr[0].Result
	if !contains(first.Reply, `"my tooth aches a bit"`, "cannot assess that here") ||
		!strings.HasSuffix(first.Reply, e.lib.outside.p.RedFlags[0].Ask) {
		t.Errorf("first reply does not say plainly what is outside, then screen: %q", first.Reply)
	}
	if first.ActiveProtocol != "" || len(first.CandidateProtocols) != 0 || first.IntakeStatus != needsRedFlags || first.Terminal {
		t.Errorf("first turn: protocol %q candidates %q status %s terminal %v", first.ActiveProtocol, first.CandidateProtocols, first.IntakeStatus, first.Terminal)
	}
	for i, x := range tr[1 : len(tr)-1] {
		if want := e.lib.outside.p.RedFlags[i+1].Ask; x.Result.Reply != want {
			t.Errorf("turn %d asked %q, want the screen's %q", i+2, x.Result.Reply, want)
		}
	}
	res := last(tr)
	if !res.Terminal || res.Urgent || res.Disposition != engine.DispositionReview || res.SafetyStatus != engine.SafetyCannotMissNegative || res.ActiveProtocol != "" {
		t.Fatalf("closed %v urgent %v %s %s protocol %q:\n%s", res.Terminal, res.Urgent, res.Disposition, res.SafetyStatus, res.ActiveProtocol, dump(tr))
	}
	notes := strings.Join(res.SafetyNotes, "\n")
	if !contains(notes, "Outside every protocol", `"My tooth aches a bit"`, "pain at tooth", "screened negative") {
		t.Errorf("safety notes do not name what the patient said: %q", res.SafetyNotes)
	}
	if !contains(res.SOAP.Assessment, "Outside every protocol") || !contains(res.SOAP.Subjective, opening) {
		t.Errorf("SOAP %+v", res.SOAP)
	}
	checkPlanHonest(t, "outside", res)
}

// TestOutsideScreenEscalates: a yes to any question of the screen, or a
// reply still unsure after asking twice, is an emergency.
func TestOutsideScreenEscalates(t *testing.T) {
	e := newEngine(t)
	for i, rf := range e.lib.outside.p.RedFlags {
		for _, reply := range [][]string{{"yes"}, {"not sure", "not sure"}} {
			msgs := append([]string{"my tooth aches"}, slices.Repeat([]string{"no"}, i)...)
			msgs = append(msgs, reply...)
			tr := run(t, e, script{Age: 30, Sex: "female", Messages: msgs})
			res := last(tr)
			if !res.Terminal || !res.Urgent || res.Disposition != engine.DispositionEscalate || res.SafetyStatus != engine.SafetyCannotMissPositive {
				t.Errorf("%s answered %q: terminal %v urgent %v %s %s:\n%s", rf.Fact, reply, res.Terminal, res.Urgent, res.Disposition, res.SafetyStatus, dump(tr))
				continue
			}
			if !contains(strings.Join(res.SafetyNotes, " "), rf.SafetyNote) {
				t.Errorf("%s: safety notes %q lack its note", rf.Fact, res.SafetyNotes)
			}
		}
	}
}

// TestOutsideSevereIsSameDay: a severe, sudden or quickly worsening
// complaint outside every protocol is seen the same day, not routinely; a
// mild one is clinician review.
func TestOutsideSevereIsSameDay(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		opening string
		sameDay bool
	}{
		{"this is the worst toothache I've ever had", true},
		{"my tooth has been getting worse by the hour", true},
		{"my tooth suddenly started hurting", true},
		{"toothache that wakes me at night, and I've been vomiting", true},
		{"my tooth aches a bit", false},
		{"toothache that wakes me at night", false},
		{"my tooth is a bit worse when I chew", false},
	} {
		tr := run(t, e, script{Age: 30, Sex: "female", Messages: append([]string{tc.opening}, screenNo(e)...)})
		res := last(tr)
		want, urgent := engine.DispositionReview, false
		if tc.sameDay {
			want = engine.DispositionEscalate
		}
		if !res.Terminal || res.Disposition != want || res.Urgent != urgent {
			t.Errorf("%q: %s urgent %v, want %s urgent %v:\n%s", tc.opening, res.Disposition, res.Urgent, want, urgent, dump(tr))
			continue
		}
		if tc.sameDay && (res.DispositionLabel != e.replies.LabelSameDay || !strings.Contains(res.Reply, e.replies.SameDayGP) ||
			!contains(strings.Join(res.SafetyNotes, " "), "Same-day escalation", "outside every protocol")) {
			t.Errorf("%q: label %q reply %q notes %q", tc.opening, res.DispositionLabel, res.Reply, res.SafetyNotes)
		}
	}
}

// TestClosestProtocolsOffered: a complaint that cannot be placed is asked for
// with the protocols closest to what was read and "Something else", never
// every title; choosing "Something else" takes the intake outside.
func TestClosestProtocolsOffered(t *testing.T) {
	e := newEngine(t)
	other := e.lib.outside.p.Title
	for _, tc := range []struct {
		opening string
		want    []string // the protocols offered before "Something else"
	}{
		{"hello", nil},
		{"I have a problem with my chest", []string{"Chest pain"}},
		{"something is wrong with my back", nil},
	} {
		res := last(run(t, e, script{Messages: []string{tc.opening}}))
		if res.Terminal || len(res.Choices) == 0 || res.Choices[len(res.Choices)-1] != other {
			t.Errorf("%q: terminal %v choices %q: want %q last", tc.opening, res.Terminal, res.Choices, other)
			continue
		}
		if got := res.Choices[:len(res.Choices)-1]; tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("%q: offered %q, want %q", tc.opening, got, tc.want)
		}
	}
	res := last(run(t, e, script{Messages: []string{"I have a pain"}}))
	if n := len(res.Choices); n < 2 || n > maxClosest+1 || !slices.Contains(res.Choices, "Headache") || slices.Contains(res.Choices, "Low mood") {
		t.Errorf("a pain with no place: choices %q, want some of the pain protocols (at most %d) and %q", res.Choices, maxClosest, other)
	}
	tr := run(t, e, script{Age: 30, Sex: "female", Messages: append([]string{"I need a sick note", other}, screenNo(e)...)})
	if x := tr[1].Result; x.Reply != joinSentences(e.replies.OutsideChosen, e.lib.outside.p.RedFlags[0].Ask) || x.ActiveProtocol != "" {
		t.Errorf("%q: reply %q protocol %q", other, x.Reply, x.ActiveProtocol)
	}
	if res := last(tr); res.Disposition != engine.DispositionReview || !contains(strings.Join(res.SafetyNotes, " "), "Outside every protocol", "chose") ||
		!contains(res.SOAP.Subjective, "I need a sick note") {
		t.Errorf("after %q: %s, notes %q, subjective %q", other, res.Disposition, res.SafetyNotes, res.SOAP.Subjective)
	}
}

// TestOutsideOpeningAnswersNoScreenQuestion: the words that took the intake
// outside every protocol are history or a look-alike when no emergency
// category heard them: they volunteer no answer, and the question is asked.
func TestOutsideOpeningAnswersNoScreenQuestion(t *testing.T) {
	e := newEngine(t)
	for _, opening := range []string{"I had a seizure in 2015 and my tooth aches", "I passed out once when I gave blood, years ago"} {
		res := last(run(t, e, script{Age: 30, Sex: "female", Messages: []string{opening}}))
		if res.Terminal || res.IntakeStatus != needsRedFlags {
			t.Errorf("%q: terminal %v %s %s, want the screen asked", opening, res.Terminal, res.Disposition, res.IntakeStatus)
		}
	}
	// A later answer does volunteer: "no, but I fainted this morning"
	// answers the collapse question before it is asked.
	tr := run(t, e, script{Age: 30, Sex: "female", Messages: []string{"my tooth aches", "no, but I fainted this morning"}})
	if res := last(tr); !res.Terminal || !res.Urgent {
		t.Errorf("a fainting volunteered in an answer did not escalate:\n%s", dump(tr))
	}
}

// TestOutsideScreenCoversEveryCategory: the screen asks about every
// emergency category, or outside.json says why it does not.
func TestOutsideScreenCoversEveryCategory(t *testing.T) {
	e := newEngine(t)
	o := e.lib.outside
	for _, c := range e.lib.emergencies {
		asked := false
		for _, cats := range o.categories {
			asked = asked || slices.Contains(cats, c.ID)
		}
		if !asked && o.notScreened[c.ID] == "" {
			t.Errorf("emergency category %s is neither screened nor in not_screened with a reason", c.ID)
		}
	}
}

// TestOutsideMeansTheLoadedProtocols: "outside every protocol" is decided
// from the library loaded, never a list: with a protocol added whose
// recognise rule claims pain at the tooth, the same opening commits to it.
func TestOutsideMeansTheLoadedProtocols(t *testing.T) {
	fsys := fstest.MapFS{}
	names, _ := fs.Glob(libraryFiles, "*/*.json")
	names = append(names, urgencyFile)
	for _, n := range names {
		data, _ := fs.ReadFile(libraryFiles, n)
		fsys[n] = &fstest.MapFile{Data: data}
	}
	var p map[string]any
	if err := json.Unmarshal(fsys["protocols/headache.v1.json"].Data, &p); err != nil {
		t.Fatal(err)
	}
	p["id"], p["title"], p["patient_term"] = "tooth_pain.v1", "Tooth pain", "tooth pain"
	p["triggers"] = []string{"toothache"}
	p["recognise"] = []map[string]any{{"all": []string{"pain@tooth"}}}
	data, _ := json.Marshal(p)
	fsys["protocols/tooth_pain.v1.json"] = &fstest.MapFile{Data: data}

	build := func(fsys fs.FS) *Engine {
		lexData, _ := fs.ReadFile(fsys, lexiconFile)
		lx, err := loadLexicon(lexData)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := loadLibrary(fsys, lx)
		if err != nil {
			t.Fatal(err)
		}
		r := defaultReplies()
		if err := r.prepare(lx); err != nil {
			t.Fatal(err)
		}
		return &Engine{lx: lx, lib: lib, replies: r}
	}
	with := build(fsys)
	res := last(run(t, with, script{Messages: []string{"my tooth aches a bit"}}))
	if res.ActiveProtocol != "tooth_pain.v1" {
		t.Errorf("with a tooth protocol loaded: protocol %q, reply %q", res.ActiveProtocol, res.Reply)
	}
	delete(fsys, "protocols/tooth_pain.v1.json")
	res = last(run(t, build(fsys), script{Messages: []string{"my tooth aches a bit"}}))
	if res.ActiveProtocol != "" || !strings.Contains(res.Reply, "cannot assess") {
		t.Errorf("without it: protocol %q, reply %q", res.ActiveProtocol, res.Reply)
	}
}

// TestAloneRuleYieldsToOutside: a recognise rule marked alone (vomiting,
// dizziness, anxiety) counts only when no other complaint is named, and a
// complaint at a site outside every protocol is one: the toothache with
// vomiting beside it goes outside, as a headache with vomiting is the
// headache; vomiting alone, or anxiety with a pounding heart (a kind, not a
// site, no protocol names), is still its protocol.
func TestAloneRuleYieldsToOutside(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		opening, protocol string
	}{
		{"toothache that wakes me at night, and I've been vomiting", ""},
		{"my tooth is killing me and I feel dizzy", ""},
		{"I've been vomiting since last night", "vomiting_diarrhoea.v1"},
		{"a headache and I've been vomiting", "headache.v1"},
		{"my anxiety is through the roof, heart pounding at night", "low_mood.v1"},
	} {
		res := last(run(t, e, script{Age: 30, Sex: "female", Messages: []string{tc.opening}}))
		if res.ActiveProtocol != tc.protocol || tc.protocol == "" && !contains(res.Reply, "cannot assess that here") {
			t.Errorf("%q: protocol %q reply %q, want %q (\"\": outside every protocol)", tc.opening, res.ActiveProtocol, res.Reply, tc.protocol)
		}
	}
}
