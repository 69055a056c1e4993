package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/retrieval"
	"github.com/mcpx/mcpx/internal/testenv"
)

// The code-mode task set: multi-step tasks over the reference servers
// (@modelcontextprotocol/server-filesystem and server-memory), each done
// as the sequence of proxy calls a model would make and as one script.
// What a model reads and writes is counted in tokens (o200k_base): the
// arguments of each call it makes and the text of each answer.

// taskCost is what one way of doing a task cost the model.
type taskCost struct {
	calls, bytes, tokens int
	wall                 time.Duration
}

// codeTask is one task: its direct calls (each a proxy call's
// arguments), how the model gets the answer from their results, and the
// script that does the same.
type codeTask struct {
	name   string
	direct func(t testing.TB, call func(args any) string) string // returns the answer, as JSON
	script string
}

// codeModeServe serves the reference servers over a tree of files and a
// memory graph made for the tasks.
func codeModeServe(t testing.TB) (*rawClient, []codeTask) {
	peers := testenv.NeedNodePeers(t)
	js := func(name string) string {
		return filepath.Join(peers, "node_modules", "@modelcontextprotocol", name, "dist", "index.js")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A tree: three directories of 25 files each, of sizes that differ.
	for d, dir := range []string{"src", "docs", "tests"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 25 {
			body := strings.Repeat("x", 100+37*i+501*d)
			if err := os.WriteFile(filepath.Join(root, dir, fmt.Sprintf("file%02d.txt", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Five logs of 150 lines, some of them errors.
	for f := range 5 {
		var b strings.Builder
		for i := range 150 {
			level := "INFO"
			if (i+f)%37 == 0 {
				level = "ERROR"
			}
			fmt.Fprintf(&b, "2026-12-01T10:%02d:%02dZ %s service=%d request %d handled in %dms\n", i/60, i%60, level, f, i, 3+i%17)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("app%d.log", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A memory graph of 60 people and projects.
	memory := filepath.Join(t.TempDir(), "memory.jsonl")
	var g strings.Builder
	langs := []string{"Go", "Rust", "Python", "TypeScript"}
	for i := range 60 {
		kind := "person"
		if i%3 == 0 {
			kind = "project"
		}
		e := map[string]any{"type": "entity", "name": fmt.Sprintf("entity-%02d", i), "entityType": kind,
			"observations": []string{fmt.Sprintf("works mostly in %s", langs[i%4]), fmt.Sprintf("joined in %d", 2015+i%10), "likes long walks and short meetings"}}
		b, _ := json.Marshal(e)
		g.Write(b)
		g.WriteByte('\n')
	}
	if err := os.WriteFile(memory, []byte(g.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fs":  map[string]any{"command": "node", "args": []string{js("server-filesystem"), root}},
		"mem": map[string]any{"command": "node", "args": []string{js("server-memory")}, "env": map[string]string{"MEMORY_FILE_PATH": memory}},
	}})
	c := startServe(t, cfg)
	c.initialize()

	sizeLine := regexp.MustCompile(`(?m)^size: (\d+)$`)
	tasks := []codeTask{{
		name: "count the files under a tree and sum their sizes",
		direct: func(t testing.TB, call func(any) string) string {
			files, bytes := 0, 0
			for _, line := range strings.Split(call(fsCall("list_directory", root)), "\n") {
				dir, ok := strings.CutPrefix(line, "[DIR] ")
				if !ok {
					continue
				}
				for _, l := range strings.Split(call(fsCall("list_directory", filepath.Join(root, dir))), "\n") {
					if name, ok := strings.CutPrefix(l, "[FILE] "); ok {
						m := sizeLine.FindStringSubmatch(call(fsCall("get_file_info", filepath.Join(root, dir, name))))
						n, _ := strconv.Atoi(m[1])
						files, bytes = files+1, bytes+n
					}
				}
			}
			return fmt.Sprintf(`{"files":%d,"bytes":%d}`, files, bytes)
		},
		script: `const root = ` + quoteJS(root) + `;
const lines = s => s.content.split("\n");
let files = 0, bytes = 0;
for (const l of lines(await proxy.call("fs_list_directory", {path: root}))) {
  if (!l.startsWith("[DIR] ")) continue;
  const dir = root + "/" + l.slice(6);
  const names = lines(await proxy.call("fs_list_directory", {path: dir})).filter(x => x.startsWith("[FILE] ")).map(x => x.slice(7));
  const infos = await proxy.callAll(names.map(n => ["fs_get_file_info", {path: dir + "/" + n}]));
  for (const i of infos) { files++; bytes += Number(/^size: (\d+)$/m.exec(i.content)[1]); }
}
return {files, bytes};`,
	}, {
		name: "find the entities in the memory graph that mention a word",
		direct: func(t testing.TB, call func(any) string) string {
			var graph struct {
				Entities []struct{ Name, EntityType string } `json:"entities"`
			}
			if err := json.Unmarshal([]byte(call(proxyArgs("mem_search_nodes", map[string]any{"query": "Go"}))), &graph); err != nil {
				t.Fatalf("search_nodes: %v", err)
			}
			var names []string
			for _, e := range graph.Entities {
				if e.EntityType == "person" {
					names = append(names, e.Name)
				}
			}
			b, _ := json.Marshal(names)
			return string(b)
		},
		script: `const g = await proxy.call("mem_search_nodes", {query: "Go"});
return g.entities.filter(e => e.entityType === "person").map(e => e.name);`,
	}, {
		name: "read the lines of five files that match a pattern",
		direct: func(t testing.TB, call func(any) string) string {
			var out []string
			for f := range 5 {
				for _, l := range strings.Split(call(fsCall("read_text_file", filepath.Join(root, fmt.Sprintf("app%d.log", f)))), "\n") {
					if strings.Contains(l, " ERROR ") {
						out = append(out, l)
					}
				}
			}
			b, _ := json.Marshal(out)
			return string(b)
		},
		script: `const root = ` + quoteJS(root) + `;
const files = [0, 1, 2, 3, 4].map(i => ["fs_read_text_file", {path: root + "/app" + i + ".log"}]);
return (await proxy.callAll(files)).flatMap(f => f.content.split("\n").filter(l => l.includes(" ERROR ")));`,
	}}
	return c, tasks
}

func fsCall(tool, path string) map[string]any {
	return proxyArgs("fs_"+tool, map[string]any{"path": path})
}

func proxyArgs(tool string, args map[string]any) map[string]any {
	return map[string]any{"action": "call", "type": "tool", "path": tool, "args": args}
}

// measureTask does task both ways and returns what each cost and the
// answers.
func measureTask(t testing.TB, c *rawClient, task codeTask) (direct, script taskCost, directAnswer, scriptAnswer string) {
	read := func(res json.RawMessage) string {
		var r struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.IsError || len(r.Content) == 0 {
			t.Fatalf("%s: %s", task.name, res)
		}
		var texts []string
		for _, c := range r.Content {
			texts = append(texts, c.Text)
		}
		return strings.Join(texts, "\n")
	}
	count := func(cost *taskCost, s string) {
		cost.bytes += len(s)
		cost.tokens += retrieval.Tokens(t, s)
	}
	start := time.Now()
	directAnswer = task.direct(t, func(args any) string {
		b, _ := json.Marshal(args)
		res, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": json.RawMessage(b)})
		if e != nil {
			t.Fatalf("%s: %s", task.name, e.Message)
		}
		text := read(res)
		direct.calls++
		count(&direct, string(b))
		count(&direct, text)
		return text
	})
	direct.wall = time.Since(start)

	start = time.Now()
	b, _ := json.Marshal(map[string]any{"action": "run", "code": task.script})
	res, e := c.request("tools/call", map[string]any{"name": "proxy", "arguments": json.RawMessage(b)})
	script.wall = time.Since(start)
	if e != nil {
		t.Fatalf("%s: %s", task.name, e.Message)
	}
	scriptAnswer = read(res)
	script.calls = 1
	count(&script, string(b))
	count(&script, scriptAnswer)
	return direct, script, directAnswer, scriptAnswer
}

// TestCodeModeTokens: over the task set, one script per task reads at
// least 5 times fewer tokens than the calls a model makes step by step,
// and answers the same.
func TestCodeModeTokens(t *testing.T) {
	c, tasks := codeModeServe(t)
	var direct, script int
	for _, task := range tasks {
		d, s, da, sa := measureTask(t, c, task)
		if !jsonEqual(json.RawMessage(da), json.RawMessage(sa)) {
			t.Errorf("%s: the script answered %s, step by step %s", task.name, sa, da)
		}
		t.Logf("%s: %d calls, %d tokens step by step; %d tokens as a script (%.1fx)", task.name, d.calls, d.tokens, s.tokens, float64(d.tokens)/float64(s.tokens))
		direct, script = direct+d.tokens, script+s.tokens
	}
	if ratio := float64(direct) / float64(script); ratio < 5 {
		t.Errorf("the scripts read %d tokens against %d step by step: %.1fx, want at least 5x", script, direct, ratio)
	}
}

// BenchmarkCodeModeTasks reports, per task, the bytes, tokens, calls and
// wall time of both ways, and the ratios.
//
//	go test -run '^$' -bench CodeModeTasks -benchtime 3x ./cmd/mcpx/
func BenchmarkCodeModeTasks(b *testing.B) {
	c, tasks := codeModeServe(b)
	for i, task := range tasks {
		b.Run(fmt.Sprintf("task%d", i+1), func(b *testing.B) {
			var d, s taskCost
			for b.Loop() {
				d, s, _, _ = measureTask(b, c, task)
			}
			b.ReportMetric(float64(d.tokens), "tokens/direct")
			b.ReportMetric(float64(s.tokens), "tokens/script")
			b.ReportMetric(float64(d.tokens)/float64(s.tokens), "direct/script-tokens")
			b.ReportMetric(float64(d.bytes)/float64(s.bytes), "direct/script-bytes")
			b.ReportMetric(float64(d.calls), "calls/direct")
			b.ReportMetric(float64(d.wall)/float64(s.wall), "direct/script-wall")
		})
	}
}
