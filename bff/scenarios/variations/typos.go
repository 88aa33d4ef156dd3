package variations

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// neighbours are the keys next to each letter on a QWERTY keyboard, the
// layout of the phones and laptops patients type on.
var neighbours = map[rune]string{
	'q': "wa", 'w': "qes", 'e': "wrd", 'r': "etf", 't': "ryg", 'y': "tuh", 'u': "yij", 'i': "uok", 'o': "ipl", 'p': "ol",
	'a': "qsz", 's': "adwx", 'd': "sfe", 'f': "dgr", 'g': "fht", 'h': "gjy", 'j': "hku", 'k': "jli", 'l': "ko",
	'z': "xa", 'x': "zcs", 'c': "xvd", 'v': "cbf", 'b': "vng", 'n': "bmh", 'm': "nj",
}

// Typos gives each word of three or more letters, with probability rate,
// one typing error: a letter replaced by a key next to it, a letter
// dropped, or a letter doubled. Negations, yes and no, numbers (in digits
// or words) and words with digits are never touched, nor is anything
// between words.
func Typos(text string, rate float64, r *rand.Rand) string {
	if rate <= 0 {
		return text
	}
	return tokens.ReplaceAllStringFunc(text, func(w string) string {
		lw := strings.ToLower(w)
		if len(w) < 3 || negation[lw] || numberWords[lw] || strings.ContainsFunc(w, unicode.IsDigit) || strings.Contains(w, "'") {
			return w
		}
		if r.Float64() >= rate {
			return w
		}
		return typo(w, r)
	})
}

// typo makes one error in w (letters only, at least three).
func typo(w string, r *rand.Rand) string {
	b := []rune(w)
	// Not the first letter: people rarely miss it, and a capital stays.
	i := 1 + r.IntN(len(b)-1)
	switch kind := r.IntN(3); {
	case kind == 0 && neighbours[unicode.ToLower(b[i])] != "":
		n := []rune(neighbours[unicode.ToLower(b[i])])
		c := n[r.IntN(len(n))]
		if c == unicode.ToLower(b[i]) {
			break
		}
		if unicode.IsUpper(b[i]) {
			c = unicode.ToUpper(c)
		}
		b[i] = c
		return string(b)
	case kind == 1 && len(b) > 3:
		return string(append(b[:i:i], b[i+1:]...))
	}
	// Doubled: also the fallback, so every chosen word takes one error.
	return string(b[:i+1]) + string(b[i:])
}
