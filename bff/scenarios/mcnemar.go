package scenarios

import "math/big"

// McNemarExact is the two-sided exact McNemar test of paired outcomes: b
// and c are the discordant pairs (correct in one run only, each way). Under
// the null hypothesis each discordant pair goes either way with p = 1/2, so
// the p-value is twice the binomial tail of min(b, c) in b+c trials, capped
// at 1, computed in exact integers (no normal approximation). No discordant
// pairs give 1. Negative counts are taken as 0.
func McNemarExact(b, c int) float64 {
	b, c = max(b, 0), max(c, 0)
	n, k := b+c, min(b, c)
	if n == 0 {
		return 1
	}
	tail := new(big.Int)
	term := big.NewInt(1) // C(n, 0)
	for i := 0; i <= k; i++ {
		tail.Add(tail, term)
		// C(n, i+1) = C(n, i) * (n-i) / (i+1), exact at every step.
		term.Mul(term, big.NewInt(int64(n-i)))
		term.Quo(term, big.NewInt(int64(i+1)))
	}
	p := new(big.Rat).SetFrac(tail.Lsh(tail, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	if p.Cmp(big.NewRat(1, 1)) > 0 {
		return 1
	}
	f, _ := p.Float64()
	return f
}
