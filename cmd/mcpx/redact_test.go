package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsRedactedEverywhere: a key in a URL's query or user info, and
// an env value that an upstream echoes in its errors (the fixture's
// --leak-env), reach no output: not the servers table or its JSON, not the
// logs, not `mcpx call`, and not a client over serve, whether the upstream
// answers with a JSON-RPC error (message and data) or an isError result.
func TestSecretsRedactedEverywhere(t *testing.T) {
	const envKey, queryKey, user, password = "env-key-0123456789", "query-key-98765", "url-user-x", "url-pass-y"
	secrets := []string{envKey, queryKey, user, password}
	logFile := filepath.Join(t.TempDir(), "mcpx.log")
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"leaky": map[string]any{"command": fixture, "args": []string{"--leak-env", "API_KEY"}, "timeout": "5s",
			"env": map[string]string{"API_KEY": envKey}},
		"remote": map[string]any{"url": "http://" + user + ":" + password + "@127.0.0.1:1/mcp?api_key=" + queryKey + "&v=1",
			"timeout": "2s"},
	}})
	var outputs []string
	check := func(what, text string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s leaks %q:\n%s", what, s, text)
			}
		}
		outputs = append(outputs, text)
	}

	out, errOut, _ := runCLI(t, "", "servers", "--json", "--log-level", "debug", "--config", cfg)
	check("servers --json", out+errOut)
	if !strings.Contains(out, `"remote"`) || !strings.Contains(out, "[redacted]") {
		t.Errorf("servers --json does not show the remote's redacted error:\n%s", out)
	}
	out, errOut, _ = runCLI(t, "", "servers", "--log-level", "debug", "--log-file", logFile, "--config", cfg)
	check("servers table", out+errOut)
	logged, err := os.ReadFile(logFile)
	if err != nil || len(logged) == 0 {
		t.Fatalf("--log-file got no logs (%v)", err)
	}
	check("log file", string(logged))

	out, errOut, code := runCLI(t, "", "call", "--config", cfg, "leaky_fail")
	check("call (isError)", out+errOut)
	if code != 1 || !strings.Contains(out, "(API_KEY=[redacted])") {
		t.Errorf("call leaky_fail: exit %d, out %q, err %q; want the failure with the key redacted", code, out, errOut)
	}
	out, errOut, _ = runCLI(t, "", "call", "--config", cfg, "--json", "leaky_fail")
	check("call --json", out+errOut)

	c := startServe(t, writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"leaky": map[string]any{"command": fixture, "args": []string{"--leak-env", "API_KEY"}, "timeout": "5s",
			"env": map[string]string{"API_KEY": envKey}},
	}}), "--log-level", "debug")
	c.initialize()
	res, _ := c.request("tools/call", map[string]any{"name": "leaky_fail"})
	if !strings.Contains(string(res), "[redacted]") {
		t.Errorf("tools/call leaky_fail = %s, want the key redacted", res)
	}
	// greet without its required argument: the fixture answers -32602
	// with the key in the message and in data.
	_, rpcErr := c.request("prompts/get", map[string]any{"name": "leaky_greet"})
	if rpcErr == nil || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, "[redacted]") || !strings.Contains(string(rpcErr.Data), "[redacted]") {
		t.Errorf("prompts/get error = %+v, want -32602 with the key redacted in message and data", rpcErr)
	}
	for _, line := range c.stdoutLines() {
		check("serve stdout", string(line))
	}
	check("serve stderr", c.stderr.String())
}
