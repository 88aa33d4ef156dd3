package variations

import (
	"cmp"
	"math/rand/v2"
	"regexp"
	"strings"
	"unicode"
)

// A swap is a phrase said another way with the same meaning.
type swap struct{ from, to string }

// clinicalToLay and layToClinical are the word lists of the lay and
// clinical variations (docs/scenarios.md prints them): longer phrases
// first, whole words, case-insensitive, the first letter's case kept.
// Only words whose meaning is the same in both registers are listed
// ("pain" and "ache" are not: they differ in severity).
var clinicalToLay = []swap{
	// Names of illnesses stay as they are.
	{"hay fever", "hay fever"},
	{"glandular fever", "glandular fever"},
	{"scarlet fever", "scarlet fever"},
	{"rheumatic fever", "rheumatic fever"},
	{"yellow fever", "yellow fever"},
	{"umbilicus", "belly button"},
	{"shortness of breath", "being out of breath"},
	{"short of breath", "out of breath"},
	{"breathless", "out of breath"},
	{"been vomiting", "been sick"},
	{"vomiting", "being sick"},
	{"vomited", "been sick"},
	{"nauseous", "sick"},
	{"nausea", "feeling sick"},
	{"abdominal", "tummy"},
	{"abdomen", "tummy"},
	{"urinating", "peeing"},
	{"urinate", "pee"},
	{"urine", "wee"},
	{"diarrhoea", "the runs"},
	{"diarrhea", "the runs"},
	{"lost consciousness", "passed out"},
	{"fever", "temperature"},
	{"stools", "poo"},
	{"stool", "poo"},
	{"fatigue", "tiredness"},
}

var layToClinical = []swap{
	{"out of breath", "short of breath"},
	{"been sick", "been vomiting"},
	{"being sick", "vomiting"},
	{"feeling sick", "nauseous"},
	{"feel sick", "feel nauseous"},
	// A phrase is said as a whole: "belly button" is not an "abdomen
	// button", and a tummy ache is an abdominal one.
	{"belly button", "umbilicus"},
	{"tummy bug", "tummy bug"},
	{"tummy ache", "abdominal ache"},
	{"tummy pain", "abdominal pain"},
	{"tummy cramps", "abdominal cramps"},
	{"belly ache", "abdominal ache"},
	{"belly pain", "abdominal pain"},
	{"belly cramps", "abdominal cramps"},
	{"tummy", "abdomen"},
	{"belly", "abdomen"},
	{"peeing", "urinating"},
	{"weeing", "urinating"},
	{"the runs", "diarrhoea"},
	{"passed out", "lost consciousness"},
	// A temperature one has is a fever; one measured is not ("my
	// temperature was normal"), and stays.
	{"a high temperature", "a high fever"},
	{"high temperature", "high fever"},
	{"a temperature", "a fever"},
	{"no temperature", "no fever"},
	{"temperatures", "fevers"},
	{"poo", "stool"},
	{"tiredness", "fatigue"},
}

// Pee and wee are verbs or nouns by the word before them: a verb after a
// subject, "to" or a modal ("when I pee", "needing to wee", "can't wee"),
// a noun after a possessive ("my pee", "the wee"), and "a wee" after a
// need is "to urinate". Anywhere else (and "a wee bit", Scots for small)
// they are left as they are.
var (
	peeVerb  = regexp.MustCompile(`(?i)\b(i|you|he|she|we|they|to|can't|cannot|couldn't|can|could|don't|didn't|doesn't|won't|will|must)\s+(?:wee|pee)\b`)
	peeVerbS = regexp.MustCompile(`(?i)\b(he|she|it)\s+(?:wees|pees)\b`)
	peeNoun  = regexp.MustCompile(`(?i)\b(my|the|his|her|their|your|our|some|of)\s+(?:wee|pee)\b`)
	peeNeed  = regexp.MustCompile(`(?i)\b(need|needs|needing|needed)\s+a\s+(?:wee|pee)\b`)
	peeFor   = regexp.MustCompile(`(?i)\bfor\s+a\s+(?:wee|pee)\b`)
)

