package search_test

import (
	"testing"

	"github.com/mcpx/mcpx/internal/retrieval"
	"github.com/mcpx/mcpx/search"
)

// rank builds an index over a set's tools and returns its ranking.
func rank(set *retrieval.Set) func(string) []string {
	docs := make([]search.Doc, len(set.Tools))
	for i, t := range set.Tools {
		docs[i] = search.Doc{Name: t.Name, Original: t.Original, Server: t.Server, Description: t.Description, JSON: t.JSON}
	}
	ix := search.NewBuilder().Build(docs, set.Instructions)
	return func(q string) []string {
		var out []string
		for _, h := range ix.Search(q, nil).Hits {
			out = append(out, docs[h.Doc].Name)
		}
		return out
	}
}

// TestQuality measures the ranking on the labelled sets against the
// textbook BM25 of the same run, and holds it to the targets.
func TestQuality(t *testing.T) {
	for _, tt := range []struct {
		name   string
		set    func(testing.TB) *retrieval.Set
		target func(retrieval.Measures) (float64, float64, string)
	}{
		{"LiveMCPBench", retrieval.LiveMCPBench, func(m retrieval.Measures) (float64, float64, string) { return m.Recall10, 0.55, "recall@10" }},
		{"reference", retrieval.Reference, func(m retrieval.Measures) (float64, float64, string) { return m.Recall5, 0.85, "recall@5" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := tt.set(t)
			got := set.Measure(rank(set))
			base := set.Measure(retrieval.NewBM25(set.Tools).Rank)
			t.Logf("%d queries over %d tools", len(set.Queries), len(set.Tools))
			t.Logf("mcpx: %v", got)
			t.Logf("BM25: %v", base)
			t.Logf("ratio: %v", got.Ratio(base))
			if v, min, name := tt.target(got); v < min {
				t.Errorf("%s %.3f, want at least %.2f", name, v, min)
			}
		})
	}
}
