package rules

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Who a message speaks of. An emergency is told to whoever is typing: the
// patient ("I can't breathe": sit upright, use your inhaler) or someone with
// another person ("my dad collapsed and is not breathing": start CPR on
// him). The words are emergencies.json's "speaker" lists, matched against
// the words as typed (message.words), since matching reads "her" and "his"
// as "my".
//
// The rule (docs/protocols.md, "Who is speaking"): the clauses where a
// category's pattern was heard decide. A clause speaks of someone else when
// it names another person (a pronoun such as "he", "she's", "them"; a person
// such as "my dad", "the baby", "my 3 year old", "someone") outside the
// not_someone_else phrases ("I'm a 40 year old man"); else of the patient
// when it names them ("I", "I'm", "me", "my") outside the not_self phrases,
// where the one typing is only reporting ("what do I do", "I found", "I
// think"); else it names nobody, and the
// nearest clause before it that names somebody decides ("my dad collapsed and
// is not breathing"), then the nearest after it. Someone else wins over the
// patient: "I found my mum on the floor" is about the mum. A baby in a
// message about a pregnancy ("I'm 34 weeks and the baby hasn't moved") is
// the patient's own. A message that names nobody at all speaks of the
// patient, unless the category says otherwise (unnamed: someone who has
// collapsed is not the one typing).

// speaker is who a message speaks of.
type speaker int

const (
	speakerNone        speaker = iota // the clauses name nobody
	speakerSelf                       // the patient, of themselves
	speakerSomeoneElse                // a relative or bystander, of another person
)

func (sp speaker) String() string {
	if sp == speakerSomeoneElse {
		return "someone_else"
	}
	return "self"
}

// speakerData is emergencies.json's "speaker".
type speakerData struct {
	Comment        string   `json:"comment"`
	SomeoneElse    []string `json:"someone_else"`
	NotSomeoneElse []string `json:"not_someone_else"`
	Self           []string `json:"self"`
	NotSelf        []string `json:"not_self"`
	// Unborn are words of SomeoneElse that name the patient's own unborn
	// baby in a message holding one of Pregnancy.
	Unborn    []string `json:"unborn"`
	Pregnancy []string `json:"pregnancy"`
}

// speakerWords is speakerData, each phrase split into words.
type speakerWords struct {
	someoneElse, notSomeoneElse, self, notSelf, unborn, pregnancy [][]string
}

func loadSpeaker(d speakerData) (*speakerWords, error) {
	var errs []error
	split := func(name string, in []string) [][]string {
		var out [][]string
		for _, s := range in {
			w := typedPhrase(s)
			if len(w) == 0 || strings.ContainsAny(s, "+~@") {
				errs = append(errs, fmt.Errorf("%s: %q is not a phrase of words", name, s))
				continue
			}
			out = append(out, w)
		}
		if len(out) == 0 && !strings.HasPrefix(name, "not_") {
			errs = append(errs, fmt.Errorf("%s is empty", name))
		}
		return out
	}
	sw := &speakerWords{
		someoneElse:    split("someone_else", d.SomeoneElse),
		notSomeoneElse: split("not_someone_else", d.NotSomeoneElse),
		self:           split("self", d.Self),
		notSelf:        split("not_self", d.NotSelf),
		unborn:         split("unborn", d.Unborn),
		pregnancy:      split("pregnancy", d.Pregnancy),
	}
	for _, u := range sw.unborn {
		if !slices.ContainsFunc(sw.someoneElse, func(p []string) bool { return slices.Equal(p, u) }) {
			errs = append(errs, fmt.Errorf("unborn: %q is not one of someone_else", strings.Join(u, " ")))
		}
	}
	return sw, errors.Join(errs...)
}

// typedPhrase splits a speaker phrase into words the way message.words holds
// a patient's (lowercase, no apostrophes), keeping the pattern syntax of
// tokenMatches: "a|b", "word*", "#1-17".
func typedPhrase(s string) []string {
	return strings.Fields(apostrophes.Replace(strings.ToLower(s)))
}

// findTyped lists the positions where phrase starts in words, its words
// adjacent.
func findTyped(words, phrase []string) []int {
	var at []int
	for i := 0; i+len(phrase) <= len(words); i++ {
		if matchAt(words, i, phrase) {
			at = append(at, i)
		}
	}
	return at
}

// holdsTyped is true when one of phrases occurs in words.
func holdsTyped(words []string, phrases [][]string) bool {
	return slices.ContainsFunc(phrases, func(p []string) bool { return len(findTyped(words, p)) > 0 })
}

// clause is who clause c of m names.
func (sw *speakerWords) clause(m message, c int) speaker {
	words := m.words[c]
	pregnant := slices.ContainsFunc(m.words, func(w []string) bool { return holdsTyped(w, sw.pregnancy) })
	someoneElse := slices.DeleteFunc(slices.Clone(sw.someoneElse), func(p []string) bool {
		return pregnant && slices.ContainsFunc(sw.unborn, func(u []string) bool { return slices.Equal(u, p) })
	})
	switch {
	case namesOutside(words, someoneElse, sw.notSomeoneElse):
		return speakerSomeoneElse
	case namesOutside(words, sw.self, sw.notSelf):
		return speakerSelf
	}
	return speakerNone
}

// namesOutside is true when one of phrases occurs in words with a word
// outside every occurrence of the cover phrases.
func namesOutside(words []string, phrases, cover [][]string) bool {
	covered := make([]bool, len(words))
	for _, p := range cover {
		for _, i := range findTyped(words, p) {
			for k := i; k < i+len(p); k++ {
				covered[k] = true
			}
		}
	}
	for _, p := range phrases {
		for _, i := range findTyped(words, p) {
			if slices.Contains(covered[i:i+len(p)], false) {
				return true
			}
		}
	}
	return false
}

// of is who m speaks of in the given clauses (where an emergency was heard):
// someone else when one of them does, else the patient when one does, else
// speakerNone. A clause that names nobody takes the nearest clause before it
// that names somebody, else the nearest after it.
func (sw *speakerWords) of(m message, clauses []int) speaker {
	found := speakerNone
	for _, c := range clauses {
		sp := speakerNone
		for k := c; k >= 0 && sp == speakerNone; k-- {
			sp = sw.clause(m, k)
		}
		for k := c + 1; k < len(m.clauses) && sp == speakerNone; k++ {
			sp = sw.clause(m, k)
		}
		found = max(found, sp)
	}
	return found
}
