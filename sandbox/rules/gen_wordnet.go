//go:build ignore

// gen_wordnet writes language/wordnet.json from WordNet 3.0 and the British
// English word list (Debian: apt-get install wordnet-base wbritish), for
// the words of the engine's vocabulary:
//
//   - synsets: the words of every synset a finding of
//     language/findings.json names (picked by hand, by offset), so the
//     engine expands a finding with them without WordNet at run time;
//   - exceptions: WordNet's irregular forms of vocabulary words ("threw" →
//     "throw"), for lemmas;
//   - english: every English word (the word list, WordNet's lemmas) within
//     the spelling correction distance of a vocabulary word, which the
//     engine must never correct ("breeding" near "bleeding");
//   - vocabulary: the words of the protocols and language files those were
//     computed for (the correction targets).
//
// Run: go generate ./sandbox/rules (or go run gen_wordnet.go from this
// directory). The licence notices of WordNet and of the word list travel in
// the file.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/clinical-intake/intake-web/sandbox/rules/internal/spell"
)

const wordnetLicence = `WordNet Release 3.0. This software and database is being provided to you, the LICENSEE, by Princeton University under the following license. By obtaining, using and/or copying this software and database, you agree that you have read, understood, and will comply with these terms and conditions.: Permission to use, copy, modify and distribute this software and database and its documentation for any purpose and without fee or royalty is hereby granted, provided that you agree to comply with the following copyright notice and statements, including the disclaimer, and that the same appear on ALL copies of the software, database and documentation, including modifications that you make for internal use or for distribution. WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. The name of Princeton University or Princeton may not be used in advertising or publicity pertaining to distribution of the software and/or database. Title to copyright in this software, database and any associated documentation shall at all times remain with Princeton University and LICENSEE agrees to preserve same.`

const scowlLicence = `The "english" list is derived from SCOWL (Spell Checker Oriented Word Lists, Debian package wbritish): Copyright 2000-2011 by Kevin Atkinson. Permission to use, copy, modify, distribute and sell these word lists, the associated scripts, the output created from the scripts, and its documentation for any purpose is hereby granted without fee, provided that the above copyright notice appears in all copies and that both that copyright notice and this permission notice appear in supporting documentation. Kevin Atkinson makes no representations about the suitability of this array for any purpose. It is provided "as is" without express or implied warranty.`

type output struct {
	Comment    string              `json:"comment"`
	Licence    []string            `json:"licence"`
	Synsets    map[string][]string `json:"synsets"`
	Exceptions map[string]string   `json:"exceptions"`
	English    string              `json:"english"`    // words separated by spaces
	Vocabulary string              `json:"vocabulary"` // words separated by spaces
}

// prose are the JSON keys whose strings are sentences, not phrases to match.
var prose = map[string]bool{
	"comment": true, "ask": true, "ask_again": true, "safety_note": true, "reply": true,
	"advice": true, "reason": true, "source": true, "meaning": true, "note": true, "reply_someone_else": true,
	"advice_someone_else": true, "subjective": true, "objective": true, "assessment": true, "plan": true,
	"why": true, "id": true, "fact": true, "value": true, "disposition": true, "kind": true, "synset": true,
	"patient_term": true, "speaker": true, "score": true, "band": true, "bands": true, "in": true,
}

