package upstream

import (
	"encoding/json"
	"testing"

	"github.com/mcpx/mcpx/config"
)

// TestSpliceMeta: mcpx's fields go first in _meta, every other byte of
// the params as it was, whatever shape the params come in.
func TestSpliceMeta(t *testing.T) {
	const f = `"v":1`
	for _, tc := range []struct{ in, want string }{
		{``, `{"_meta":{"v":1}}`},
		{`null`, `{"_meta":{"v":1}}`},
		{`{}`, `{"_meta":{"v":1}}`},
		{` { }`, `{"_meta":{"v":1} }`},
		{`{"name":"x"}`, `{"_meta":{"v":1},"name":"x"}`},
		{`{"_meta":{"progressToken":"mcpx-1"},"name":"x"}`, `{"_meta":{"v":1,"progressToken":"mcpx-1"},"name":"x"}`},
		{`{"_meta":{},"name":"x"}`, `{"_meta":{"v":1},"name":"x"}`},
		{`{"name":"x","_meta":{"k":true}}`, `{"name":"x","_meta":{"v":1,"k":true}}`},
		{`{"name":"x","arguments":{"_meta":1}}`, `{"_meta":{"v":1},"name":"x","arguments":{"_meta":1}}`},
		// A modern caller's own _meta is passed through as it is.
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
		{`[1]`, `[1]`},
		{`{"_meta":"odd"}`, `{"_meta":"odd"}`},
	} {
		got := spliceMeta(json.RawMessage(tc.in), []byte(f))
		if string(got) != tc.want {
			t.Errorf("spliceMeta(%s) = %s, want %s", tc.in, got, tc.want)
		}
		if tc.want[0] == '{' && !json.Valid(got) {
			t.Errorf("spliceMeta(%s) = %s: not JSON", tc.in, got)
		}
	}
}

// BenchmarkSpliceMeta is mcpx's own cost of a modern request over a
// legacy one: the _meta spliced into a tools/call's params, in the shapes
// the hot path sees.
func BenchmarkSpliceMeta(b *testing.B) {
	cn := &conn{c: New(config.Server{Name: "bench"}, nil)}
	meta, err := cn.metaFields()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, params string }{
		{"no-meta", `{"name":"echo","arguments":{"message":"hi"}}`},
		{"progress-first", `{"_meta":{"progressToken":"mcpx-1"},"name":"echo","arguments":{"message":"hi"}}`},
		{"meta-last", `{"name":"echo","arguments":{"message":"hi"},"_meta":{"progressToken":7}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := json.RawMessage(bc.params)
			b.ReportAllocs()
			for b.Loop() {
				spliceMeta(p, meta)
			}
		})
	}
}
