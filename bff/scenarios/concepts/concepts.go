// Package concepts understands which concepts of the simulated patient's
// vocabulary an intake engine's message asks about, whatever its words.
//
// A vignette states a fact by concept (vocabulary.yaml: about 80 concepts,
// each with what a "yes" means); the patient asks Understand which concepts
// a message asks about and answers from those facts. Understanding is
// hand-built, deterministic and auditable: every Match names the cue that
// found it, written in cues.yaml, and the sentence it was found in. No
// language model or embedding library is used because none can be
// downloaded here, and because a result must be reproducible and
// explainable: the same message always gives the same concepts, for a
// reason a person can read and correct.
//
// # How a message is read
//
//  1. Sentences. The message is cut at "?", "!", ";", a newline, a "."
//     that ends a word ("37.5" stays whole), and a dash or a colon before
//     a word that opens a question ("Feel your neck — are the glands up?",
//     "A few questions about your chest pain: does it spread?"): what the
//     dash or colon sets off is the question's topic or instruction and
//     asks nothing itself, unless a confirmation tag follows it ("You
//     can't walk on it — is that right?").
//  2. Words. Each sentence is lower-cased; apostrophes are dropped ("can't"
//     is "cant", "I'd" is "id") and an "'s" ending a word is read as the
//     word "is" ("how long's" is "how long is"); every other character that
//     is not a letter or digit separates words ("self-harm" is "self harm"). Each
//     word is then read through cues.yaml's spellings: British and American
//     variants and common typos map to one spelling ("color" is "colour",
//     "vomitting" is "vomiting", "tylenol" is "paracetamol").
//  3. Clauses. Inside a sentence, "and", "or", "but" or a comma (colon,
//     dash, bracket) followed by one of cues.yaml's clause_words starts a
//     new clause: "Do you have chest pain, and does it spread to your arm?"
//     is two clauses. Clauses bound what a rule's optional groups may
//     claim, where vetoes and polarity words are looked for, and order the
//     result (below). A confirmation tag that ends a sentence after a comma
//     or a dash (", haven't you?", ", correct?", ", yes?") is dropped: the
//     statement asks whether it holds, in its own polarity, and the tag's
//     "haven't" or "no" negates nothing.
//  4. Which sentences ask. A sentence asks when it ends with "?", starts with
//     a question word ("do", "have", "any", "is", ...), or holds a request
//     frame ("tell me", "describe", "I'd like to check", "can I ask",
//     "please"): so imperatives and statements ending in "is that right?"
//     ask. Other sentences are lead-ins or context ("Thanks, that's
//     helpful.", "I'm sorry to hear that.", "You mentioned chest pain.",
//     "Press on your ankle bones.") and ask nothing by themselves. A
//     sentence that is only a confirmation tag ("Is that right?") makes the
//     sentence before it ask. An announcement, a request about the asking
//     itself with no embedded question after its frame ("I need to check
//     one thing about bleeding.", "Can I ask you a few questions about your
//     cough?"), asks nothing when a later sentence of the message asks. An
//     asking sentence that points back ("Does that hurt?", "Is either of
//     those sore?") is read together with the sentence before it, unless
//     that one is a lead-in, when it finds nothing alone or the two
//     together say more (more groups): a question split over two
//     sentences. So is one that finds nothing alone, reference word or not
//     ("Press on the bony lumps of your ankle. Is the bone tender?"): then
//     a match with words in both sentences stands, one wholly in the
//     sentence before still needs a reference word. A lead-in that is a clause of its own at a sentence's
//     start ("OK, and have you …") is dropped before cues are matched, so
//     its words ("ok") count for nothing. A first clause opening with a
//     context opener ("With the breathlessness in mind, ...", "Apart from
//     the pain, ...") or where the engine speaks of itself with no embedded
//     question ("Before I go on, ...", "Just so I know, ...") sets the
//     context of the question after it and asks nothing itself. A word
//     ending in "less" whose stem is a cue's word and which is none itself
//     is read as "without" and the stem ("painless": "without pain").
//  5. Cues. Frames only decide whether a sentence asks; the concepts come
//     from content cues. Each concept has rules in cues.yaml; a rule is a
//     conjunction of groups, each group a set of alternative words or
//     phrases, and matches a sentence when every required group occurs in
//     it, in any order; `not:` alternatives in its clauses veto it. See
//     cues.yaml's header for the syntax. A group also claims the other
//     items of a list it names one of ("your arm, jaw, neck or back"). A
//     leading auxiliary "do" is never a cue's word.
//  6. Context adds no concept. A match needs a required word in the
//     question; a required word in context (a context clause, or the
//     sentence a joined question points back to) counts only when the
//     question holds a reference word ("it", "that") the match does not
//     claim and that opens no clause ("that you're pregnant"); a match
//     wholly in context counts only when no match lies in the question
//     ("Open your mouth wide. Is that hard to do?").
//  7. Specificity. A match is more specific than another when it has more
//     groups, then lies in fewer clauses, then claims more words. A match
//     whose words overlap those of a more specific match of another concept
//     (that concept's best, or one in a single clause) is dropped: "Do you
//     have chest pain that is sharp when you breathe in?" is pleuritic_pain
//     only, "Does the chest pain spread to your arm?" is spread only
//     (spread's optional group claims "chest pain"). So is one all of whose
//     words another concept's rule claims with more groups on any placing
//     of its words within one alternative of one question, not only the
//     closest: a concept named as the object of another's word is the more
//     specific concept ("Any vomiting OF blood …, or bloody stools?" is
//     gi_bleeding, not vomiting too). A match wholly after "rather than",
//     "instead of" (contrast) is dropped when its concept is read before
//     it ("cloudy rather than clear"), and one wholly in a comparison set
//     off by commas ("…, like a blow, …") when another concept lies
//     outside it. Matches on different words, or equally specific, are all
//     kept: two concepts asked at once give both. A yes/no concept that only names the topic of another
//     concept's question is dropped: every one in a question about a value
//     opened by a question word ("How long have you had the cough?"), and
//     one whose words follow a determiner when another concept of the same
//     alternative shares its words or, the topic being one group, comes
//     after it ("Does your cough keep you awake at night?"), or all of
//     whose words follow determiners ("Worse when you press on the sore
//     spot on your chest?" asks about tenderness).
//  8. Questions and alternatives. Clauses joined by "or" are one question,
//     and so is a first clause opened by a subordinator with the clause
//     after it ("When you stand up, do you feel faint?"); any other clause
//     or sentence is a new one (Match.Question). Within a question an "or",
//     or a comma inside a clause in a list going on to an "or", starts an
//     alternative (Match.Alt): "a stiff neck along with a fever, or a rash"
//     asks the first two together and the rash instead.
//  9. Margin. A concept's score is its best match's groups, one more when
//     another of its rules matched too; its margin is that less the score
//     of its strongest rival (another concept with a match on some of the
//     same words that it does not subsume, in no more clauses, and not a
//     topic), or its score with none (Match.Margin). A rival made of words
//     other readings claim, some of them another's than the match's ("Is
//     one calf painful, or are you coughing blood?": pain worse on coughing
//     is not asked), or of words in two clauses that are alternatives of
//     each other, is no rival. A concept read in two alternatives of one
//     question with opposite polarities ("Can you open your mouth, or is
//     one side swollen?") has margin 0: one yes or no cannot answer it.
//     Below MinMargin the reading is a guess.
//  10. Polarity. A rule marked inverse is worded opposite to its concept's
//     `yes` ("can you walk on it?" for cannot_bear_weight). Polarity words
//     in the match's clauses that no match claimed and that are not one of
//     the rule's own words, each belonging to one match (a negator or an
//     absence word to the first match after it, any other to the nearest,
//     one in its own clause first; a concept's readings in other
//     alternatives count as matches), in the match's alternative (a
//     negator before a list with no verb of its own governs the whole list:
//     "No weakness, numbness or trouble speaking?"), not in a subordinate
//     clause after the match ("when you're not doing anything", "even if
//     you're not sure") and not after a contrast marker, then change it: a normal word ("clear", "OK",
//     "normal", "as usual") asks about the normal state ("Is your urine
//     clear?" is inverse for cloudy_urine; "Are you managing OK?" is not,
//     managing being the normal state), other polarity words restating it,
//     unless a negator comes right before it; else each kind turns it once:
//     a negator ("not", "no", "never", "can't", "impossible") or an absence
//     word ("without", "free") for a rule that is not inverse; a cessation
//     word ("stopped", "gone away", "cleared up"); a difficulty or loss
//     word ("hard", "trouble", "losing") for a rule worded as an ability or
//     a normal state. "or not", "than normal" and the like count for
//     nothing. Only yes_no concepts are ever inverse.
//  11. Result. Matches are returned in the order they are asked (by clause,
//     then position), at most one per concept (the first). No rule matched
//     means no concept: a question about something outside the vocabulary
//     ("Do you smoke?") gives nothing, never the nearest concept.
//
// The Understanding is built by Load from the embedded files and is
// read-only afterwards; there is no package-level mutable state.
package concepts