func clinicalPee(text string) string {
	text = peeNeed.ReplaceAllString(text, "$1 to urinate")
	text = peeFor.ReplaceAllStringFunc(text, func(m string) string { return matchCase(m, "to urinate") })
	text = peeVerbS.ReplaceAllString(text, "$1 urinates")
	text = peeVerb.ReplaceAllString(text, "$1 urinate")
	return peeNoun.ReplaceAllString(text, "$1 urine")
}

func swapper(list []swap) func(string) string {
	alts := make([]string, len(list))
	to := make(map[string]string, len(list))
	for i, s := range list {
		alts[i] = regexp.QuoteMeta(s.from)
		to[s.from] = s.to
	}
	re := regexp.MustCompile(`(?i)\b(?:` + strings.Join(alts, "|") + `)\b`)
	return func(text string) string {
		return re.ReplaceAllStringFunc(text, func(m string) string {
			return matchCase(m, to[strings.ToLower(m)])
		})
	}
}

var (
	lay      = swapper(clinicalToLay)
	clinical = swapper(layToClinical)
)

// Lay says clinical words in lay ones ("abdomen" → "tummy").
func Lay(text string) string { return lay(text) }

// Clinical says lay words in clinical ones ("tummy" → "abdomen").
func Clinical(text string) string { return clinical(clinicalPee(text)) }

// adverbs may stand between "I" and its verb ("I just feel"), as may any
// word in -ly but the verbs in lyVerbs ("I nearly passed out").
var (
	adverbs = set("just", "also", "really", "still", "only", "never", "always", "sometimes", "usually", "often",
		"even", "actually", "definitely", "mostly", "normally", "probably", "already", "almost", "ever", "once",
		"then", "now", "kind", "sort", "of")
	lyVerbs = set("apply", "reply", "supply", "rely", "fly", "multiply", "comply", "imply", "bully")
)

func adverb(lw string) bool {
	return adverbs[lw] || (strings.HasSuffix(lw, "ly") && len(lw) > 4 && !lyVerbs[lw])
}

// keptVerbs take no -s in the third person: modals, and the past, which
// in -ed needs no list; the irregular pasts patients write are listed
// ("I went over on my ankle", "I fell", "I wet myself"), with the few
// the same as the present (hurt, put, cut, hit, split, wet): read as
// the past, which a patient's story mostly is.
var keptVerbs = set("can", "can't", "cannot", "could", "shall", "couldn't", "will", "won't", "would", "wouldn't", "should",
	"shouldn't", "did", "didn't", "had", "hadn't", "might", "must", "may", "was", "wasn't", "thought", "got",
	"ate", "began", "bit", "broke", "brought", "bought", "burnt", "came", "caught", "cut", "drank", "drove", "fell",
	"felt", "forgot", "found", "fought", "froze", "gave", "grew", "heard", "held", "hit", "hurt", "kept", "knew",
	"lay", "left", "let", "lost", "made", "meant", "met", "paid", "put", "ran", "rang", "rode", "said", "sat", "saw",
	"sent", "shook", "shut", "slept", "slid", "spent", "split", "spoke", "stood", "stuck", "stung", "swam", "took",
	"threw", "told", "tore", "went", "wet", "woke", "wore", "wrote")

