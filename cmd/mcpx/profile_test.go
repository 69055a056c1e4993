package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// profilesDoc is a config with two fixture servers and two profiles: a
// shows fx without its fail tool, b shows fy only.
func profilesDoc() map[string]any {
	return map[string]any{"expose": "both",
		"servers": map[string]any{"fx": fx("--name", "fx"), "fy": fx("--name", "fy")},
		"profiles": map[string]any{
			"a": map[string]any{"servers": []string{"fx"}, "tools": map[string]any{"deny": []string{"fx_fail"}}},
			"b": map[string]any{"servers": []string{"fy"}},
		}}
}

// TestProfileStdio: serve --profile shows only the profile's tools, and a
// tool outside it is not callable, directly or through proxy. A reload
// that changes the profile reaches the running session with list_changed.
func TestProfileStdio(t *testing.T) {
	doc := profilesDoc()
	cfg := writeConfig(t, doc)
	c := startServe(t, cfg, "--profile", "a")
	c.initialize()
	names := c.listToolNames()
	if !slices.Contains(names, "fx_echo") || slices.Contains(names, "fx_fail") || slices.Contains(names, "fy_echo") {
		t.Fatalf("profile a lists %v, want fx's tools but fx_fail", names)
	}
	res, e := c.request("tools/call", map[string]any{"name": "fy_echo", "arguments": map[string]string{"message": "hi"}})
	const notIn = `tool "fy_echo" is not in profile a (profiles.a in the config)`
	if e != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), strings.ReplaceAll(notIn, `"`, `\"`)) {
		t.Errorf("tools/call fy_echo in profile a = %s %+v, want an error saying %q", res, e, notIn)
	}
	if r := c.proxy(t, `{"action":"call","type":"tool","path":"fy_echo","args":{"message":"hi"}}`); !r.IsError || !strings.Contains(r.Content[0].Text, notIn) {
		t.Errorf("proxy call fy_echo in profile a = %+v, want an error saying %q", r, notIn)
	}
	if r := c.proxy(t, `{"action":"call","type":"tool","path":"fx_echo","args":{"message":"hi"}}`); r.IsError {
		t.Errorf("proxy call fx_echo in profile a = %+v", r)
	}

	doc["profiles"].(map[string]any)["a"] = map[string]any{"servers": []string{"fy"}}
	// A list_changed from before the reload (a server that connected
	// late) may already be in: the one that matters comes after it.
	before := c.countNotes("notifications/tools/list_changed")
	saveByRename(t, cfg, doc)
	testenv.Eventually(t, 20*time.Second, func() bool {
		names = c.listToolNames() // and records the notifications before its answer
		return c.countNotes("notifications/tools/list_changed") > before &&
			slices.Contains(names, "fy_echo") && !slices.Contains(names, "fx_echo")
	}, "after the profile changed: no list_changed followed by fy's tools only (last list %v); stderr:\n%s", &names, c.stderr)
}

