package rules

import (
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/clinical-intake/intake-web/sandbox/engine"
)

const conversational = "conversational"

func newVoiceEngine(t testing.TB, name string) *Engine {
	t.Helper()
	e, err := NewVoice(name)
	if err != nil {
		t.Fatalf("NewVoice(%q): %v", name, err)
	}
	return e
}

func TestVoices(t *testing.T) {
	if got, want := Voices(), []string{VoicePlain, conversational, "heldout_r1", "heldout_r2", "heldout_r3", "heldout_r4a", "heldout_r4b", "heldout_r5"}; !slices.Equal(got, want) {
		t.Fatalf("Voices() = %q, want %q", got, want)
	}
	plain, conv := newEngine(t), newVoiceEngine(t, conversational)
	if id := newVoiceEngine(t, VoicePlain).Identity(); id != plain.Identity() {
		t.Errorf("NewVoice(plain) identity %+v, New %+v", id, plain.Identity())
	}
	p, c := plain.Identity(), conv.Identity()
	if p.VoiceProfile != "plain-short-en/1" || c.VoiceProfile != "conversational-en/1" {
		t.Errorf("voice profiles %q and %q", p.VoiceProfile, c.VoiceProfile)
	}
	if p.PromptHash == c.PromptHash || !strings.HasPrefix(c.PromptHash, "sha256:") || len(c.PromptHash) != len(p.PromptHash) {
		t.Errorf("prompt hashes %q and %q: want two different sha256 hashes", p.PromptHash, c.PromptHash)
	}
	// The decisions are the library's, shared by every voice.
	if p.DirectoryHash != c.DirectoryHash || p.ProtocolCount != c.ProtocolCount || p.ServerModel != c.ServerModel {
		t.Errorf("identities differ beyond the wording: %+v and %+v", p, c)
	}
	for _, bad := range []string{"", "Plain", "chatty", "../conversational", "voices/conversational"} {
		_, err := NewVoice(bad)
		if err == nil || !strings.Contains(err.Error(), "plain, conversational") {
			t.Errorf("NewVoice(%q) = %v, want an error listing the voices", bad, err)
		}
	}
}

// voiceText is one patient-facing sentence or label of an engine, by key.
type voiceText struct {
	text     string
	question bool // ask or ask_again
	label    bool // a quick reply
}

// patientTexts lists every patient-facing text an engine can say, read from
// the engine itself (not from the overlay file).
func patientTexts(e *Engine) map[string]voiceText {
	out := map[string]voiceText{}
	add := func(key, text string, question, label bool) {
		if text != "" {
			out[key] = voiceText{text, question, label}
		}
	}
	rv := reflect.ValueOf(e.replies).Elem()
	for name, i := range voicedReplyFields() {
		add("replies."+name, rv.Field(i).String(), false, strings.HasPrefix(name, "label_"))
	}
	addQuestion := func(key string, q *Question) {
		add(key+".ask", q.Ask, true, false)
		add(key+".ask_again", q.AskAgain, true, false)
		for i, c := range q.Choices {
			add(fmt.Sprintf("%s.choices[%d]", key, i), c, false, true)
		}
	}
	addQuestion("builtin.age", &e.replies.Age)
	addQuestion("builtin.sex", &e.replies.Sex)
	addQuestion("builtin.pregnancy", &e.replies.Pregnancy)
	for _, p := range e.lib.protocols {
		key := "protocols." + p.ID
		add(key+".title", p.shownTitle, false, true)
		add(key+".patient_term", p.shownTerm, false, true)
		for d, text := range p.Advice {
			add(key+".advice."+d, text, false, false)
		}
		for i, rf := range p.RedFlags {
			addQuestion(key+".facts."+rf.Fact, &p.redFlags[i])
			add(key+".facts."+rf.Fact+".reply", rf.Reply, false, false)
			add(key+".facts."+rf.Fact+".advice", rf.Advice, false, false)
		}
		for i := range p.Questions {
			addQuestion(key+".facts."+p.Questions[i].Fact, &p.Questions[i])
		}
	}
	for _, c := range e.lib.emergencies {
		add("emergencies."+c.ID+".reply", c.Reply, false, false)
		add("emergencies."+c.ID+".advice", c.Advice, false, false)
		add("emergencies."+c.ID+".reply_someone_else", c.ReplySomeoneElse, false, false)
		add("emergencies."+c.ID+".advice_someone_else", c.AdviceSomeoneElse, false, false)
	}
	return out
}

