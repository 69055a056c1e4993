package search

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// Index is a ranked keyword index over one catalog's capabilities of one
// kind, made by a [Builder]. It is immutable: any number of goroutines
// may search it at once.
type Index struct {
	n int // documents

	// sorted are the terms in order; a term's id is its place there.
	// The postings of term t are pdoc[start[t]:start[t+1]] with their
	// weights in pw. A weight is the term's BM25F saturation in the
	// document, tf/(k1+tf) over the weighted fields, in units of 1/65535.
	sorted []string
	idf    []float32
	start  []uint32
	pdoc   []uint32
	pw     []uint16

	docs []docInfo
	// nameTerms holds each document's name terms (docInfo.names).
	nameTerms []uint32
	// exact maps a name folded to letters and digits (see squash) to the
	// documents with that exposed or original name.
	exact map[string][]uint32

	servers serverIndex

	// pool keeps the score arrays of finished searches for the next.
	pool sync.Pool
}

// docInfo is what the ranking needs of a document beyond its postings.
type docInfo struct {
	name     string // the exposed name, to order ties
	squashed string // the exposed name folded (see squash)
	server   uint32
	// names is the range of nameTerms that holds the terms of the
	// original name, in order.
	names      [2]uint32
	deprecated bool
}

// serverIndex scores the servers themselves, by their names, prefixes
// and instructions; a server's score counts for each of its documents.
type serverIndex struct {
	names []string
	terms map[string]uint32
	idf   []float32
	start []uint32
	psrv  []uint32
	pw    []uint16
	// docs lists each server's documents: docs[dstart[s]:dstart[s+1]].
	dstart []uint32
	docs   []uint32
}

// Len returns the number of documents indexed.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return ix.n
}

// BM25F's constants: k1 bounds what more occurrences of a term add; b is
// how much a long field is discounted, per field; the weights say how
// much an occurrence in a field counts. A name says what a tool does in
// two or three words, so it counts most and its length least.
const k1 = 1.5

var (
	fieldWeights = [numFields]float64{fieldName: 3, fieldTitle: 2, fieldDesc: 1, fieldParams: 0.4}
	fieldB       = [numFields]float64{fieldName: 0.3, fieldTitle: 0.3, fieldDesc: 0.75, fieldParams: 0.75}
)

// Server fields: a server's name and prefix, and its instructions.
const (
	serverName = iota
	serverInstructions
	numServerFields
)

var (
	serverWeights = [numServerFields]float64{serverName: 3, serverInstructions: 0.6}
	serverB       = [numServerFields]float64{serverName: 0.3, serverInstructions: 0.75}
)

// idf is BM25's inverse document frequency of a term in df of n
// documents, always above 0.
func idf(n, df int) float32 {
	return float32(math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5)))
}

// saturate is BM25F's weight of a term in a document: the occurrences in
// each field (tf), weighted and discounted by the field's length against
// the average, then saturated.
func saturate(tf []uint8, lens []uint16, avg []float64, weights, b []float64) uint16 {
	var t float64
	for f := range tf {
		if tf[f] == 0 {
			continue
		}
		norm := 1 - b[f]
		if avg[f] > 0 {
			norm += b[f] * float64(lens[f]) / avg[f]
		}
		t += weights[f] * float64(tf[f]) / norm
	}
	return uint16(math.Round(65535 * t / (k1 + t)))
}

// squash folds a name to its lower-case letters and digits, so that
// read_text_file, readTextFile and "read text file" are one.
func squash(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127 && isWordRune(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// term returns the id of a term, if the index has it.
func (ix *Index) term(w string) (uint32, bool) {
	i, ok := slices.BinarySearch(ix.sorted, w)
	return uint32(i), ok
}
