package proxytool

import (
	"slices"
	"strings"
	"testing"
)

func names(items []Item) []string {
	var n []string
	for _, it := range items {
		n = append(n, it.Name)
	}
	return n
}

func TestSearch(t *testing.T) {
	items := []Item{
		{Name: "zeta_mentions", Original: "mentions", Description: "Runs echo on the server, like echo(1)"},
		{Name: "a_titled", Original: "titled", Title: "Echo console"},
		{Name: "b_reechoed", Original: "reechoed"},
		{Name: "c_say_echo_back", Original: "say_echo_back"},
		{Name: "d_sayEcho", Original: "sayEcho"},
		{Name: "e_echo_twice", Original: "echo_twice"},
		{Name: "everything_echo", Original: "echo", Description: "Echoes back the input"},
		{Name: "unrelated", Original: "unrelated", Description: "Adds numbers"},
	}
	orig := slices.Clone(items)

	tests := []struct {
		query string
		want  []string
	}{
		// exact original name, then a name starting with it (the exposed
		// prefix counts as a word: e_echo_twice), word inside a name
		// (snake and camel case), anywhere in a name, title, description.
		{"echo", []string{"everything_echo", "e_echo_twice", "c_say_echo_back", "d_sayEcho", "b_reechoed", "a_titled", "zeta_mentions"}},
		{"ECHO", []string{"everything_echo", "e_echo_twice", "c_say_echo_back", "d_sayEcho", "b_reechoed", "a_titled", "zeta_mentions"}},
		// The exposed name matches exactly too.
		{"d_sayecho", []string{"d_sayEcho"}},
		// Several terms: any may match, more matches rank higher.
		{"echo twice", []string{"e_echo_twice", "everything_echo", "c_say_echo_back", "d_sayEcho", "b_reechoed", "a_titled", "zeta_mentions"}},
		{"numbers, unrelated", []string{"unrelated"}},
		{"nothing", nil},
		// No terms: everything, in order.
		{"  , ", names(items)},
		{"", names(items)},
	}
	for _, tt := range tests {
		got := names(Search(items, tt.query))
		if !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q) = %v\nwant %v", tt.query, got, tt.want)
		}
	}
	if !slices.EqualFunc(items, orig, func(a, b Item) bool { return a.Name == b.Name }) {
		t.Error("Search modified its input")
	}
}

func TestSearchTieBreak(t *testing.T) {
	items := []Item{
		{Name: "c_tool", Description: "x"},
		{Name: "a_tool", Description: "x"},
		{Name: "b_tool", Description: "x", Server: "first"},
		{Name: "b_tool", Description: "x", Server: "second"},
	}
	got := Search(items, "x")
	if n := names(got); !slices.Equal(n, []string{"a_tool", "b_tool", "b_tool", "c_tool"}) {
		t.Fatalf("order %v", n)
	}
	if got[1].Server != "first" || got[2].Server != "second" {
		t.Error("equal names must keep their order in items")
	}
}

func TestSearchUnicode(t *testing.T) {
	items := []Item{
		{Name: "x_straße", Original: "straße"},
		{Name: "x_ÉCOLE", Original: "ÉCOLE"},
		{Name: "x_plain", Description: "Ünïcode description"},
	}
	for q, want := range map[string][]string{
		"école":   {"x_ÉCOLE"},
		"STRASSE": nil, // no full case folding: ß is not ss
		"STRAßE":  {"x_straße"},
		"ünï":     {"x_plain"},
		"ß":       {"x_straße"},
	} {
		if got := names(Search(items, q)); !slices.Equal(got, want) {
			t.Errorf("Search(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestTermIndex(t *testing.T) {
	tests := []struct {
		s, t string
		from int
		want int
	}{
		{"Hello World", "world", 0, 6},
		{"Hello World", "o", 5, 7},
		{"aAaA", "aa", 1, 1},
		{"abc", "abcd", 0, -1},
		{"abc", "c", 3, -1},
		{"abc", "c", 4, -1},
		{"ÉCOLE école", "école", 1, 7},
		{"x", "", 0, -1},
		{"get_forecast_07", "T_FORE", 0, 2},
		{"xxcast07", "07", 0, 6},
		{"07", "07", 0, 0},
		{"a07b07", "07", 2, 4},
	}
	for _, tt := range tests {
		if got := newTerm(tt.t).index(tt.s, tt.from); got != tt.want {
			t.Errorf("index of %q in %q from %d = %d, want %d", tt.t, tt.s, tt.from, got, tt.want)
		}
	}
}

// FuzzTermIndex checks the anchored search against the obvious one on
// ASCII text.
func FuzzTermIndex(f *testing.F) {
	f.Add("Get the Weather forecast", "FORE", 0)
	f.Add("aaaaab", "ab", 1)
	f.Add("x_07_07", "07", 3)
	f.Fuzz(func(t *testing.T, s, q string, from int) {
		if !isASCIIString(s) || !isASCIIString(q) || q == "" || from < 0 || from > len(s) {
			return
		}
		want := strings.Index(strings.ToLower(s[from:]), strings.ToLower(q))
		if want >= 0 {
			want += from
		}
		if got := newTerm(q).index(s, from); got != want {
			t.Fatalf("index of %q in %q from %d = %d, want %d", q, s, from, got, want)
		}
	})
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
