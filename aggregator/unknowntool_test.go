package aggregator

import (
	"slices"
	"strings"
	"testing"
)

func TestClosestNames(t *testing.T) {
	served := []string{"proxy", "everything_echo", "everything_get-sum", "echo", "browser_navigate"}
	tests := []struct {
		name string
		want []string
	}{
		{"everything_ecoh", []string{"everything_echo"}},
		{"get-sum", []string{"everything_get-sum"}},
		{"ECHO", []string{"echo", "everything_echo"}},
		{"browser_navigat", []string{"browser_navigate"}},
		{"nothing-like-it", nil},
		{"", nil},
		{strings.Repeat("echo", 100), nil}, // too long to compare
	}
	for _, tt := range tests {
		if got := closestNames(tt.name, served, 3); !slices.Equal(got, tt.want) {
			t.Errorf("closestNames(%.20q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := closestNames("echo", served, 1); len(got) != 1 {
		t.Errorf("at most one asked: got %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"echo", "ecoh", 2}, {"same", "same", 0}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
