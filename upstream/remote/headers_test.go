package remote

import (
	"errors"
	"net/http"
	"testing"
)

// TestToolParamHeaders: valid annotations give their headers (nested
// ones too); each kind of invalid one is an error naming the property.
func TestToolParamHeaders(t *testing.T) {
	for _, tc := range []struct {
		schema  string
		want    map[string]string // header -> dotted path
		invalid bool
	}{
		{`{"type":"object","properties":{"q":{"type":"string"}}}`, nil, false},
		{`{"properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"deep":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}}`,
			map[string]string{"Region": "region", "N": "n", "B": "deep.b"}, false},
		{`{"properties":{"v":{"type":"string","x-mcp-header":""}}}`, nil, true},
		{`{"properties":{"v":{"type":"object","x-mcp-header":"V"}}}`, nil, true},
		{`{"properties":{"v":{"type":"number","x-mcp-header":"V"}}}`, nil, true},
		{`{"properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`, nil, true},
		{`{"properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`, nil, true},
		{`{"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, nil, true},
	} {
		got, err := ToolParamHeaders([]byte(tc.schema))
		if tc.invalid {
			if !errors.Is(err, ErrInvalidParamHeader) {
				t.Errorf("%s: err %v, want ErrInvalidParamHeader", tc.schema, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.schema, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.schema, got, tc.want)
		}
		for _, h := range got {
			path := ""
			for i, p := range h.Path {
				if i > 0 {
					path += "."
				}
				path += p
			}
			if tc.want[h.Name] != path {
				t.Errorf("%s: header %s at %s, want %q", tc.schema, h.Name, path, tc.want[h.Name])
			}
		}
	}
}

// TestRequestHeaders: Mcp-Method always, Mcp-Name for the three methods
// that name something, and a tool's Mcp-Param-* encoded as the spec
// says (Base64 where the value needs it, nothing for null or missing).
func TestRequestHeaders(t *testing.T) {
	tools := func(name string) []ParamHeader {
		if name != "t" {
			return nil
		}
		return []ParamHeader{{[]string{"s"}, "S"}, {[]string{"n"}, "N"}, {[]string{"b"}, "B"}, {[]string{"sp"}, "Sp"},
			{[]string{"u"}, "U"}, {[]string{"null"}, "Null"}, {[]string{"gone"}, "Gone"}, {[]string{"f"}, "F"}}
	}
	h := http.Header{}
	setRequestHeaders(h, "tools/call", []byte(`{"name":"t","arguments":{"s":"us-west1","n":42,"b":true,"sp":" x","u":"é","null":null,"f":1.5}}`), tools)
	want := map[string]string{
		"Mcp-Method": "tools/call", "Mcp-Name": "t", "Mcp-Param-S": "us-west1", "Mcp-Param-N": "42",
		"Mcp-Param-B": "true", "Mcp-Param-Sp": "=?base64?IHg=?=", "Mcp-Param-U": "=?base64?w6k=?=",
		"Mcp-Param-Null": "", "Mcp-Param-Gone": "", "Mcp-Param-F": "",
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	h = http.Header{}
	setRequestHeaders(h, "resources/read", []byte(`{"uri":"file:///a%20b"}`), tools)
	if h.Get("Mcp-Method") != "resources/read" || h.Get("Mcp-Name") != "file:///a%20b" {
		t.Errorf("resources/read headers: %v", h)
	}
	h = http.Header{}
	setRequestHeaders(h, "tools/list", []byte(`{}`), tools)
	if h.Get("Mcp-Method") != "tools/list" || h.Get("Mcp-Name") != "" {
		t.Errorf("tools/list headers: %v", h)
	}
}
