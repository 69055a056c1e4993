package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// envMap is a LookupEnv over a map.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// noEnv is an empty environment, so tests do not see the real one.
var noEnv = envMap(nil)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mustParse parses or fails the test.
func mustParse(t testing.TB, file, data string, env map[string]string) *Config {
	t.Helper()
	cfg, err := Parse(file, []byte(data), &LoadOptions{LookupEnv: envMap(env)})
	if err != nil {
		t.Fatalf("Parse(%s): %v", file, err)
	}
	return cfg
}

var fullEnv = map[string]string{"MY_KEY": "k-123", "TOKEN": "tok-456", "MCPX_BROWSER_TOKEN": "btok-789"}

// fullWant is what testdata/full.{json,yaml,toml} mean: each lists its
// servers in the same order, which Servers keeps.
func fullWant(file string) *Config {
	c := &Config{
		File: file,
		Servers: []Server{
			{
				Name: "everything", Transport: TransportStdio, Command: "npx",
				Args:    []string{"-y", "@modelcontextprotocol/server-everything", "--key=k-123"},
				Env:     map[string]string{"API_KEY": "k-123", "PORT": "3000", "DEBUG": "true"},
				Cwd:     "/srv",
				Prefix:  "ev",
				Enabled: true,
				Timeout: 45 * time.Second,
				Tools:   Filter{Allow: []string{"echo", "get-*"}, Deny: []string{"get-secret"}},
			},
			{
				Name: "remote", Transport: TransportHTTP, URL: "http://127.0.0.1:3001/mcp",
				Headers: map[string]string{"Authorization": "Bearer tok-456", "X-Trace": "on"},
				Prefix:  "remote", Enabled: true, Timeout: 2500 * time.Millisecond,
				Prompts: Filter{Deny: []string{"*"}},
			},
			{
				Name: "Legacy", Transport: TransportSSE, URL: "https://example.com/api/sse",
				Prefix: "", Enabled: false, Timeout: 30 * time.Second,
			},
		},
		Browser: &Browser{
			URL: "ws://127.0.0.1:5555/mcp", Token: "btok-789", Extension: "Chrome 141",
			Prefix: "browser", CDP: true,
		},
		Expose:          ExposeBoth,
		Separator:       "__",
		Warnings:        []string{"config " + file + ": servers.everything.autoApprove: unknown key, ignored"},
		Limits:          DefaultLimits(),
		MaxMessageBytes: DefaultMaxMessageBytes,
		ShutdownTimeout: DefaultShutdownTimeout,
		ReadyTimeout:    DefaultReadyTimeout,
	}
	withDefaultLimits(c.Servers)
	return c
}

// exported drops the unexported fields, which Secrets covers.
func exported(c *Config) *Config {
	cp := *c
	cp.substituted = nil
	return &cp
}

func TestFormatsAreEquivalent(t *testing.T) {
	for _, name := range []string{"full.json", "full.yaml", "full.toml"} {
		t.Run(name, func(t *testing.T) {
			cfg := mustParse(t, name, string(readFixture(t, name)), fullEnv)
			if got, want := exported(cfg), fullWant(name); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			wantSecrets := []string{"/srv", "3000", "Bearer tok-456", "btok-789", "k-123", "on", "tok-456", "true"}
			if got := cfg.Secrets(); !reflect.DeepEqual(got, wantSecrets) {
				t.Errorf("Secrets() = %q, want %q", got, wantSecrets)
			}
		})
	}
}

// withDefaultLimits gives every server of want the default limits.
func withDefaultLimits(want []Server) {
	for i := range want {
		want[i].Limits = DefaultLimits()
	}
}

func TestParseDefaults(t *testing.T) {
	for _, tc := range []struct{ file, data string }{
		{"mcpx.json", ""},
		{"mcpx.json", "  \n"},
		{"mcpx.json", "{}"},
		{"mcpx.yaml", "# nothing\n"},
		{"mcpx.toml", ""},
		{"", `{"mcpServers": {}, "numStartups": 1}`}, // another program's keys
	} {
		cfg := mustParse(t, tc.file, tc.data, nil)
		want := &Config{File: tc.file, Expose: ExposeProxy, Separator: "_", Limits: DefaultLimits(),
			MaxMessageBytes: DefaultMaxMessageBytes, ShutdownTimeout: DefaultShutdownTimeout, ReadyTimeout: DefaultReadyTimeout}
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("Parse(%q, %q) = %+v, want %+v", tc.file, tc.data, cfg, want)
		}
	}
}

