package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx/mcpx/internal/retrieval"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/search"
)

// referenceConfig is a config of the four reference servers the project's
// own search set is written over (testdata/search), run from
// testdata/node.
func referenceConfig(t *testing.T) string {
	t.Helper()
	modules := filepath.Join(testenv.NeedNodePeers(t), "node_modules", "@modelcontextprotocol")
	js := func(pkg string) string { return filepath.Join(modules, pkg, "dist", "index.js") }
	return writeConfig(t, map[string]any{"readyTimeout": "60s", "servers": map[string]any{
		"everything":         map[string]any{"command": "node", "args": []string{js("server-everything"), "stdio"}},
		"filesystem":         map[string]any{"command": "node", "args": []string{js("server-filesystem"), t.TempDir()}},
		"memory":             map[string]any{"command": "node", "args": []string{js("server-memory")}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}},
		"sequentialthinking": map[string]any{"command": "node", "args": []string{js("server-sequential-thinking")}},
	}})
}

// TestReferenceServers checks that testdata/search/reference-servers.json,
// which the search benchmark ranks, is what the pinned reference servers
// list through mcpx: every tool there is served, object for object.
func TestReferenceServers(t *testing.T) {
	cfg := referenceConfig(t)
	out, errOut, code := runCLI(t, "", "list", "tools", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("list tools: exit %d\n%s", code, errOut)
	}
	var served []map[string]any
	if err := json.Unmarshal([]byte(out), &served); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, tool := range served {
		delete(tool, "server")
		byName[tool["name"].(string)] = tool
	}
	set := retrieval.Reference(t)
	for _, want := range set.Tools {
		got, ok := byName[want.Name]
		if !ok {
			t.Errorf("%s is in the set but not served", want.Name)
			continue
		}
		var w map[string]any
		_ = json.Unmarshal(want.JSON, &w)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s differs from what its server lists now: regenerate testdata/search/reference-servers.json\n got %v\nwant %v", want.Name, got, w)
		}
	}
}

// TestListQueryRanksAsProxy checks that the terminal's search and the
// proxy tool's, over the real reference servers, find the same tools in
// the same order.
func TestListQueryRanksAsProxy(t *testing.T) {
	cfg := referenceConfig(t)
	c := startServe(t, cfg)
	c.initialize()
	for _, q := range []string{"save this text as a brand-new file", "remember that Ana likes tea", "add two numbers"} {
		out, errOut, code := runCLI(t, "", "list", "tools", "--query", q, "--config", cfg)
		if code != 0 {
			t.Fatalf("list --query %q: exit %d\n%s", q, code, errOut)
		}
		var terminal []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if name, _, ok := strings.Cut(line, "\t"); ok {
				terminal = append(terminal, name)
			}
		}
		args, _ := json.Marshal(map[string]any{"action": "list", "type": "tool", "query": q, "limit": 1000})
		r := c.proxy(t, string(args))
		var items []struct{ Name string }
		if err := json.Unmarshal([]byte(r.Content[0].Resource.Text), &items); err != nil {
			t.Fatal(err)
		}
		var proxy []string
		for _, it := range items {
			proxy = append(proxy, it.Name)
		}
		if len(proxy) == 0 || !reflect.DeepEqual(terminal, proxy) {
			t.Errorf("%q:\nterminal %v\nproxy    %v", q, terminal, proxy)
		}
	}
	if got := c.proxy(t, `{"action":"list","type":"tool","query":"add two numbers","limit":1}`); !strings.Contains(got.Content[0].Resource.Text, "everything_get-sum") {
		t.Errorf("add two numbers: %s", got.Content[0].Resource.Text)
	}
}