// TestProfileTerminal: terminal commands take --profile and MCPX_PROFILE;
// an unknown profile, or a profile naming an unknown server, is a usage
// error (exit 2) that says what there is.
func TestProfileTerminal(t *testing.T) {
	cfg := writeConfig(t, profilesDoc())
	out, errOut, code := runCLI(t, "", "list", "tools", "--profile", "a", "--config", cfg)
	if code != 0 || !strings.Contains(out, "fx_echo") || strings.Contains(out, "fy_echo") || strings.Contains(out, "fx_fail") {
		t.Errorf("list tools --profile a: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "", "call", "fy_echo", `{"message":"hi"}`, "--profile", "a", "--config", cfg); code != 2 ||
		!strings.Contains(errOut, `tool "fy_echo" is not in profile a`) {
		t.Errorf("call fy_echo --profile a: exit %d, stderr %q; want 2 saying it is not in profile a", code, errOut)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // completion reads remembered catalogs
	runCLI(t, "", "list", "tools", "--config", cfg)
	out, _, _ = runCLI(t, "", "__complete", "--config", cfg, "--profile", "a", "call", "f")
	if !strings.Contains(out, "fx_echo") || strings.Contains(out, "fy_echo") {
		t.Errorf("completion of call f with --profile a = %q, want fx's tools only", out)
	}
	t.Setenv("MCPX_PROFILE", "b")
	out, errOut, code = runCLI(t, "", "list", "tools", "--config", cfg)
	if code != 0 || !strings.Contains(out, "fy_echo") || strings.Contains(out, "fx_echo") {
		t.Errorf("list tools with MCPX_PROFILE=b: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "", "list", "tools", "--profile", "codng", "--config", cfg)
	if code != 2 || out != "" || !strings.Contains(errOut, `--profile: unknown profile "codng" (the profiles: a, b)`) {
		t.Errorf("list tools --profile codng: exit %d, stdout %q, stderr %q; want 2 naming a and b", code, out, errOut)
	}

	doc := profilesDoc()
	doc["profiles"].(map[string]any)["b"] = map[string]any{"servers": []string{"fz"}}
	bad := writeConfig(t, doc)
	_, errOut, code = runCLI(t, "", "list", "tools", "--config", bad)
	if code != 2 || !strings.Contains(errOut, `profiles.b.servers[0]: unknown server "fz"; did you mean fx?`) {
		t.Errorf("profile with an unknown server: exit %d, stderr %q; want 2 and a suggestion", code, errOut)
	}
}

// TestProfileHTTP: two clients of one serve --http, at /mcp/a and
// /mcp/b, see different tool sets at the same time; /mcp sees all; an
// unknown profile is a 404 naming the profiles; a session belongs to the
// path it began at.
func TestProfileHTTP(t *testing.T) {
	doc := profilesDoc()
	cfg := writeConfig(t, doc)
	srv := startHTTP(t, cfg, nil)
	hdr := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	open := func(path string) map[string]string {
		code, h, body := do(t, "POST", srv.url+path, hdr, initBody)
		id := h.Get("Mcp-Session-Id")
		if code != 200 || id == "" {
			t.Fatalf("initialize at %s: %d %q; stderr:\n%s", path, code, body, srv.stderr.String())
		}
		sh := map[string]string{"Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"}
		for k, v := range hdr {
			sh[k] = v
		}
		do(t, "POST", srv.url+path, sh, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return sh
	}
	list := func(path string, sh map[string]string) string {
		code, _, body := do(t, "POST", srv.url+path, sh, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if code != 200 {
			t.Fatalf("tools/list at %s: %d %q", path, code, body)
		}
		return body
	}
	a, b, all := open("/mcp/a"), open("/mcp/b"), open("/mcp")
	for range 2 { // both sessions stay live side by side
		if got := list("/mcp/a", a); !strings.Contains(got, `"fx_echo"`) || strings.Contains(got, `"fy_echo"`) || strings.Contains(got, `"fx_fail"`) {
			t.Errorf("/mcp/a lists %s, want fx's tools but fx_fail", got)
		}
		if got := list("/mcp/b", b); !strings.Contains(got, `"fy_echo"`) || strings.Contains(got, `"fx_echo"`) {
			t.Errorf("/mcp/b lists %s, want fy's tools only", got)
		}
	}
	if got := list("/mcp", all); !strings.Contains(got, `"fx_echo"`) || !strings.Contains(got, `"fy_echo"`) {
		t.Errorf("/mcp lists %s, want every tool", got)
	}
	_, _, body := do(t, "POST", srv.url+"/mcp/a", a, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fy_echo","arguments":{"message":"hi"}}}`)
	if !strings.Contains(body, `"isError":true`) && !strings.Contains(body, `"error"`) {
		t.Errorf("tools/call fy_echo at /mcp/a = %s, want an error", body)
	}
	if code, _, body := do(t, "POST", srv.url+"/mcp/b", a, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); code != 404 {
		t.Errorf("/mcp/a's session at /mcp/b: %d %q, want 404", code, body)
	}
	if code, _, body := do(t, "POST", srv.url+"/mcp/nope", hdr, initBody); code != 404 || !strings.Contains(body, `unknown profile \"nope\" (the profiles: a, b)`) {
		t.Errorf("/mcp/nope: %d %q, want 404 naming a and b", code, body)
	}

	// A reload reaches the running /mcp/b session.
	doc["profiles"].(map[string]any)["b"] = map[string]any{"servers": []string{"fx"}}
	saveByRename(t, cfg, doc)
	testenv.Eventually(t, 20*time.Second, func() bool {
		got := list("/mcp/b", b)
		return strings.Contains(got, `"fx_echo"`) && !strings.Contains(got, `"fy_echo"`)
	}, "/mcp/b still lists fy's tools after profile b changed to fx; stderr:\n%s", srv.stderr.String())
}

// TestProfileModern: the Go SDK's modern client at /mcp/a and /mcp/b
// stays on revision 2026-07-28, served statelessly, and sees only the
// profile's tools: a tool outside the profile is not callable.
func TestProfileModern(t *testing.T) {
	srv := startHTTP(t, writeConfig(t, profilesDoc()), nil)
	ctx := t.Context()
	for path, want := range map[string]struct{ has, hasNot []string }{
		"/mcp/a": {[]string{"fx_echo", "proxy"}, []string{"fx_fail", "fy_echo"}},
		"/mcp/b": {[]string{"fy_echo"}, []string{"fx_echo"}},
		"/mcp":   {[]string{"fx_echo", "fy_echo", "fx_fail"}, nil},
	} {
		client := mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.url + path, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatalf("%s: %v; stderr:\n%s", path, err, srv.stderr.String())
		}
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Errorf("%s: negotiated %q, want 2026-07-28", path, v)
		}
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatalf("%s: tools/list: %v", path, err)
			}
			names = append(names, tool.Name)
		}
		checkNames(t, path, names, want.has, want.hasNot)
		if path == "/mcp/b" {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": "hi"}})
			if err == nil && !res.IsError {
				t.Errorf("tools/call fx_echo at /mcp/b = %+v, want an error", res)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fy_echo", Arguments: map[string]any{"message": "hi"}})
			if err != nil || res.IsError {
				t.Errorf("tools/call fy_echo at /mcp/b = %+v, %v", res, err)
			}
		}
		cs.Close()
	}
}

// TestProfileSSE: /sse/NAME serves a profile on the legacy SSE transport,
// seen by the official Go SDK's SSE client: each path lists its profile's
// tools, /sse the whole catalog, and an unknown profile does not connect.
func TestProfileSSE(t *testing.T) {
	srv := startHTTP(t, writeConfig(t, profilesDoc()), nil)
	ctx := t.Context()
	tools := func(path string) ([]string, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "sse-test", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: srv.url + path}, nil)
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return nil, err
			}
			names = append(names, tool.Name)
		}
		return names, nil
	}
	for path, want := range map[string]struct{ has, hasNot []string }{
		"/sse/a": {[]string{"fx_echo", "proxy"}, []string{"fx_fail", "fy_echo"}},
		"/sse/b": {[]string{"fy_echo"}, []string{"fx_echo"}},
		"/sse":   {[]string{"fx_echo", "fy_echo", "fx_fail"}, nil},
	} {
		names, err := tools(path)
		if err != nil {
			t.Fatalf("%s: %v; stderr:\n%s", path, err, srv.stderr.String())
		}
		checkNames(t, path, names, want.has, want.hasNot)
	}
	if _, err := tools("/sse/nope"); err == nil {
		t.Error("/sse/nope connected, want an unknown profile refused")
	}
	if code, _, body := do(t, "GET", srv.url+"/sse/nope", map[string]string{"Accept": "text/event-stream"}, ""); code != 404 || !strings.Contains(body, "the profiles: a, b") {
		t.Errorf("GET /sse/nope: %d %q, want 404 naming a and b", code, body)
	}
}

// checkNames checks that the tools a path lists include has and none of
// hasNot.
func checkNames(t *testing.T, path string, names, has, hasNot []string) {
	t.Helper()
	for _, n := range has {
		if !slices.Contains(names, n) {
			t.Errorf("%s lists %v, without %s", path, names, n)
		}
	}
	for _, n := range hasNot {
		if slices.Contains(names, n) {
			t.Errorf("%s lists %v, with %s", path, names, n)
		}
	}
}
