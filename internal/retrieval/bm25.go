package retrieval

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"unicode"
)

// BM25 is the baseline: a textbook Okapi BM25 (k1 1.2, b 0.75) over one
// bag of words per tool (its name, description, and its parameters'
// names and descriptions), lower-cased and split at anything that is not
// a letter or digit, with no stemming, stop words or other help.
type BM25 struct {
	names []string
	tf    []map[string]int
	lens  []int
	df    map[string]int
	avg   float64
	k1, b float64
}

// NewBM25 indexes tools.
func NewBM25(tools []Tool) *BM25 {
	ix := &BM25{df: map[string]int{}, k1: 1.2, b: 0.75}
	total := 0
	for _, t := range tools {
		text := []string{t.Original, t.Description}
		var obj struct {
			InputSchema struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"inputSchema"`
		}
		_ = json.Unmarshal(t.JSON, &obj)
		for name, p := range obj.InputSchema.Properties {
			text = append(text, name, p.Description)
		}
		tf := map[string]int{}
		n := 0
		for _, w := range tokens(strings.Join(text, " ")) {
			tf[w]++
			n++
		}
		for w := range tf {
			ix.df[w]++
		}
		ix.names = append(ix.names, t.Name)
		ix.tf = append(ix.tf, tf)
		ix.lens = append(ix.lens, n)
		total += n
	}
	ix.avg = float64(total) / float64(max(1, len(tools)))
	return ix
}

// Rank returns the names of the tools that share a word with the query,
// best first.
func (ix *BM25) Rank(query string) []string {
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	q := tokens(query)
	n := float64(len(ix.names))
	for i, tf := range ix.tf {
		score := 0.0
		for _, w := range q {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(ix.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * f * (ix.k1 + 1) / (f + ix.k1*(1-ix.b+ix.b*float64(ix.lens[i])/ix.avg))
		}
		if score > 0 {
			hits = append(hits, hit{i, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = ix.names[h.i]
	}
	return out
}

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
