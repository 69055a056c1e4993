package config

import (
	"strings"
	"testing"
)

func TestStandardJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "http://x/*y*/", // c` + "\n" + `"b": [1,2,],}`: `{"a": "http://x/*y*/",     ` + "\n" + `"b": [1,2 ] }`,
		`{"q": "say \"//\"", /* x` + "\n" + `y */ "n": 1}`:     `{"q": "say \"//\"",     ` + "\n" + `     "n": 1}`,
		`{"s": "a,]"}`: `{"s": "a,]"}`,
	} {
		got, err := standardJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("standardJSON(%q)\n got %q, %v\nwant %q", in, got, err, want)
		}
	}
}

func TestStandardJSONErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1 /* never closed`:   "line 1, column 9: parsing comment: unexpected EOF",
		"{\"a\": 1,\n,}":            "line 2, column 1: invalid character ','",
		`{"token": sk-live-123456}`: "line 1, column 11: invalid value",
		`{"token": "sk-live-\q"}`:   "line 1, column 11: invalid value",
	} {
		if _, err := standardJSON([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "sk-live") {
			t.Errorf("standardJSON(%q) = %v, want %q", in, err, want)
		}
	}
}
