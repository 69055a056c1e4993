package core

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestComplete checks what a modern result gains over the source's:
// resultType, serverInfo in _meta (merged with the source's), and for a
// cacheable one ttlMs and cacheScope; what the source set stays.
func TestComplete(t *testing.T) {
	s, err := NewServer(nil, &Options{Version: "1.0"})
	if err != nil {
		t.Fatal(err)
	}
	info := map[string]any{"name": "mcpx", "version": "1.0"}
	tests := []struct {
		name      string
		res       string
		cacheable bool
		want      map[string]any
	}{
		{"empty", `{}`, false, map[string]any{"resultType": "complete", "_meta": map[string]any{metaServerInfo: info}}},
		{"content", `{"content":[]}`, false, map[string]any{"resultType": "complete", "content": []any{}, "_meta": map[string]any{metaServerInfo: info}}},
		{"list", `{"tools":[]}`, true, map[string]any{"resultType": "complete", "tools": []any{}, "ttlMs": 0.0, "cacheScope": "private", "_meta": map[string]any{metaServerInfo: info}}},
		{"source's meta and type kept", `{"_meta":{"k":1},"resultType":"complete","ttlMs":5}`, true,
			map[string]any{"resultType": "complete", "ttlMs": 5.0, "cacheScope": "private", "_meta": map[string]any{"k": 1.0, metaServerInfo: info}}},
		{"empty meta", `{"content":[],"_meta":{}}`, false, map[string]any{"resultType": "complete", "content": []any{}, "_meta": map[string]any{metaServerInfo: info}}},
		{"meta with spaces", " { \"_meta\" : { \"k\" : 1 } , \"x\" : 2 } ", false,
			map[string]any{"resultType": "complete", "x": 2.0, "_meta": map[string]any{"k": 1.0, metaServerInfo: info}}},
		{"source's serverInfo replaced", `{"_meta":{"k":1,"` + metaServerInfo + `":{"name":"up"}}}`, false,
			map[string]any{"resultType": "complete", "_meta": map[string]any{"k": 1.0, metaServerInfo: info}}},
		{"meta not an object left", `{"_meta":null,"x":1}`, false, map[string]any{"resultType": "complete", "_meta": nil, "x": 1.0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := s.complete(json.RawMessage(tt.res), tt.cacheable)
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("complete(%s) = %s", tt.res, out)
			}
			if n := strings.Count(string(out), metaServerInfo); n > 1 {
				t.Errorf("complete(%s) = %s: serverInfo %d times", tt.res, out, n)
			}
		})
	}
}

func TestParseMeta(t *testing.T) {
	tests := []struct {
		params string
		code   int
	}{
		{`{}`, CodeInvalidParams},
		{`{"_meta":{}}`, CodeInvalidParams},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}`, CodeInvalidParams},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, CodeUnsupportedProtocolVersion},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, CodeInvalidParams},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`, CodeInvalidParams},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}`, CodeInvalidParams},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`, 0},
		{`[1]`, CodeInvalidParams},
	}
	for _, tt := range tests {
		m, err := ParseMeta(json.RawMessage(tt.params))
		switch {
		case tt.code == 0 && err != nil:
			t.Errorf("ParseMeta(%s): %v", tt.params, err)
		case tt.code == 0 && !m.Capabilities.Elicitation:
			t.Errorf("ParseMeta(%s): capabilities %+v", tt.params, m.Capabilities)
		case tt.code != 0 && (err == nil || err.Code != tt.code):
			t.Errorf("ParseMeta(%s) = %v, want code %d", tt.params, err, tt.code)
		}
	}
	_, err := ParseMeta(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`))
	var data struct {
		Supported []string
		Requested string
	}
	if err == nil || json.Unmarshal(err.Data, &data) != nil || data.Requested != "1999-01-01" || !reflect.DeepEqual(data.Supported, SupportedVersions()) {
		t.Errorf("unsupported version error: %+v", err)
	}
}
