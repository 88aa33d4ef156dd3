package rules

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A voice is the engine's patient-facing wording: every question (ask and
// ask_again), every fixed sentence of the replies, every quick-reply label,
// and the patient-facing sentences of the protocols (advice, urgent
// reasons) and of the emergency categories. The plain voice is the wording
// of the protocol files and of defaultReplies. Any other voice is an overlay,
// voices/<name>.json, that rewords every one of those by key and nothing
// else: the decisions (what is asked, in which order, how a reply is read,
// the outcome) are the plain voice's, because the library, the lexicon and
// every matching phrase are shared. Clinician-facing text (safety notes,
// dispositions' reasons, SOAP templates, labels of facts, sandbox_note)
// stays as it is in every voice.
//
// Loading a voice fails when the overlay misses a sentence or a label, names
// one that does not exist, or offers a quick reply that the engine does not
// read exactly as it reads the plain label it replaces.

// voiceFiles are the overlays.
//
//go:embed voices/*.json
var voiceFiles embed.FS

// VoicePlain is the default voice: the protocol files' own wording.
const VoicePlain = "plain"

const plainVoiceProfile = "plain-short-en/1"

var voiceName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Voices lists the selectable voices: plain first, then the overlays in
// name order.
func Voices() []string {
	out := []string{VoicePlain}
	names, _ := fs.Glob(voiceFiles, "voices/*.json")
	sort.Strings(names)
	for _, n := range names {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "voices/"), ".json"))
	}
	return out
}

// voiceData is voices/<name>.json.
type voiceData struct {
	Comment      string `json:"comment"`
	VoiceProfile string `json:"voice_profile"`
	// Replies rewords every patient-facing string field of replies, by its
	// JSON name (see voicedReplyFields).
	Replies map[string]string `json:"replies"`
	// YesNo are the quick replies of every yes/no question that uses the
	// default ones ("Yes", "No", and "Not sure" where offered).
	YesNo voiceYesNo `json:"yes_no"`
	// Builtin rewords the built-in questions: age, sex, pregnancy.
	Builtin     map[string]voiceQuestion  `json:"builtin"`
	Protocols   map[string]voiceProtocol  `json:"protocols"`   // by protocol id
	Emergencies map[string]voiceEmergency `json:"emergencies"` // by category id
	// Outside rewords language/outside.json: the "Something else" quick
	// reply (title), the generic screen's questions (facts) and its advice.
	Outside *voiceProtocol `json:"outside,omitempty"`
}

type voiceYesNo struct {
	Yes     string `json:"yes"`
	No      string `json:"no"`
	NotSure string `json:"not_sure"`
}

type voiceQuestion struct {
	Ask      string   `json:"ask"`
	AskAgain string   `json:"ask_again"`
	Choices  []string `json:"choices,omitempty"` // required where the plain question has its own quick replies
	Reply    string   `json:"reply,omitempty"`   // red flags whose plain reply is set
	Advice   string   `json:"advice,omitempty"`  // red flags whose plain advice is set
}

type voiceProtocol struct {
	Title       string                   `json:"title"`        // the quick reply naming the complaint
	PatientTerm string                   `json:"patient_term"` // {complaint} in the committed reply
	Advice      map[string]string        `json:"advice"`       // same dispositions as the protocol's
	Facts       map[string]voiceQuestion `json:"facts"`        // every red flag and question
}

// voiceEmergency rewords a category's four patient-facing sentences, each
// exactly where the plain category has it (a someone_else_only category has
// only the last two).
type voiceEmergency struct {
	Reply             string `json:"reply,omitempty"`
	Advice            string `json:"advice,omitempty"`
	ReplySomeoneElse  string `json:"reply_someone_else"`  // to a relative or bystander, of another person
	AdviceSomeoneElse string `json:"advice_someone_else"` // likewise
}

// clinicianReplyFields are the replies' string fields a voice leaves alone.
var clinicianReplyFields = []string{"sandbox_note", "same_day_plan_gp", "same_day_plan_ed"}

