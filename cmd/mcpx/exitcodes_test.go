package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestExitCodes runs the built binary for every command over success,
// usage error and failure, and checks the exit status the help and the
// README promise: 0 success; 1 a call failed, a tool reported an error or
// a server failed; 2 a usage or config error.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	failing := writeConfig(t, map[string]any{"servers": map[string]any{
		"fx": fx("--name", "fx"), "down": map[string]any{"command": "/no/such/server"}}})
	broken := write("broken.json", `{"servers": {"x": {"url": "ftp://x"}}}`)

	// Each case runs with a config of its own: the editing commands change
	// it. "CFG" in args is its path.
	const edited = `{"servers": {"fx": {"command": "fx"}, "remote": {"url": "http://127.0.0.1:9/mcp"}}}`
	for _, tc := range []struct {
		name   string
		config string // the config's path, or its text (copied per case) when it starts with "{"
		args   []string
		env    []string
		want   int
	}{
		{"unknown command", good, []string{"nosuch"}, nil, 2},
		{"unknown flag", good, []string{"list", "tools", "--nosuch"}, nil, 2},
		{"config that does not load", broken, []string{"list", "tools", "--config", "CFG"}, nil, 2},

		{"version", good, []string{"version"}, nil, 0},
		{"version: extra argument", good, []string{"version", "x"}, nil, 2},

		{"list", good, []string{"list", "tools", "--config", "CFG"}, nil, 0},
		{"list: unknown kind", good, []string{"list", "nosuch", "--config", "CFG"}, nil, 2},
		{"list: unknown server", good, []string{"list", "tools", "--server", "nosuch", "--config", "CFG"}, nil, 2},
		{"list: a server failed", failing, []string{"list", "tools", "--config", "CFG"}, nil, 1},
		{"list: only the working server", failing, []string{"list", "tools", "--server", "fx", "--config", "CFG"}, nil, 0},

		{"call", good, []string{"call", "fx_echo", `{"message":"hi"}`, "--config", "CFG"}, nil, 0},
		{"call: arguments not JSON", good, []string{"call", "fx_echo", "not json", "--config", "CFG"}, nil, 2},
		{"call: unknown tool", good, []string{"call", "fx_nosuch", "{}", "--config", "CFG"}, nil, 2},
		{"call: tool error", good, []string{"call", "fx_fail", "{}", "--config", "CFG"}, nil, 1},

		{"info", good, []string{"info", "fx_echo", "--config", "CFG"}, nil, 0},
		{"info: unknown name", good, []string{"info", "fx_nosuch", "--config", "CFG"}, nil, 2},
		{"info: no name", good, []string{"info", "--config", "CFG"}, nil, 2},

		{"read", good, []string{"read", "fixture://readme", "--config", "CFG"}, nil, 0},
		{"read: unknown resource", good, []string{"read", "fixture://nosuch", "--config", "CFG"}, nil, 2},
		{"read: binary without -o", good, []string{"read", "fixture://blob", "--config", "CFG"}, nil, 2},

		{"get", good, []string{"get", "fx_greet", "--arg", "name=Ada", "--config", "CFG"}, nil, 0},
		{"get: missing argument", good, []string{"get", "fx_greet", "--config", "CFG"}, nil, 2},
		{"get: the server refuses", good, []string{"get", "fx_greet", "--arg", "name=", "--config", "CFG"}, nil, 1},

		{"servers", good, []string{"servers", "--config", "CFG"}, nil, 0},
		{"servers: extra argument", good, []string{"servers", "x", "--config", "CFG"}, nil, 2},
		{"servers: a server failed", failing, []string{"servers", "--config", "CFG"}, nil, 1},

		{"doctor", good, []string{"doctor", "--config", "CFG"}, nil, 0},
		{"doctor: extra argument", good, []string{"doctor", "x", "--config", "CFG"}, nil, 2},
		{"doctor: a server failed", failing, []string{"doctor", "--config", "CFG"}, nil, 1},
		{"doctor: config that does not load", broken, []string{"doctor", "--config", "CFG"}, nil, 2},

		{"add", edited, []string{"add", "new", "--config", "CFG", "--", "new-mcp"}, nil, 0},
		{"add: existing name", edited, []string{"add", "fx", "--config", "CFG", "--", "other"}, nil, 2},
		{"add: empty name", edited, []string{"add", "", "--config", "CFG", "--", "other"}, nil, 2},
		{"add: no command", edited, []string{"add", "new", "--config", "CFG"}, nil, 2},
		{"add: result would not load", edited, []string{"add", "new", "--url", "ftp://x", "--config", "CFG"}, nil, 2},
		// No file yet, and its directory cannot be made: not even root
		// may create one in /proc.
		{"add: cannot write", good, []string{"add", "new", "--", "new-mcp"}, []string{"MCPX_CONFIG=", "XDG_CONFIG_HOME=/proc"}, 1},
		{"auth: unknown command", good, []string{"auth", "nosuch"}, nil, 2},
		{"remove", edited, []string{"remove", "fx", "--config", "CFG"}, nil, 0},
		{"remove: unknown name", edited, []string{"remove", "nosuch", "--config", "CFG"}, nil, 2},
		{"remove: no name", edited, []string{"remove", "--config", "CFG"}, nil, 2},
		{"disable", edited, []string{"disable", "fx", "--config", "CFG"}, nil, 0},
		{"disable: unknown name", edited, []string{"disable", "nosuch", "--config", "CFG"}, nil, 2},
		{"enable", edited, []string{"enable", "fx", "--config", "CFG"}, nil, 0},
		{"enable: unknown name", edited, []string{"enable", "nosuch", "--config", "CFG"}, nil, 2},

		{"auth status", edited, []string{"auth", "status", "--config", "CFG"}, []string{"MCPX_KEYRING=off"}, 0},
		{"auth login: unknown server", edited, []string{"auth", "login", "nosuch", "--config", "CFG"}, []string{"MCPX_KEYRING=off"}, 2},
		{"auth login: a command server", edited, []string{"auth", "login", "fx", "--config", "CFG"}, []string{"MCPX_KEYRING=off"}, 2},
		{"auth login: bad timeout", edited, []string{"auth", "login", "remote", "--timeout", "0s", "--config", "CFG"}, []string{"MCPX_KEYRING=off"}, 2},
		{"auth login: a variable is not set", `{"servers": {"r": {"url": "http://${` + unsetVar + `}/mcp"}}}`,
			[]string{"auth", "login", "r", "--config", "CFG"}, []string{"MCPX_KEYRING=off"}, 2},
		{"auth logout: unknown server", edited, []string{"auth", "logout", "nosuch", "--config", "CFG"}, []string{"MCPX_KEYRING=off"}, 2},

		{"relay: not loopback", good, []string{"relay", "--listen", "0.0.0.0:0"}, nil, 2},
		{"relay: extra argument", good, []string{"relay", "x"}, nil, 2},

		{"completion", good, []string{"completion", "bash"}, nil, 0},
		{"completion: unknown shell", good, []string{"completion", "nosuch"}, nil, 2},

		// serve: stdin is empty, so the client is gone at once.
		{"serve", good, []string{"serve", "--config", "CFG"}, nil, 0},
		{"serve: extra argument", good, []string{"serve", "x", "--config", "CFG"}, nil, 2},
		{"serve: nothing to serve", good, []string{"serve", "--stdio=false", "--config", "CFG"}, nil, 2},
		{"serve: missing token file", good, []string{"serve", "--http", "127.0.0.1:0", "--token-file", filepath.Join(dir, "absent"), "--config", "CFG"}, nil, 2},
		{"serve: config that does not load", broken, []string{"serve", "--config", "CFG"}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if slices.Contains(tc.env, "XDG_CONFIG_HOME=/proc") && runtime.GOOS != "linux" {
				t.Skip("needs Linux's /proc")
			}
			cfg := tc.config
			if strings.HasPrefix(cfg, "{") {
				cfg = filepath.Join(t.TempDir(), "mcpx.json")
				if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "CFG", cfg)
			}
			cmd := mcpxCommand(args...)
			cmd.Env = append(cmd.Env, tc.env...)
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("mcpx %s: exit %d, want %d\n%s", strings.Join(args, " "), code, tc.want, out)
			}
		})
	}
}
