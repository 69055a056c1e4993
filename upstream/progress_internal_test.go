package upstream

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/rawjson"
)

// TestRouteProgressOwnToken: under a callTimeout a request gets a
// progress token of mcpx's own, its id, spliced into its params with
// every other byte kept, whether it had _meta or not; the caller's own
// token is swapped.
func TestRouteProgressOwnToken(t *testing.T) {
	cn := &conn{}
	c := &Client{limits: newCallLimits("s", config.Limits{CallTimeout: time.Minute})}
	lc := c.limit("tools/call", nil)
	defer lc.stop()
	for _, params := range []string{
		`{}`,
		` { } `,
		`{"name":"echo","arguments":{"s":"_meta"}}`,
		`{"name":"echo","_meta":{"other":1}}`,
		`{"name":"echo","_meta":{"progressToken":7}}`,
		`{"_meta":{ },"name":"echo"}`,
		`{"_meta":null,"name":"echo"}`,
		`{"name":"echo","_meta":{"a":[1,{"progressToken":2}],"progressToken":"caller" ,"b":{}}}`,
	} {
		const id = "mcpx-7"
		got, routed := cn.routeProgress(id, lc, nil, json.RawMessage(params))
		if !json.Valid(got) {
			t.Fatalf("%s -> invalid JSON %s", params, got)
		}
		meta, err := rawjson.Get(got, "_meta")
		if err != nil {
			t.Fatalf("%s -> %s: %v", params, got, err)
		}
		tok, _ := rawjson.Get(meta, "progressToken")
		own, ok := rawjson.String(tok)
		if !ok || own != id || !routed {
			t.Fatalf("%s -> %s (routed %v): want the token %q of mcpx's own", params, got, routed, id)
		}
		if _, ok := cn.progress[own]; !ok {
			t.Errorf("%s: token %s not routed", params, own)
		}
		for _, key := range []string{"name", "arguments"} {
			want, _ := rawjson.Get(json.RawMessage(params), key)
			have, _ := rawjson.Get(got, key)
			if string(want) != string(have) {
				t.Errorf("%s -> %s: %s changed", params, got, key)
			}
		}
		if was, _ := rawjson.Get(json.RawMessage(params), "_meta"); len(was) > 0 && was[0] == '{' {
			_ = rawjson.Members(was, func(key string, v []byte) bool {
				if have, _ := rawjson.Get(meta, key); key != "progressToken" && string(have) != string(v) {
					t.Errorf("%s -> %s: _meta's %s changed", params, got, key)
				}
				return true
			})
		}
		cn.unroute(id, routed)
		if _, ok := cn.progress[own]; ok {
			t.Errorf("%s: route left after unroute", params)
		}
	}
}

// TestRelayProgressKeepsBytes: a server's progress reaches the caller with
// the caller's token put back and every other byte as the server wrote
// it, on one line: a progress past 2^53 keeps its digits, _meta and
// members mcpx does not know stay. A token no call holds is dropped.
func TestRelayProgressKeepsBytes(t *testing.T) {
	cn := &conn{}
	var got []string
	cn.route("mcpx-3", progressRoute{token: json.RawMessage(`{"k":[1]}`), report: func(p json.RawMessage) { got = append(got, string(p)) }})
	cn.relayProgress(json.RawMessage("{\"progressToken\":\"mcpx-3\",\n \"progress\":18446744073709551617,\"total\":1e3,\"_meta\":{\"x\":true},\"extra\":\"\\u00e9\"}"))
	cn.relayProgress(json.RawMessage(`{"progressToken":"mcpx-4","progress":1}`))
	want := `{"progressToken":{"k":[1]},"progress":18446744073709551617,"total":1e3,"_meta":{"x":true},"extra":"\u00e9"}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("relayed %q, want [%s]", got, want)
	}
}
