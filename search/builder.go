package search

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"unicode"
	"weak"
)

// Builder makes indexes and remembers, between builds, what each
// document was analysed into, so that a catalog change re-reads only
// the capabilities that changed (one server's list_changed re-reads that
// server's), and a build of the same documents as a recent one returns
// that index itself: every session and profile over one catalog shares
// one index. A Builder is safe for concurrent use; builds run one at a
// time.
type Builder struct {
	mu   sync.Mutex
	seed maphash.Seed
	// words are the terms of the analysed documents; an analysed
	// document refers to them by index. ids finds a word's index during
	// a build: it is made from words at its start and dropped at its end,
	// as stems is, so that between builds only what the next one reuses
	// is kept.
	words []string
	ids   map[string]uint32
	// analysed are the documents of the last build, by key.
	analysed map[uint64]*analysed
	// stems caches stemming during one build; it is dropped after it.
	stems map[string]string
	// recent are indexes built before, by the key of their documents; an
	// index stays findable only while a catalog still holds it.
	recent map[uint64]weak.Pointer[Index]
}

// analysed is one document's terms: for each, its word (an index into
// Builder.words) and how often it occurs in each field.
type analysed struct {
	entries []entry
	lens    [numFields]uint16
	// names are the words of the original name, in order.
	names      []uint32
	deprecated bool
}

type entry struct {
	word uint32
	tf   [numFields]uint8
}

// NewBuilder returns a Builder with nothing remembered.
func NewBuilder() *Builder {
	return &Builder{
		seed:     maphash.MakeSeed(),
		analysed: map[uint64]*analysed{},
		recent:   map[uint64]weak.Pointer[Index]{},
	}
}

