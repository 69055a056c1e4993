package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBrowserLimits(t *testing.T) {
	for _, tc := range []struct {
		file, data string
		image      int64
		chars      int
	}{
		{"c.json", `{"browser": {}}`, 0, 0},
		{"c.json", `{"browser": {"maxImageBytes": "1MiB", "maxSnapshotChars": 50000}}`, 1 << 20, 50000},
		{"c.json", `{"browser": {"maxImageBytes": 800000}}`, 800000, 0},
		{"c.json", `{"browser": {"maxImageBytes": "512 KiB"}}`, 512 << 10, 0},
		{"c.json", `{"browser": {"maxImageBytes": "2MB"}}`, 2000000, 0},
		{"c.json", `{"browser": {"maxImageBytes": "1.5m"}}`, 3 << 19, 0},
		{"c.json", `{"browser": {"maxImageBytes": "65536"}}`, 65536, 0},
		{"c.yaml", "browser:\n  maxImageBytes: 2MiB\n  maxSnapshotChars: 20000\n", 2 << 20, 20000},
		{"c.toml", "[browser]\nmaxImageBytes = 300000\nmaxSnapshotChars = 9000\n", 300000, 9000},
	} {
		cfg, err := Parse(tc.file, []byte(tc.data), nil)
		if err != nil {
			t.Errorf("%s: %v", tc.data, err)
			continue
		}
		if b := cfg.Browser; b.MaxImageBytes != tc.image || b.MaxSnapshotChars != tc.chars || len(cfg.Warnings) > 0 {
			t.Errorf("%s: got %d bytes, %d chars, warnings %q; want %d, %d", tc.data, b.MaxImageBytes, b.MaxSnapshotChars, cfg.Warnings, tc.image, tc.chars)
		}
	}
}

func TestBrowserLimitErrors(t *testing.T) {
	for _, tc := range []struct {
		data, field, msg string
	}{
		{`{"browser": {"maxImageBytes": "big"}}`, "browser.maxImageBytes", `"big": not a size`},
		{`{"browser": {"maxImageBytes": "1 parsec"}}`, "browser.maxImageBytes", "not a size"},
		{`{"browser": {"maxImageBytes": 1000}}`, "browser.maxImageBytes", "too small (want at least 16384)"},
		{`{"browser": {"maxImageBytes": "-1MiB"}}`, "browser.maxImageBytes", "not a size"},
		{`{"browser": {"maxImageBytes": 1.5}}`, "browser.maxImageBytes", "whole number of bytes"},
		{`{"browser": {"maxImageBytes": true}}`, "browser.maxImageBytes", "not a boolean"},
		{`{"browser": {"maxSnapshotChars": "50000"}}`, "browser.maxSnapshotChars", "want a whole number, not a string"},
		{`{"browser": {"maxSnapshotChars": 100}}`, "browser.maxSnapshotChars", "want a whole number of at least 2000, not 100"},
		{`{"browser": {"maxSnapshotChars": 5e4}}`, "browser.maxSnapshotChars", "want a whole number"},
		{`{"browser": {"maxSnapshotChars": 99999999999}}`, "browser.maxSnapshotChars", "up to"},
	} {
		_, err := Parse("c.json", []byte(tc.data), nil)
		var e *Error
		if !errors.As(err, &e) || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%s: got %v; want %s: ...%s...", tc.data, err, tc.field, tc.msg)
		}
	}
}

func TestBrowserExtensionWait(t *testing.T) {
	for _, tc := range []struct {
		data string
		want time.Duration
		err  string
	}{
		{`{"browser": {}}`, 0, ""},
		{`{"browser": {"extensionWait": "10s"}}`, 10 * time.Second, ""},
		{`{"browser": {"extensionWait": 2.5}}`, 2500 * time.Millisecond, ""},
		{`{"browser": {"extensionWait": "0s"}}`, 0, "must be positive"},
		{`{"browser": {"extensionWait": "soon"}}`, 0, "is not a duration"},
		{`{"browser": {"extensionWait": "2m"}}`, 0, "2m0s is too long (at most 1m0s"},
	} {
		cfg, err := Parse("c.json", []byte(tc.data), nil)
		if tc.err != "" {
			var e *Error
			if !errors.As(err, &e) || e.Field != "browser.extensionWait" || !strings.Contains(e.Msg, tc.err) {
				t.Errorf("%s: got %v; want browser.extensionWait: ...%s...", tc.data, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Browser.ExtensionWait != tc.want || len(cfg.Warnings) > 0 {
			t.Errorf("%s: got %v (%v, warnings %q), want %v", tc.data, cfg.Browser.ExtensionWait, err, cfg.Warnings, tc.want)
		}
	}
}