// voicedReplyFields maps the JSON name of every patient-facing string field
// of replies to its index. A new string field is voiced unless it is listed
// in clinicianReplyFields, so it cannot silently keep the plain wording.
func voicedReplyFields() map[string]int {
	out := map[string]int{}
	t := reflect.TypeFor[replies]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() == reflect.String && !slices.Contains(clinicianReplyFields, name) {
			out[name] = i
		}
	}
	return out
}

var placeholderInSentence = regexp.MustCompile(`\{[a-z_]+\}`)

// loadVoice reads voices/<name>.json.
func loadVoice(name string) ([]byte, *voiceData, error) {
	unknown := fmt.Errorf("rules: unknown voice %q (voices: %s)", name, strings.Join(Voices(), ", "))
	if !voiceName.MatchString(name) {
		return nil, nil, unknown
	}
	data, err := fs.ReadFile(voiceFiles, "voices/"+name+".json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, unknown
	} else if err != nil {
		return nil, nil, err
	}
	var d voiceData
	if err := decodeStrict(data, &d); err != nil {
		return nil, nil, fmt.Errorf("rules: voices/%s.json: %w", name, err)
	}
	return data, &d, nil
}

// labelPair is a plain quick reply and the voice's label that replaces it.
type labelPair struct {
	where        string
	p            *Protocol // nil for the built-in questions, asked in every protocol
	q            *Question // nil for a complaint title
	plain, voice string
}

