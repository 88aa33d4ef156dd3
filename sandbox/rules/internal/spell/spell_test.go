package spell

import "testing"

func TestDamerau(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"tounge", "tongue", 2}, {"stomahc", "stomach", 1}, {"stomack", "stomach", 1}, {"chest", "chest", 0},
		{"amoxicilin", "amoxicillin", 1}, {"breeding", "bleeding", 1}, {"ca", "abc", 3}, {"", "abc", 3},
	} {
		if got := Damerau(c.a, c.b); got != c.want {
			t.Errorf("Damerau(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestDeletionsMeet(t *testing.T) {
	share := func(a, b string, n int) bool {
		da := map[string]bool{}
		for _, d := range Deletions(a, n) {
			da[d] = true
		}
		for _, d := range Deletions(b, n) {
			if da[d] {
				return true
			}
		}
		return false
	}
	if !share("tounge", "tongue", 1) || !share("diarhoea", "diarrhoea", 1) || share("cough", "chest", 1) {
		t.Error("deletions do not meet as they should")
	}
}