func TestParseServer(t *testing.T) {
	env := map[string]string{"HOST": "example.com", "EMPTY": ""}
	for _, tc := range []struct {
		name, entry string
		want        Server
	}{
		{"command is stdio", `{"command": "srv"}`,
			Server{Transport: TransportStdio, Command: "srv"}},
		{"url is http", `{"url": "https://${HOST}/mcp"}`,
			Server{Transport: TransportHTTP, URL: "https://example.com/mcp"}},
		{"url ending in /sse is sse", `{"url": "http://h/sse/"}`,
			Server{Transport: TransportSSE, URL: "http://h/sse/"}},
		{"explicit http wins over /sse", `{"url": "http://h/sse", "type": "http"}`,
			Server{Transport: TransportHTTP, URL: "http://h/sse"}},
		{"transport sse", `{"url": "http://h/events", "transport": "sse"}`,
			Server{Transport: TransportSSE, URL: "http://h/events"}},
		{"type streamable-http", `{"url": "http://h/m", "type": "streamable-http"}`,
			Server{Transport: TransportHTTP, URL: "http://h/m"}},
		{"type streamableHttp", `{"url": "http://h/m", "type": "streamableHttp"}`,
			Server{Transport: TransportHTTP, URL: "http://h/m"}},
		{"Cline transportType", `{"url": "http://h/m", "transportType": "sse"}`,
			Server{Transport: TransportSSE, URL: "http://h/m"}},
		{"type stdio", `{"command": "srv", "type": "stdio", "transport": "stdio"}`,
			Server{Transport: TransportStdio, Command: "srv"}},
		{"protocol legacy", `{"command": "srv", "protocol": "legacy"}`,
			Server{Transport: TransportStdio, Command: "srv", Protocol: ProtocolLegacy}},
		{"protocol in any case", `{"url": "http://h/m", "protocol": "Modern"}`,
			Server{Transport: TransportHTTP, URL: "http://h/m", Protocol: ProtocolModern}},
		{"protocol auto", `{"command": "srv", "protocol": "auto"}`,
			Server{Transport: TransportStdio, Command: "srv", Protocol: ProtocolAuto}},
		{"enabled false", `{"command": "srv", "enabled": false}`,
			Server{Transport: TransportStdio, Command: "srv", Enabled: false}},
		{"disabled true", `{"command": "srv", "disabled": true}`,
			Server{Transport: TransportStdio, Command: "srv", Enabled: false}},
		{"disabled false", `{"command": "srv", "disabled": false}`,
			Server{Transport: TransportStdio, Command: "srv", Enabled: true}},
		{"empty prefix", `{"command": "srv", "prefix": ""}`,
			Server{Transport: TransportStdio, Command: "srv", Prefix: ""}},
		{"timeout seconds", `{"command": "srv", "timeout": 60}`,
			Server{Transport: TransportStdio, Command: "srv", Timeout: time.Minute}},
		{"timeout duration", `{"command": "srv", "timeout": "1m30s"}`,
			Server{Transport: TransportStdio, Command: "srv", Timeout: 90 * time.Second}},
		{"default used for empty", `{"command": "srv", "args": ["${EMPTY:-x}", "${EMPTY}", "${UNSET:-}"]}`,
			Server{Transport: TransportStdio, Command: "srv", Args: []string{"x", "", ""}}},
		{"null fields are absent", `{"command": "srv", "env": null, "url": null}`,
			Server{Transport: TransportStdio, Command: "srv"}},
		{"disabled server may miss variables", `{"url": "${NOPE}", "disabled": true, "headers": {"A": "${NOPE2}"}}`,
			Server{Transport: TransportHTTP, Enabled: false, Headers: map[string]string{"A": ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, "mcpx.json", `{"servers": {"s": `+tc.entry+`}}`, env)
			want := tc.want
			want.Name = "s"
			if !strings.Contains(tc.entry, `"prefix"`) {
				want.Prefix = "s"
			}
			if !strings.Contains(tc.entry, `"enabled"`) && !strings.Contains(tc.entry, `"disabled"`) {
				want.Enabled = true
			}
			if want.Timeout == 0 {
				want.Timeout = DefaultTimeout
			}
			want.Limits = DefaultLimits()
			if len(cfg.Servers) != 1 || !reflect.DeepEqual(cfg.Servers[0], want) {
				t.Errorf("got  %+v\nwant %+v", cfg.Servers, want)
			}
		})
	}
}

