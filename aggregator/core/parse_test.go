package core

import "testing"

// TestParseMessageCommonStrings: the strings ParseMessage takes without
// allocating are the ones the JSON says, escapes or not, and anything
// else still decodes.
func TestParseMessageCommonStrings(t *testing.T) {
	for _, tc := range []struct{ line, version, method string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "2.0", "tools/call"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, "2.0", "notifications/cancelled"},
		{`{"jsonrpc":"2.0","method":"notifications/progress"}`, "2.0", "notifications/progress"},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, "2.0", "ping"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools\/call"}`, "2.0", "tools/call"},
		{`{"jsonrpc":"2\u002e0","id":4,"method":"tools/list"}`, "2.0", "tools/list"},
	} {
		m, err := ParseMessage([]byte(tc.line))
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if m.JSONRPC != tc.version || m.Method != tc.method {
			t.Errorf("%s: jsonrpc %q method %q, want %q %q", tc.line, m.JSONRPC, m.Method, tc.version, tc.method)
		}
	}
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseMessage(call) }); n > 1 {
		t.Errorf("ParseMessage of a call allocates %.0f times, want at most 1", n)
	}
}
