package proxytool

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the want and calls sections of the golden files in ../testdata/proxy")

const goldenDir = "../testdata/proxy"

// A golden file is a txtar archive whose comment says what the case shows,
// with these sections:
//
//	args    the proxy tool's arguments (or params: the whole tools/call params)
//	want    the CallToolResult Proxy.Call returns
//	calls   what the fake catalog received, as [{"method":...,"params":...}]
//	        (absent when the proxy must not call upstream)
//
// want and calls are compared as parsed JSON; -update rewrites them.
type golden struct {
	path    string
	archive *txtar.Archive
}

func (g golden) section(name string) []byte {
	for _, f := range g.archive.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func (g golden) set(name string, data []byte) {
	for i, f := range g.archive.Files {
		if f.Name == name {
			g.archive.Files[i].Data = data
			return
		}
	}
	g.archive.Files = append(g.archive.Files, txtar.File{Name: name, Data: data})
}

func (g golden) remove(name string) {
	files := g.archive.Files[:0]
	for _, f := range g.archive.Files {
		if f.Name != name {
			files = append(files, f)
		}
	}
	g.archive.Files = files
}

// params returns the tools/call params the case sends.
func (g golden) params(tb testing.TB) json.RawMessage {
	tb.Helper()
	if p := g.section("params"); p != nil {
		return bytes.TrimSpace(p)
	}
	args := g.section("args")
	if args == nil {
		tb.Fatalf("%s: no args or params section", g.path)
	}
	return json.RawMessage(`{"name":"proxy","arguments":` + string(bytes.TrimSpace(args)) + `}`)
}

func readGoldens(tb testing.TB) []golden {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.txtar"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(paths) == 0 {
		tb.Fatalf("no golden files in %s", goldenDir)
	}
	var gs []golden
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		gs = append(gs, golden{path: p, archive: a})
	}
	return gs
}

func TestGolden(t *testing.T) {
	for _, g := range readGoldens(t) {
		name := strings.TrimSuffix(filepath.Base(g.path), ".txtar")
		t.Run(name, func(t *testing.T) {
			if len(bytes.TrimSpace(g.archive.Comment)) == 0 {
				t.Errorf("%s: no comment saying what the case shows", g.path)
			}
			fake := newFake(t)
			got := New(fake).Call(context.Background(), g.params(t))
			checkResult(t, got)
			calls := fake.recorded()

			if *update {
				g.set("want", indent(t, got))
				if calls != nil {
					g.set("calls", indent(t, calls))
				} else {
					g.remove("calls")
				}
				if err := os.WriteFile(g.path, txtar.Format(g.archive), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			assertJSONEqual(t, "result", got, g.section("want"))
			assertJSONEqual(t, "calls", calls, g.section("calls"))
		})
	}
}

// checkResult fails unless raw is a CallToolResult: an object with a
// content array of objects that each have a type, isError (if present) a
// boolean, and an error result not empty.
func checkResult(tb testing.TB, raw json.RawMessage) {
	tb.Helper()
	var res struct {
		Content []map[string]json.RawMessage `json:"content"`
		IsError *bool                        `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		tb.Fatalf("result is not a CallToolResult: %v\n%s", err, raw)
	}
	if res.Content == nil {
		tb.Fatalf("result has no content array:\n%s", raw)
	}
	for _, c := range res.Content {
		if _, ok := c["type"]; !ok {
			tb.Fatalf("content item without type in:\n%s", raw)
		}
	}
	if res.IsError != nil && *res.IsError && len(res.Content) == 0 {
		tb.Fatalf("an error result must say what went wrong:\n%s", raw)
	}
}

func indent(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		tb.Fatalf("invalid JSON: %v\n%s", err, raw)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// assertJSONEqual compares got and want as parsed JSON; nil want means got
// must be nil too.
func assertJSONEqual(tb testing.TB, what string, got, want []byte) {
	tb.Helper()
	if want == nil || got == nil {
		if want != nil || got != nil {
			tb.Errorf("%s: got\n%s\nwant\n%s", what, got, want)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		tb.Fatalf("%s: got invalid JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		tb.Fatalf("%s: golden has invalid JSON: %v\n%s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		tb.Errorf("%s differs (run go test ./proxytool -update to accept):\ngot\n%s\nwant\n%s", what, indent(tb, got), want)
	}
}
