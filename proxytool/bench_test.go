package proxytool

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// sliceCatalog is a minimal Catalog over fixed items, as cheap as the
// aggregator's, so that benchmarks measure the proxy.
type sliceCatalog struct {
	items  map[Kind][]Item
	byName map[string]Item
}

func (c *sliceCatalog) Items(k Kind) []Item { return c.items[k] }
func (c *sliceCatalog) Lookup(k Kind, name string) (Item, bool) {
	it, ok := c.byName[name]
	return it, ok && it.Kind == k
}
func (c *sliceCatalog) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`), nil
}

// manyTools is a catalog of n tools over 50 servers, each with a schema
// and description of realistic size (about 600 bytes of JSON).
func manyTools(n int) *sliceCatalog {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "run", "read"}
	nouns := []string{"issue", "file", "forecast", "user", "record", "page", "message", "build", "invoice", "ticket"}
	c := &sliceCatalog{items: map[Kind][]Item{}, byName: map[string]Item{}}
	for i := range n {
		server := fmt.Sprintf("server%02d", i%50)
		orig := fmt.Sprintf("%s_%s_%d", verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)], i)
		name := server + "_" + orig
		desc := fmt.Sprintf("%s a %s in the %s service. Returns the %s as JSON, with its id, owner, created and updated times, and links to related objects.",
			verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)], server, nouns[(i/len(verbs))%len(nouns)])
		obj := map[string]any{
			"name":        name,
			"description": desc,
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"id":     map[string]any{"type": "string", "description": "The object's id"},
					"limit":  map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
					"fields": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				},
				"required": []string{"id"},
			},
			"annotations": map[string]any{"readOnlyHint": i%2 == 0},
		}
		js, _ := json.Marshal(obj)
		it := Item{Kind: KindTool, Name: name, Original: orig, Server: server, Description: desc, JSON: js}
		c.items[KindTool] = append(c.items[KindTool], it)
		c.byName[name] = it
	}
	return c
}

func BenchmarkListTools10k(b *testing.B) {
	p := New(manyTools(10000))
	ctx := context.Background()
	for _, bc := range []struct{ name, args string }{
		{"default", `{"action":"list","type":"tool"}`},
		{"query", `{"action":"list","type":"tool","query":"forecast server07"}`},
		{"query_broad", `{"action":"list","type":"tool","query":"get"}`},
		{"filter_server", `{"action":"list","type":"tool","filter_server":"server07"}`},
		{"last_page", `{"action":"list","type":"tool","offset":9900,"limit":100}`},
		{"limit_1000", `{"action":"list","type":"tool","limit":1000}`},
	} {
		params := json.RawMessage(`{"name":"proxy","arguments":` + bc.args + `}`)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = len(p.Call(ctx, params))
			}
			b.SetBytes(int64(n))
		})
	}
}

func BenchmarkCallTool(b *testing.B) {
	p := New(manyTools(10000))
	params := json.RawMessage(`{"name":"proxy","arguments":{"action":"call","type":"tool","path":"server07_read_issue_7","args":{"id":"x"}},"_meta":{"progressToken":1}}`)
	b.ReportAllocs()
	for b.Loop() {
		p.Call(context.Background(), params)
	}
}

// TestManyToolsList checks what the benchmark measures.
func TestManyToolsList(t *testing.T) {
	p := New(manyTools(10000))
	got := p.Call(context.Background(), json.RawMessage(`{"arguments":{"action":"list","type":"tool","query":"forecast server07","limit":5}}`))
	var res struct {
		Content []struct {
			Resource struct {
				Text string `json:"text"`
			} `json:"resource"`
			Annotations struct {
				TotalCount int `json:"totalCount"`
			} `json:"annotations"`
		} `json:"content"`
	}
	if err := json.Unmarshal(got, &res); err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].Resource.Text), &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 5 || res.Content[0].Annotations.TotalCount < 200 {
		t.Fatalf("%d tools, totalCount %d", len(tools), res.Content[0].Annotations.TotalCount)
	}
	// server07 tools about forecasts match both terms and come first.
	if tools[0].Name[:9] != "server07_" {
		t.Errorf("first match %s", tools[0].Name)
	}
}