func TestAlias(t *testing.T) {
	cfg := mustParse(t, "mcpx.json", `{
		"servers": {"b": {"command": "b"}, "Shared": {"command": "s"}},
		"mcpServers": {"a": {"url": "http://h/mcp"}, "shared": {"command": "t"}}
	}`, nil)
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	// Names keep their case, so Shared and shared are two servers; they
	// keep the file's order too, "servers" before "mcpServers" here.
	if want := []string{"b", "Shared", "a", "shared"}; !reflect.DeepEqual(names, want) {
		t.Errorf("servers %q, want %q", names, want)
	}
}

func TestClaudeDesktopFile(t *testing.T) {
	cfg := mustParse(t, "claude_desktop_config.json", string(readFixture(t, "claude_desktop_config.json")), nil)
	want := []Server{
		{Name: "filesystem", Transport: TransportStdio, Command: "npx",
			Args:   []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"},
			Prefix: "filesystem", Enabled: true, Timeout: DefaultTimeout},
		{Name: "github", Transport: TransportStdio, Command: "docker",
			Args:   []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
			Env:    map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_exampleTokenValue"},
			Prefix: "github", Enabled: true, Timeout: DefaultTimeout},
	}
	withDefaultLimits(want)
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("got  %+v\nwant %+v", cfg.Servers, want)
	}
	if len(cfg.Warnings) != 0 || cfg.Browser != nil {
		t.Errorf("warnings %q, browser %+v; want none", cfg.Warnings, cfg.Browser)
	}
	if got := cfg.Secrets(); !reflect.DeepEqual(got, []string{"ghp_exampleTokenValue"}) {
		t.Errorf("Secrets() = %q", got)
	}
}

func TestVSCodeFile(t *testing.T) {
	cfg := mustParse(t, "mcp.json", string(readFixture(t, "vscode_mcp.json")), map[string]string{"PERPLEXITY_API_KEY": "pplx-1"})
	want := []Server{
		{Name: "Perplexity", Transport: TransportStdio, Command: "npx",
			Args: []string{"-y", "server-perplexity-ask"}, Env: map[string]string{"PERPLEXITY_API_KEY": "pplx-1"},
			Prefix: "Perplexity", Enabled: true, Timeout: DefaultTimeout},
		{Name: "github", Transport: TransportHTTP, URL: "https://api.githubcopilot.com/mcp/",
			Prefix: "github", Enabled: true, Timeout: DefaultTimeout},
		{Name: "events", Transport: TransportSSE, URL: "http://localhost:8080/events",
			Prefix: "events", Enabled: true, Timeout: DefaultTimeout},
	}
	withDefaultLimits(want)
	if !reflect.DeepEqual(cfg.Servers, want) {
		t.Errorf("got  %+v\nwant %+v", cfg.Servers, want)
	}
}

func TestClaudeCodeFile(t *testing.T) {
	cfg := mustParse(t, ".claude.json", string(readFixture(t, "claude.json")), map[string]string{"NOTION_TOKEN": "ntn"})
	got := map[string]Transport{}
	for _, s := range cfg.Servers {
		got[s.Name] = s.Transport
	}
	want := map[string]Transport{"airtable": TransportStdio, "linear": TransportSSE, "notion": TransportHTTP}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("transports %v, want %v", got, want)
	}
	if h := cfg.Servers[1].Headers["Authorization"]; cfg.Servers[1].Name != "notion" || h != "Bearer ntn" {
		t.Errorf("notion Authorization = %q", h)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %q; unknown top-level keys must be ignored silently", cfg.Warnings)
	}
}

