// Package retrieval owns mcpx's tool-retrieval benchmarks: the labelled
// sets (LiveMCPBench from ../shared/data, and the project's own set over
// the reference servers in testdata/search), the measures (recall@k,
// MRR, nDCG@10) and the baseline every ranking is reported against, a
// textbook Okapi BM25 over name, description and parameters. Only tests
// and benchmarks import it.
//
//	set := retrieval.LiveMCPBench(t) // skips where the data is absent
//	m := set.Measure(func(q string) []string { return rank(q) })
//	base := set.Measure(retrieval.NewBM25(set.Tools).Rank)
package retrieval

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/testenv"
)

// Tool is one tool of a benchmark's catalog, as mcpx would expose it
// with each server's default prefix (its name and "_").
type Tool struct {
	Name, Original, Server string
	Description            string
	// JSON is the tool object as tools/list would show it, with Name.
	JSON json.RawMessage
}

// Query is one labelled request.
type Query struct {
	Text string
	// Relevant grades the tools that serve the request, by exposed name:
	// 2 the right tool, 1 also useful.
	Relevant map[string]int
	// Needs are the right tools, each as the names that would do: a
	// tool the annotator named that several servers have is found when
	// any of them is. Recall counts needs met.
	Needs [][]string
}

// Set is a catalog with its labelled queries.
type Set struct {
	Name  string
	Tools []Tool
	// Instructions are the servers' instructions (or, for a marketplace
	// list, the servers' descriptions), by server name.
	Instructions map[string]string
	Queries      []Query
}

// Reference is the project's own labelled set: the tools of the
// reference servers (testdata/search/reference-servers.json, as the
// servers list them) and queries written as users ask, never naming the
// tool (reference-queries.json).
func Reference(tb testing.TB) *Set {
	tb.Helper()
	return ReferenceWith(tb, filepath.Join(testenv.ModuleRoot(), "testdata", "search", "reference-queries.json"))
}

// ReferenceWith is the reference servers' tools with the queries of
// another file of the same format (a set kept apart, to check that
// what was tuned on one set holds on another).
func ReferenceWith(tb testing.TB, queriesFile string) *Set {
	tb.Helper()
	dir := filepath.Join(testenv.ModuleRoot(), "testdata", "search")
	var file struct {
		Servers []struct {
			Name         string            `json:"name"`
			Instructions string            `json:"instructions"`
			Tools        []json.RawMessage `json:"tools"`
		} `json:"servers"`
	}
	readJSON(tb, filepath.Join(dir, "reference-servers.json"), &file)
	s := &Set{Name: "reference", Instructions: map[string]string{}}
	for _, srv := range file.Servers {
		s.Instructions[srv.Name] = srv.Instructions
		for _, raw := range srv.Tools {
			s.Tools = append(s.Tools, tool(tb, srv.Name, raw))
		}
	}
	var queries []struct {
		Query    string         `json:"query"`
		Relevant map[string]int `json:"relevant"`
	}
	readJSON(tb, queriesFile, &queries)
	for _, q := range queries {
		var needs [][]string
		for name, g := range q.Relevant {
			if g == 2 {
				needs = append(needs, []string{name})
			}
		}
		s.Queries = append(s.Queries, Query{Text: q.Query, Relevant: q.Relevant, Needs: needs})
	}
	s.check(tb)
	return s
}

