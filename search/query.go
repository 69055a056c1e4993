package search

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpx/mcpx/internal/editdist"
)

// Limits on a query: past them the rest is ignored, and the result says
// so.
const (
	// MaxQueryBytes is how much of a query is read.
	MaxQueryBytes = 2048
	// MaxQueryTerms is how many distinct words of a query count.
	MaxQueryTerms = 64
)

// Hit is one document that matches a query.
type Hit struct {
	Doc   int // index into the documents the index was built from
	Score float64
}

// Result is what a search found.
type Result struct {
	// Hits are the matching documents, best first.
	Hits []Hit
	// Terms are the words the query was searched by, as the index knows
	// them (stemmed); empty when it had none.
	Terms []string
	// Notes say what of the query was not used, in sentences for the
	// reader of the result: a query cut at a limit, one of only common
	// words.
	Notes []string
}

// Scores added for how a document's name matches the whole query; they
// outrank any sum of term scores, so an exact name comes first.
const (
	scoreExactName = 1000 // the query is the name, up to case and separators
	scoreSameWords = 500  // the query has the name's words and no others
	scoreNearName  = 300  // the query is the name but for one typo
)

// Weights of a query word's kin: a synonym (a request says "remove", a
// tool "delete"), a word the index has that starts with it ("weath"),
// one a typo away.
const (
	weightSynonym = 0.45
	weightPrefix  = 0.6
	weightTypo    = 0.6
	// weightHint is the weight of a word the query implies (see hints).
	weightHint = 0.5
	// nameCoverage is what a document gains when every word of its name
	// is in the query, in proportion to the part that is.
	nameCoverage = 4
	// deprecatedFactor discounts a capability that says not to use it.
	deprecatedFactor = 0.5
	// serverShare is how much a server's own score counts for each of
	// its documents.
	serverShare = 0.8
	// minShare is the least part of the best score a match must have to
	// count: a document that shares one common word with a long request
	// is not a match.
	minShare = 0.15
)

// slot is one distinct word of the query and the index terms that stand
// for it.
type slot struct {
	word  string
	terms []weighted
	// hint marks a word the query implies rather than says (see hints).
	hint bool
}

type weighted struct {
	term   uint32
	weight float32
}

// Search ranks the documents that match query and keep allows (nil: all).
//
// The query is analysed as the documents are (words split at case
// changes and punctuation, stop words dropped, stemmed). A document's
// score is the sum over the query's words of BM25F over its fields (the
// name counts most, then the title, the description and the parameters),
// plus its server's score by name and instructions; a query word also
// finds its synonyms and, when the index lacks it, the words it starts or
// is a typo of, at lower weights. A document whose name the query spells
// (read_text_file for "read text file") comes first, one most of whose
// name words the query has ranks higher, and a deprecated one lower. A
// document matches when it has at least one of the query's words and at
// least minShare of the best score.
func (ix *Index) Search(query string, keep func(doc int) bool) Result {
	var res Result
	if ix == nil || ix.n == 0 {
		return res
	}
	if len(query) > MaxQueryBytes {
		cut := MaxQueryBytes
		for cut > 0 && !utf8.RuneStart(query[cut]) {
			cut--
		}
		query = query[:cut]
		res.Notes = append(res.Notes, fmt.Sprintf("the query was cut to its first %d bytes", MaxQueryBytes))
	}
	slots, dropped := ix.slots(query)
	if dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("only the first %d distinct words of the query were used (%d more were left out)", MaxQueryTerms, dropped))
	}
	for _, s := range slots {
		res.Terms = append(res.Terms, s.word)
	}
	exact := ix.exact[squash(query)]
	if len(slots) == 0 && len(exact) == 0 {
		return res
	}

	acc := ix.getScores()
	defer ix.putScores(acc)
	for _, s := range slots {
		for _, w := range s.terms {
			qw := w.weight * ix.idf[w.term]
			for p := ix.start[w.term]; p < ix.start[w.term+1]; p++ {
				acc.add(ix.pdoc[p], qw*float32(ix.pw[p])/65535)
			}
		}
	}
	ix.addServers(acc, query)
	for _, d := range exact {
		acc.add(d, 0)
		acc.bonus[d] = scoreExactName
	}
	if len(exact) == 0 && len(slots) > 0 {
		ix.nearNames(acc, query, slots)
	}

	asked := queryTerms(slots)
	best := float32(0)
	kept := acc.touched[:0:0]
	for _, d := range acc.touched {
		if keep != nil && !keep(int(d)) {
			continue
		}
		acc.final[d] = ix.final(d, acc, asked)
		best = max(best, acc.sum[d])
		kept = append(kept, d)
	}
	// The floor is set by the words the documents share with the query,
	// not by a name spelt in it: a query that names one tool still lists
	// the others it describes.
	floor := best * minShare
	for _, d := range kept {
		if acc.sum[d] > 0 && acc.sum[d] >= floor || acc.bonus[d] > 0 {
			res.Hits = append(res.Hits, Hit{Doc: int(d), Score: acc.final[d] + acc.bonus[d]})
		}
	}
	slices.SortFunc(res.Hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Doc, b.Doc))
	})
	return res
}