// ThirdPerson says text as someone speaking about the patient of this sex
// ("she", "he", or "they" when not female or male): "I have a pain in my
// chest" → "She has a pain in her chest". Negations stay ("I don't" →
// "she doesn't"), as do numbers and every other word.
func ThirdPerson(text, sex string) string {
	subj, obj, poss, posp, refl := "they", "them", "their", "theirs", "themselves"
	switch sex {
	case "female":
		subj, obj, poss, posp, refl = "she", "her", "her", "hers", "herself"
	case "male":
		subj, obj, poss, posp, refl = "he", "him", "his", "his", "himself"
	}
	they := subj == "they"
	locs := tokens.FindAllStringIndex(text, -1)
	// parts are the text between words and the words, so that a question's
	// verb before I ("what do I do") can agree once I is reached.
	var parts []string
	last := 0
	verbNext := false // the next word (after any adverbs) is I's verb
	prevWord := -1    // the index in parts of the word before this one
	for _, loc := range locs {
		w := text[loc[0]:loc[1]]
		parts = append(parts, text[last:loc[0]])
		last = loc[1]
		start := sentenceStart(text[:loc[0]])
		lw := strings.ToLower(w)
		out := w
		// The patient's own I, typed any way ("i", "im", "ive").
		pronoun := lw == "i" || lw == "i'm" || lw == "im" || lw == "i've" || lw == "ive" || lw == "i'd" || lw == "i'll"
		switch {
		case lw == "i" && prevWord >= 0 && auxiliaries[strings.ToLower(parts[prevWord])]:
			// A question: the verb came first. It agrees; the one after
			// I stays bare ("should he go", "what does she do").
			out = subj
			p := parts[prevWord]
			parts[prevWord] = matchCase(p, thirdVerb(strings.ToLower(p), they))
		case lw == "i":
			out, verbNext = subj, true
		case lw == "i'm" || lw == "im":
			out = subj + "'s"
			if they {
				out = "they're"
			}
		case lw == "i've" || lw == "ive":
			out = subj + "'s"
			if they {
				out = "they've"
			}
		case lw == "i'd" || lw == "i'll":
			out = subj + lw[1:]
		case lw == "me":
			out = obj
		case lw == "my":
			out = poss
		case lw == "mine":
			out = posp
		case lw == "myself":
			out = refl
		case verbNext && adverb(lw):
			parts = append(parts, w)
			prevWord = len(parts) - 1
			continue
		case verbNext:
			out = thirdVerb(w, they)
		}
		if lw != "i" {
			verbNext = false
		}
		switch {
		case out == w:
		case start:
			out = matchCase("X", out)
		case pronoun:
			out = matchCase("x", out)
		}
		parts = append(parts, out)
		prevWord = len(parts) - 1
	}
	parts = append(parts, text[last:])
	return strings.Join(parts, "")
}

// auxiliaries are the verbs a question puts before I ("do I need…",
// "should I go…", "am I having…").
var auxiliaries = set("do", "did", "can", "could", "should", "would", "will", "shall", "may", "might", "must",
	"am", "have", "was", "don't", "didn't", "can't", "couldn't", "shouldn't", "won't", "haven't", "wasn't")

// sentenceStart reports whether a word after before begins a sentence.
func sentenceStart(before string) bool {
	t := strings.TrimRightFunc(before, unicode.IsSpace)
	return t == "" || strings.HasSuffix(t, ".") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?")
}

// thirdVerb is verb w after "he"/"she" (they: only am/was change).
func thirdVerb(w string, they bool) string {
	lw := strings.ToLower(w)
	if they {
		switch lw {
		case "am":
			return "are"
		case "was":
			return "were"
		case "wasn't":
			return "weren't"
		}
		return w
	}
	switch lw {
	case "am":
		return "is"
	case "have":
		return "has"
	case "haven't":
		return "hasn't"
	case "do":
		return "does"
	case "don't":
		return "doesn't"
	}
	if keptVerbs[lw] || strings.HasSuffix(lw, "ed") || strings.HasSuffix(lw, "ing") || strings.Contains(lw, "'") || strings.ContainsFunc(lw, unicode.IsDigit) {
		return w
	}
	switch {
	case strings.HasSuffix(lw, "s"), strings.HasSuffix(lw, "sh"), strings.HasSuffix(lw, "ch"), strings.HasSuffix(lw, "x"),
		strings.HasSuffix(lw, "z"), strings.HasSuffix(lw, "o"):
		return w + "es"
	case strings.HasSuffix(lw, "y") && len(lw) > 1 && !strings.ContainsRune("aeiou", rune(lw[len(lw)-2])):
		return w[:len(w)-1] + "ies"
	}
	return w + "s"
}

// leading returns a text's leading yes or no word ("" for none) and where
// it ends.
func leading(text string) (string, int) {
	loc := tokens.FindStringIndex(text)
	if loc == nil {
		return "", 0
	}
	switch strings.ToLower(text[loc[0]:loc[1]]) {
	case "yes", "yeah", "yep":
		return "yes", loc[1]
	case "no", "nope", "nah":
		return "no", loc[1]
	}
	return "", 0
}

