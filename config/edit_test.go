package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx/mcpx/config"
)

const jsoncConfig = `{
  // Servers for work.
  "servers": {
    "alpha": {"command": "alpha-mcp"}, // the first
    /* beta talks HTTP */
    "beta": {
      "url": "https://beta.example/mcp",
      "headers": {"Authorization": "Bearer ${BETA_TOKEN}"},
    },
  },
  "expose": "proxy", // keep
}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditRoundTrips(t *testing.T) {
	p := writeFile(t, "mcpx.json", jsoncConfig)

	err := config.AddServer(p, "gamma", config.Entry{Command: "npx", Args: []string{"-y", "gamma"},
		Env: map[string]string{"KEY": "${GAMMA_KEY}"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(jsoncConfig, `    },
  },`, `    },
    "gamma": {
      "command": "npx",
      "args": [
        "-y",
        "gamma"
      ],
      "env": {
        "KEY": "${GAMMA_KEY}"
      }
    },
  },`, 1)
	if got := readFile(t, p); got != want {
		t.Fatalf("after add:\n%s\nwant:\n%s", got, want)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", info.Mode().Perm())
	}

	// An existing name is refused, and the file left alone...
	err = config.AddServer(p, "alpha", config.Entry{Command: "other"}, false)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("add over alpha: %v", err)
	}
	if got := readFile(t, p); got != want {
		t.Fatal("a refused add changed the file")
	}
	// ...unless replacing is asked for.
	if err := config.AddServer(p, "alpha", config.Entry{Command: "other"}, true); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !strings.Contains(got, `"alpha": {
      "command": "other"
    }, // the first`) {
		t.Fatalf("after replace:\n%s", got)
	}
	if err := config.AddServer(p, "alpha", config.Entry{Command: "alpha-mcp"}, true); err != nil {
		t.Fatal(err)
	}

	// disable then enable gives back the bytes.
	before := readFile(t, p)
	if err := config.SetEnabled(p, "beta", false); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(&config.LoadOptions{File: p, LookupEnv: env("BETA_TOKEN", "t0ken", "GAMMA_KEY", "k3y")})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cfg.Servers {
		if s.Name == "beta" && s.Enabled || s.Name != "beta" && !s.Enabled {
			t.Errorf("after disable beta: %s enabled=%v", s.Name, s.Enabled)
		}
	}
	if got := readFile(t, p); !strings.Contains(got, `"headers": {"Authorization": "Bearer ${BETA_TOKEN}"},
      "enabled": false,
    },`) {
		t.Fatalf("after disable:\n%s", got)
	}
	if err := config.SetEnabled(p, "beta", true); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != before {
		t.Fatalf("disable+enable:\n%s\nwant:\n%s", got, before)
	}

	// remove gamma: back to the original file.
	if err := config.RemoveServer(p, "gamma"); err != nil {
		t.Fatal(err)
	}
	alphaBack := strings.Replace(jsoncConfig, `"alpha": {"command": "alpha-mcp"}, // the first`, `"alpha": {
      "command": "alpha-mcp"
    }, // the first`, 1)
	if got := readFile(t, p); got != alphaBack {
		t.Fatalf("after remove:\n%s\nwant:\n%s", got, alphaBack)
	}
	if err := config.RemoveServer(p, "gamma"); err == nil || !strings.Contains(err.Error(), "no such server") {
		t.Fatalf("remove twice: %v", err)
	}
	if err := config.SetEnabled(p, "nope", false); err == nil || !strings.Contains(err.Error(), "no such server") {
		t.Fatalf("disable unknown: %v", err)
	}
}

func TestEditCreatesAndValidates(t *testing.T) {
	home := t.TempDir()
	lo := &config.LoadOptions{WorkDir: t.TempDir(), ConfigHome: home, LookupEnv: env()}
	target, err := config.EditTarget(lo)
	if err != nil || target != filepath.Join(home, "mcpx", "config.json") {
		t.Fatalf("EditTarget = %q, %v", target, err)
	}
	if err := config.AddServer(target, "remote", config.Entry{URL: "https://x.example/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}, false); err != nil {
		t.Fatal(err)
	}
	want := `{
  "servers": {
    "remote": {
      "url": "https://x.example/mcp",
      "headers": {
        "Authorization": "Bearer ${TOKEN}"
      }
    }
  }
}
`
	if got := readFile(t, target); got != want {
		t.Fatalf("created:\n%s\nwant:\n%s", got, want)
	}
	if again, err := config.EditTarget(lo); err != nil || again != target {
		t.Fatalf("EditTarget after creating = %q, %v", again, err)
	}

	// A result that would not load is not written.
	err = config.AddServer(target, "bad", config.Entry{URL: "ftp://x"}, false)
	if err == nil || !strings.Contains(err.Error(), "would not load") || !strings.Contains(err.Error(), "servers.bad.url") {
		t.Fatalf("invalid add: %v", err)
	}
	if got := readFile(t, target); got != want {
		t.Fatal("an invalid edit was written")
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}

	// mcpServers (Claude Desktop's key) is edited where it is.
	claude := writeFile(t, "claude.json", `{"mcpServers": {"a": {"command": "a"}}, "other": 1}`)
	if err := config.AddServer(claude, "b", config.Entry{Command: "b"}, false); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, claude); got != `{"mcpServers": {"a": {"command": "a"}, "b": {"command":"b"}}, "other": 1}` {
		t.Fatalf("one-line file: %s", got)
	}
	// An empty section in a file laid out over lines.
	empty := writeFile(t, "empty.json", "{\n    \"servers\": {},\n    \"expose\": \"direct\"\n}\n")
	if err := config.AddServer(empty, "a", config.Entry{Command: "a", Args: []string{"x"}}, false); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, empty), "{\n    \"servers\": {\n        \"a\": {\n            \"command\": \"a\",\n            \"args\": [\n                \"x\"\n            ]\n        }\n    },\n    \"expose\": \"direct\"\n}\n"; got != want {
		t.Fatalf("empty section:\n%s\nwant:\n%s", got, want)
	}
	if err := config.AddServer(writeFile(t, "mcpx.yaml", "servers: {}\n"), "x", config.Entry{Command: "x"}, false); err == nil ||
		!errors.Is(err, err) || !strings.Contains(err.Error(), "JSON config files only") {
		t.Fatalf("yaml: %v", err)
	}
}

// env is a LookupEnv over key, value pairs, so tests do not see the real
// environment.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
