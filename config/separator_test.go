package config

import (
	"slices"
	"testing"
)

// A separator with a character tool names may not have is taken, with a
// warning that names it, what it causes and where it was set.
func TestSeparatorWarning(t *testing.T) {
	dot, dash := ".", "-"
	want := func(where string) []string {
		return []string{"config" + where + `: "." has a character tool names may not have (clients accept letters, digits, _ and -): ` +
			"every prefixed tool and prompt name shows _ in its place; use _ or -"}
	}
	for _, tc := range []struct {
		name string
		data string
		env  map[string]string
		opts LoadOptions
		want []string
	}{
		{"file", `{"separator": "."}`, nil, LoadOptions{}, want(" s.json: separator")},
		{"environment", `{}`, map[string]string{"MCPX_SEPARATOR": "."}, LoadOptions{}, want(": MCPX_SEPARATOR")},
		{"flag", `{"separator": "_"}`, nil, LoadOptions{Separator: &dot}, want(": --separator")},
		{"dash", `{}`, nil, LoadOptions{Separator: &dash}, nil},
		{"empty", `{"separator": ""}`, nil, LoadOptions{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.LookupEnv = envMap(tc.env)
			cfg, err := Parse("s.json", []byte(tc.data), &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Warnings, tc.want) {
				t.Errorf("warnings %q, want %q", cfg.Warnings, tc.want)
			}
		})
	}
}
