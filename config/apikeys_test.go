package config

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIKeys: http.keys as written, and each way an entry is wrong
// named in its error, without the value.
func TestAPIKeys(t *testing.T) {
	key, hash := NewAPIKey()
	if !strings.HasPrefix(key, "mcpx_") || len(key) != len("mcpx_")+43 || sha256.Sum256([]byte(key)) != hash {
		t.Fatalf("NewAPIKey = %q", key)
	}
	other, otherHash := NewAPIKey()
	if other == key {
		t.Fatal("two keys alike")
	}
	profiles := `"servers": {"fs": {"command": "fs"}}, "profiles": {"read": {"servers": ["fs"]}},`
	cfg := mustParse(t, "mcpx.json", `{`+profiles+`"http": {"keys": {
		"alice": {"hash": "`+HashString(hash)+`", "profile": "read"},
		"ci": {"hash": "`+HashString(otherHash)+`"}
	}}}`, nil)
	want := []APIKey{{Name: "alice", Hash: hash, Profile: "read"}, {Name: "ci", Hash: otherHash}}
	if len(cfg.HTTP.Keys) != 2 || cfg.HTTP.Keys[0] != want[0] || cfg.HTTP.Keys[1] != want[1] {
		t.Errorf("keys %+v, want %+v", cfg.HTTP.Keys, want)
	}
	for _, tc := range []struct{ keys, want string }{
		{`{"bob": {"hash": "` + key + `"}}`, `http.keys.bob.hash: want "sha256:" and 64 hex digits`},
		{`{"bob": {"hash": "sha256:abcd"}}`, `http.keys.bob.hash: want "sha256:" and 64 hex digits, got 4 characters`},
		{`{"bob": {"profile": "read"}}`, `http.keys.bob.hash: want "sha256:"`},
		{`{"bob": {"hash": "` + HashString(hash) + `", "profile": "write"}}`, `http.keys.bob.profile: unknown profile "write"`},
		{`{"a": {"hash": "` + HashString(hash) + `"}, "b": {"hash": "` + HashString(hash) + `"}}`, `http.keys.b.hash: the same key as a`},
		{`{"bob": "` + HashString(hash) + `"}`, `http.keys.bob: want an object with hash and profile, not a string`},
		{`{"bob smith": {"hash": "` + HashString(hash) + `"}}`, `key name "bob smith"`},
		{`[]`, `http.keys: want an object`},
	} {
		_, err := Parse("mcpx.json", []byte(`{`+profiles+`"http": {"keys": `+tc.keys+`}}`), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("keys %s: error %v, want %q", tc.keys, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("the error shows the key: %v", err)
		}
	}
}

// TestEditKeys: mcpx keys add and remove change http.keys alone,
// creating the sections on the way, keeping the rest of the file.
func TestEditKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mcpx.json")
	before := "{\n  // mine\n  \"profiles\": {\"read\": {\"servers\": [\"fs\"]}},\n  \"servers\": {\"fs\": {\"command\": \"fs\"}}\n}\n"
	if err := os.WriteFile(file, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	_, h1 := NewAPIKey()
	_, h2 := NewAPIKey()
	if err := AddKey(file, "alice", h1, "read"); err != nil {
		t.Fatal(err)
	}
	if err := AddKey(file, "ci", h2, ""); err != nil {
		t.Fatal(err)
	}
	if err := AddKey(file, "ci", h2, ""); !errors.Is(err, ErrExists) {
		t.Errorf("adding ci again: %v, want ErrExists", err)
	}
	if err := AddKey(file, "bob", h2, "nosuch"); err == nil || !strings.Contains(err.Error(), `unknown profile "nosuch"`) {
		t.Errorf("a key for an unknown profile: %v", err)
	}
	data, _ := os.ReadFile(file)
	cfg, err := Parse(file, data, nil)
	if err != nil || len(cfg.HTTP.Keys) != 2 || cfg.HTTP.Keys[0].Profile != "read" || cfg.HTTP.Keys[1].Name != "ci" {
		t.Fatalf("after add: %v %+v\n%s", err, cfg, data)
	}
	if !strings.Contains(string(data), "// mine") || !strings.Contains(string(data), "\n    \"keys\": {\n      \"alice\"") {
		t.Errorf("layout lost:\n%s", data)
	}
	if err := RemoveKey(file, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveKey(file, "alice"); !errors.Is(err, ErrNoKey) {
		t.Errorf("removing alice again: %v, want ErrNoKey", err)
	}
	data, _ = os.ReadFile(file)
	if cfg, err := Parse(file, data, nil); err != nil || len(cfg.HTTP.Keys) != 1 || cfg.HTTP.Keys[0].Name != "ci" {
		t.Errorf("after remove: %v\n%s", err, data)
	}
	yaml := filepath.Join(t.TempDir(), "mcpx.yaml")
	if err := AddKey(yaml, "alice", h1, ""); err == nil || !strings.Contains(err.Error(), "JSON config files only") {
		t.Errorf("a YAML file: %v", err)
	}
}
