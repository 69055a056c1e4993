package search_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/internal/retrieval"
	"github.com/mcpx/mcpx/search"
)

// reference is an index over the reference servers' tools and the
// tools' exposed names, in index order.
func reference(t testing.TB) (*search.Index, []string) {
	set := retrieval.Reference(t)
	docs := make([]search.Doc, len(set.Tools))
	names := make([]string, len(set.Tools))
	for i, tl := range set.Tools {
		docs[i] = search.Doc{Name: tl.Name, Original: tl.Original, Server: tl.Server, Description: tl.Description, JSON: tl.JSON}
		names[i] = tl.Name
	}
	return search.NewBuilder().Build(docs, set.Instructions), names
}

func top(ix *search.Index, names []string, query string, n int) []string {
	var out []string
	for _, h := range ix.Search(query, nil).Hits {
		out = append(out, names[h.Doc])
		if len(out) == n {
			break
		}
	}
	return out
}

// TestRanking holds the cases the old substring search got wrong.
func TestRanking(t *testing.T) {
	ix, names := reference(t)
	for _, tt := range []struct {
		query string
		want  string // first
		in    int    // within the first in (0: first)
	}{
		{"write_file", "filesystem_write_file", 0},
		{"filesystem_write_file", "filesystem_write_file", 0},
		{"read text file", "filesystem_read_text_file", 0},
		{"readTextFile", "filesystem_read_text_file", 0},
		{"read_text_fiel", "filesystem_read_text_file", 0},
		// Short words inside names do not outrank content words.
		{"Save this text as a brand-new file", "filesystem_write_file", 3},
		{"add two numbers", "everything_get-sum", 0},
		// A deprecated tool ranks below its successor.
		{"read the complete contents of a file", "filesystem_read_text_file", 0},
		{"remove a folder", "filesystem_list_directory", -1},
		{"echo", "everything_echo", 0},
	} {
		got := top(ix, names, tt.query, 5)
		switch {
		case tt.in < 0:
			// only that it answers
		case len(got) == 0:
			t.Errorf("%q: no hits", tt.query)
		case tt.in == 0 && got[0] != tt.want:
			t.Errorf("%q: first %s, want %s (top %v)", tt.query, got[0], tt.want, got)
		case tt.in > 0 && !slices.Contains(got[:min(tt.in, len(got))], tt.want):
			t.Errorf("%q: %s not in the first %d: %v", tt.query, tt.want, tt.in, got)
		}
	}
	got := top(ix, names, "read a file", 10)
	if i, j := slices.Index(got, "filesystem_read_text_file"), slices.Index(got, "filesystem_read_file"); i < 0 || j >= 0 && j < i {
		t.Errorf("read a file: the deprecated read_file is not below read_text_file: %v", got)
	}
}

// TestMatches checks that only real matches count: a common word matches
// nothing, and a match shares enough of the query.
func TestMatches(t *testing.T) {
	ix, names := reference(t)
	for _, q := range []string{"a", "the to at", "?!...", "", "   "} {
		res := ix.Search(q, nil)
		if len(res.Hits) != 0 || len(res.Terms) != 0 {
			t.Errorf("%q: %d hits, terms %q; want none", q, len(res.Hits), res.Terms)
		}
	}
	if n := len(ix.Search("file", nil).Hits); n < 10 || n > 30 {
		t.Errorf("file: %d hits, want the tools about files", n)
	}
	if n := len(ix.Search("zzzqqq", nil).Hits); n != 0 {
		t.Errorf("zzzqqq: %d hits", n)
	}
	// Another script searches as itself; it finds nothing in English
	// descriptions, and says nothing is wrong.
	if res := ix.Search("файл", nil); len(res.Hits) != 0 || len(res.Notes) != 0 {
		t.Errorf("файл: %d hits, notes %q", len(res.Hits), res.Notes)
	}
	_ = names
}

func TestQueryLimits(t *testing.T) {
	ix, _ := reference(t)
	huge := strings.Repeat("file ", search.MaxQueryBytes)
	res := ix.Search(huge, nil)
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "cut") || len(res.Hits) == 0 {
		t.Errorf("huge query: notes %q, %d hits", res.Notes, len(res.Hits))
	}
	var many []string
	for i := range search.MaxQueryTerms + 10 {
		many = append(many, fmt.Sprintf("word%c%c", 'a'+i%26, 'a'+i/26))
	}
	res = ix.Search(strings.Join(many, " ")+" file", nil)
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "11 more") {
		t.Errorf("many words: notes %q", res.Notes)
	}
}

func TestKeep(t *testing.T) {
	ix, names := reference(t)
	onlyMemory := func(d int) bool { return strings.HasPrefix(names[d], "memory_") }
	res := ix.Search("delete a file", onlyMemory)
	if len(res.Hits) == 0 {
		t.Fatal("no hits")
	}
	for _, h := range res.Hits {
		if !onlyMemory(h.Doc) {
			t.Errorf("hit %s is not kept", names[h.Doc])
		}
	}
}

func TestServerMatches(t *testing.T) {
	ix, names := reference(t)
	// A server's name finds its tools.
	got := top(ix, names, "memory", 9)
	if len(got) != 9 {
		t.Fatalf("memory: %v", got)
	}
	for _, n := range got {
		if !strings.HasPrefix(n, "memory_") {
			t.Errorf("memory: %s", n)
		}
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix, _ := reference(t)
	want := ix.Search("list the files in a directory", nil).Hits
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := ix.Search("list the files in a directory", nil).Hits; !slices.Equal(got, want) {
					t.Error("concurrent searches differ")
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestEmptyIndex(t *testing.T) {
	var nilIndex *search.Index
	if res := nilIndex.Search("file", nil); len(res.Hits) != 0 {
		t.Error("nil index has hits")
	}
	ix := search.NewBuilder().Build(nil, nil)
	if ix.Len() != 0 || len(ix.Search("file", nil).Hits) != 0 {
		t.Error("empty index has hits")
	}
}
