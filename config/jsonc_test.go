package config

import "testing"

func TestStripJSONC(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "http://x/*y*/", // c` + "\n" + `"b": [1,2,],}`: `{"a": "http://x/*y*/",     ` + "\n" + `"b": [1,2 ] }`,
		`{"q": "say \"//\"", /* x` + "\n" + `y */ "n": 1}`:     `{"q": "say \"//\"",     ` + "\n" + `     "n": 1}`,
		`{"a": 1 /* never closed`:                              `{"a": 1 /* never closed`,
		`{"s": "a,]"}`:                                         `{"s": "a,]"}`,
	} {
		if got := string(stripJSONC([]byte(in))); got != want {
			t.Errorf("stripJSONC(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
