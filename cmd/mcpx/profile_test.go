package main

import (
	"slices"
	"strings"
	"testing"
	"time"
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
	if e == nil && !strings.Contains(string(res), `"isError":true`) {
		t.Errorf("tools/call fy_echo in profile a = %s, want an error", res)
	}
	if r := c.proxy(t, `{"action":"call","type":"tool","path":"fy_echo","args":{"message":"hi"}}`); !r.IsError {
		t.Errorf("proxy call fy_echo in profile a = %+v, want an error", r)
	}
	if r := c.proxy(t, `{"action":"call","type":"tool","path":"fx_echo","args":{"message":"hi"}}`); r.IsError {
		t.Errorf("proxy call fx_echo in profile a = %+v", r)
	}

	doc["profiles"].(map[string]any)["a"] = map[string]any{"servers": []string{"fy"}}
	saveByRename(t, cfg, doc)
	if !c.waitNotification("notifications/tools/list_changed", 20*time.Second) {
		t.Fatalf("no list_changed after the profile changed; stderr:\n%s", c.stderr.String())
	}
	names = c.listToolNames()
	if !slices.Contains(names, "fy_echo") || slices.Contains(names, "fx_echo") {
		t.Errorf("after the reload profile a lists %v, want fy's tools only", names)
	}
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
	if _, errOut, code := runCLI(t, "", "call", "fy_echo", `{"message":"hi"}`, "--profile", "a", "--config", cfg); code != 2 {
		t.Errorf("call fy_echo --profile a: exit %d, stderr %q; want 2", code, errOut)
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