import (
	_ "embed"
	"slices"
	"strings"
)

// Version is the vocabulary's version (vocabulary.yaml's `version`); Load
// fails when the embedded files say otherwise.
const Version = "1"

// Kind is what sort of answer a concept takes.
type Kind string

// The kinds of concept.
const (
	Open  Kind = "open"   // no yes/no: the patient restates something
	YesNo Kind = "yes_no" // a yes or a no, in the polarity of Yes
	Value Kind = "value"  // a time, a place, a number, a word
)

// Describe says, for people, what a concept of the kind is answered with.
func (k Kind) Describe() string {
	switch k {
	case Open:
		return "open (the patient restates the problem in their own words)"
	case YesNo:
		return "yes or no"
	case Value:
		return "a value (a time, a place, a number or a word)"
	}
	return string(k)
}

// Concept is one entry of the vocabulary.
type Concept struct {
	ID    string
	Kind  Kind
	Means string // what it is about
	Yes   string // what a "yes" means (yes_no concepts)
	// Group is the section of vocabulary.yaml the concept is listed in:
	// the text of the last "# --- about the person ---" line above it
	// ("about the person"); "" before the first such line.
	Group string
}

// Match is one concept a message asks about.
type Match struct {
	Concept string // id
	Inverse bool   // the question asks the opposite of the concept's `yes` ("can you walk on it?" for cannot_bear_weight)
	Cue     string // the cue that matched, as written in cues.yaml, for the audit trail ("spread|radiat* + arm|jaw|neck")
	Text    string // the part of the message it was found in (the sentence)
	// Question numbers the questions of the message, from 0 in the order
	// asked: "Any fever? And how long has it been going on?" is two
	// questions, "Any fever or cough?" one.
	Question int
	// Alt numbers the alternatives of its question: matches with the same
	// Alt are asked together ("a stiff neck along with a fever"), another
	// Alt instead ("…, or a rash that doesn't fade").
	Alt int
	// Margin is how clearly the concept won the words it was read from:
	// its cue's groups less those of the strongest rival, another concept's
	// rule on some of the same words or a rule of its own read with the
	// other polarity; with no rival, its groups. Below MinMargin the
	// reading is a guess between two meanings.
	Margin int
}

