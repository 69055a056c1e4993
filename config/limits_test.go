package config

import (
	"strings"
	"testing"
	"time"
)

func TestLimits(t *testing.T) {
	cfg := mustParse(t, "mcpx.json", `{
		"callTimeout": "1m", "maxCallTime": 600, "maxConcurrent": 4,
		"maxMessageBytes": "1.5MiB", "shutdownTimeout": "2s", "readyTimeout": "45s",
		"maxResultBytes": "20k",
		"servers": {
			"a": {"command": "a"},
			"b": {"command": "b", "callTimeout": "0", "maxCallTime": "0", "maxConcurrent": 1, "maxResultBytes": "off"},
			"c": {"url": "http://h/mcp", "callTimeout": 0.5, "maxResultBytes": "1MB"}
		}
	}`, nil)
	if cfg.MaxMessageBytes != 3<<19 || cfg.ShutdownTimeout != 2*time.Second || cfg.ReadyTimeout != 45*time.Second {
		t.Errorf("maxMessageBytes %d, shutdownTimeout %v, readyTimeout %v", cfg.MaxMessageBytes, cfg.ShutdownTimeout, cfg.ReadyTimeout)
	}
	want := map[string]Limits{
		"a": {CallTimeout: time.Minute, MaxCallTime: 10 * time.Minute, MaxConcurrent: 4, MaxResultBytes: 20 << 10},
		"b": {MaxConcurrent: 1},
		"c": {CallTimeout: 500 * time.Millisecond, MaxCallTime: 10 * time.Minute, MaxConcurrent: 4, MaxResultBytes: 1000 * 1000},
	}
	for _, s := range cfg.Servers {
		if s.Limits != want[s.Name] {
			t.Errorf("%s: limits %+v, want %+v", s.Name, s.Limits, want[s.Name])
		}
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
}

func TestLimitsSizes(t *testing.T) {
	for in, want := range map[string]int64{
		`65536`: 65536, `"64MiB"`: 64 << 20, `"64 MiB"`: 64 << 20, `"512KB"`: 512000,
		`"1G"`: 1 << 30, `"8192"`: 8192, `"10k"`: 10 << 10, `"1.5m"`: 3 << 19, `"10 parsecs"`: -1, `"lots"`: -1, `-5`: -1, `1000`: -1, `true`: -1,
	} {
		cfg, err := Parse("mcpx.json", []byte(`{"maxMessageBytes": `+in+`}`), nil)
		switch {
		case want < 0 && err == nil:
			t.Errorf("%s: accepted as %d", in, cfg.MaxMessageBytes)
		case want < 0:
			if !strings.Contains(err.Error(), "maxMessageBytes") {
				t.Errorf("%s: error %q does not name the key", in, err)
			}
		case err != nil:
			t.Errorf("%s: %v", in, err)
		case cfg.MaxMessageBytes != want:
			t.Errorf("%s: %d, want %d", in, cfg.MaxMessageBytes, want)
		}
	}
}

func TestLimitsErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"maxResultBytes": "lots"}`, `maxResultBytes: "lots": not a size`},
		{`{"maxResultBytes": 10}`, `maxResultBytes: 10 bytes is too small`},
		{`{"callTimeout": "soon"}`, `callTimeout: "soon" is not a duration`},
		{`{"callTimeout": -1}`, `callTimeout: must be positive`},
		{`{"shutdownTimeout": "0"}`, `shutdownTimeout: must be positive`},
		{`{"servers": {"s": {"command": "x", "maxConcurrent": 0}}}`, `servers.s.maxConcurrent: want a whole number of at least 1, not 0`},
		{`{"servers": {"s": {"command": "x", "maxConcurrent": 2.5}}}`, `servers.s.maxConcurrent: want a whole number of at least 1, not 2.5`},
		{`{"servers": {"s": {"command": "x", "maxCallTime": "1h"}}, "maxConcurrent": "8"}`, `maxConcurrent: want a whole number, not a string`},
	} {
		_, err := Parse("mcpx.json", []byte(tc.data), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.data, err, tc.want)
		}
	}
}
