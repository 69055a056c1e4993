package search_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/retrieval"
	"github.com/mcpx/mcpx/search"
)

// benchSet is the set the benchmarks run on: LiveMCPBench where its data
// is present (527 real tools, 94 long requests), else the reference set.
func benchSet(b *testing.B) *retrieval.Set {
	var set *retrieval.Set
	b.Run("data", func(b *testing.B) { set = retrieval.LiveMCPBench(b) })
	if set == nil {
		set = retrieval.Reference(b)
	}
	return set
}

// memorySet is benchSet for a test.
func memorySet(t *testing.T) *retrieval.Set {
	var set *retrieval.Set
	t.Run("data", func(t *testing.T) { set = retrieval.LiveMCPBench(t) })
	if set == nil {
		set = retrieval.Reference(t)
	}
	return set
}

// scaled repeats a set's servers, each copy a server of its own
// ("github2"), until there are n tools.
func scaled(set *retrieval.Set, n int) ([]search.Doc, []retrieval.Tool, map[string]string) {
	docs := make([]search.Doc, 0, n)
	tools := make([]retrieval.Tool, 0, n)
	instr := map[string]string{}
	for copyN := 0; len(docs) < n; copyN++ {
		for _, t := range set.Tools {
			if len(docs) == n {
				break
			}
			srv := t.Server
			if copyN > 0 {
				srv = fmt.Sprintf("%s%d", t.Server, copyN+1)
			}
			name := srv + "_" + t.Original
			js := strings.Replace(string(t.JSON), `"name":"`+t.Name+`"`, `"name":"`+name+`"`, 1)
			docs = append(docs, search.Doc{Name: name, Original: t.Original, Server: srv, Description: t.Description, JSON: []byte(js)})
			tools = append(tools, retrieval.Tool{Name: name, Original: t.Original, Server: srv, Description: t.Description, JSON: []byte(js)})
			instr[srv] = set.Instructions[t.Server]
		}
	}
	return docs, tools, instr
}

var sizes = []int{500, 5000, 10000}

// BenchmarkQuery runs every query of the set against catalogs of 500,
// 5,000 and 10,000 tools, and the textbook BM25 (a scan of every tool
// per query) on the same catalog in the same run: x-bm25 is the index's
// time per query over the baseline's. p50 and p95 are per query.
func BenchmarkQuery(b *testing.B) {
	set := benchSet(b)
	for _, n := range sizes {
		docs, tools, instr := scaled(set, n)
		ix := search.NewBuilder().Build(docs, instr)
		base := retrieval.NewBM25(tools)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var lat []time.Duration
			var baseTotal, total time.Duration
			for b.Loop() {
				for _, q := range set.Queries {
					t0 := time.Now()
					ix.Search(q.Text, nil)
					d := time.Since(t0)
					lat = append(lat, d)
					total += d
				}
				b.StopTimer()
				t0 := time.Now()
				for _, q := range set.Queries[:10] {
					base.Rank(q.Text)
				}
				baseTotal += time.Since(t0) * time.Duration(len(set.Queries)) / 10
				b.StartTimer()
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*95/100].Nanoseconds()), "p95-ns")
			b.ReportMetric(float64(total)/float64(baseTotal), "x-bm25")
		})
	}
}

// BenchmarkBuild builds an index of 500, 5,000 and 10,000 tools from
// nothing, and reports what the index and the builder's memory of the
// analysed tools hold per tool (B/tool, live heap after a collection).
// rebuild-ratio is a rebuild after one server's tools changed (its list
// changed), over a build from nothing, in the same run.
func BenchmarkBuild(b *testing.B) {
	set := benchSet(b)
	for _, n := range sizes {
		docs, _, instr := scaled(set, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var ix *search.Index
			var builder *search.Builder
			var perTool float64
			var full, incremental time.Duration
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				t0 := time.Now()
				builder = search.NewBuilder()
				ix = builder.Build(docs, instr)
				full += time.Since(t0)
				runtime.GC()
				runtime.ReadMemStats(&after)
				perTool = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)

				b.StopTimer()
				changed := slices.Clone(docs)
				srv := changed[0].Server
				for i := range changed {
					if changed[i].Server == srv {
						changed[i].Description += " (changed)"
					}
				}
				b.StartTimer()
				t0 = time.Now()
				builder.Build(changed, instr)
				incremental += time.Since(t0)
			}
			runtime.KeepAlive(docs)
			runtime.KeepAlive(ix)
			runtime.KeepAlive(builder)
			b.ReportMetric(perTool, "B/tool")
			b.ReportMetric(float64(incremental)/float64(full), "rebuild-ratio")
		})
	}
}

// TestIndexMemory holds what the index and its builder keep to at most
// 2 KiB per tool at 10,000 tools (the reference servers' tools repeated
// as servers of their own; LiveMCPBench where present). It measures the
// live heap after a collection, which does not depend on the machine's
// speed.
func TestIndexMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 10,000 tools")
	}
	docs, _, instr := scaled(memorySet(t), 10000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b := search.NewBuilder()
	ix := b.Build(docs, instr)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perTool := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(docs))
	// The documents are the catalog's, held by it whether or not it is
	// searched: kept alive here, so that they are not counted.
	runtime.KeepAlive(docs)
	runtime.KeepAlive(ix)
	runtime.KeepAlive(b)
	t.Logf("%.0f bytes per tool at %d tools", perTool, ix.Len())
	if perTool > 2048 {
		t.Errorf("the index keeps %.0f bytes per tool, want at most 2048", perTool)
	}
}