// final is a document's score: the sum of its term and server scores,
// with what its name adds (asked are the index terms the query stands
// for, in order), discounted when it is deprecated.
func (ix *Index) final(d uint32, acc *scores, asked []uint32) float64 {
	score := float64(acc.sum[d])
	info := &ix.docs[d]
	if names := ix.nameTerms[info.names[0]:info.names[1]]; len(names) > 0 {
		have := 0
		for _, t := range names {
			if _, ok := slices.BinarySearch(asked, t); ok {
				have++
			}
		}
		score += nameCoverage * float64(have) / float64(len(names))
	}
	if info.deprecated {
		score *= deprecatedFactor
	}
	return score
}

// queryTerms returns the index terms the query's words stand for, in
// order.
func queryTerms(slots []slot) []uint32 {
	var out []uint32
	for _, s := range slots {
		for _, w := range s.terms {
			out = append(out, w.term)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// slots analyses a query into its distinct words, each with the index
// terms it finds; dropped counts the distinct words past MaxQueryTerms.
func (ix *Index) slots(query string) (slots []slot, dropped int) {
	seen := map[string]bool{}
	words(query, nil, func(w string) {
		if seen[w] {
			return
		}
		seen[w] = true
		if len(slots) == MaxQueryTerms {
			dropped++
			return
		}
		slots = append(slots, slot{word: w})
	})
	for _, h := range hints(query) {
		words(h, nil, func(w string) {
			if !seen[w] && len(slots) < MaxQueryTerms {
				seen[w] = true
				slots = append(slots, slot{word: w, hint: true})
			}
		})
	}
	for i := range slots {
		s := &slots[i]
		if t, ok := ix.term(s.word); ok && s.hint {
			s.terms = append(s.terms, weighted{t, weightHint})
			continue
		}
		if t, ok := ix.term(s.word); ok {
			s.terms = append(s.terms, weighted{t, 1})
		} else {
			s.terms = ix.kin(s.word, s.terms, len(slots) <= maxTypoWords)
		}
		for _, syn := range synonyms(s.word) {
			if t, ok := ix.term(syn); ok && !hasTerm(s.terms, t) {
				s.terms = append(s.terms, weighted{t, weightSynonym})
			}
		}
	}
	return slots, dropped
}

func hasTerm(ws []weighted, t uint32) bool {
	return slices.ContainsFunc(ws, func(w weighted) bool { return w.term == t })
}

const (
	// maxKin bounds the terms a word the index lacks stands for.
	maxKin = 8
	// maxTypoWords is the longest query whose words are looked up as
	// typos: a typo in a short query loses most of it, while a long
	// request, full of names no tool has, says enough with its other
	// words.
	maxTypoWords = 8
)

// kin finds the terms a word the index lacks may have meant: terms that
// start with it (a word typed in part), and with typos, terms one edit
// away for words of five letters or more.
func (ix *Index) kin(w string, out []weighted, typos bool) []weighted {
	if len(w) >= 3 {
		i, _ := slices.BinarySearch(ix.sorted, w)
		for ; i < len(ix.sorted) && strings.HasPrefix(ix.sorted[i], w) && len(out) < maxKin; i++ {
			out = append(out, weighted{uint32(i), weightPrefix})
		}
	}
	if len(out) > 0 || len(w) < 5 || !typos {
		return out
	}
	for i, t := range ix.sorted {
		if len(t) < len(w)-1 || len(t) > len(w)+1 || t[0] != w[0] && t[len(t)-1] != w[len(w)-1] {
			continue
		}
		if editdist.Distance(w, t) == 1 {
			out = append(out, weighted{uint32(i), weightTypo})
			if len(out) == maxKin {
				break
			}
		}
	}
	return out
}

// nearNames adds the name scores short of an exact match: the query has
// exactly the words of a name, or is a name but for one typo.
func (ix *Index) nearNames(acc *scores, query string, slots []slot) {
	for _, d := range acc.touched {
		info := &ix.docs[d]
		names := ix.nameTerms[info.names[0]:info.names[1]]
		if len(names) == 0 || len(names) != len(slots) {
			continue
		}
		all := true
		for i := range slots {
			if !slices.ContainsFunc(names, func(t uint32) bool {
				return len(slots[i].terms) > 0 && slots[i].terms[0].term == t && slots[i].terms[0].weight == 1
			}) {
				all = false
				break
			}
		}
		if all && !info.deprecated {
			acc.bonus[d] = max(acc.bonus[d], scoreSameWords)
		}
	}
	q := squash(query)
	if len(q) < 6 || len(q) > 64 {
		return
	}
	for _, d := range acc.touched {
		n := ix.docs[d].squashed
		if !ix.docs[d].deprecated && len(n) >= len(q)-1 && len(n) <= len(q)+1 && editdist.Distance(q, n) == 1 {
			acc.bonus[d] = max(acc.bonus[d], scoreNearName)
		}
	}
}

// addServers adds, to each document of a server the query names or
// describes, that server's score.
func (ix *Index) addServers(acc *scores, query string) {
	si := &ix.servers
	if len(si.names) == 0 {
		return
	}
	var sscore map[uint32]float32
	seen := map[string]bool{}
	words(query, nil, func(w string) {
		if seen[w] {
			return
		}
		seen[w] = true
		t, ok := si.terms[w]
		if !ok {
			return
		}
		if sscore == nil {
			sscore = map[uint32]float32{}
		}
		for p := si.start[t]; p < si.start[t+1]; p++ {
			sscore[si.psrv[p]] += si.idf[t] * float32(si.pw[p]) / 65535
		}
	})
	for s, v := range sscore {
		for _, d := range si.docs[si.dstart[s]:si.dstart[s+1]] {
			acc.add(d, serverShare*v)
		}
	}
}

// scores accumulates one search's scores over the documents it touches.
type scores struct {
	sum     []float32
	final   []float64
	bonus   []float64 // what a name spelt in the query adds
	on      []bool    // touched
	touched []uint32
}

func (s *scores) add(d uint32, v float32) {
	if !s.on[d] {
		s.on[d] = true
		s.touched = append(s.touched, d)
	}
	s.sum[d] += v
}

func (ix *Index) getScores() *scores {
	if s, ok := ix.pool.Get().(*scores); ok {
		return s
	}
	return &scores{sum: make([]float32, ix.n), final: make([]float64, ix.n), bonus: make([]float64, ix.n), on: make([]bool, ix.n)}
}

// putScores clears what a search touched and keeps the arrays for the
// next one.
func (ix *Index) putScores(s *scores) {
	for _, d := range s.touched {
		s.sum[d], s.final[d], s.bonus[d], s.on[d] = 0, 0, 0, false
	}
	s.touched = s.touched[:0]
	ix.pool.Put(s)
}