// Build returns an index over docs, in order: the hits of a search are
// indices into docs. instructions are the servers' instructions, by
// server name; a server without any may be absent. A nil Builder builds
// from nothing remembered.
func (b *Builder) Build(docs []Doc, instructions map[string]string) *Index {
	if b == nil {
		b = NewBuilder()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stems = map[string]string{}
	b.ids = make(map[string]uint32, len(b.words))
	for i, w := range b.words {
		b.ids[w] = uint32(i)
	}
	defer func() { b.stems, b.ids = nil, nil }()

	keys := make([]uint64, len(docs))
	var all maphash.Hash
	all.SetSeed(b.seed)
	for i := range docs {
		keys[i] = b.key(&docs[i])
		writeUint64(&all, keys[i])
	}
	servers := serverList(docs)
	for _, s := range servers {
		all.WriteString(s)
		all.WriteByte(0)
		all.WriteString(instructions[s])
		all.WriteByte(0)
	}
	sum := all.Sum64()
	if p, ok := b.recent[sum]; ok {
		if ix := p.Value(); ix != nil {
			return ix
		}
		delete(b.recent, sum)
	}

	an := make([]*analysed, len(docs))
	live := make(map[uint64]*analysed, len(docs))
	for i := range docs {
		a, ok := b.analysed[keys[i]]
		if !ok {
			a = b.analyse(&docs[i])
		}
		an[i] = a
		live[keys[i]] = a
	}
	b.analysed = live
	ix := b.index(docs, an, servers, instructions)
	b.compact()
	for k, p := range b.recent {
		if p.Value() == nil {
			delete(b.recent, k)
		}
	}
	b.recent[sum] = weak.Make(ix)
	return ix
}

// key identifies a document's content.
func (b *Builder) key(d *Doc) uint64 {
	var h maphash.Hash
	h.SetSeed(b.seed)
	for _, s := range []string{d.Name, d.Original, d.Server, d.Title, d.Description} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	h.Write(d.JSON)
	return h.Sum64()
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	h.Write(b[:])
}

// analyse reads one document's fields into terms.
func (b *Builder) analyse(d *Doc) *analysed {
	a := &analysed{deprecated: deprecated(d.Title, d.Description)}
	f := docFields(d)
	at := map[uint32]int{} // word -> index in entries
	for field, texts := range f {
		for _, text := range texts {
			words(text, b.stems, func(t string) {
				w := b.word(t)
				i, ok := at[w]
				if !ok {
					i = len(a.entries)
					at[w] = i
					a.entries = append(a.entries, entry{word: w})
				}
				if a.entries[i].tf[field] < 255 {
					a.entries[i].tf[field]++
				}
				if a.lens[field] < 65535 {
					a.lens[field]++
				}
			})
		}
	}
	words(d.Original, b.stems, func(t string) { a.names = append(a.names, b.word(t)) })
	a.entries = slices.Clip(a.entries)
	return a
}

// word returns the id of a term, adding it.
func (b *Builder) word(t string) uint32 {
	if id, ok := b.ids[t]; ok {
		return id
	}
	id := uint32(len(b.words))
	t = strings.Clone(t)
	b.words = append(b.words, t)
	b.ids[t] = id
	return id
}

// compact forgets the words no remembered document uses once they
// outnumber those in use, so that a long run of changing catalogs does
// not grow the vocabulary without bound.
func (b *Builder) compact() {
	if len(b.words) < 4096 {
		return
	}
	used := make([]bool, len(b.words))
	n := 0
	for _, a := range b.analysed {
		for _, e := range a.entries {
			if !used[e.word] {
				used[e.word] = true
				n++
			}
		}
		for _, w := range a.names {
			if !used[w] {
				used[w] = true
				n++
			}
		}
	}
	if n*2 > len(b.words) {
		return
	}
	remap := make([]uint32, len(b.words))
	words := make([]string, 0, n)
	for old, w := range b.words {
		if used[old] {
			remap[old] = uint32(len(words))
			words = append(words, w)
		}
	}
	for _, a := range b.analysed {
		for i := range a.entries {
			a.entries[i].word = remap[a.entries[i].word]
		}
		for i := range a.names {
			a.names[i] = remap[a.names[i]]
		}
	}
	b.words = words
}

// serverList returns the servers of docs, in order of first appearance.
func serverList(docs []Doc) []string {
	var out []string
	seen := map[string]bool{}
	for i := range docs {
		if s := docs[i].Server; !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// index lays out the postings of analysed documents.
func (b *Builder) index(docs []Doc, an []*analysed, servers []string, instructions map[string]string) *Index {
	ix := &Index{n: len(docs), docs: make([]docInfo, len(docs)), exact: map[string][]uint32{}}

	// The index's own term ids are the ranks of its words in order, so
	// that a word is found by binary search and no map is kept.
	local := map[uint32]uint32{} // builder word -> index term
	var used []uint32
	var avg [numFields]float64
	for _, a := range an {
		for _, e := range a.entries {
			if _, ok := local[e.word]; !ok {
				local[e.word] = 0
				used = append(used, e.word)
			}
		}
		for f := range avg {
			avg[f] += float64(a.lens[f])
		}
	}
	for f := range avg {
		avg[f] /= float64(max(1, len(an)))
	}
	slices.SortFunc(used, func(x, y uint32) int { return strings.Compare(b.words[x], b.words[y]) })
	ix.sorted = make([]string, len(used))
	for t, w := range used {
		local[w] = uint32(t)
		ix.sorted[t] = b.words[w]
	}
	dfs := make([]uint32, len(used))
	for _, a := range an {
		for _, e := range a.entries {
			dfs[local[e.word]]++
		}
	}
	ix.idf = make([]float32, len(dfs))
	ix.start = make([]uint32, len(dfs)+1)
	for t, df := range dfs {
		ix.idf[t] = idf(len(docs), int(df))
		ix.start[t+1] = ix.start[t] + df
	}
	total := ix.start[len(dfs)]
	ix.pdoc = make([]uint32, total)
	ix.pw = make([]uint16, total)
	fill := slices.Clone(ix.start[:len(dfs)])

	serverID := make(map[string]uint32, len(servers))
	for i, s := range servers {
		serverID[s] = uint32(i)
	}
	lens := make([]uint16, numFields)
	for d, a := range an {
		copy(lens, a.lens[:])
		for _, e := range a.entries {
			t := local[e.word]
			ix.pdoc[fill[t]] = uint32(d)
			ix.pw[fill[t]] = saturate(e.tf[:], lens, avg[:], fieldWeights[:], fieldB[:])
			fill[t]++
		}
		info := &ix.docs[d]
		info.name = docs[d].Name
		info.squashed = squash(docs[d].Name)
		info.server = serverID[docs[d].Server]
		info.deprecated = a.deprecated
		info.names[0] = uint32(len(ix.nameTerms))
		for _, w := range a.names {
			if t, ok := local[w]; ok {
				ix.nameTerms = append(ix.nameTerms, t)
			}
		}
		info.names[1] = uint32(len(ix.nameTerms))
		for _, name := range []string{docs[d].Name, docs[d].Original} {
			if k := squash(name); k != "" && !slices.Contains(ix.exact[k], uint32(d)) {
				ix.exact[k] = append(ix.exact[k], uint32(d))
			}
		}
	}
	ix.servers = b.serverIndex(docs, servers, serverID, instructions)
	return ix
}

// serverIndex indexes the servers by their names, the prefixes their
// documents' names carry, and their instructions.
func (b *Builder) serverIndex(docs []Doc, servers []string, serverID map[string]uint32, instructions map[string]string) serverIndex {
	si := serverIndex{names: servers, terms: map[string]uint32{}}
	type tf = [numServerFields]uint8
	perServer := make([]map[uint32]*tf, len(servers))
	lens := make([][numServerFields]uint16, len(servers))
	prefixes := make([]map[string]bool, len(servers))
	counts := make([]uint32, len(servers)+1)
	for i := range docs {
		s := serverID[docs[i].Server]
		counts[s+1]++
		if p, ok := strings.CutSuffix(docs[i].Name, docs[i].Original); ok && p != "" {
			if prefixes[s] == nil {
				prefixes[s] = map[string]bool{}
			}
			prefixes[s][p] = true
		}
	}
	add := func(s uint32, field int, text string) {
		words(text, b.stems, func(w string) {
			t, ok := si.terms[w]
			if !ok {
				t = uint32(len(si.terms))
				si.terms[strings.Clone(w)] = t
			}
			m := perServer[s]
			if m == nil {
				m = map[uint32]*tf{}
				perServer[s] = m
			}
			v := m[t]
			if v == nil {
				v = &tf{}
				m[t] = v
			}
			if v[field] < 255 {
				v[field]++
			}
			if lens[s][field] < 65535 {
				lens[s][field]++
			}
		})
	}
	for s, name := range servers {
		add(uint32(s), serverName, name)
		for p := range prefixes[s] {
			if squash(p) != squash(name) {
				add(uint32(s), serverName, p)
			}
		}
		add(uint32(s), serverInstructions, instructions[name])
	}
	var avg [numServerFields]float64
	for s := range lens {
		for f := range avg {
			avg[f] += float64(lens[s][f])
		}
	}
	for f := range avg {
		avg[f] /= float64(max(1, len(servers)))
	}
	dfs := make([]uint32, len(si.terms))
	for _, m := range perServer {
		for t := range m {
			dfs[t]++
		}
	}
	si.idf = make([]float32, len(dfs))
	si.start = make([]uint32, len(dfs)+1)
	for t, df := range dfs {
		si.idf[t] = idf(len(servers), int(df))
		si.start[t+1] = si.start[t] + df
	}
	si.psrv = make([]uint32, si.start[len(dfs)])
	si.pw = make([]uint16, si.start[len(dfs)])
	fill := slices.Clone(si.start[:len(dfs)])
	for s, m := range perServer {
		l := []uint16{lens[s][0], lens[s][1]}
		for t, v := range m {
			si.psrv[fill[t]] = uint32(s)
			si.pw[fill[t]] = saturate(v[:], l, avg[:], serverWeights[:], serverB[:])
			fill[t]++
		}
	}
	for s := range counts[1:] {
		counts[s+1] += counts[s]
	}
	si.dstart = slices.Clone(counts)
	si.docs = make([]uint32, len(docs))
	for i := range docs {
		s := serverID[docs[i].Server]
		si.docs[counts[s]] = uint32(i)
		counts[s]++
	}
	return si
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
