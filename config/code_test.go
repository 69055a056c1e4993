package config

import (
	"strings"
	"testing"
	"time"
)

func TestCode(t *testing.T) {
	for in, want := range map[string]Code{
		``:                            {},
		`"code": false,`:              {Disabled: true},
		`"code": true,`:               {},
		`"code": {"enabled": false},`: {Disabled: true},
		`"code": {"timeout": "5s", "memory": "16MiB", "maxCalls": 10, "parallel": 2, "maxOutput": "8KiB", "approve": "all"},`: {
			Timeout: 5 * time.Second, Memory: 16 << 20, MaxCalls: 10, Parallel: 2, MaxOutput: 8 << 10, Approve: ApproveAll},
	} {
		cfg := mustParse(t, "mcpx.json", `{`+in+` "servers": {}}`, nil)
		if cfg.Code != want {
			t.Errorf("%s: %+v, want %+v", in, cfg.Code, want)
		}
	}
	d := Code{}.WithDefaults()
	if d.Timeout != DefaultCodeTimeout || d.Memory != DefaultCodeMemory || d.MaxCalls != DefaultCodeMaxCalls ||
		d.Parallel != DefaultCodeParallel || d.Approve != ApproveWrites || d.MaxOutput != 0 {
		t.Errorf("defaults: %+v", d)
	}
}

func TestCodeErrors(t *testing.T) {
	for in, want := range map[string]string{
		`"on"`:                     `code: want true, false or an object, not a string`,
		`{"timeout": "0s"}`:        `code.timeout: must be positive`,
		`{"memory": 1000}`:         `code.memory: 1000 bytes is too small`,
		`{"maxCalls": 0}`:          `code.maxCalls: want a whole number of at least 1, not 0`,
		`{"approve": "sometimes"}`: `code.approve: "sometimes": want "writes", "destructive", "all" or "none"`,
	} {
		_, err := Parse("mcpx.json", []byte(`{"code": `+in+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", in, err, want)
		}
	}
}
