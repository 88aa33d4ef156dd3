package scenarios

import "testing"

func TestMcNemarExact(t *testing.T) {
	cases := []struct {
		b, c int
		want float64
	}{
		{1, 9, 0.021484375},          // 2 * (1 + 10) / 1024
		{9, 1, 0.021484375},          // symmetric
		{0, 0, 1},                    // no discordant pairs
		{5, 5, 1},                    // 2 * 638/1024 > 1: capped
		{0, 5, 0.0625},               // 2 / 32
		{2, 8, 0.109375},             // 2 * (1 + 10 + 45) / 1024
		{3, 12, 0.03515625},          // 2 * (1+15+105+455) / 32768
		{0, 20, 1.9073486328125e-06}, // 2 / 2^20
	}
	for _, c := range cases {
		if got := McNemarExact(c.b, c.c); got != c.want {
			t.Errorf("McNemarExact(%d, %d) = %v, want %v", c.b, c.c, got, c.want)
		}
	}
	// Large tables stay exact and in range.
	if p := McNemarExact(500, 520); p <= 0.5 || p > 1 {
		t.Errorf("McNemarExact(500, 520) = %v", p)
	}
}
