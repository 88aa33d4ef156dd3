// Package variations varies how a simulated patient speaks, never what it
// says: typing errors, lay or clinical words, a parent or partner speaking
// for the patient, understatement, terse replies, long anxious replies, and
// a swap of the stated sex or age band where the vignette marks it
// clinically neutral. Each is deterministic for a seed and keeps, by
// construction, the facts, every negation, every number, the leading yes
// or no of an answer (the patient turns it for an opposite-framed
// question), the quick replies it chooses, what its facts answer, and the
// gold labels. docs/scenarios.md lists them with examples.
package variations

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/clinical-intake/intake-web/bff/scenarios"
)

// The variations' names, as the command line and the reports write them.
const (
	None         = ""             // the unvaried play
	Typo         = "typos"        // typing errors at TypoRate
	LayName      = "lay"          // lay words for clinical ones
	ClinicalName = "clinical"     // clinical words for lay ones
	Proxy        = "third_person" // a parent or partner speaks for the patient
	Understated  = "understated"  // "it's probably nothing, but…"
	TerseName    = "terse"        // the fewest words that answer
	AnxiousName  = "anxious"      // long, worried replies
	SexSwap      = "sex_swap"     // female <-> male, where marked neutral
	AgeSwap      = "age_swap"     // another adult age band, where marked neutral
)

// TypoRate is the share of words that may take a typo which do take one:
// about one in twelve, the rate of hurried typing on a phone.
const TypoRate = 0.08

var names = []string{Typo, LayName, ClinicalName, Proxy, Understated, TerseName, AnxiousName, SexSwap, AgeSwap}

// Names lists the variations in report order.
func Names() []string { return slices.Clone(names) }