func main() {
	wn := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory (Debian: wordnet-base)")
	words := flag.String("words", "/usr/share/dict/british-english", "English word list (Debian: wbritish)")
	out := flag.String("o", "language/wordnet.json", "output file")
	flag.Parse()

	vocab := map[string]bool{}
	var refs []string
	for _, pattern := range []string{"protocols/*.json", "language/*.json"} {
		names, _ := filepath.Glob(pattern)
		for _, name := range names {
			if strings.HasSuffix(name, "wordnet.json") {
				continue
			}
			data, err := os.ReadFile(name)
			if err != nil {
				log.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			walk(v, "", func(key, s string) {
				if key == "synset" {
					refs = append(refs, s)
				}
				if prose[key] {
					return
				}
				for _, w := range splitWords(s) {
					vocab[w] = true
				}
			})
		}
	}
	o := output{
		Comment:    "Generated by gen_wordnet.go (go generate ./sandbox/rules) from WordNet 3.0 (wordnet-base) and the British English word list (wbritish); do not edit. synsets: the words of the synsets language/findings.json names; exceptions: irregular forms of vocabulary words; english: English words within the spelling correction distance of a vocabulary word, never corrected; vocabulary: the words these were computed for (both separated by spaces).",
		Licence:    []string{wordnetLicence, scowlLicence},
		Synsets:    map[string][]string{},
		Exceptions: map[string]string{},
	}
	for _, ref := range refs {
		ws, err := synset(*wn, ref)
		if err != nil {
			log.Fatal(err)
		}
		o.Synsets[ref] = ws
		for _, w := range ws {
			for _, x := range splitWords(w) {
				vocab[x] = true
			}
		}
	}
	for _, f := range []string{"noun.exc", "verb.exc", "adj.exc", "adv.exc"} {
		lines, err := readLines(filepath.Join(*wn, f))
		if err != nil {
			log.Fatal(err)
		}
		for _, l := range lines {
			p := strings.Fields(l)
			if len(p) >= 2 && vocab[p[1]] && !vocab[p[0]] && !strings.Contains(p[0], "_") {
				o.Exceptions[p[0]] = p[1]
			}
		}
	}
	var targets []string
	for w := range vocab {
		if len(w) >= 4 {
			targets = append(targets, w)
		}
	}
	slices.Sort(targets)
	o.Vocabulary = strings.Join(targets, " ")
	english := map[string]bool{}
	lines, err := readLines(*words)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines {
		if !strings.Contains(l, "'") {
			english[strings.ToLower(l)] = true
		}
	}
	for _, f := range []string{"index.noun", "index.verb", "index.adj", "index.adv"} {
		ls, err := readLines(filepath.Join(*wn, f))
		if err != nil {
			log.Fatal(err)
		}
		for _, l := range ls {
			if w, _, ok := strings.Cut(l, " "); ok && !strings.ContainsAny(w, "_-.'") && !strings.HasPrefix(l, " ") {
				english[w] = true
			}
		}
	}
	index := map[string][]string{}
	for _, t := range targets {
		for _, d := range spell.Deletions(t, spell.MaxEdits(len(t))) {
			index[d] = append(index[d], t)
		}
	}
	near := map[string]bool{}
	for w := range english {
		if len(w) < 4 || vocab[w] || !isLetters(w) {
			continue
		}
		n := spell.MaxEdits(len(w))
		for _, d := range spell.Deletions(w, n) {
			for _, t := range index[d] {
				if spell.Damerau(w, t) <= min(n, spell.MaxEdits(len(t))) {
					near[w] = true
				}
			}
		}
	}
	var guarded []string
	for w := range near {
		guarded = append(guarded, w)
	}
	slices.Sort(guarded)
	o.English = strings.Join(guarded, " ")
	data, err := json.MarshalIndent(o, "", " ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d synsets, %d exceptions, %d English words guarded, %d vocabulary words\n", *out, len(o.Synsets), len(o.Exceptions), len(guarded), len(targets))
}

func walk(v any, key string, f func(key, s string)) {
	switch x := v.(type) {
	case string:
		f(key, x)
	case []any:
		for _, e := range x {
			walk(e, key, f)
		}
	case map[string]any:
		for k, e := range x {
			if key == "sets" || key == "sited" || key == "qualifiers" || key == "spelling" {
				f(key, k)
				k = key // a set's words are phrases, whatever its name
			}
			walk(e, k, f)
		}
	}
}

// splitWords is the lowercase words of a phrase, without pattern syntax:
// a prefix ("cough*") and a number range are not words.
func splitWords(s string) []string {
	var out []string
	s = strings.ToLower(strings.NewReplacer("'", "", "’", "", "_", " ").Replace(s))
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '|' || r == '+' || r == '~' || r == '!' || r == ',' || r == '.' || r == '@' || r == '/' || r == '(' || r == ')' || r == '-' || r == '?' || r == ':' || r == '"'
	}) {
		if strings.ContainsAny(w, "*#") || !isLetters(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func isLetters(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return w != ""
}

// synset reads the words of a synset, "v00076400": the part of speech's
// letter, then its byte offset in data.<pos>.
func synset(dir, ref string) ([]string, error) {
	files := map[byte]string{'n': "data.noun", 'v': "data.verb", 'a': "data.adj", 's': "data.adj", 'r': "data.adv"}
	f, ok := files[ref[0]]
	off, err := strconv.ParseInt(ref[1:], 10, 64)
	if !ok || err != nil {
		return nil, fmt.Errorf("synset %q: want a part of speech (n, v, a, s, r) and an offset", ref)
	}
	fh, err := os.Open(filepath.Join(dir, f))
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if _, err := fh.Seek(off, 0); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(fh).ReadString('\n')
	if err != nil {
		return nil, err
	}
	p := strings.Fields(line)
	if len(p) < 4 || p[0] != ref[1:] {
		return nil, fmt.Errorf("synset %q: no synset at that offset", ref)
	}
	n, err := strconv.ParseInt(p[3], 16, 32)
	if err != nil {
		return nil, err
	}
	var words []string
	for i := range int(n) {
		w := strings.ToLower(p[4+2*i])
		if k := strings.IndexByte(w, '('); k > 0 {
			w = w[:k] // an adjective's position marker: "down(p)"
		}
		words = append(words, strings.ReplaceAll(w, "_", " "))
	}
	return words, nil
}

func readLines(name string) ([]string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n"), nil
}
