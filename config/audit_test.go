package config

import (
	"strings"
	"testing"
)

func TestAudit(t *testing.T) {
	for in, want := range map[string]Audit{
		``:                                {},
		`"audit": false,`:                 {Disabled: true},
		`"audit": true,`:                  {},
		`"audit": {"arguments": "none"},`: {},
		`"audit": {"arguments": "keys"},`: {Arguments: "keys"},
		`"audit": {"arguments": "full", "maxBytes": "1MiB"},`: {Arguments: "full", MaxBytes: 1 << 20},
		`"audit": {"enabled": false, "maxBytes": 8192},`:      {Disabled: true, MaxBytes: 8192},
	} {
		cfg := mustParse(t, "mcpx.json", `{`+in+` "servers": {}}`, nil)
		if cfg.Audit != want {
			t.Errorf("%s: %+v, want %+v", in, cfg.Audit, want)
		}
	}
}

func TestAuditErrors(t *testing.T) {
	for in, want := range map[string]string{
		`"full"`:               `audit: want false or an object, not a string`,
		`{"arguments": "all"}`: `audit.arguments: "all": want "none", "keys" or "full"`,
		`{"arguments": 1}`:     `audit.arguments: want a string`,
		`{"maxBytes": 100}`:    `audit.maxBytes: 100 bytes is too small`,
		`{"maxBytes": "lots"}`: `audit.maxBytes: "lots"`,
	} {
		_, err := Parse("mcpx.json", []byte(`{"audit": `+in+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", in, err, want)
		}
	}
}

func TestAuditUnknownKey(t *testing.T) {
	cfg := mustParse(t, "mcpx.json", `{"audit": {"argument": "keys"}}`, nil)
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "audit.argument") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
}
