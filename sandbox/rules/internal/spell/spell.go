// Package spell holds the edit-distance primitives of the rules engine's
// spelling tolerance, shared by the engine (sandbox/rules, spelling.go)
// and the generator of its word file (sandbox/rules/gen_wordnet.go), so
// both measure "one slip away" the same way.
package spell

// MaxEdits is the correction distance allowed for a word of n letters: none
// up to 3 letters, 1 up to 7, 2 from 8.
func MaxEdits(n int) int {
	switch {
	case n < 4:
		return 0
	case n < 8:
		return 1
	}
	return 2
}

// Deletions is w and every string made by deleting up to n of its letters
// (the symmetric delete lookup of Garbe's SymSpell: two words within n
// edits share one of them).
func Deletions(w string, n int) []string {
	seen := map[string]bool{w: true}
	out := []string{w}
	frontier := []string{w}
	for range n {
		var next []string
		for _, s := range frontier {
			for i := range len(s) {
				d := s[:i] + s[i+1:]
				if !seen[d] {
					seen[d] = true
					out = append(out, d)
					next = append(next, d)
				}
			}
		}
		frontier = next
	}
	return out
}

// Damerau is the optimal string alignment distance between a and b: an
// insertion, a deletion, a substitution or two neighbouring letters
// swapped count one each.
func Damerau(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
