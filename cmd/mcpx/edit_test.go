package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// add, disable, enable and remove through the CLI: the file mcpx reads is
// created when there is none, and each step's content is what mcpx then
// loads; secrets stay ${VAR} references.
func TestEditCommands(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("MCPX_CONFIG", "")
	t.Chdir(t.TempDir()) // no ./mcpx.json here
	file := filepath.Join(home, "mcpx", "config.json")

	out, errOut, code := runCLI(t, "", "add", "fx", "--env", "FX_TOKEN=${FX_TOKEN}", "--cwd", "/tmp", "--", fixture, "--name", "fx")
	if code != 0 || !strings.Contains(errOut, "added server fx to "+file) {
		t.Fatalf("add: %d\n%s%s", code, out, errOut)
	}
	want := `{
  "servers": {
    "fx": {
      "command": "` + fixture + `",
      "args": [
        "--name",
        "fx"
      ],
      "env": {
        "FX_TOKEN": "${FX_TOKEN}"
      },
      "cwd": "/tmp"
    }
  }
}
`
	if got := readText(t, file); got != want {
		t.Fatalf("created config:\n%s\nwant:\n%s", got, want)
	}
	_, errOut, code = runCLI(t, "", "add", "fx", "--", "other")
	if code == 0 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("add over fx: %d %s", code, errOut)
	}
	if _, errOut, code = runCLI(t, "", "add", "fx", "--force", "--", "other"); code != 0 || !strings.Contains(readText(t, file), `"command": "other"`) {
		t.Fatalf("add --force: %d %s\n%s", code, errOut, readText(t, file))
	}
	// Back to the first entry, through --force again.
	if _, errOut, code = runCLI(t, "", "add", "fx", "--force", "--env", "FX_TOKEN=${FX_TOKEN}", "--cwd", "/tmp", "--", fixture, "--name", "fx"); code != 0 || readText(t, file) != want {
		t.Fatalf("add --force back: %d %s\n%s", code, errOut, readText(t, file))
	}
	// Usage mistakes are refused before the file is touched.
	for _, args := range [][]string{
		{"add", "x"},
		{"add", "x", "--url", "http://127.0.0.1:9/mcp", "--", "cmd"},
		{"add", "x", "--header", "A=b", "--", "cmd"},
		{"add", "x", "--env", "NOVALUE", "--", "cmd"},
		{"add", "x", "extra"},
	} {
		if _, errOut, code := runCLI(t, "", args...); code == 0 || readText(t, file) != want {
			t.Errorf("%q: exit %d, %s", args, code, errOut)
		}
	}
	_, errOut, code = runCLI(t, "", "add", "remote", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization=Bearer s3cr3t-value")
	if code != 0 || !strings.Contains(errOut, "note: the value of Authorization is written") || strings.Contains(errOut, "s3cr3t") {
		t.Fatalf("add remote: %d %s", code, errOut)
	}
	withRemote := readText(t, file)

	// The server runs from the written config (${FX_TOKEN} from the env).
	t.Setenv("FX_TOKEN", "tok-123")
	out, errOut, code = runCLI(t, "", "call", "fx_env", `{"name":"FX_TOKEN"}`)
	if code != 0 || !strings.Contains(out, "tok-123") {
		t.Fatalf("call through the added server: %d\n%s%s", code, out, errOut)
	}

	_, errOut, code = runCLI(t, "", "disable", "fx")
	if code != 0 {
		t.Fatalf("disable: %d %s", code, errOut)
	}
	if got := readText(t, file); !strings.Contains(got, `"cwd": "/tmp",
      "enabled": false
    },`) {
		t.Fatalf("after disable:\n%s", got)
	}
	out, _, _ = runCLI(t, "", "servers", "--json")
	var servers []serverJSON
	if err := json.Unmarshal([]byte(out), &servers); err != nil || len(servers) != 2 || servers[0].Name != "fx" || servers[0].State != "disabled" {
		t.Fatalf("servers after disable: %v %s", err, out)
	}
	if _, errOut, code = runCLI(t, "", "enable", "fx"); code != 0 {
		t.Fatalf("enable: %d %s", code, errOut)
	}
	if got := readText(t, file); got != withRemote {
		t.Fatalf("disable then enable changed the file:\n%s\nwant:\n%s", got, withRemote)
	}
	if _, errOut, code = runCLI(t, "", "remove", "remote"); code != 0 {
		t.Fatalf("remove: %d %s", code, errOut)
	}
	if got := readText(t, file); got != want {
		t.Fatalf("after remove:\n%s\nwant:\n%s", got, want)
	}
	if _, errOut, code = runCLI(t, "", "remove", "remote"); code == 0 || !strings.Contains(errOut, "no such server") {
		t.Fatalf("remove twice: %d %s", code, errOut)
	}
	// An edit that would not load is refused and the file kept.
	if _, errOut, code = runCLI(t, "", "add", "bad", "--url", "ftp://x"); code == 0 || !strings.Contains(errOut, "would not load") {
		t.Fatalf("invalid add: %d %s", code, errOut)
	}
	if got := readText(t, file); got != want {
		t.Fatal("an invalid add changed the file")
	}
}

