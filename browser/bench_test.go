package browser_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/browsertest"
)

// BenchmarkCallVsRawWebSocket measures one getTabs round trip over a
// loopback relay to a scripted extension: through browser.Client, and as
// raw JSON-RPC frames on a WebSocket of its own, in the same run, and
// reports the client's cost as a ratio.
func BenchmarkCallVsRawWebSocket(b *testing.B) {
	relay := browsertest.NewRelay(nil)
	defer relay.Close()
	token := relay.Token("bench", time.Hour)
	ext := browsertest.NewExtension(browsertest.V19, "Chrome bench")
	defer ext.Close()
	if err := ext.Connect(context.Background(), relay.ExtensionURL(), token); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	c := browser.NewClient(browser.Options{Token: token})
	c.Start(ctx)
	defer c.Close()
	if _, err := c.Call(ctx, "getTabs", nil); err != nil {
		b.Fatal(err)
	}

	raw, _, err := websocket.Dial(ctx, relay.MCPURL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.CloseNow()
	id := 0
	rawCall := func(method string, params any) json.RawMessage {
		id++
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err := raw.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		for {
			_, data, err := raw.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			json.Unmarshal(data, &m)
			if m.ID != nil && *m.ID == id {
				if len(m.Error) > 0 {
					b.Fatalf("%s: %s", method, m.Error)
				}
				return m.Result
			}
		}
	}
	rawCall("mcp_handshake", map[string]string{"access_token": token, "client_id": "raw"})
	var list struct{ Extensions []browser.Extension }
	json.Unmarshal(rawCall("list_extensions", struct{}{}), &list)
	rawCall("connect", map[string]string{"extension_id": list.Extensions[0].ID})

	var tc, tr time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := c.Call(ctx, "getTabs", nil); err != nil {
			b.Fatal(err)
		}
		tc += time.Since(start)
		start = time.Now()
		rawCall("getTabs", struct{}{})
		tr += time.Since(start)
	}
	b.ReportMetric(float64(tc.Microseconds())/float64(b.N), "µs/client")
	b.ReportMetric(float64(tr.Microseconds())/float64(b.N), "µs/raw")
	b.ReportMetric(float64(tc)/float64(tr), "ratio-client:raw")
}
