package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestToolOverride: tools.override renames and rewords a tool. Clients
// see the new name (prefix still applied), description and annotations;
// a call by the new name, direct or through the proxy tool, reaches the
// server's own tool; the old name is gone. Clash detection runs after
// renames: another server's tool may take the freed name, and a rename
// onto a taken name loses it. An override for a tool the server lacks
// is a warning with a suggestion.
func TestToolOverride(t *testing.T) {
	fxEntry := fx("--name", "fx")
	fxEntry["tools"] = map[string]any{"override": map[string]any{
		"echo": map[string]any{"name": "say", "description": "Says it back.",
			"annotations": map[string]any{"readOnlyHint": false}},
		"eco": map[string]any{"title": "typo"},
	}}
	fxEntry["prompts"] = map[string]any{"override": map[string]any{"greet": map[string]any{"name": "hello"}}}
	fyEntry := fx("--name", "fy")
	fyEntry["prefix"] = "fx" // same prefix: fy's echo may take the freed fx_echo
	fyEntry["tools"] = map[string]any{"override": map[string]any{
		"structured": map[string]any{"name": "say"}, // fx_say is fx's already
	}}
	cfg := writeConfig(t, map[string]any{"expose": "both", "servers": map[string]any{"fx": fxEntry, "fy": fyEntry}})

	c := startServe(t, cfg)
	c.initialize()
	raw, e := c.request("tools/list", map[string]any{})
	if e != nil {
		t.Fatalf("tools/list: %+v", e)
	}
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, tool := range list.Tools {
		byName[tool.Name] = i
	}
	// A rename onto a taken name is said, naming who has it.
	c.waitStderr(20*time.Second, `server fy: tools.override.structured.name: "fx_say" is already tool "echo" of server fx, so this tool is hidden`)
	i, ok := byName["fx_say"]
	if !ok {
		t.Fatalf("tools/list has no fx_say: %s", raw)
	}
	say := list.Tools[i]
	if say.Description != "Says it back." || say.Annotations["readOnlyHint"] != false || say.Annotations["x-annotation"] != "kept" {
		t.Errorf("fx_say = %+v, want the new description, readOnlyHint false and the server's other annotations", say)
	}
	if _, ok := byName["fy_structured"]; ok {
		t.Errorf("fy's structured is listed under its own name too")
	}

	for _, args := range []string{
		`{"action":"call","type":"tool","path":"fx_say","args":{"message":"hi"}}`,
	} {
		if r := c.proxy(t, args); r.IsError || len(r.Content) == 0 || r.Content[0].Text != "hi" {
			t.Errorf("proxy %s = %+v, want the echo tool's hi", args, r)
		}
	}
	res, e := c.request("tools/call", map[string]any{"name": "fx_say", "arguments": map[string]string{"message": "hi"}})
	if e != nil || !strings.Contains(string(res), `"text":"hi"`) || strings.Contains(string(res), `"isError":true`) {
		t.Errorf("tools/call fx_say = %s %+v, want the echo tool's hi", res, e)
	}
	out, errOut, code := runCLI(t, "", "info", "fx_say", "--config", cfg)
	if code != 0 || !strings.Contains(out, "fx_say: tool of server fx (its own name: echo)") || !strings.Contains(out, "Says it back.") ||
		!strings.Contains(out, "Rewritten by servers.fx.tools.override.echo in the config; the server's own text:\n  Echo\n  Echoes the message back") {
		t.Errorf("mcpx info fx_say: exit %d, stdout %q, stderr %q; want both names and the new description", code, out, errOut)
	}
	if _, e := c.request("prompts/get", map[string]any{"name": "fx_hello", "arguments": map[string]string{"name": "Ada"}}); e != nil {
		t.Errorf("prompts/get fx_hello: %+v, want the server's greet prompt", e)
	}

	// fx_echo is free after the rename: fy's echo has it.
	if out, errOut, code := runCLI(t, "", "info", "fx_echo", "--config", cfg); code != 0 || !strings.HasPrefix(out, "fx_echo: tool of server fy") {
		t.Errorf("mcpx info fx_echo: exit %d, stdout %q, stderr %q; want fy's echo", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "", "call", "fx_say", `{"message":"hi"}`, "--config", cfg)
	if code != 0 || strings.TrimSpace(out) != "hi" {
		t.Errorf("mcpx call fx_say: exit %d, stdout %q, stderr %q; want hi", code, out, errOut)
	}
	const warning = `server fx: tools.override.eco: the server has no tool "eco"; did you mean "echo"?`
	if !strings.Contains(errOut, warning) {
		t.Errorf("mcpx call stderr %q, want %q", errOut, warning)
	}
	if strings.Contains(errOut, "tools.override.echo") || strings.Contains(errOut, "tools.override.structured") {
		t.Errorf("mcpx call stderr %q warns about an override that is used", errOut)
	}
}
