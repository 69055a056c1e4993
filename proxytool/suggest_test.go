package proxytool

import (
	"slices"
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	items := []Item{
		{Name: "everything_echo", Original: "echo"},
		{Name: "everything_get-sum", Original: "get-sum"},
		{Name: "memory_read_graph", Original: "read_graph"},
		{Name: "memory_create_entities", Original: "create_entities"},
	}
	names := func(its []Item) []string {
		var out []string
		for _, it := range its {
			out = append(out, it.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"ecoh", []string{"everything_echo"}},         // a typo of an original name
		{"read_grpah", []string{"memory_read_graph"}}, // a typo
		{"sum", []string{"everything_get-sum"}},       // part of a name
		{"memory_read_graf", []string{"memory_read_graph"}},
		{"zzz", nil}, // nothing like it: nothing offered
		{"", nil},
		{strings.Repeat("echo", 100), nil}, // too long to compare
	} {
		if got := names(Closest(items, tc.name, 3)); !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestClosestTitleAndResourceName: a person may type what a picker or
// `mcpx list resources` shows: a title, or a resource's name.
func TestClosestTitleAndResourceName(t *testing.T) {
	items := []Item{
		{Kind: KindResource, Name: "fixture://readme", Original: "fixture://readme", JSON: []byte(`{"uri":"fixture://readme","name":"readme"}`)},
		{Kind: KindResource, Name: "fixture://text-json", Original: "fixture://text-json", Title: "JSON as plain text",
			JSON: []byte(`{"uri":"fixture://text-json","name":"text-json","title":"JSON as plain text"}`)},
		{Kind: KindPrompt, Name: "fx_greet", Original: "greet", Title: "Greeting"},
	}
	for _, tc := range []struct{ name, want string }{
		{"raedme", "fixture://readme"},
		{"JSON as plain txt", "fixture://text-json"},
		{"Greating", "fx_greet"},
	} {
		if got := Closest(items, tc.name, 3); len(got) != 1 || got[0].Name != tc.want {
			t.Errorf("Closest(%q) = %+v, want %s alone", tc.name, got, tc.want)
		}
	}
}
