package proxytool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/internal/retrieval"
)

// setCatalog is a labelled set's tools as a catalog.
func setCatalog(set *retrieval.Set) (*sliceCatalog, []string) {
	c := &sliceCatalog{items: map[Kind][]Item{}, byName: map[string]Item{}}
	var servers []string
	for _, t := range set.Tools {
		it := Item{Kind: KindTool, Name: t.Name, Original: t.Original, Server: t.Server, Description: t.Description, JSON: t.JSON}
		c.items[KindTool] = append(c.items[KindTool], it)
		c.byName[t.Name] = it
		if len(servers) == 0 || servers[len(servers)-1] != t.Server {
			servers = append(servers, t.Server)
		}
	}
	return c, servers
}

// TestTokens counts, with a real tokenizer, what the proxy costs a model
// over the labelled sets' catalogs: its own entry in tools/list, and a
// default list answer for each query of the set. It holds them to the
// targets (600 and 1,500 tokens) and reports them against what the same
// catalog costs in the same run as expose direct's tools/list and as a
// list that returns whole objects, 100 at a time (the default before).
func TestTokens(t *testing.T) {
	for name, load := range map[string]func(testing.TB) *retrieval.Set{"reference": retrieval.Reference, "LiveMCPBench": retrieval.LiveMCPBench} {
		t.Run(name, func(t *testing.T) {
			set := load(t)
			c, servers := setCatalog(set)
			p := New(c)
			entry := retrieval.Tokens(t, string(ToolFor(servers, c)))

			var direct strings.Builder
			direct.WriteString(`{"tools":[`)
			for i, it := range c.items[KindTool] {
				if i > 0 {
					direct.WriteByte(',')
				}
				direct.Write(it.JSON)
			}
			direct.WriteString(`]}`)
			directTokens := retrieval.Tokens(t, direct.String())

			answer := func(args string) int {
				res := p.Call(context.Background(), json.RawMessage(`{"name":"proxy","arguments":`+args+`}`))
				return retrieval.Tokens(t, string(res))
			}
			q := func(query string, extra string) string {
				b, _ := json.Marshal(query)
				return fmt.Sprintf(`{"action":"list","type":"tool","query":%s%s}`, b, extra)
			}
			var sum, most, sumOld int
			for _, query := range set.Queries {
				n := answer(q(query.Text, ""))
				sum += n
				most = max(most, n)
				sumOld += answer(q(query.Text, `,"detail":"full","limit":100`))
			}
			mean := float64(sum) / float64(len(set.Queries))
			meanOld := float64(sumOld) / float64(len(set.Queries))
			noQuery := answer(`{"action":"list","type":"tool"}`)

			t.Logf("%d tools: the proxy entry %d tokens; expose direct's tools/list %d (%.1fx the entry)", len(c.items[KindTool]), entry, directTokens, float64(directTokens)/float64(entry))
			t.Logf("default list answer: mean %.0f, most %d tokens over %d queries; without query %d", mean, most, len(set.Queries), noQuery)
			t.Logf("whole objects, 100 at a time (the default before): mean %.0f tokens, %.1fx the default answer", meanOld, meanOld/mean)
			if entry > 600 {
				t.Errorf("the proxy entry is %d tokens, want at most 600", entry)
			}
			if most > 1500 || noQuery > 1500 {
				t.Errorf("a default list answer costs up to %d tokens (%d without query), want at most 1500", most, noQuery)
			}
		})
	}
}
