package aggregator

import (
	"encoding/json"
	"testing"

	"github.com/mcpx/mcpx/config"
)

// TestProxyCallPath: the path of a proxy call of a tool is read in place
// as the proxy tool reads its arguments (exact keys, the last of a
// repeated one, escapes decoded), and anything else has none.
func TestProxyCallPath(t *testing.T) {
	cases := []struct{ params, want string }{
		{`{"name":"proxy","arguments":{"action":"call","type":"tool","path":"fs_read"}}`, "fs_read"},
		{`{"arguments":{"path":"a","type":"tool","action":"call","args":{"path":"not this"}}}`, "a"},
		{`{"arguments":{"action":"call","type":"tool","path":"a","path":"b"}}`, "b"},
		{`{"arguments":{"action":"c\u0061ll","type":"tool","path":"fs_\u00e9"}}`, "fs_é"},
		{`{"arguments":{"action":"run","code":"proxy.call('x')","type":"tool","path":"x"}}`, ""},
		{`{"arguments":{"action":"call","type":"resource","path":"file:///a"}}`, ""},
		{`{"arguments":{"action":"call","path":"fs_read"}}`, ""},
		{`{"arguments":{"Action":"call","type":"tool","path":"fs_read"}}`, ""},
		{`{"arguments":{"action":"call","type":"tool","path":7}}`, ""},
		{`{"arguments":"call"}`, ""},
		{`{"name":"proxy"}`, ""},
		{`not json`, ""},
		{``, ""},
	}
	for _, c := range cases {
		if got := proxyCallPath(json.RawMessage(c.params)); got != c.want {
			t.Errorf("proxyCallPath(%s) = %q, want %q", c.params, got, c.want)
		}
	}
}

// TestNeedsApproval: each policy against each way a tool may be marked,
// absent hints read as MCP's defaults (not read-only, destructive).
func TestNeedsApproval(t *testing.T) {
	tools := []struct{ name, tool string }{
		{"unmarked", `{"name":"t","inputSchema":{"type":"object"}}`},
		{"read-only", `{"name":"t","annotations":{"readOnlyHint":true}}`},
		{"read-only, destructive", `{"name":"t","annotations":{"readOnlyHint":true,"destructiveHint":true}}`},
		{"write, not destructive", `{"name":"t","annotations":{"readOnlyHint":false,"destructiveHint":false}}`},
		{"write, destructive", `{"annotations":{"destructiveHint":true},"name":"t"}`},
		{"hints null", `{"name":"t","annotations":{"readOnlyHint":null,"destructiveHint":null}}`},
		{"hint in the schema only", `{"name":"t","inputSchema":{"annotations":{"readOnlyHint":true}}}`},
	}
	want := map[config.Approve][]bool{
		//                      unmarked read-only ro+destr  write   w+destr  null   schema
		config.ApproveWrites:      {true, false, true, true, true, true, true},
		config.ApproveDestructive: {true, false, true, false, true, true, true},
		config.ApproveAll:         {true, true, true, true, true, true, true},
		config.ApproveNone:        {false, false, false, false, false, false, false},
	}
	for policy, w := range want {
		for i, tc := range tools {
			if got := needsApproval(policy, json.RawMessage(tc.tool)); got != w[i] {
				t.Errorf("code.approve %s, %s tool: asks %v, want %v", policy, tc.name, got, w[i])
			}
		}
	}
}