// MinMargin is the least margin of a confident reading: a concept must
// beat every rival reading of its words by a whole cue group. A match
// below it (a tie between two concepts, or between the two polarities of
// one) is a reading the simulated patient does not trust: it says it does
// not understand, and the play is simulator-limited.
const MinMargin = 1

//go:embed vocabulary.yaml
var vocabularyYAML []byte

//go:embed cues.yaml
var cuesYAML []byte

// Load parses the embedded vocabulary.yaml and cues.yaml into an
// Understanding. Its errors name the file, the entry and the rule.
func Load() (*Understanding, error) {
	return load(vocabularyYAML, cuesYAML)
}

// Concept returns the vocabulary's concept id.
func (u *Understanding) Concept(id string) (Concept, bool) {
	i, ok := u.index[id]
	if !ok {
		return Concept{}, false
	}
	return u.concepts[i], true
}

// Concepts returns the vocabulary's concepts in its order (a copy).
func (u *Understanding) Concepts() []Concept {
	return append([]Concept(nil), u.concepts...)
}

// Areas returns the body areas and systems a text names ("belly" is
// abdomen, "pass water" urinary), in cues.yaml's order: how the patient
// tells which of an engine's complaint titles names its problem, whatever
// the words on either side. Longer phrases claim their words first, so
// "chest infection" names the cough and not the chest.
func (u *Understanding) Areas(text string) []string {
	ws, _ := words(text, u.spell)
	type cand struct {
		area int
		p    []string
	}
	var cands []cand
	for i, a := range u.areas {
		for _, p := range a.words {
			cands = append(cands, cand{i, p})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return len(b.p) - len(a.p) })
	// A phrase cannot use words a longer one claimed; phrases of one length
	// may share words ("back" names the back and the bones and muscles).
	claimed := make([]bool, len(ws))
	found := make([]bool, len(u.areas))
	var pending []int
	for k, c := range cands {
		if k > 0 && len(c.p) != len(cands[k-1].p) {
			for _, i := range pending {
				claimed[i] = true
			}
			pending = pending[:0]
		}
		for i := range ws {
			if !phraseAt(ws, i, c.p) || slices.Contains(claimed[i:i+len(c.p)], true) {
				continue
			}
			found[c.area] = true
			for j := range c.p {
				pending = append(pending, i+j)
			}
		}
	}
	var out []string
	for i, a := range u.areas {
		if found[i] {
			out = append(out, a.id)
		}
	}
	return out
}

