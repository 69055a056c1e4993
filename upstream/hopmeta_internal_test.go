package upstream

import (
	"encoding/json"
	"testing"
)

func TestWithoutHopMeta(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// A legacy client's request: untouched.
		{`{"name":"echo","arguments":{"a":1},"_meta":{"progressToken":7}}`, `{"name":"echo","arguments":{"a":1},"_meta":{"progressToken":7}}`},
		{`{"name":"echo"}`, `{"name":"echo"}`},
		// A modern client's: its hop's keys go, the rest stays in order.
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-x","io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/logLevel":"info"},"arguments":{}}`,
			`{"name":"echo","_meta":{"progressToken":"p","traceparent":"00-x"},"arguments":{}}`},
		// Nothing left: no _meta at all.
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"x":"y"}}`,
			`{"name":"echo","arguments":{"x":"y"}}`},
		// Another vendor's io.modelcontextprotocol key is not a hop's.
		{`{"_meta":{"io.modelcontextprotocol/related-task":{"id":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
			`{"_meta":{"io.modelcontextprotocol/related-task":{"id":"1"}}}`},
		// The same key deeper down, in the arguments: not the request's.
		{`{"name":"echo","arguments":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`,
			`{"name":"echo","arguments":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`},
		// Not an object: as it came.
		{`[1,2]`, `[1,2]`},
	} {
		got := withoutHopMeta(json.RawMessage(tc.in))
		if string(got) != tc.want {
			t.Errorf("withoutHopMeta(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("withoutHopMeta(%s) = %s: not JSON", tc.in, got)
		}
	}
}
