package config

import (
	"strings"
	"testing"
)

// TestUnsetVariables checks that a ${VAR} that is not set stops only what
// uses it: the config loads, the server is kept with a Problem naming the
// variable and where it is used, and no message holds a value.
func TestUnsetVariables(t *testing.T) {
	env := map[string]string{"SET": "s3cret-value"}
	srv := func(entry string) string {
		return `{"servers": {"ok": {"command": "c", "env": {"K": "${SET}"}}, "s": ` + entry + `}}`
	}
	for _, tc := range []struct {
		name, data string
		problem    string // of server s
		warning    string // a part of the one warning; "" for none
		httpIssue  string
	}{
		{"env", srv(`{"command": "c", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}`), "GITHUB_TOKEN is not set (env GITHUB_TOKEN)", "", ""},
		{"args", srv(`{"command": "c", "args": ["${SET}", "--dir=${NOPE}"]}`), "NOPE is not set (args[1])", "", ""},
		{"cwd", srv(`{"command": "c", "cwd": "${NOPE}/x"}`), "NOPE is not set (cwd)", "", ""},
		{"url", srv(`{"url": "http://${NOPE}/mcp"}`), "NOPE is not set (url)", "", ""},
		{"header", srv(`{"url": "http://h/m", "headers": {"Authorization": "Bearer ${NOPE}"}}`), "NOPE is not set (headers Authorization)", "", ""},
		{"auth secret", srv(`{"url": "http://h/m", "auth": {"clientId": "c", "clientSecret": "${NOPE}"}}`), "NOPE is not set (auth.clientSecret)", "", ""},
		{"two variables, one twice", srv(`{"command": "c", "args": ["${A}", "${B}"], "env": {"X": "${A}"}}`),
			"A is not set (args[0]); B is not set (args[1])", "", ""},
		{"with a default", srv(`{"command": "c", "env": {"K": "${NOPE:-fallback}"}}`), "", "", ""},
		{"disabled", srv(`{"command": "c", "enabled": false, "env": {"K": "${NOPE}"}}`), "", "", ""},
		{"browser", `{"servers": {"s": {"command": "c"}}, "browser": {"token": "${NOPE}"}}`, "",
			"browser: NOPE is not set (browser.token): the browser tools are off", ""},
		{"http token", `{"servers": {"s": {"command": "c"}}, "http": {"token": "${NOPE}"}}`, "",
			"http: NOPE is not set (http.token): serve --http refuses", "NOPE is not set (http.token)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, "mcpx.json", tc.data, env)
			for _, s := range cfg.Servers {
				want := ""
				if s.Name == "s" {
					want = tc.problem
				}
				if s.Problem != want {
					t.Errorf("server %s: Problem %q, want %q", s.Name, s.Problem, want)
				}
			}
			switch {
			case tc.warning == "" && len(cfg.Warnings) > 0:
				t.Errorf("warnings %q, want none", cfg.Warnings)
			case tc.warning != "" && (len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], tc.warning)):
				t.Errorf("warnings %q, want one with %q", cfg.Warnings, tc.warning)
			}
			if tc.name == "browser" && cfg.Browser != nil {
				t.Errorf("browser section kept with an unset token")
			}
			if cfg.HTTP.Problem != tc.httpIssue {
				t.Errorf("HTTP.Problem %q, want %q", cfg.HTTP.Problem, tc.httpIssue)
			}
			for _, m := range append(cfg.Warnings, cfg.HTTP.Problem, cfg.Servers[0].Problem) {
				if strings.Contains(m, "s3cret") {
					t.Errorf("a message shows a value: %s", m)
				}
			}
		})
	}
}