func TestWarnings(t *testing.T) {
	cfg := mustParse(t, "w.json", `{
		"extra": true,
		"servers": {
			"a": {"command": "a", "alwaysAllow": ["x"], "description": "d", "headers": {"H": "v"},
			      "tools": {"allow": ["x"], "only": ["y"]}},
			"b": {"url": "http://h/mcp", "cwd": "/tmp"}
		},
		"browser": {"tokn": "t"}
	}`, nil)
	want := []string{
		"config w.json: servers.a.tools.only: unknown key, ignored",
		"config w.json: servers.a.alwaysAllow: unknown key, ignored",
		"config w.json: servers.a.description: unknown key, ignored",
		"config w.json: servers.a.headers: used only with url, ignored",
		"config w.json: servers.b.cwd: used only with command, ignored",
		"config w.json: browser.tokn: unknown key, ignored; did you mean token?",
		"config w.json: extra: unknown key, ignored",
	}
	if !reflect.DeepEqual(cfg.Warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(want, "\n"))
	}
}

// A misspelt key is warned about with the closest known one, at the top
// level as in a server. In a file another program shares (servers under
// mcpServers) only keys close to mcpx's are: the rest are that program's.
func TestUnknownKeySuggestions(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"top-level typo", `{"expse": "direct", "servers": {}}`,
			[]string{"config w.json: expse: unknown key, ignored; did you mean expose?"}},
		{"top-level typo, case", `{"Separator": "-"}`,
			[]string{"config w.json: Separator: unknown key, ignored; did you mean separator?"}},
		{"top-level unrelated", `{"colour": "blue"}`,
			[]string{"config w.json: colour: unknown key, ignored"}},
		{"server key typo", `{"servers": {"a": {"comand": "a", "command": "a"}}}`,
			[]string{"config w.json: servers.a.comand: unknown key, ignored; did you mean command?"}},
		{"shared file", `{"mcpServers": {}, "numStartups": 3, "theme": "dark", "readyTimout": "5s"}`,
			[]string{"config w.json: readyTimout: unknown key, ignored; did you mean readyTimeout?"}},
		{"schema and VS Code inputs", `{"$schema": "x", "inputs": [], "servers": {}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, "w.json", tc.data, nil)
			if !slices.Equal(cfg.Warnings, tc.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestMultipleErrors(t *testing.T) {
	_, err := Parse("m.json", []byte(`{"servers": {"a": {}, "b": {"command": "b", "timeout": "x"}, "c": {"command": "c"}}}`),
		&LoadOptions{LookupEnv: noEnv})
	var e *Error
	if !errors.As(err, &e) || e.Server != "a" {
		t.Fatalf("first error %v, want one about server a", err)
	}
	if lines := strings.Split(err.Error(), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "servers.b.timeout") {
		t.Errorf("error %q, want two lines, the second about servers.b.timeout", err)
	}
}

func TestBrowserLocalMode(t *testing.T) {
	cases := []struct {
		json       string
		local      bool
		listen     string
		extensions []string
		warning    string
	}{
		{`{"browser": {}}`, true, DefaultBrowserListen, nil, ""},
		{`{"browser": {"listen": "localhost:6000", "extensionIds": ["abcdefgh"]}}`, true, "localhost:6000", []string{"abcdefgh"}, ""},
		{`{"browser": {"listen": "[::1]:6000"}}`, true, "[::1]:6000", nil, ""},
		{`{"browser": {"url": "wss://relay.example/mcp", "token": "t", "listen": "127.0.0.1:1"}}`, false, "127.0.0.1:1", nil, "browser.listen: only used in local mode"},
		{`{"browser": {"url": "ws://127.0.0.1:9/mcp", "token": "t"}}`, false, "", nil, ""},
	}
	for _, tc := range cases {
		cfg, err := Parse("c.json", []byte(tc.json), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		b := cfg.Browser
		if b.Local() != tc.local || b.Listen != tc.listen || !slices.Equal(b.ExtensionIDs, tc.extensions) {
			t.Errorf("%s: local %v listen %q ids %q; want %v %q %q", tc.json, b.Local(), b.Listen, b.ExtensionIDs, tc.local, tc.listen, tc.extensions)
		}
		if got := strings.Join(cfg.Warnings, "\n"); (tc.warning == "") != (got == "") || !strings.Contains(got, tc.warning) {
			t.Errorf("%s: warnings %q, want %q", tc.json, got, tc.warning)
		}
	}
}
