package config

import (
	"strings"
	"testing"
)

// A server's trust key wins over the top-level one, which MCPX_TRUST
// overrides; the default is pin.
func TestTrust(t *testing.T) {
	for _, tc := range []struct {
		name, data, env string
		top, a, b       Trust
	}{
		{"default", `{"servers": {"a": {"command": "c"}, "b": {"command": "c"}}}`, "", TrustPin, TrustPin, TrustPin},
		{"top-level", `{"trust": "warn", "servers": {"a": {"command": "c"}, "b": {"command": "c", "trust": "pin"}}}`, "", TrustWarn, TrustWarn, TrustPin},
		{"server", `{"servers": {"a": {"command": "c", "trust": "off"}, "b": {"command": "c"}}}`, "", TrustPin, TrustOff, TrustPin},
		{"env over file", `{"trust": "warn", "servers": {"a": {"command": "c"}, "b": {"command": "c", "trust": "pin"}}}`, "off", TrustOff, TrustOff, TrustPin},
	} {
		env := map[string]string{}
		if tc.env != "" {
			env[trustEnv] = tc.env
		}
		cfg, err := Parse("mcpx.json", []byte(tc.data), &LoadOptions{LookupEnv: envMap(env)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.TrustOf(Server{}) != tc.top || cfg.TrustOf(cfg.Servers[0]) != tc.a || cfg.TrustOf(cfg.Servers[1]) != tc.b {
			t.Errorf("%s: top %q, a %q, b %q; want %q, %q, %q", tc.name, cfg.TrustOf(Server{}), cfg.TrustOf(cfg.Servers[0]), cfg.TrustOf(cfg.Servers[1]), tc.top, tc.a, tc.b)
		}
		if len(cfg.Warnings) != 0 {
			t.Errorf("%s: warnings %q", tc.name, cfg.Warnings)
		}
	}
}

func TestTrustErrors(t *testing.T) {
	for _, tc := range []struct{ data, env, want string }{
		{`{"trust": "pinned"}`, "", `config mcpx.json: trust: unknown trust "pinned" (want "pin", "warn" or "off")`},
		{`{"trust": true}`, "", `config mcpx.json: trust: want a string, not a boolean`},
		{`{"servers": {"s": {"command": "c", "trust": "never"}}}`, "", `config mcpx.json: servers.s.trust: unknown trust "never" (want "pin", "warn" or "off")`},
		{`{}`, "always", `config: MCPX_TRUST: unknown trust "always"`},
	} {
		env := map[string]string{}
		if tc.env != "" {
			env[trustEnv] = tc.env
		}
		_, err := Parse("mcpx.json", []byte(tc.data), &LoadOptions{LookupEnv: envMap(env)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.data, err, tc.want)
		}
	}
	cfg := mustParse(t, "mcpx.json", `{"trus": "pin"}`, nil)
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "did you mean trust?") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}
