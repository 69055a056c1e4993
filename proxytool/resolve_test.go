package proxytool

import (
	"errors"
	"testing"
)

// titledCatalog is a Finder over a fixed list of items.
type titledCatalog map[Kind][]Item

func (c titledCatalog) Items(kind Kind) []Item { return c[kind] }

func (c titledCatalog) Lookup(kind Kind, name string) (Item, bool) {
	for _, it := range c[kind] {
		if it.Name == name {
			return it, true
		}
	}
	return Item{}, false
}

// TestResolveTitle: a resource or a prompt is found by its title, after
// every other way; a title two of them share is ambiguous; a tool is not
// found by its title.
func TestResolveTitle(t *testing.T) {
	c := titledCatalog{
		KindResource: {
			{Kind: KindResource, Name: "notes://a", Original: "notes://a", Title: "Alpha", JSON: []byte(`{"uri":"notes://a","name":"a","title":"Alpha"}`)},
			{Kind: KindResource, Name: "notes://b", Original: "notes://b", Title: "Same", JSON: []byte(`{"uri":"notes://b","name":"b","title":"Same"}`)},
			{Kind: KindResource, Name: "notes://c", Original: "notes://c", Title: "Same", JSON: []byte(`{"uri":"notes://c","name":"Alpha","title":"Same"}`)},
		},
		KindPrompt: {{Kind: KindPrompt, Name: "s_greet", Original: "greet", Title: "Greeting"}},
		KindTool:   {{Kind: KindTool, Name: "s_echo", Original: "echo", Title: "Echo"}},
	}
	for _, tc := range []struct {
		kind Kind
		path string
		want string // the item found; "" for none
		err  error
	}{
		{KindResource, "Alpha", "notes://c", nil}, // a name comes before a title
		{KindResource, "b", "notes://b", nil},
		{KindResource, "Same", "", &AmbiguousError{}},
		{KindPrompt, "Greeting", "s_greet", nil},
		{KindPrompt, "greet", "s_greet", nil},
		{KindTool, "Echo", "", ErrNotFound},
	} {
		it, err := Resolve(c, tc.kind, tc.path)
		var amb *AmbiguousError
		switch {
		case tc.err == nil && (err != nil || it.Name != tc.want):
			t.Errorf("Resolve(%s, %q) = %q, %v; want %q", tc.kind, tc.path, it.Name, err, tc.want)
		case errors.Is(tc.err, ErrNotFound) && !errors.Is(err, ErrNotFound):
			t.Errorf("Resolve(%s, %q) = %q, %v; want not found", tc.kind, tc.path, it.Name, err)
		case tc.err != nil && !errors.Is(tc.err, ErrNotFound) && (!errors.As(err, &amb) || amb.What != "title" || len(amb.Candidates) != 2):
			t.Errorf("Resolve(%s, %q) = %q, %v; want ambiguous by title between two", tc.kind, tc.path, it.Name, err)
		}
	}
}
