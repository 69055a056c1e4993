package upstream

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx/mcpx/jsonrpc"
)

var hopMetaCases = []struct{ in, want string }{
	// A legacy client's request: untouched.
	{`{"name":"echo","arguments":{"a":1},"_meta":{"progressToken":7}}`, `{"name":"echo","arguments":{"a":1},"_meta":{"progressToken":7}}`},
	{`{"name":"echo"}`, `{"name":"echo"}`},
	// A modern client's: its hop's keys go, the rest stays in order.
	{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-x","io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/logLevel":"info"},"arguments":{}}`,
		`{"name":"echo","_meta":{"progressToken":"p","traceparent":"00-x"},"arguments":{}}`},
	// Nothing left: no _meta at all, wherever it was.
	{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"x":"y"}}`,
		`{"name":"echo","arguments":{"x":"y"}}`},
	{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, `{"name":"echo"}`},
	{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{}}`, `{"name":"echo","arguments":{}}`},
	{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, `{}`},
	// Another vendor's io.modelcontextprotocol key is not a hop's.
	{`{"_meta":{"io.modelcontextprotocol/related-task":{"id":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":{"io.modelcontextprotocol/related-task":{"id":"1"}}}`},
	// The same key deeper down, in the arguments: not the request's.
	{`{"name":"echo","arguments":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`,
		`{"name":"echo","arguments":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`},
	// A _meta that is not an object is the server's to refuse.
	{`{"name":"echo","_meta":"io.modelcontextprotocol/protocolVersion"}`, `{"name":"echo","_meta":"io.modelcontextprotocol/protocolVersion"}`},
	// Space between members goes; space inside values stays.
	{`{ "name" : "a b", "_meta" : { "io.modelcontextprotocol/protocolVersion" : "2026-07-28", "k" : [1, 2] } }`,
		`{"name":"a b","_meta":{"k":[1, 2]}}`},
	// Not an object: as it came.
	{`[1,2]`, `[1,2]`},
}

func TestWithoutHopMeta(t *testing.T) {
	for _, tc := range hopMetaCases {
		got := withoutHopMeta(json.RawMessage(tc.in))
		if string(got) != tc.want {
			t.Errorf("withoutHopMeta(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("withoutHopMeta(%s) = %s: not JSON", tc.in, got)
		}
	}
}

// TestLegacyRequestLine: the line to a legacy server carries the params
// withoutHopMeta leaves, on one line, in a request that reads back.
func TestLegacyRequestLine(t *testing.T) {
	cases := append(hopMetaCases, struct{ in, want string }{
		// Pretty-printed: one line all the same.
		"{\n  \"name\": \"echo\",\n  \"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\",\n \"progressToken\": 1}\n}",
		`{"name":"echo","_meta":{"progressToken":1}}`,
	})
	for _, tc := range cases {
		line := legacyRequestLine(json.RawMessage(`"mcpx-1"`), "tools/call", json.RawMessage(tc.in))
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Errorf("legacyRequestLine(%q) = %q: not one line", tc.in, line)
			continue
		}
		var m jsonrpc.Message
		if err := json.Unmarshal(line, &m); err != nil {
			t.Errorf("legacyRequestLine(%s) = %s: %v", tc.in, line, err)
			continue
		}
		if string(m.ID) != `"mcpx-1"` || m.Method != "tools/call" || m.JSONRPC != "2.0" {
			t.Errorf("legacyRequestLine(%s) = %s: wrong envelope", tc.in, line)
		}
		if string(m.Params) != tc.want {
			t.Errorf("legacyRequestLine(%s)\n params %s\n   want %s", tc.in, m.Params, tc.want)
		}
	}
}

// BenchmarkLegacyRequestLine: the line of a modern client's tools/call to
// a legacy server, its hop keys taken out, against the line of the same
// call from a legacy client (no _meta), built in turn in one loop. It
// reports hop-free/legacy, the cost of the modern request's line as a
// share of the legacy one's.
func BenchmarkLegacyRequestLine(b *testing.B) {
	id := json.RawMessage(`"mcpx-12"`)
	legacy := json.RawMessage(`{"name":"echo","arguments":{"message":"hi"}}`)
	modern := json.RawMessage(`{"name":"echo","arguments":{"message":"hi"},` +
		`"_meta":{"progressToken":"mcpx-12","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	if m := legacyRequestLine(id, "tools/call", modern); !bytes.Contains(m, []byte(`"_meta":{"progressToken":"mcpx-12"}}`)) {
		b.Fatalf("line %s", m)
	}
	var tl, tm time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range 100 {
			sink = legacyRequestLine(id, "tools/call", legacy)
		}
		t1 := time.Now()
		for range 100 {
			sink = legacyRequestLine(id, "tools/call", modern)
		}
		tl, tm = tl+t1.Sub(t0), tm+time.Since(t1)
	}
	b.ReportMetric(float64(tm)/float64(tl), "hop-free/legacy")
}

var sink []byte