// trailing splits a final ".", "!" or "?" off text.
func trailing(text string) (string, string) {
	t := strings.TrimRightFunc(text, unicode.IsSpace)
	if n := len(t); n > 0 && strings.ContainsRune(".!?", rune(t[n-1])) {
		return t[:n-1], t[n-1:]
	}
	return t, ""
}

// fillers open a message without saying anything, and are left out of
// terse ones; openers are the "I have" that comes before the complaint.
var (
	fillers = regexp.MustCompile(`(?i)^(?:(?:hi|hello|hey|um|erm|well|so|ok|okay)\b[,.!]?\s*)+`)
	openers = regexp.MustCompile(`(?i)^(?:i have got|i've got|i have|i've|i'm|i am|i got|there's|there is)\s+(?:an?\s+)?`)
	ending  = regexp.MustCompile(`(?i)[,\s]+(?:now|really|though)$`)
)

// Terse says the fewest words that still answer: a yes or no alone (the
// question asked is answered by it), a value without fillers, an opening
// without "Hi, I have a". Negations and numbers stay.
func Terse(text string, opening bool) string {
	if yn, end := leading(text); yn != "" && !opening {
		rest := strings.TrimLeft(text[end:], " ,.;:-")
		if !hasNumber(rest) {
			return yn
		}
		return yn + ", " + Terse(rest, false) // a number says more than the yes
	}
	t, _ := trailing(text)
	t = fillers.ReplaceAllString(strings.TrimSpace(t), "")
	t = openers.ReplaceAllString(t, "")
	t = ending.ReplaceAllString(t, "")
	if strings.TrimSpace(t) == "" {
		return text
	}
	if first := tokens.FindString(t); first == "I" || strings.HasPrefix(first, "I'") {
		return t
	}
	return matchCase("x", t)
}

// Understate plays the complaint and every yes down: "It's probably
// nothing, but …" before the opening, ", but it's probably nothing" after a
// yes. A no and a value are said as they are.
func Understate(text string, opening bool) string {
	if strings.Contains(strings.ToLower(text), "probably nothing") {
		return text
	}
	if opening {
		first := tokens.FindString(text)
		if first != "I" && !strings.HasPrefix(first, "I'") {
			text = matchCase("x", text)
		}
		return "It's probably nothing, but " + text
	}
	if yn, _ := leading(text); yn != "yes" {
		return text
	}
	t, end := trailing(text)
	return t + ", but it's probably nothing" + end
}

// The anxious variation's sentences: worry, apology and length, with no
// symptom, body part, number or negation in them (a test checks).
var (
	anxiousOpenings = []string{
		"Sorry to bother you, I'm really worried about this.",
		"Sorry for the long message, I'm so anxious and I'm typing this as fast as I can.",
		"Sorry, I'm in a bit of a state about this and I'm frightened.",
	}
	anxiousClosings = []string{
		"Please tell me what I should do, I'm really frightened it's something serious.",
		"I looked it up online and now I'm scared, please help.",
		"I keep thinking the worst, is this something serious?",
	}
	anxiousTails = []string{
		"Sorry, I know I'm going on, I'm just really anxious about all of this.",
		"Is that bad? I keep thinking about it and I'm getting more and more worried.",
		"I looked it up online and now I'm frightened it's something serious.",
		"Sorry, I'm just so worried, I want to know what this means.",
	}
)

// Anxious says the same with worry around it: an apology before the
// opening and a plea after it, and a worried sentence after every answer.
func Anxious(text string, opening bool, r *rand.Rand) string {
	if opening {
		t, end := trailing(text)
		return anxiousOpenings[r.IntN(len(anxiousOpenings))] + " " + matchCase("X", t) + cmp.Or(end, ".") + " " + anxiousClosings[r.IntN(len(anxiousClosings))]
	}
	t, end := trailing(text)
	if end == "" {
		end = "."
	}
	return t + end + " " + anxiousTails[r.IntN(len(anxiousTails))]
}

// hasNumber reports whether text has a number, in digits or words.
func hasNumber(text string) bool {
	for _, w := range words(text) {
		if numberWords[w] || strings.ContainsFunc(w, unicode.IsDigit) {
			return true
		}
	}
	return false
}