// Names reports whether a quick-reply title names what text (a patient's
// complaint) is about. A list title ("Ear, nose and throat", "Lungs and
// breathing") names it when one of its items does; an item does when it
// has a word naming an area and every such word names one of text's
// areas. A word naming an area and a part of it ("back": the back, and
// the bones and muscles) names the part; a word naming areas side by side
// ("lungs": breathing, and coughs and colds) names either. So "Low back
// pain" does not name a sore knee (the back is not the knee), "Bones,
// joints and muscles" names a bad back, and "Lungs and breathing" a chest
// infection.
func (u *Understanding) Names(title, text string) bool {
	mine := u.Areas(text)
	for _, item := range listItems(title) {
		named, all := false, true
		for _, w := range strings.Fields(item) {
			areas := u.specific(u.Areas(w))
			if len(areas) == 0 {
				continue
			}
			named = true
			if !slices.ContainsFunc(areas, func(a string) bool { return slices.Contains(mine, a) }) {
				all = false
			}
		}
		if named && all {
			return true
		}
	}
	return false
}

// Covered reports whether every area text names is named by one of the
// titles, or is part of an area one names: whether the engine's list has
// the patient's problem at all. Areas that say how a problem came about
// (cues.yaml's causes: an injury) need not be named.
func (u *Understanding) Covered(titles []string, text string) bool {
	var offered []string
	for _, t := range titles {
		offered = append(offered, u.Areas(t)...)
	}
	for _, a := range u.Areas(text) {
		if !u.causes[a] && !slices.Contains(offered, a) && !slices.ContainsFunc(u.partOf[a], func(w string) bool { return slices.Contains(offered, w) }) {
			return false
		}
	}
	return true
}

// specific drops from areas those a part of which is also there.
func (u *Understanding) specific(areas []string) []string {
	return slices.DeleteFunc(slices.Clone(areas), func(a string) bool {
		return slices.ContainsFunc(areas, func(b string) bool { return slices.Contains(u.partOf[b], a) })
	})
}

// listItems cuts a title at the marks and words that list things: ",",
// "and", "or", "/", "&".
func listItems(title string) []string {
	f := strings.NewReplacer(",", "|", "/", "|", "&", "|", " and ", "|", " or ", "|").Replace(" " + strings.ToLower(title) + " ")
	var out []string
	for _, it := range strings.Split(f, "|") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}