// LiveMCPBench is the LiveMCPBench set (70 servers, 527 tools, tasks
// written by people) from ../shared/data/livemcpbench: a task's question
// is the query, the tools its annotator used are relevant (grade 2).
// The annotators named tools in free text; a name several servers have
// makes each of them relevant. A task none of whose names is a tool is
// left out. It skips the test where the data is absent.
func LiveMCPBench(tb testing.TB) *Set {
	tb.Helper()
	dir := testenv.SharedData(tb, "livemcpbench")
	var market []struct {
		Description string `json:"description"`
		Tools       map[string]struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"tools"`
	}
	readJSON(tb, filepath.Join(dir, "tools.json"), &market)
	s := &Set{Name: "LiveMCPBench", Instructions: map[string]string{}}
	byName := map[string][]string{} // lower-case original name -> exposed names
	for _, m := range market {
		servers := make([]string, 0, len(m.Tools))
		for name := range m.Tools {
			servers = append(servers, name)
		}
		slices.Sort(servers)
		for _, srv := range servers {
			s.Instructions[srv] = m.Description
			for _, raw := range m.Tools[srv].Tools {
				t := tool(tb, srv, raw)
				s.Tools = append(s.Tools, t)
				k := strings.ToLower(t.Original)
				byName[k] = append(byName[k], t.Name)
			}
		}
	}
	var tasks []struct {
		Question string `json:"Question"`
		Meta     struct {
			Tools string `json:"Tools"`
		} `json:"Annotator Metadata"`
	}
	readJSON(tb, filepath.Join(dir, "all_annotations.json"), &tasks)
	numbered := regexp.MustCompile(`^\s*\d+\s*[.)]\s*`)
	for _, task := range tasks {
		rel := map[string]int{}
		var needs [][]string
		for _, line := range strings.Split(task.Meta.Tools, "\n") {
			name := strings.ToLower(strings.TrimSpace(numbered.ReplaceAllString(line, "")))
			exposed := byName[name]
			if len(exposed) == 0 || rel[exposed[0]] != 0 {
				continue
			}
			for _, e := range exposed {
				rel[e] = 2
			}
			needs = append(needs, exposed)
		}
		if len(needs) > 0 {
			s.Queries = append(s.Queries, Query{Text: task.Question, Relevant: rel, Needs: needs})
		}
	}
	s.check(tb)
	return s
}

// tool reads one tool object of server srv.
func tool(tb testing.TB, srv string, raw json.RawMessage) Tool {
	tb.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		tb.Fatalf("server %s: tool: %v", srv, err)
	}
	var name, desc string
	_ = json.Unmarshal(obj["name"], &name)
	_ = json.Unmarshal(obj["description"], &desc)
	t := Tool{Name: srv + "_" + name, Original: name, Server: srv, Description: desc}
	obj["name"], _ = json.Marshal(t.Name)
	t.JSON, _ = json.Marshal(obj)
	return t
}

// check fails the test when a query names a tool the set lacks.
func (s *Set) check(tb testing.TB) {
	tb.Helper()
	names := map[string]bool{}
	for _, t := range s.Tools {
		names[t.Name] = true
	}
	for _, q := range s.Queries {
		for n := range q.Relevant {
			if !names[n] {
				tb.Fatalf("%s: query %q: no tool %s", s.Name, q.Text, n)
			}
		}
	}
	if len(s.Queries) == 0 {
		tb.Fatalf("%s: no queries", s.Name)
	}
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

// Measures are a ranking's quality over a set, each the mean over its
// queries.
type Measures struct {
	Recall1, Recall5, Recall10 float64 // the part of the right tools in the top k
	MRR                        float64 // 1 / the rank of the first right tool
	NDCG10                     float64 // graded
}

func (m Measures) String() string {
	return fmt.Sprintf("recall@1 %.3f  recall@5 %.3f  recall@10 %.3f  MRR %.3f  nDCG@10 %.3f",
		m.Recall1, m.Recall5, m.Recall10, m.MRR, m.NDCG10)
}

// Ratio is m over base, measure by measure.
func (m Measures) Ratio(base Measures) Measures {
	div := func(a, b float64) float64 {
		if b == 0 {
			return math.Inf(1)
		}
		return a / b
	}
	return Measures{div(m.Recall1, base.Recall1), div(m.Recall5, base.Recall5), div(m.Recall10, base.Recall10),
		div(m.MRR, base.MRR), div(m.NDCG10, base.NDCG10)}
}

// Measure runs rank for every query (it returns exposed names, best
// first) and measures the rankings. Recall counts the needs met (the
// tools graded 2); nDCG@10 uses the grades (gain 2^grade-1).
func (s *Set) Measure(rank func(query string) []string) Measures {
	var m Measures
	for _, q := range s.Queries {
		got := rank(q.Text)
		recall := func(k int) float64 {
			top := got[:min(k, len(got))]
			n := 0
			for _, need := range q.Needs {
				if slices.ContainsFunc(need, func(name string) bool { return slices.Contains(top, name) }) {
					n++
				}
			}
			return float64(n) / float64(len(q.Needs))
		}
		m.Recall1 += recall(1)
		m.Recall5 += recall(5)
		m.Recall10 += recall(10)
		for i, name := range got {
			if q.Relevant[name] == 2 {
				m.MRR += 1 / float64(i+1)
				break
			}
		}
		m.NDCG10 += ndcg(got, q.Relevant, 10)
	}
	n := float64(len(s.Queries))
	return Measures{m.Recall1 / n, m.Recall5 / n, m.Recall10 / n, m.MRR / n, m.NDCG10 / n}
}

// ndcg is the normalised discounted cumulative gain of a ranking at k.
func ndcg(got []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	for i, name := range got[:min(k, len(got))] {
		dcg += (math.Pow(2, float64(rel[name])) - 1) / math.Log2(float64(i+2))
	}
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		grades = append(grades, g)
	}
	slices.Sort(grades)
	slices.Reverse(grades)
	ideal := 0.0
	for i, g := range grades[:min(k, len(grades))] {
		ideal += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}