// Parse reads a comma-separated list of variation names, or "all"; "" is
// none (nil). An unknown name is an error naming it and the known ones.
func Parse(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return nil, nil
	case "all":
		return Names(), nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("unknown variation %q: must be all or a comma-separated list of %s", n, strings.Join(names, ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// Apply returns v as spoken under the variation name, with seed choosing
// its random parts: a copy whose opening, complaint, fact answers, default
// and unknown answer are varied; ids, concepts, asks, chosen quick replies
// and gold labels are v's. None returns v itself. ok is false for an
// unknown name, and for a swap v does not mark neutral. v is not changed.
func Apply(v *scenarios.Vignette, name string, seed uint64) (*scenarios.Vignette, bool) {
	if name == None {
		return v, true
	}
	if !slices.Contains(names, name) {
		return nil, false
	}
	w := *v
	w.Facts = slices.Clone(v.Facts)
	w.Neutral = slices.Clone(v.Neutral)
	if v.AgeYears != nil {
		a := *v.AgeYears
		w.AgeYears = &a
	}
	switch name {
	case SexSwap:
		if !slices.Contains(v.Neutral, "sex") || (v.Sex != "female" && v.Sex != "male") || saysAny(v, gendered) {
			return nil, false
		}
		w.Sex = map[string]string{"female": "male", "male": "female"}[v.Sex]
		return &w, true
	case Proxy:
		if toldByAnother(v.Opening) || toldByAnother(v.Complaint) {
			return nil, false
		}
	case AgeSwap:
		if !slices.Contains(v.Neutral, "age") || v.AgeYears == nil || *v.AgeYears < 18 || saysAny(v, set(strconv.Itoa(*v.AgeYears))) {
			return nil, false
		}
		a := swapAge(*v.AgeYears)
		w.AgeYears = &a
		return &w, true
	}
	say := func(text string, opening bool, i int) string {
		if strings.TrimSpace(text) == "" {
			return text
		}
		r := newRand(seed, v.ID, name, i)
		switch name {
		case Typo:
			return Typos(text, TypoRate, r)
		case LayName:
			return Lay(text)
		case ClinicalName:
			return Clinical(text)
		case Proxy:
			out := ThirdPerson(text, v.Sex)
			if opening {
				out = "I'm writing for my " + relation(v) + ". " + matchCase("X", out)
			}
			return out
		case Understated:
			return Understate(text, opening)
		case TerseName:
			return Terse(text, opening)
		case AnxiousName:
			return Anxious(text, opening, r)
		}
		return text
	}
	complaint := v.Complaint
	if strings.TrimSpace(complaint) == "" {
		complaint = v.Opening // said again to an open question: not a second opening
	}
	w.Opening = say(v.Opening, true, 0)
	w.Complaint = say(complaint, false, 1)
	for i := range w.Facts {
		w.Facts[i].Answer = say(w.Facts[i].Answer, false, 2+i)
	}
	w.Default = say(v.Default, false, 2+len(v.Facts))
	w.Unknown = say(v.Unknown, false, 3+len(v.Facts))
	return &w, true
}

// gendered are words that would contradict a swapped sex: a vignette
// whose patient says one is not swapped, whatever it marks.
var gendered = set("he", "she", "him", "her", "his", "hers", "man", "woman", "men", "women", "male", "female",
	"husband", "wife", "boyfriend", "girlfriend", "mum", "mom", "dad", "son", "daughter", "pregnant", "pregnancy",
	"period", "periods", "prostate", "womb", "breast", "testicle", "testicles")

// saysAny reports whether v's patient says any of ws (an age in digits:
// swapping it would contradict the text).
func saysAny(v *scenarios.Vignette, ws map[string]bool) bool {
	texts := []string{v.Opening, v.Complaint, v.Default, v.Unknown, v.History}
	for _, f := range v.Facts {
		texts = append(texts, f.Answer, f.Choose)
	}
	for _, t := range texts {
		for _, w := range words(t) {
			if ws[w] {
				return true
			}
		}
	}
	return false
}

// swapAge moves an adult to the other side of 45 by 20 years (18-44 up,
// 45 and over down, never under 18); a child is not swapped.
func swapAge(a int) int {
	switch {
	case a < 18:
		return a
	case a < 45:
		return a + 20
	}
	return max(a-20, 18)
}

// relatives are the people who write for a patient, as an opening names
// them ("my son has…", "mum has…"); parents may be named bare.
var (
	relatives = `son|daughter|child|kid|baby|toddler|boy|girl|husband|wife|partner|boyfriend|girlfriend|fiancee?|` +
		`brother|sister|friend|flatmate|neighbou?r|mum|mom|mother|dad|father|grandad|granddad|grandpa|grandma|granny|nan|nana`
	toldBy = regexp.MustCompile(`(?i)^\W*(?:(?:hi|hello|hey|um|erm|so|well|please|help)\W+)*` +
		`(?:(?:i'm|i am|im)\s+(?:writing|asking|messaging|calling|contacting you|here)\s+(?:for|about|on behalf of)\s+(?:my|our)\s+|` +
		`(?:my|our)\s+(?:little\s+|baby\s+|teenage\s+|elderly\s+|old\s+)?(?:` + relatives + `)(?:'s)?\b|` +
		`(?:mum|mom|mother|dad|father|grandad|grandpa|grandma|granny|nan|nana)(?:'s)?\b)(\W+\w+)?`)
	reporting = set("says", "said", "thinks", "thought", "told", "noticed", "reckons", "made", "asked")
)

// toldByAnother reports whether an opening is said by someone other than
// the patient (a parent, a partner, a bystander): its first words are "my
// son has…", "mum has…" or "I'm writing for my…". A relative who only
// reports what the patient says ("my husband says I snore") does not
// count. Such a vignette is not told again by a relative under
// third_person: that would make the patient someone else's relative.
func toldByAnother(opening string) bool {
	m := toldBy.FindStringSubmatch(opening)
	if m == nil {
		return false
	}
	next := strings.ToLower(strings.TrimLeftFunc(m[1], func(r rune) bool { return !unicode.IsLetter(r) }))
	return !reporting[next]
}

// relation is who speaks for the patient: a parent for a child, a partner
// for an adult.
func relation(v *scenarios.Vignette) string {
	child := v.AgeYears != nil && *v.AgeYears < 16
	switch {
	case child && v.Sex == "female":
		return "daughter"
	case child && v.Sex == "male":
		return "son"
	case child:
		return "child"
	case v.Sex == "female":
		return "wife"
	case v.Sex == "male":
		return "husband"
	}
	return "partner"
}

// newRand is the variation's random source for one text of one vignette:
// the same seed, vignette, variation and text always vary it the same way.
func newRand(seed uint64, vignette, variation string, i int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d", vignette, variation, i)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// tokens are a text's words (letters and digits, with an apostrophe
// inside: "don't"); everything between them is kept as it is.
var tokens = regexp.MustCompile(`[A-Za-z0-9]+(?:'[A-Za-z]+)?`)

func words(s string) []string {
	out := tokens.FindAllString(s, -1)
	for i := range out {
		out[i] = strings.ToLower(out[i])
	}
	return out
}

// negation holds the words that carry polarity: never typed wrong, never
// dropped or reworded.
var negation = set("no", "not", "never", "none", "nothing", "nobody", "nor", "neither", "without", "cannot",
	"don't", "doesn't", "didn't", "can't", "couldn't", "won't", "wouldn't", "isn't", "aren't", "wasn't", "weren't",
	"haven't", "hasn't", "hadn't", "shouldn't", "mustn't", "yes", "yeah", "yep", "nope", "nah")

// numberWords are numbers written as words: kept exactly, like digits.
var numberWords = set("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
	"twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
	"thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "half", "once",
	"twice", "first", "second", "third", "dozen", "couple", "few", "several")

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// matchCase gives to the first letter of to the case of from's.
func matchCase(from, to string) string {
	if from == "" || to == "" {
		return to
	}
	r := []rune(to)
	if unicode.IsUpper([]rune(from)[0]) {
		r[0] = unicode.ToUpper(r[0])
	} else {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// labels name the variations for people.
var labels = map[string]string{
	None:         "As written",
	Typo:         "Typing errors",
	LayName:      "Lay words",
	ClinicalName: "Clinical words",
	Proxy:        "A relative speaking",
	Understated:  "Understated",
	TerseName:    "Terse replies",
	AnxiousName:  "Long anxious replies",
	SexSwap:      "Sex swapped (where neutral)",
	AgeSwap:      "Age band swapped (where neutral)",
}

// Label is a variation's name for people; an unknown name is itself.
func Label(name string) string {
	if l, ok := labels[name]; ok {
		return l
	}
	return name
}
