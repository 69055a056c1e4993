package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx/mcpx/internal/testenv"
)

// outputSchemaSetup serves the npm filesystem server directly (expose:
// direct) under the default maxResultBytes (100 KiB), over a directory
// with a 300 kB text file, and returns the config and the file's path and
// text.
func outputSchemaSetup(t *testing.T) (cfg, path, text string) {
	t.Helper()
	fs := filepath.Join(testenv.NeedNodePeers(t), "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < 300_000; i++ {
		fmt.Fprintf(&b, "line %d of a file over 100 KiB, with \"quotes\", a \\ and a tab\t.\n", i)
	}
	text = b.String()
	path = filepath.Join(dir, "big.txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = writeConfig(t, map[string]any{"expose": "direct", "readyTimeout": "60s",
		"servers": map[string]any{"fs": map[string]any{"command": "node", "args": []string{fs, dir}}}})
	return cfg, path, text
}

// TestOutputSchemaCutTypeScript: the official TypeScript SDK client
// calls the filesystem server's read_text_file (outputSchema
// {content: string}) through mcpx for a file over the default cap, and
// accepts the cut result: its structuredContent is there and valid (the
// SDK checks it, and threw "has an output schema but did not return
// structured content" when the cut took it out), the text in it and in
// content a start of the file ending a line, and a note names where the
// whole is kept.
func TestOutputSchemaCutTypeScript(t *testing.T) {
	t.Parallel()
	cfg, path, text := outputSchemaSetup(t)
	exe, _ := os.Executable()
	cmd := exec.Command("node", "../../testdata/node/e2e-client.mjs", exe, "serve", "--stdio", "--config", cfg)
	call, _ := json.Marshal(map[string]any{"name": "fs_read_text_file", "arguments": map[string]any{"path": path}})
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "E2E_CALL="+string(call))
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, truncateForLog(out), stderr.String())
	}
	var got struct {
		Call struct {
			Content           []struct{ Type, Text string }
			StructuredContent *struct{ Content string }
			IsError           bool
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client output: %v\n%s", err, truncateForLog(out))
	}
	checkFileCut(t, got.Call.IsError, got.Call.StructuredContent != nil, func() string { return got.Call.StructuredContent.Content },
		len(got.Call.Content), func(i int) string { return got.Call.Content[i].Text }, text)
}

// TestOutputSchemaCutGo: the official Go SDK client gets the same cut
// result. It does not check structuredContent against the outputSchema
// (go-sdk v1.8.0's client only reads the tool for its headers), so this
// checks what it decodes: structuredContent there, the text cut.
func TestOutputSchemaCutGo(t *testing.T) {
	t.Parallel()
	cfg, path, text := outputSchemaSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "outputschema-test", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: mcpxCommand("serve", "--stdio", "--config", cfg)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_read_text_file", Arguments: map[string]any{"path": path}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	content, _ := sc["content"].(string)
	checkFileCut(t, res.IsError, sc != nil, func() string { return content },
		len(res.Content), func(i int) string { c, _ := res.Content[i].(*mcp.TextContent); return c.Text }, text)
}

// checkFileCut checks a cut read_text_file result of text, under the
// default cap: both texts a start of it ending a line, the result within
// the cap, and a note on each naming a kept URI.
func checkFileCut(t *testing.T, isError, hasSC bool, scText func() string, items int, item func(int) string, text string) {
	t.Helper()
	const limit = 100 << 10
	if isError || !hasSC {
		t.Fatalf("isError %v, structuredContent %v: want a result with structuredContent", isError, hasSC)
	}
	start := func(what, s string) {
		t.Helper()
		if len(s) == 0 || len(s) >= limit || !strings.HasSuffix(s, "\n") || !strings.HasPrefix(text, s) {
			t.Errorf("%s: %d bytes, want a start of the %d-byte file ending a line, within the %d-byte cap", what, len(s), len(text), limit)
		}
	}
	start("structuredContent.content", scText())
	if items < 3 {
		t.Fatalf("%d content items, want the text and two notes", items)
	}
	start("content[0].text", item(0))
	if n := len(scText()) + len(item(0)); n > limit {
		t.Errorf("the two texts are %d bytes, over the %d-byte cap", n, limit)
	}
	notes := item(1) + item(2)
	if !strings.Contains(notes, "structuredContent (") || !strings.Contains(notes, "this text was cut") || len(resultURI.FindAllString(notes, -1)) < 2 {
		t.Errorf("notes %q: want one on the structuredContent and one on the text, each with its URI", notes)
	}
}
