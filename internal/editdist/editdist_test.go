package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"expose", "expose", 0}, {"expse", "expose", 1}, {"", "abc", 3},
		{"kitten", "sitting", 3}, {"café", "cafe", 1}, {"echo", "ohce", 3},
		// A swap of two neighbours is one edit.
		{"reanme", "rename", 1}, {"ab", "ba", 1}, {"abc", "ca", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}