// Editing a JSONC file keeps its comments and layout.
func TestEditKeepsComments(t *testing.T) {
	src := "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, /* keep */\n  },\n  \"expose\": \"direct\",\n}\n"
	p := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI(t, "", "--config", p, "add", "b", "--", "b-mcp"); code != 0 {
		t.Fatalf("add: %s", errOut)
	}
	want := "{\n  // mine\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, /* keep */\n    \"b\": {\n      \"command\": \"b-mcp\"\n    },\n  },\n  \"expose\": \"direct\",\n}\n"
	if got := readText(t, p); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, errOut, code := runCLI(t, "", "--config", p, "remove", "b"); code != 0 {
		t.Fatalf("remove: %s", errOut)
	}
	if got := readText(t, p); got != src {
		t.Fatalf("add then remove:\n%s\nwant:\n%s", got, src)
	}
}

func readText(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// add warns about what would keep the server from starting, and adds it
// all the same: a command not on PATH, a ${VAR} that is not set here.
func TestAddWarns(t *testing.T) {
	if _, ok := os.LookupEnv(unsetVar); ok {
		t.Skipf("%s is set", unsetVar)
	}
	t.Setenv("MCPX_TEST_SET_31", "s3cret-value")
	file := filepath.Join(t.TempDir(), "mcpx.json")
	if err := os.WriteFile(file, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // each a warning line's part; none for no warning
	}{
		{"missing command", []string{"--", "mcpx-no-such-command-31", "--x"},
			[]string{`warning: command "mcpx-no-such-command-31" not found on PATH: the server will fail to start`}},
		{"unset variable", []string{"--env", "GITHUB_TOKEN=${" + unsetVar + "}", "--env", "OK=${MCPX_TEST_SET_31}", "--", fixture},
			[]string{"warning: " + unsetVar + " is not set (env GITHUB_TOKEN) here"}},
		{"unset in a header", []string{"--url", "https://example.com/mcp", "--header", "Authorization=Bearer ${" + unsetVar + "}"},
			[]string{"warning: " + unsetVar + " is not set (headers Authorization) here"}},
		{"sound", []string{"--env", "OK=${MCPX_TEST_SET_31}", "--", fixture}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			_, errOut, code := runCLI(t, "", append([]string{"--config", file, "add", name}, tc.args...)...)
			if code != 0 || !strings.Contains(readText(t, file), `"`+name+`": {`) {
				t.Fatalf("add: exit %d, want 0 and the server added\n%s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tc.want == nil && strings.Contains(errOut, "warning") {
				t.Errorf("a warning for a sound server:\n%s", errOut)
			}
			if strings.Contains(errOut, "s3cret") {
				t.Errorf("stderr shows a value:\n%s", errOut)
			}
		})
	}
}
