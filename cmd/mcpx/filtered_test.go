package main

import (
	"maps"
	"strings"
	"testing"
)

// TestFilteredOutSaysSo: a tool or prompt that a deny filter hides, or an
// allow filter leaves out, is not just unknown: mcpx call and get, the
// proxy tool's call and info, and a client's tools/call and prompts/get
// all say which config list keeps it out.
func TestFilteredOutSaysSo(t *testing.T) {
	withFilters := func(args map[string]any, filters map[string]any) map[string]any {
		maps.Copy(args, filters)
		return args
	}
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx": withFilters(fx("--name", "fx"), map[string]any{
			"tools":   map[string]any{"deny": []string{"ech*"}},
			"prompts": map[string]any{"deny": []string{"greet"}},
		}),
		"fy": withFilters(fx("--name", "fy"), map[string]any{
			"tools": map[string]any{"allow": []string{"fail"}},
		}),
	}})
	const (
		denied  = `tool "fx_echo" is filtered out by servers.fx.tools.deny in the config`
		allowed = `tool "fy_echo" is filtered out by servers.fy.tools.allow in the config`
		prompt  = `prompt "fx_greet" is filtered out by servers.fx.prompts.deny in the config`
	)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"call", "fx_echo", `{"message":"hi"}`}, denied},
		{[]string{"call", "fy_echo", `{"message":"hi"}`}, allowed},
		{[]string{"get", "fx_greet", "--arg", "name=Ada"}, prompt},
		{[]string{"info", "fx_echo"}, denied},
	} {
		out, errOut, code := runCLI(t, "", append(tc.args, "--config", cfg)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("mcpx %s: exit %d, stdout %q, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}

	c := startServe(t, cfg)
	c.initialize()
	for _, tc := range []struct{ args, want string }{
		{`{"action":"call","type":"tool","path":"fx_echo","args":{"message":"hi"}}`, denied},
		{`{"action":"info","type":"tool","path":"fx_echo"}`, denied},
		{`{"action":"call","type":"tool","path":"fy_echo","args":{"message":"hi"}}`, allowed},
		{`{"action":"call","type":"prompt","path":"fx_greet","args":{"name":"Ada"}}`, prompt},
	} {
		r := c.proxy(t, tc.args)
		if !r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, tc.want) {
			t.Errorf("proxy %s = %+v, want an error saying %q", tc.args, r, tc.want)
		}
	}
	res, e := c.request("tools/call", map[string]any{"name": "fx_echo", "arguments": map[string]string{"message": "hi"}})
	if e != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), strings.ReplaceAll(denied, `"`, `\"`)) {
		t.Errorf("tools/call fx_echo = %s %+v, want an isError result saying %q", res, e, denied)
	}
	if _, e := c.request("prompts/get", map[string]any{"name": "fx_greet", "arguments": map[string]string{"name": "Ada"}}); e == nil || !strings.Contains(e.Message, prompt) {
		t.Errorf("prompts/get fx_greet: error %+v, want one saying %q", e, prompt)
	}
	// What the filters let through still works.
	if r := c.proxy(t, `{"action":"call","type":"tool","path":"fx_structured","args":{}}`); r.IsError {
		t.Errorf("proxy call fx_structured = %+v", r)
	}
}
