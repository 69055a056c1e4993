package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListTools(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx":   fx("--name", "fx"),
		"down": map[string]any{"command": "/no/such/server"},
	}})

	// The working server's tools, and exit 1: a server failed.
	out, errOut, code := runCLI(t, "", "list", "tools", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errOut)
	}
	// In a pipe: one tab-separated row per tool: name, server, first line.
	var echo string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "fx_echo\t") {
			echo = line
		}
	}
	if echo != "fx_echo\tfx\tEchoes the message back as text with annotations and _meta." {
		t.Errorf("echo row = %q", echo)
	}
	if !strings.Contains(errOut, "down") || !strings.Contains(errOut, "no such file") {
		t.Errorf("stderr should say the server down failed:\n%s", errOut)
	}

	out, _, code = runCLI(t, "", "list", "tools", "--json", "--config", cfg)
	if code != 1 {
		t.Fatal(code)
	}
	var tools []map[string]any
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("--json: %v", err)
	}
	if len(tools) != 10 {
		t.Errorf("got %d tools, want the fixture's 10", len(tools))
	}
	for _, tl := range tools {
		if tl["server"] != "fx" || tl["inputSchema"] == nil || !strings.HasPrefix(tl["name"].(string), "fx_") {
			t.Errorf("tool object %v: want server fx, an inputSchema and the prefixed name", tl["name"])
		}
	}
}

func TestListResourcesAndPrompts(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx()}})
	out, _, code := runCLI(t, "", "list", "resources", "--json", "--config", cfg)
	if code != 0 {
		t.Fatal(code)
	}
	var items []map[string]any
	json.Unmarshal([]byte(out), &items)
	var uris, templates int
	for _, it := range items {
		if it["uri"] != nil {
			uris++
		}
		if it["uriTemplate"] == "fixture://items/{id}" {
			templates++
		}
	}
	if uris != 4 || templates != 1 {
		t.Errorf("resources: %d uris and %d templates, want 4 and 1:\n%s", uris, templates, out)
	}
	out, _, _ = runCLI(t, "", "list", "prompts", "--config", cfg)
	if !strings.HasPrefix(out, "fx_greet\tfx\t") {
		t.Errorf("prompts = %q", out)
	}
}

func TestServersStatus(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx":       fx("--name", "fx"),
		"exits":    fx("--exit-at-start", "3"),
		"off":      map[string]any{"command": fixture, "enabled": false},
		"remote":   map[string]any{"url": "http://127.0.0.1:1/mcp", "timeout": "2s"},
		"oldstyle": map[string]any{"url": "http://127.0.0.1:1/sse", "timeout": "2s"},
	}})
	// Servers failed: the exit status says so, and --json keeps the detail.
	out, errOut, code := runCLI(t, "", "servers", "--json", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (servers failed): %s", code, errOut)
	}
	var got []serverJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	by := map[string]serverJSON{}
	for _, s := range got {
		by[s.Name] = s
	}
	if s := by["fx"]; s.State != "ready" || s.Transport != "stdio" || s.Tools != 10 || s.Prompts != 1 || s.Resources != 4 || s.ConnectMillis < 0 || s.Server != "fx" {
		t.Errorf("fx = %+v", s)
	}
	if s := by["exits"]; s.State != "failed" || !strings.Contains(s.Error, "exit status 3") {
		t.Errorf("exits = %+v", s)
	}
	if s := by["off"]; s.State != "disabled" {
		t.Errorf("off = %+v", s)
	}
	if s := by["remote"]; s.State != "failed" || s.Transport != "http" || s.Error == "" {
		t.Errorf("remote = %+v", s)
	}
	if s := by["oldstyle"]; s.State != "failed" || s.Transport != "sse" {
		t.Errorf("oldstyle = %+v", s)
	}

	out, _, _ = runCLI(t, "", "servers", "--config", cfg)
	if !strings.Contains(out, "fx\tstdio\tready\t10\t5\t1\t") {
		t.Errorf("servers table lacks the fx row:\n%s", out)
	}
}