// TestProxySearchLiveMCPBench measures the search through the real
// binary: LiveMCPBench's 70 servers, each a fixture serving that server's
// tools and its description as instructions, queried by the proxy tool
// over stdio as a model would. recall@10 must reach the target and equal
// what the search package measures in process (TestQuality), so nothing
// on the way (names, cleaning, the shared index) changes the ranking.
func TestProxySearchLiveMCPBench(t *testing.T) {
	set := retrieval.LiveMCPBench(t)
	dir := t.TempDir()
	servers := map[string]any{}
	key := func(server string) string { return strings.ReplaceAll(server, " ", "-") }
	byServer := map[string][]json.RawMessage{}
	var order []string
	setName := map[string]string{} // exposed name here -> the set's
	for _, tool := range set.Tools {
		setName[key(tool.Server)+"_"+tool.Original] = tool.Name
		var obj map[string]any
		_ = json.Unmarshal(tool.JSON, &obj)
		obj["name"] = tool.Original
		b, _ := json.Marshal(obj)
		if _, ok := byServer[tool.Server]; !ok {
			order = append(order, tool.Server)
		}
		byServer[tool.Server] = append(byServer[tool.Server], b)
	}
	for i, srv := range order {
		defs, _ := json.Marshal(map[string]any{"tools": byServer[srv],
			"remove": []string{"echo", "structured", "fail", "image", "big", "sleep", "add-tool", "crash", "env", "cwd"}})
		file := filepath.Join(dir, fmt.Sprintf("defs%02d.json", i))
		if err := os.WriteFile(file, defs, 0o600); err != nil {
			t.Fatal(err)
		}
		entry := fx("--name", key(srv), "--defs", file, "--instructions", set.Instructions[srv])
		entry["timeout"] = "30s"
		servers[key(srv)] = entry
	}
	c := startServe(t, writeConfig(t, map[string]any{"readyTimeout": "60s", "servers": servers}))
	c.initialize()
	m := set.Measure(func(q string) []string {
		args, _ := json.Marshal(map[string]any{"action": "list", "type": "tool", "query": q})
		r := c.proxy(t, string(args))
		var items []struct{ Name string }
		if err := json.Unmarshal([]byte(r.Content[0].Resource.Text), &items); err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		var names []string
		for _, it := range items {
			names = append(names, setName[it.Name])
		}
		return names
	})
	docs := make([]search.Doc, len(set.Tools))
	for i, tl := range set.Tools {
		docs[i] = search.Doc{Name: tl.Name, Original: tl.Original, Server: tl.Server, Description: tl.Description, JSON: tl.JSON}
	}
	ix := search.NewBuilder().Build(docs, set.Instructions)
	inProcess := set.Measure(func(q string) []string {
		var names []string
		for _, h := range ix.Search(q, nil).Hits {
			names = append(names, docs[h.Doc].Name)
		}
		return names
	})
	base := set.Measure(retrieval.NewBM25(set.Tools).Rank)
	t.Logf("through mcpx: %v", m)
	t.Logf("in process:   %v", inProcess)
	t.Logf("BM25:         %v", base)
	if m.Recall10 < 0.55 {
		t.Errorf("recall@10 %.3f through the proxy, want at least 0.55", m.Recall10)
	}
	if m.Recall10 != inProcess.Recall10 {
		t.Errorf("recall@10 %.3f through the proxy, %.3f in process", m.Recall10, inProcess.Recall10)
	}
}

// TestModernProxySearch checks the proxy's search from a 2026-07-28
// client (the official Go SDK), whose requests belong to no session: over
// stdio and over HTTP, the proxy tool it lists names the server behind
// it, and its list ranks, pages in words and in structuredContent, as a
// legacy session's does.
func TestModernProxySearch(t *testing.T) {
	modernConfig(t) // builds the reference server
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"everything": map[string]any{"command": reference.path},
	}})
	for name, transport := range modernTransports(cfg) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "modern-search", Version: "1"}, nil)
			cs, err := client.Connect(ctx, transport(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", v)
			}
			// list waits for the servers still starting, as the first
			// tools/list of a session does; the proxy tool, listed at once
			// on a cold start, names the servers configured.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proxy", Arguments: map[string]any{
				"action": "list", "type": "tool", "query": "simple text", "limit": 1}})
			if err != nil || res.IsError || len(res.Content) != 2 {
				t.Fatalf("proxy list: %+v, %v", res, err)
			}
			er, ok := res.Content[0].(*mcp.EmbeddedResource)
			if !ok || er.Resource == nil {
				t.Fatalf("first item %T, want the embedded resource", res.Content[0])
			}
			var items []struct{ Name string }
			if err := json.Unmarshal([]byte(er.Resource.Text), &items); err != nil || len(items) == 0 || items[0].Name != "everything_test_simple_text" {
				t.Errorf("query simple text: %s (%v)", er.Resource.Text, err)
			}
			if got := textOf(res); !strings.Contains(got, "best first") || !strings.Contains(got, `"offset":1`) {
				t.Errorf("the page in words: %q", got)
			}
			sc, _ := res.StructuredContent.(map[string]any)
			if sc["nextOffset"] != 1.0 || sc["limit"] != 1.0 || sc["totalCount"].(float64) < 2 {
				t.Errorf("structuredContent %v", res.StructuredContent)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "proxy" {
				t.Fatalf("tools/list: %v, %v", tools, err)
			}
			if d := tools.Tools[0].Description; !strings.Contains(d, "everything (") || !strings.Contains(d, `"path":"everything_`) {
				t.Errorf("the proxy's description does not name its server or take its example from it:\n%s", d)
			}
		})
	}
}
