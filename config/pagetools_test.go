package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBrowserPageTools(t *testing.T) {
	cases := []struct {
		json    string
		want    PageTools
		err     string // a substring of the error; "" for none
		warning string
	}{
		{`{"browser": {}}`, PageTools{}, "", ""},
		{`{"browser": {"pageTools": false}}`, PageTools{Disabled: true}, "", ""},
		{`{"browser": {"pageTools": true}}`, PageTools{}, "", ""},
		{`{"browser": {"pageTools": {"enabled": true, "allTabs": true, "cache": false,
			"allow": ["*.example.com", "shop.test"], "deny": ["evil.example.com"], "interval": "500ms"}}}`,
			PageTools{AllTabs: true, NoCache: true, Allow: []string{"*.example.com", "shop.test"},
				Deny: []string{"evil.example.com"}, Interval: 500 * time.Millisecond}, "", ""},
		{`{"browser": {"pageTools": {"interval": 2}}}`, PageTools{Interval: 2 * time.Second}, "", ""},
		{`{"browser": {"pageTools": {"interval": "5s"}}}`, PageTools{}, "browser.pageTools.interval: at most 2s", ""},
		{`{"browser": {"pageTools": {"allow": ["[x"]}}}`, PageTools{}, "browser.pageTools.allow[0]: bad host glob", ""},
		{`{"browser": {"pageTools": {"deny": [""]}}}`, PageTools{}, "browser.pageTools.deny[0]: bad host glob", ""},
		{`{"browser": {"pageTools": {"cache": "yes"}}}`, PageTools{}, "browser.pageTools.cache: want true or false", ""},
		{`{"browser": {"pageTools": "on"}}`, PageTools{}, "browser.pageTools: want an object (or true/false)", ""},
		{`{"browser": {"pageTools": {"alltabs": true}}}`, PageTools{}, "", "browser.pageTools.alltabs: unknown key, ignored"},
	}
	for _, tc := range cases {
		cfg, err := Parse("c.json", []byte(tc.json), nil)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.json, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.json, err)
		}
		if got := cfg.Browser.PageTools; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.json, got, tc.want)
		}
		if got := strings.Join(cfg.Warnings, "\n"); (tc.warning == "") != (got == "") || !strings.Contains(got, tc.warning) {
			t.Errorf("%s: warnings %q, want %q", tc.json, got, tc.warning)
		}
	}
}