// words normalises a sentence to its lowercase words.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(strings.ReplaceAll(s, "'", "")), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// wordEdits is the word-level edit distance between a and b.
func wordEdits(a, b []string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// TestVoiceRewordsEverything: the conversational voice has a text for every
// patient-facing text of the plain voice and nothing else, each different;
// no sentence is the plain one with one word swapped; a question's choices
// are distinct.
func TestVoiceRewordsEverything(t *testing.T) {
	plain, conv := patientTexts(newEngine(t)), patientTexts(newVoiceEngine(t, conversational))
	if len(plain) < 300 {
		t.Fatalf("only %d patient-facing texts found in the plain voice", len(plain))
	}
	for key, p := range plain {
		c, ok := conv[key]
		switch {
		case !ok:
			t.Errorf("%s: no conversational text (plain %q)", key, p.text)
		case strings.EqualFold(strings.TrimSpace(p.text), strings.TrimSpace(c.text)):
			t.Errorf("%s: conversational %q is the plain text", key, c.text)
		case !p.label && wordEdits(words(p.text), words(c.text)) < 2:
			t.Errorf("%s: conversational %q is a one-word edit of the plain %q", key, c.text, p.text)
		case p.question && slices.Equal(words(p.text), words(c.text)):
			t.Errorf("%s: conversational %q has the plain question's words", key, c.text)
		}
	}
	for key := range conv {
		if _, ok := plain[key]; !ok {
			t.Errorf("%s: conversational text with no plain counterpart", key)
		}
	}
	// A question's quick replies must stay distinct from each other.
	e := newVoiceEngine(t, conversational)
	for _, p := range e.lib.protocols {
		for _, qs := range [][]Question{p.redFlags, p.Questions} {
			for _, q := range qs {
				if len(slices.Compact(slices.Sorted(slices.Values(q.Choices)))) != len(q.Choices) {
					t.Errorf("%s/%s: repeated choices %q", p.ID, q.Fact, q.Choices)
				}
			}
		}
	}
}

// TestVoiceLoaderFailsLoudly: an overlay that misses a text, names one that
// does not exist, or offers a label read differently, does not load.
func TestVoiceLoaderFailsLoudly(t *testing.T) {
	data, err := fs.ReadFile(voiceFiles, "voices/conversational.json")
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *voiceData {
		var d voiceData
		if err := decodeStrict(data, &d); err != nil {
			t.Fatal(err)
		}
		return &d
	}
	setFact := func(d *voiceData, id, fact string, f func(*voiceQuestion)) {
		vq := d.Protocols[id].Facts[fact]
		f(&vq)
		d.Protocols[id].Facts[fact] = vq
	}
	cases := []struct {
		name   string
		change func(d *voiceData)
		want   string
	}{
		{"a question missing", func(d *voiceData) { delete(d.Protocols["rash.v1"].Facts, "itchy") }, "protocols.rash.v1.facts.itchy is missing"},
		{"an unknown question", func(d *voiceData) { d.Protocols["rash.v1"].Facts["colour"] = voiceQuestion{Ask: "a", AskAgain: "b"} }, "protocols.rash.v1.facts.colour: no such red flag or question"},
		{"an ask_again missing", func(d *voiceData) { setFact(d, "rash.v1", "itchy", func(q *voiceQuestion) { q.AskAgain = "" }) }, "rash.v1.facts.itchy needs ask and ask_again"},
		{"a protocol missing", func(d *voiceData) { delete(d.Protocols, "headache.v1") }, "protocols.headache.v1 is missing"},
		{"an unknown protocol", func(d *voiceData) { d.Protocols["gout.v1"] = voiceProtocol{} }, "protocols.gout.v1: no such protocol"},
		{"a reply missing", func(d *voiceData) { delete(d.Replies, "committed") }, "replies.committed is missing"},
		{"a clinician-facing reply", func(d *voiceData) { d.Replies["sandbox_note"] = "x" }, "replies.sandbox_note is not a patient-facing reply"},
		{"an unknown reply", func(d *voiceData) { d.Replies["ask_mood"] = "x" }, "replies.ask_mood is not a patient-facing reply"},
		{"a placeholder lost", func(d *voiceData) { d.Replies["committed"] = "Thanks, a few questions now." }, "replies.committed: placeholders"},
		{"a built-in question missing", func(d *voiceData) { delete(d.Builtin, "sex") }, "builtin.sex is missing"},
		{"an emergency missing", func(d *voiceData) { delete(d.Emergencies, "burns") }, "emergencies.burns needs reply"},
		{"an unknown emergency", func(d *voiceData) { d.Emergencies["sunburn"] = voiceEmergency{Reply: "x"} }, "emergencies.sunburn: no such emergency category"},
		{"an emergency's advice to someone else missing", func(d *voiceData) {
			v := d.Emergencies["breathing"]
			v.AdviceSomeoneElse = ""
			d.Emergencies["breathing"] = v
		}, "emergencies.breathing needs reply, advice, reply_someone_else and advice_someone_else"},
		{"a reply to the patient for a someone_else_only emergency", func(d *voiceData) {
			v := d.Emergencies["cardiac_arrest"]
			v.Reply = "You are not breathing."
			d.Emergencies["cardiac_arrest"] = v
		}, "emergencies.cardiac_arrest needs reply"},
		{"an advice missing", func(d *voiceData) { delete(d.Protocols["low_mood.v1"].Advice, "clinician_review") }, "protocols.low_mood.v1.advice.clinician_review is missing"},
		{"an urgent reason missing", func(d *voiceData) { setFact(d, "chest_pain.v1", "radiating", func(q *voiceQuestion) { q.Reply = "" }) }, "chest_pain.v1.facts.radiating: reply and advice"},
		{"choices on a default yes/no question", func(d *voiceData) {
			setFact(d, "rash.v1", "itchy", func(q *voiceQuestion) { q.Choices = []string{"Yes", "No", "Dunno"} })
		}, "set yes_no instead"},
		{"too few choices", func(d *voiceData) {
			setFact(d, "low_mood.v1", "phq_down", func(q *voiceQuestion) { q.Choices = q.Choices[:3] })
		}, "3 choices, want 4"},
		{"yes and no swapped", func(d *voiceData) { d.YesNo.Yes, d.YesNo.No = d.YesNo.No, d.YesNo.Yes }, `"Nope" is read differently from the plain "Yes"`},
		{"a duration label of another length", func(d *voiceData) {
			setFact(d, "ankle_foot_injury.v1", "days_since_injury", func(q *voiceQuestion) { q.Choices[1] = "A couple of days ago" })
		}, `"A couple of days ago" is read differently from the plain "A few days ago"`},
		{"an option label of another option", func(d *voiceData) {
			setFact(d, "low_mood.v1", "phq_interest", func(q *voiceQuestion) { q.Choices[2] = "Every single day" })
		}, `"Every single day" is read differently`},
		{"a title naming two complaints", func(d *voiceData) {
			vp := d.Protocols["headache.v1"]
			vp.Title = "Headache and sore throat"
			d.Protocols["headache.v1"] = vp
		}, "protocols.headache.v1.title"},
		{"no voice profile", func(d *voiceData) { d.VoiceProfile = "" }, "voice_profile must be set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := fresh()
			c.change(d)
			_, err := buildEngine("test", data, d)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := buildEngine("test", data, fresh()); err != nil {
		t.Fatalf("the unchanged overlay: %v", err)
	}
}

// decision is everything an engine decided after the last message, without
// any of its wording: the same for every voice.
type decision struct {
	Disposition, SafetyStatus, IntakeStatus, ActiveProtocol string
	Urgent, Terminal                                        bool
	Candidates                                              []string
	Scores                                                  []engine.Score
	Facts                                                   engine.Facts
	SafetyNotes                                             []string
	Choices                                                 int
	Captured                                                map[string]string // every fact, as value/source/unsure twice
	RedFlag, Pending                                        string
	Emergency                                               []string
	Asked                                                   map[string]int
}

func decide(e *Engine, demo engine.Demographics, msgs []string) (decision, engine.Result) {
	s := newSession(e, engine.Input{Demographics: demo, Patient: msgs})
	s.run()
	res := s.result()
	d := decision{
		Disposition: res.Disposition, SafetyStatus: res.SafetyStatus, IntakeStatus: res.IntakeStatus,
		ActiveProtocol: res.ActiveProtocol, Urgent: res.Urgent, Terminal: res.Terminal,
		Candidates: res.CandidateProtocols, Scores: res.Scores, Facts: res.Facts, SafetyNotes: res.SafetyNotes,
		Choices: len(res.Choices), Captured: map[string]string{}, Asked: s.asked,
	}
	for f, a := range s.facts {
		d.Captured[f] = fmt.Sprintf("%s/%s/%v", a.value, a.source, a.unsureTwice)
	}
	if s.redFlag != nil {
		d.RedFlag = s.redFlag.Fact
	}
	if s.pending != nil {
		d.Pending = s.pending.Fact
	}
	if s.emergency != nil {
		for _, c := range s.emergency.categories {
			d.Emergency = append(d.Emergency, c.ID)
		}
	}
	return d, res
}

// playBoth plays one conversation on the plain engine and on the voice v.
// next gives the patient's i-th message from the plain engine's last
// result (ok false to stop). Where that message is one of the plain quick
// replies just offered, v's patient taps v's label in the same place
// instead. Every turn must decide the same on both, while every reply and
// label differs. It returns how many messages were translated to v's labels.
func playBoth(t *testing.T, plain, v *Engine, demo engine.Demographics, next func(i int, res engine.Result) (string, bool)) int {
	t.Helper()
	var pm, vm []string
	var rp, rv engine.Result
	var log strings.Builder
	translated := 0
	for i := 0; ; i++ {
		msg, ok := next(i, rp)
		if !ok {
			return translated
		}
		vmsg := msg
		if j := slices.IndexFunc(rp.Choices, func(c string) bool { return strings.EqualFold(c, strings.TrimSpace(msg)) }); j >= 0 {
			vmsg = rv.Choices[j]
			translated++
		}
		pm, vm = append(pm, msg), append(vm, vmsg)
		var dp, dv decision
		dp, rp = decide(plain, demo, pm)
		dv, rv = decide(v, demo, vm)
		fmt.Fprintf(&log, "  patient: %q / %q\n  plain: %s %q\n  voice: %s %q\n", msg, vmsg, rp.Reply, rp.Choices, rv.Reply, rv.Choices)
		if !reflect.DeepEqual(dp, dv) {
			t.Fatalf("turn %d decides differently:\nplain %+v\nvoice %+v\ntranscript:\n%s", i+1, dp, dv, log.String())
		}
		if rp.Reply == rv.Reply {
			t.Fatalf("turn %d: both voices replied %q\ntranscript:\n%s", i+1, rp.Reply, log.String())
		}
		for j := range rp.Choices {
			if rp.Choices[j] == rv.Choices[j] {
				t.Fatalf("turn %d: both voices offer %q\ntranscript:\n%s", i+1, rp.Choices[j], log.String())
			}
		}
		if rp.Terminal {
			if _, more := next(i+1, rp); more {
				t.Fatalf("terminal at turn %d with more to say\ntranscript:\n%s", i+1, log.String())
			}
			return translated
		}
	}
}

// TestVoicesDecideTheSame plays the scripted conversations, a walk through
// every protocol with every quick reply, and the opening messages of the
// corpora on the plain and the conversational voice: every turn decides the
// same (disposition, urgency, safety status, red flags and every fact,
// what is asked next), answering with each voice's own labels.
func TestVoicesDecideTheSame(t *testing.T) {
	plain, conv := newEngine(t), newVoiceEngine(t, conversational)
	translated := 0
	t.Run("conversations", func(t *testing.T) {
		for _, c := range conversationCases() {
			t.Run(c.name, func(t *testing.T) {
				translated += playBoth(t, plain, conv, c.s.demographics(), func(i int, _ engine.Result) (string, bool) {
					if i < len(c.s.Messages) {
						return c.s.Messages[i], true
					}
					return "", false
				})
			})
		}
	})
	if translated < 150 {
		t.Errorf("only %d scripted messages were quick replies", translated)
	}

	// Every protocol, every red flag answered yes in turn, and the k-th
	// quick reply everywhere else (so every label is tapped).
	t.Run("walks", func(t *testing.T) {
		for _, p := range plain.lib.protocols {
			for _, flag := range append([]string{""}, factsOf(p.RedFlags)...) {
				for k := range 4 {
					t.Run(fmt.Sprintf("%s/%s/%d", p.ID, flag, k), func(t *testing.T) {
						playBoth(t, plain, conv, engine.Demographics{}, func(i int, res engine.Result) (string, bool) {
							switch {
							case res.Terminal:
								return "", false
							case i == 0:
								return "hello", true
							case i == 1:
								return p.Title, true
							case res.IntakeStatus == needsAge:
								return "30", true
							case res.IntakeStatus == needsRedFlags:
								if flag != "" && strings.HasSuffix(res.Reply, p.redFlagAsk(flag)) {
									return "Yes", true
								}
								return "No", true
							case len(res.Choices) > 0:
								return res.Choices[k%len(res.Choices)], true
							}
							t.Fatalf("no way to answer %q", res.Reply)
							return "", false
						})
					})
				}
			}
		}
	})

	t.Run("openings", func(t *testing.T) {
		var openings []string
		for _, c := range readCorpora[emergencyCorpus](t, "emergencies") {
			openings = append(append(openings, c.Escalate...), c.NoEscalate...)
		}
		for _, c := range readCorpora[complaintCorpus](t, "complaints") {
			openings = append(append(openings, c.Match...), c.NoMatch...)
		}
		for _, msg := range openings {
			dp, _ := decide(plain, engine.Demographics{}, []string{msg})
			dv, _ := decide(conv, engine.Demographics{}, []string{msg})
			if !reflect.DeepEqual(dp, dv) {
				t.Errorf("%q decides differently:\nplain %+v\nvoice %+v", msg, dp, dv)
			}
		}
	})
}

func factsOf(rfs []RedFlag) []string {
	var out []string
	for _, rf := range rfs {
		out = append(out, rf.Fact)
	}
	return out
}

// TestVoiceTemplate: the template holds every key a voice must reword (a
// voice made of it, with its own profile, loads) and the plain wording (that
// voice says what the plain voice says).
func TestVoiceTemplate(t *testing.T) {
	tmpl, err := VoiceTemplate()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewVoiceOverlay("template", tmpl); err == nil || !strings.Contains(err.Error(), "voice_profile") {
		t.Errorf("the template as it is loaded (%v): its profile is the plain one and must be changed", err)
	}
	own := strings.Replace(string(tmpl), `"voice_profile": "plain-short-en/1"`, `"voice_profile": "template-en/1"`, 1)
	e, err := NewVoiceOverlay("template", []byte(own))
	if err != nil {
		t.Fatalf("a voice made of the template: %v", err)
	}
	plain := newEngine(t)
	got, want := patientTexts(e), patientTexts(plain)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the template's voice says other things than the plain voice")
	}
}

// TestRepliesReadAsMeant: a quick reply or a title is read as a patient
// saying it would mean it. An intensifier does not change a frequency
// ("every single day" is every day; heldout_r5's "Nearly every single
// day"), and a message made only of the names of one complaint, a clause
// each ("Shortness of breath, trouble breathing", heldout_r5's title), is
// that complaint, not the breathing emergency; a clause that says more, or
// another complaint beside it, is still heard. It fails without the filler
// "single" or without EmergencyCategory.namesOnly.
func TestRepliesReadAsMeant(t *testing.T) {
	e := newEngine(t)
	var phq *Question
	for _, p := range e.lib.protocols {
		for i := range p.Questions {
			if p.ID == "low_mood.v1" && p.Questions[i].Fact == "phq_interest" {
				phq = &p.Questions[i]
			}
		}
	}
	if phq == nil {
		t.Fatal("no phq_interest question in low_mood.v1")
	}
	for _, text := range []string{"every single day", "pretty much every single day, yes"} {
		m := e.lx.parse(text)
		m.turn = 1
		m.findings = e.lib.vocab.read(m)
		if a, ok := phq.interpret(m); !ok || a.value != "3" {
			t.Errorf("%q to the PHQ-2 question: value %q ok %v, want 3 (nearly every day)", text, a.value, ok)
		}
	}
	for _, c := range []struct {
		text   string
		urgent bool
	}{
		{"Shortness of breath, trouble breathing", false},
		{"Breathing problems, shortness of breath", false},
		{"real trouble breathing", true},
		{"chest pain, trouble breathing", true},
		{"shortness of breath, I can't breathe", true},
	} {
		if _, res := firstTurn(t, e, c.text); res.Urgent != c.urgent {
			t.Errorf("%q: urgent %v, want %v (%s)", c.text, res.Urgent, c.urgent, res.Reply)
		}
	}
}
