package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestResults(t *testing.T) {
	for in, want := range map[string]Results{
		``: {},
		`"results": {"maxMemory": "16MiB", "maxDisk": "2GiB", "maxAge": "10m"},`: {MaxMemory: 16 << 20, MaxDisk: 2 << 30, MaxAge: 10 * time.Minute},
		`"results": {"maxDisk": "off"},`:                                         {MaxDisk: -1},
		`"results": {"maxAge": 60},`:                                             {MaxAge: time.Minute},
	} {
		cfg := mustParse(t, "mcpx.json", `{`+in+` "servers": {}}`, nil)
		if cfg.Results != want {
			t.Errorf("%s: %+v, want %+v", in, cfg.Results, want)
		}
	}
}

func TestResultsErrors(t *testing.T) {
	for in, want := range map[string]string{
		`"64MiB"`:               `results: want an object, not a string`,
		`{"maxMemory": 1000}`:   `results.maxMemory: 1000 bytes is too small`,
		`{"maxMemory": "off"}`:  `results.maxMemory: "off"`,
		`{"maxDisk": "lots"}`:   `results.maxDisk: "lots"`,
		`{"maxAge": "0s"}`:      `results.maxAge: must be positive`,
		`{"maxAge": "forever"}`: `results.maxAge: "forever" is not a duration`,
	} {
		_, err := Parse("mcpx.json", []byte(`{"results": `+in+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", in, err, want)
		}
	}
	cfg := mustParse(t, "mcpx.json", `{"results": {"maxMemmory": "1MiB"}, "servers": {}}`, nil)
	if !slices.ContainsFunc(cfg.Warnings, func(w string) bool {
		return strings.Contains(w, "results.maxMemmory: unknown key, ignored; did you mean maxMemory?")
	}) {
		t.Errorf("warnings %q, want one suggesting maxMemory", cfg.Warnings)
	}
}
