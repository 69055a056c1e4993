package config

import (
	"strings"
	"testing"
	"time"
)

func TestLazyAndIdleTimeout(t *testing.T) {
	cfg, err := Parse("mcpx.json", []byte(`{
		"lazy": true, "idleTimeout": "10m",
		"servers": {
			"inherits": {"command": "a"},
			"eager":    {"command": "b", "lazy": false, "idleTimeout": "off"},
			"own":      {"command": "c", "idleTimeout": 90},
			"never":    {"command": "d", "idleTimeout": false}
		}}`), &LoadOptions{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		lazy bool
		idle time.Duration
	}{"inherits": {true, 10 * time.Minute}, "eager": {false, 0}, "own": {true, 90 * time.Second}, "never": {true, 0}}
	for _, s := range cfg.Servers {
		if w := want[s.Name]; s.Lazy != w.lazy || s.IdleTimeout != w.idle {
			t.Errorf("%s: lazy %v idleTimeout %v, want %v %v", s.Name, s.Lazy, s.IdleTimeout, w.lazy, w.idle)
		}
	}
	if !cfg.Lazy || cfg.IdleTimeout != 10*time.Minute {
		t.Errorf("top level: %v %v", cfg.Lazy, cfg.IdleTimeout)
	}
	for in, want := range map[string]string{
		`{"lazy": "yes"}`:         "lazy: want true or false",
		`{"idleTimeout": "soon"}`: "idleTimeout: \"soon\" is not a duration",
		`{"servers": {"s": {"command": "c", "idleTimeout": true}}}`:  "servers.s.idleTimeout: want a duration",
		`{"servers": {"s": {"command": "c", "idleTimeout": "-1m"}}}`: "servers.s.idleTimeout: must be positive",
	} {
		if _, err := Parse("mcpx.json", []byte(in), &LoadOptions{LookupEnv: noEnv}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", in, err, want)
		}
	}
}
