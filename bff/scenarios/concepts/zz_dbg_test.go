package concepts

import (
	"os"
	"strings"
	"testing"
)

func TestDbg(t *testing.T) {
	u := mustLoad(t)
	for _, q := range strings.Split(os.Getenv("Q"), "|") {
		for _, t0 := range splitSentences(q) {
			s := &sentence{text: t0}
			var punct []bool
			s.words, punct = words(t0, u.spell)
			s.words, punct = u.privatives(s.words, punct)
			s.words, punct, s.leadIn = u.dropLeadIn(s.words, punct)
			s.punct = punct
			s.clause, s.conn = u.clauses(s.words, punct)
			st := &sentenceState{u: u, s: s, pats: map[int32][]int{}, terms: map[int32][]span{}, groups: map[int32][]span{}}
			for i, w := range s.words {
				for _, p := range u.exact[w] {
					st.pats[p] = append(st.pats[p], i)
				}
				for l := 1; l <= len(w) && l <= u.maxStem; l++ {
					for _, p := range u.prefix[w[:l]] {
						st.pats[p] = append(st.pats[p], i)
					}
				}
			}
			for ri := range u.rules {
				if c, ok := st.try(&u.rules[ri]); ok {
					var cw []string
					for _, p := range c.claimed {
						cw = append(cw, s.words[p])
					}
					t.Logf("%q: %s groups=%d spans=%d claimed=%v  [%s]", t0, u.concepts[c.rule.concept].ID, c.groups, c.spans, cw, c.rule.cue)
				}
			}
		}
		for _, m := range u.Understand(q) {
			t.Logf("=> %+v", m)
		}
	}
}