// applyVoice rewrites the patient-facing text of lib and r with d, in place.
// lib and r must be freshly loaded: the engine owns them.
func applyVoice(d *voiceData, lx *lexicon, lib *library, r *replies) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var labels []labelPair

	if d.VoiceProfile == "" || d.VoiceProfile == plainVoiceProfile {
		bad("voice_profile must be set and differ from %q", plainVoiceProfile)
	}

	// Fixed sentences.
	fields := voicedReplyFields()
	rv := reflect.ValueOf(r).Elem()
	for name, i := range fields {
		text, ok := d.Replies[name]
		if !ok || strings.TrimSpace(text) == "" {
			bad("replies.%s is missing", name)
			continue
		}
		plain := rv.Field(i).String()
		if !slices.Equal(placeholderSet(plain), placeholderSet(text)) {
			bad("replies.%s: placeholders %v, want %v as in %q", name, placeholderSet(text), placeholderSet(plain), plain)
		}
		rv.Field(i).SetString(text)
	}
	for name := range d.Replies {
		if _, ok := fields[name]; !ok {
			bad("replies.%s is not a patient-facing reply", name)
		}
	}

	yn := d.YesNo
	if yn.Yes == "" || yn.No == "" || yn.NotSure == "" {
		bad("yes_no needs yes, no and not_sure")
	}
	voiceDefaults := map[string][]string{
		strings.Join(defaultYesNoChoices, "\x00"): {yn.Yes, yn.No, yn.NotSure},
		strings.Join(redFlagYesNoChoices, "\x00"): {yn.Yes, yn.No},
	}

	// question rewords q; it records the labels to check once all is set.
	question := func(where string, p *Protocol, q *Question, v voiceQuestion, ok bool) {
		if !ok {
			bad("%s is missing", where)
			return
		}
		if v.Ask == "" || v.AskAgain == "" || v.Ask == v.AskAgain {
			bad("%s needs ask and ask_again, different from each other", where)
		}
		q.Ask, q.AskAgain = v.Ask, v.AskAgain
		plain := q.Choices
		want, isDefault := voiceDefaults[strings.Join(plain, "\x00")]
		switch {
		case len(plain) == 0:
			if len(v.Choices) != 0 {
				bad("%s: choices given for a question without quick replies", where)
			}
			return
		case isDefault && q.Kind == kindYesNo:
			if len(v.Choices) != 0 {
				bad("%s: choices given for a question with the default yes/no quick replies (set yes_no instead)", where)
			}
		default:
			if len(v.Choices) != len(plain) {
				bad("%s: %d choices, want %d to replace %q", where, len(v.Choices), len(plain), plain)
				return
			}
			want = v.Choices
		}
		q.Choices = slices.Clone(want)
		for i := range plain {
			labels = append(labels, labelPair{where: fmt.Sprintf("%s choice %q", where, plain[i]), p: p, q: q, plain: plain[i], voice: want[i]})
		}
	}

	builtins := map[string]*Question{factAge: &r.Age, factSex: &r.Sex, factPregnancy: &r.Pregnancy}
	for name, q := range builtins {
		v, ok := d.Builtin[name]
		question("builtin."+name, nil, q, v, ok)
		if v.Reply != "" || v.Advice != "" {
			bad("builtin.%s: reply and advice are for red flags", name)
		}
	}
	for name := range d.Builtin {
		if builtins[name] == nil {
			bad("builtin.%s is not a built-in question", name)
		}
	}

	seen := map[string]bool{}
	ps := slices.Clone(lib.protocols)
	if lib.outside != nil {
		ps = append(ps, lib.outside.p)
	} else if d.Outside != nil {
		bad("outside: the library has no %s", outsideFile)
	}
	for _, p := range ps {
		where := "protocols." + p.ID
		vp, ok := d.Protocols[p.ID]
		if lib.outside != nil && p == lib.outside.p {
			where = "outside"
			ok = d.Outside != nil
			if ok {
				vp = *d.Outside
			}
		} else {
			seen[p.ID] = true
		}
		if !ok {
			bad("%s is missing", where)
			continue
		}
		if vp.Title == "" || vp.PatientTerm == "" {
			bad("%s needs title and patient_term", where)
		}
		labels = append(labels, labelPair{where: where + ".title", p: p, plain: p.Title, voice: vp.Title})
		p.shownTitle, p.shownTerm = vp.Title, vp.PatientTerm
		for disp := range p.Advice {
			if vp.Advice[disp] == "" {
				bad("%s.advice.%s is missing", where, disp)
			}
		}
		for disp := range vp.Advice {
			if p.Advice[disp] == "" {
				bad("%s.advice.%s: the protocol gives no advice for it", where, disp)
			}
		}
		p.Advice = vp.Advice
		facts := map[string]bool{}
		for i := range p.RedFlags {
			rf, q := &p.RedFlags[i], &p.redFlags[i]
			facts[rf.Fact] = true
			fw := where + ".facts." + rf.Fact
			v, ok := vp.Facts[rf.Fact]
			question(fw, p, q, v, ok)
			rf.Ask, rf.AskAgain = q.Ask, q.AskAgain
			if (rf.Reply == "") != (v.Reply == "") || (rf.Advice == "") != (v.Advice == "") {
				bad("%s: reply and advice must be given exactly where the plain red flag has them", fw)
			}
			rf.Reply, rf.Advice = v.Reply, v.Advice
		}
		for i := range p.Questions {
			q := &p.Questions[i]
			facts[q.Fact] = true
			fw := where + ".facts." + q.Fact
			v, ok := vp.Facts[q.Fact]
			question(fw, p, q, v, ok)
			if v.Reply != "" || v.Advice != "" {
				bad("%s: reply and advice are for red flags", fw)
			}
		}
		for f := range vp.Facts {
			if !facts[f] {
				bad("%s.facts.%s: no such red flag or question", where, f)
			}
		}
	}
	for id := range d.Protocols {
		if !seen[id] {
			bad("protocols.%s: no such protocol", id)
		}
	}

	seen = map[string]bool{}
	for _, c := range lib.emergencies {
		seen[c.ID] = true
		v, ok := d.Emergencies[c.ID]
		if !ok || (c.Reply == "") != (v.Reply == "") || (c.Advice == "") != (v.Advice == "") ||
			(c.ReplySomeoneElse == "") != (v.ReplySomeoneElse == "") || (c.AdviceSomeoneElse == "") != (v.AdviceSomeoneElse == "") {
			bad("emergencies.%s needs reply, advice, reply_someone_else and advice_someone_else exactly where the plain category has them", c.ID)
		}
		c.Reply, c.Advice = v.Reply, v.Advice
		c.ReplySomeoneElse, c.AdviceSomeoneElse = v.ReplySomeoneElse, v.AdviceSomeoneElse
	}
	for id := range d.Emergencies {
		if !seen[id] {
			bad("emergencies.%s: no such emergency category", id)
		}
	}

	// Every label must read as the plain label it replaces, in every way
	// the engine reads a message, so tapping it decides the same.
	for _, l := range labels {
		a, b := reading(lx, lib, r, l.p, l.q, l.plain), reading(lx, lib, r, l.p, l.q, l.voice)
		if !slices.Equal(a, b) {
			bad("%s: %q is read differently from the plain %q: plain %q, voice %q", l.where, l.voice, l.plain, a, b)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

func placeholderSet(s string) []string {
	out := placeholderInSentence.FindAllString(s, -1)
	slices.Sort(out)
	return slices.Compact(out)
}

// reading is everything the engine can make of raw as a reply in protocol
// p (nil: any protocol): as the reply to q, or, when q is nil, to the
// complaint question; what it volunteers for the questions p may ask; and
// the emergencies it names. Two quick replies with the same reading drive
// every session the same way.
func reading(lx *lexicon, lib *library, r *replies, p *Protocol, q *Question, raw string) []string {
	m := lx.parse(raw)
	m.turn = 1
	m.findings = lib.vocab.read(m)
	show := func(a answer) string {
		return fmt.Sprintf("%s approx=%q unsure_twice=%v", a.value, a.approx, a.unsureTwice)
	}
	var out []string
	if q != nil {
		a, ok := q.interpret(m)
		out = append(out, fmt.Sprintf("reply ok=%v %s", ok, show(a)))
		if q.Kind == kindYesNo {
			// A soft no after a hedge leaves a red flag unsure.
			out = append(out, fmt.Sprintf("soft no %v", m.softNo()))
		}
	}
	asks := []*Question{&r.Age, &r.Sex, &r.Pregnancy}
	ps := slices.Clone(lib.protocols)
	if lib.outside != nil {
		ps = append(ps, lib.outside.p) // its title is "Something else"
	}
	named := false
	for _, pr := range ps {
		if q == nil && recognition(m, pr) != notRecognised {
			out = append(out, "complaint "+pr.ID)
			named = true
		}
		if p != nil && p != pr {
			continue
		}
		for i := range pr.redFlags {
			asks = append(asks, &pr.redFlags[i])
		}
		for i := range pr.Questions {
			asks = append(asks, &pr.Questions[i])
		}
	}
	if q == nil && !named && lib.outside != nil {
		// A complaint no protocol names, read outside them all.
		if f, ok := lib.outside.outsideFinding(m); ok {
			out = append(out, "outside "+f.id)
		}
	}
	for _, vq := range asks {
		if a, ok := vq.volunteer(m); ok {
			out = append(out, "volunteers "+vq.Fact+" "+show(a))
		}
	}
	if hit := lib.emergencyIn([]message{m}, nil); hit != nil {
		for i, c := range hit.categories {
			out = append(out, "emergency "+c.ID+" "+hit.speakers[i].String())
		}
	}
	return out
}

// voiceHash is prompt_hash for a voice other than plain: the replies and
// the overlay's bytes.
func voiceHash(r *replies, overlay []byte) (string, error) {
	base, err := r.hash()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", base, len(overlay))
	h.Write(overlay)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// NewVoiceOverlay is New worded by overlay, a voice file that is not
// embedded (one a writer is drafting, or an engine team's wording kept
// outside the repository): the same checks as an embedded voice, name
// only labels the errors and the identity.
func NewVoiceOverlay(name string, overlay []byte) (*Engine, error) {
	var d voiceData
	if err := decodeStrict(overlay, &d); err != nil {
		return nil, fmt.Errorf("rules: voice %s: %w", name, err)
	}
	return buildEngine(name, overlay, &d)
}

// VoiceTemplate is the plain voice in the shape of an overlay
// (voices/<name>.json), with every key a voice must reword and the plain
// wording as its value: the starting point for someone writing a new
// voice. Its voice_profile is a placeholder the writer must change;
// NewVoiceOverlay refuses the plain one.
func VoiceTemplate() ([]byte, error) {
	e, err := New()
	if err != nil {
		return nil, err
	}
	d := voiceData{
		Comment:      "A voice of the sandbox engine: reword every value (same meaning, same polarity: a yes must mean what it means here), keep every key and every {placeholder}; quick-reply labels (yes_no, choices, title) must still be read by the engine as the plain label they replace.",
		VoiceProfile: plainVoiceProfile,
		Replies:      map[string]string{},
		YesNo:        voiceYesNo{Yes: defaultYesNoChoices[0], No: defaultYesNoChoices[1], NotSure: defaultYesNoChoices[2]},
		Builtin:      map[string]voiceQuestion{},
		Protocols:    map[string]voiceProtocol{},
		Emergencies:  map[string]voiceEmergency{},
	}
	rv := reflect.ValueOf(e.replies).Elem()
	for name, i := range voicedReplyFields() {
		d.Replies[name] = rv.Field(i).String()
	}
	// ownChoices are a question's quick replies when they are its own, not
	// the default yes/no ones the overlay sets once in yes_no.
	ownChoices := func(q *Question) []string {
		if q.Kind == kindYesNo && (slices.Equal(q.Choices, defaultYesNoChoices) || slices.Equal(q.Choices, redFlagYesNoChoices)) {
			return nil
		}
		return slices.Clone(q.Choices)
	}
	for name, q := range map[string]*Question{factAge: &e.replies.Age, factSex: &e.replies.Sex, factPregnancy: &e.replies.Pregnancy} {
		d.Builtin[name] = voiceQuestion{Ask: q.Ask, AskAgain: q.AskAgain, Choices: ownChoices(q)}
	}
	for _, p := range e.lib.protocols {
		vp := voiceProtocol{Title: p.Title, PatientTerm: p.PatientTerm, Advice: maps.Clone(p.Advice), Facts: map[string]voiceQuestion{}}
		for i, rf := range p.RedFlags {
			vp.Facts[rf.Fact] = voiceQuestion{Ask: rf.Ask, AskAgain: rf.AskAgain, Choices: ownChoices(&p.redFlags[i]), Reply: rf.Reply, Advice: rf.Advice}
		}
		for i := range p.Questions {
			q := &p.Questions[i]
			vp.Facts[q.Fact] = voiceQuestion{Ask: q.Ask, AskAgain: q.AskAgain, Choices: ownChoices(q)}
		}
		d.Protocols[p.ID] = vp
	}
	for _, c := range e.lib.emergencies {
		d.Emergencies[c.ID] = voiceEmergency{Reply: c.Reply, Advice: c.Advice, ReplySomeoneElse: c.ReplySomeoneElse, AdviceSomeoneElse: c.AdviceSomeoneElse}
	}
	if o := e.lib.outside; o != nil {
		vp := voiceProtocol{Title: o.p.Title, PatientTerm: o.p.PatientTerm, Advice: maps.Clone(o.p.Advice), Facts: map[string]voiceQuestion{}}
		for i, rf := range o.p.RedFlags {
			vp.Facts[rf.Fact] = voiceQuestion{Ask: rf.Ask, AskAgain: rf.AskAgain, Choices: ownChoices(&o.p.redFlags[i]), Reply: rf.Reply, Advice: rf.Advice}
		}
		d.Outside = &vp
	}
	return json.MarshalIndent(d, "", "  ")
}
