package config

import (
	"strings"
	"testing"
)

func TestHTTPMaxBodyMemory(t *testing.T) {
	for in, want := range map[string]int64{
		``:                                     0, // serve --http takes DefaultHTTPBodyMemory
		`"http": {"maxBodyMemory": "512MiB"},`: 512 << 20,
		`"maxMessageBytes": "1MiB", "http": {"maxBodyMemory": 1048576},`: 1 << 20,
	} {
		cfg := mustParse(t, "mcpx.json", `{`+in+` "servers": {}}`, nil)
		if cfg.HTTP.MaxBodyMemory != want {
			t.Errorf("%s: %d, want %d", in, cfg.HTTP.MaxBodyMemory, want)
		}
	}
	for in, want := range map[string]string{
		`"http": {"maxBodyMemory": "lots"}`:                            `http.maxBodyMemory: "lots"`,
		`"http": {"maxBodyMemory": 1000}`:                              `http.maxBodyMemory: 1000 bytes is too small`,
		`"http": {"maxBodyMemory": "32MiB"}`:                           `http.maxBodyMemory: 33554432 bytes is less than maxMessageBytes (67108864)`,
		`"maxMessageBytes": "2MiB", "http": {"maxBodyMemory": "1MiB"}`: `http.maxBodyMemory: 1048576 bytes is less than maxMessageBytes (2097152)`,
	} {
		_, err := Parse("mcpx.json", []byte(`{`+in+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", in, err, want)
		}
	}
}

func TestDefaultHTTPBodyMemory(t *testing.T) {
	for in, want := range map[int64]int64{
		DefaultMaxMessageBytes: 256 << 20, // four bodies at the limit
		4 << 10:                64 << 20,  // at least 64 MiB
		1 << 30:                4 << 30,
	} {
		if got := DefaultHTTPBodyMemory(in); got != want {
			t.Errorf("DefaultHTTPBodyMemory(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestHTTPUI(t *testing.T) {
	for in, want := range map[string]bool{
		``:                        true, // on unless turned off
		`"http": {"ui": true},`:   true,
		`"http": {"ui": false},`:  false,
		`"http": {"token": "x"},`: true,
	} {
		cfg := mustParse(t, "mcpx.json", `{`+in+` "servers": {}}`, nil)
		if got := cfg.HTTP.UIOn(); got != want {
			t.Errorf("%s: UIOn() = %v, want %v", in, got, want)
		}
	}
	if _, err := Parse("mcpx.json", []byte(`{"http": {"ui": "off"}}`), nil); err == nil || !strings.Contains(err.Error(), "http.ui") {
		t.Errorf("ui: \"off\": error %v, want one naming http.ui", err)
	}
}