func TestCall(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx()}})
	argsFile := filepath.Join(t.TempDir(), "args.json")
	os.WriteFile(argsFile, []byte(`{"message":"from a file"}`), 0o600)

	for _, tc := range []struct {
		name     string
		stdin    string
		args     []string
		code     int
		out, err string
	}{
		{"inline", "", []string{"fx_echo", `{"message":"hi"}`}, 0, "hi\n", ""},
		{"stdin", `{"message":"piped"}`, []string{"fx_echo", "-"}, 0, "piped\n", ""},
		{"file", "", []string{"fx_echo", "--args-file", argsFile}, 0, "from a file\n", ""},
		{"isError", "", []string{"fx_fail"}, 1, "fixture failure: as requested\n", "reported an error"},
		{"image", "", []string{"fx_image"}, 0, "[image image/png, ", ""},
		{"not an object", "", []string{"fx_echo", `[1,2]`}, 2, "", "must be a JSON object"},
		{"bad json", "", []string{"fx_echo", `{"message":`}, 2, "", "not valid JSON"},
		{"unknown tool", "", []string{"fx_nope"}, 2, "", `unknown tool "fx_nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tc.stdin, append([]string{"call", "--config", cfg}, tc.args...)...)
			if code != tc.code || !strings.HasPrefix(out, tc.out) || !strings.Contains(errOut, tc.err) {
				t.Errorf("exit %d, out %q, err %q; want exit %d, out starting %q, err containing %q",
					code, out, errOut, tc.code, tc.out, tc.err)
			}
		})
	}

	out, _, code := runCLI(t, "", "call", "--config", cfg, "--json", "fx_structured")
	var res map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res["structuredContent"] == nil {
		t.Errorf("--json: exit %d, %s", code, out)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"syntax", write("bad.json", "{\n  \"servers\": {\"a\": }\n}"), []string{"bad.json", "line 2"}},
		{"transport", write("t.json", `{"servers":{"s1":{"url":"http://x/mcp","transport":"ftp"}}}`), []string{"t.json", "s1", "transport"}},
		{"neither", write("n.json", `{"servers":{"s2":{"args":["x"]}}}`), []string{"n.json", "s2", "command"}},
		{"timeout", write("d.json", `{"servers":{"s3":{"command":"x","timeout":"soon"}}}`), []string{"d.json", "s3", "timeout"}},
		{"yaml", write("y.yaml", "servers:\n  s4: [\n"), []string{"y.yaml"}},
		{"missing file", filepath.Join(dir, "absent.json"), []string{"absent.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, "", "list", "tools", "--config", tc.file)
			if code == 0 {
				t.Fatalf("exit 0 for a bad config")
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("error %q does not name %q", errOut, w)
				}
			}
		})
	}
}

func TestNoConfigIsEmptyCatalog(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("MCPX_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	out, errOut, code := runCLI(t, "", "list", "tools", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" || !strings.Contains(errOut, "no config file") {
		t.Errorf("exit %d, out %q, err %q", code, out, errOut)
	}
}

// TestSecretsNeverLogged: env values, header values and ${VAR} values stay
// out of every log line and error, even when an upstream prints them.
func TestSecretsNeverLogged(t *testing.T) {
	t.Setenv("MCPX_TEST_TOKEN", "tok-1234567890")
	logFile := filepath.Join(t.TempDir(), "mcpx.log")
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{
		"leaky": map[string]any{"command": fixture,
			"args": []string{"--stderr", "my key is key-abcdef-secret and token tok-1234567890"},
			"env":  map[string]string{"API_KEY": "key-abcdef-secret"}},
		"remote": map[string]any{"url": "http://127.0.0.1:1/mcp", "timeout": "2s",
			"headers": map[string]string{"Authorization": "Bearer ${MCPX_TEST_TOKEN}"}},
		"crashy": map[string]any{"command": fixture, "args": []string{"--exit-at-start", "2", "--stderr", "key-abcdef-secret"},
			"env": map[string]string{"API_KEY": "key-abcdef-secret"}},
	}})
	out, errOut, _ := runCLI(t, "", "servers", "--json", "--log-level", "debug", "--config", cfg)
	_, _, _ = runCLI(t, "", "list", "tools", "--log-level", "debug", "--log-file", logFile, "--config", cfg)
	logged, _ := os.ReadFile(logFile)
	if !strings.Contains(errOut, "[redacted]") {
		t.Errorf("expected the leaky server's stderr to be logged with redaction:\n%s", errOut)
	}
	for _, text := range []string{out, errOut, string(logged)} {
		for _, secret := range []string{"key-abcdef-secret", "tok-1234567890"} {
			if strings.Contains(text, secret) {
				t.Errorf("secret %q leaked:\n%s", secret, text)
			}
		}
	}
	if len(logged) == 0 {
		t.Errorf("--log-file got no logs")
	}
}
