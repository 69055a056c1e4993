package relay_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/browser/browsertest"
	"github.com/mcpx/mcpx/browser/relay"
)

// copyRelay is the baseline: it authenticates one extension, then copies
// frames between it and one MCP client without looking at them, the
// least any relay can do.
type copyRelay struct {
	ext chan *websocket.Conn
}

func (cr *copyRelay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 20)
	ctx := r.Context()
	if r.URL.Path == "/extension" {
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"proxy:1","method":"authenticate","params":{}}`))
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"authenticated","params":{"extension_id":"ext-1"}}`))
		cr.ext <- c
		<-ctx.Done()
		return
	}
	ext := <-cr.ext
	pipe := func(dst, src *websocket.Conn) {
		for {
			typ, data, err := src.Read(ctx)
			if err != nil {
				return
			}
			if dst.Write(ctx, typ, data) != nil {
				return
			}
		}
	}
	go pipe(c, ext)
	pipe(ext, c)
}

// BenchmarkForwardVsCopyRelay measures one forwarded getTabs round trip
// through relay.Server (id mapping, routing) and through a relay that
// only copies frames, to the same kind of scripted extension, in the same
// run, and reports the ratio.
func BenchmarkForwardVsCopyRelay(b *testing.B) {
	b.Run("small", func(b *testing.B) { benchForward(b, 0) })
	// A screenshot-sized answer: what the relay does per byte shows here.
	b.Run("1MiB", func(b *testing.B) { benchForward(b, 1<<20) })
}

func benchForward(b *testing.B, size int) {
	ctx := context.Background()
	serve := func(h http.Handler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		b.Cleanup(func() { _ = srv.Close() })
		return ln.Addr().String()
	}
	srv := relay.New(&relay.Options{StatusInterval: -1})
	defer srv.Close()
	ours := serve(srv)
	base := serve(&copyRelay{ext: make(chan *websocket.Conn, 1)})

	client := func(addr string, viaRelay bool) func() {
		ext := browsertest.NewExtension(browsertest.V19, "Chrome bench")
		b.Cleanup(ext.Close)
		if size > 0 {
			big := json.RawMessage(`{"data":"` + strings.Repeat("A", size) + `"}`)
			ext.Handle("getTabs", func(context.Context, json.RawMessage) (any, error) { return big, nil })
		}
		if err := ext.Connect(ctx, "ws://"+addr+"/extension", ""); err != nil {
			b.Fatal(err)
		}
		c, _, err := websocket.Dial(ctx, "ws://"+addr+"/mcp", nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.CloseNow() })
		c.SetReadLimit(64 << 20)
		id := 0
		call := func(method string, params any) json.RawMessage {
			id++
			msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
			if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
				b.Fatal(err)
			}
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					b.Fatal(err)
				}
				var m struct {
					ID     *int            `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				_ = json.Unmarshal(data, &m)
				if m.ID != nil && *m.ID == id {
					return m.Result
				}
			}
		}
		if viaRelay {
			call("mcp_handshake", map[string]string{"client_id": "bench"})
			call("connect", map[string]string{"extension_id": ext.ID()})
		}
		return func() { call("getTabs", struct{}{}) }
	}
	viaOurs, viaCopy := client(ours, true), client(base, false)

	var to, tc time.Duration
	for b.Loop() {
		start := time.Now()
		viaOurs()
		to += time.Since(start)
		start = time.Now()
		viaCopy()
		tc += time.Since(start)
	}
	b.ReportMetric(float64(to.Microseconds())/float64(b.N), "µs/relay")
	b.ReportMetric(float64(tc.Microseconds())/float64(b.N), "µs/copy")
	b.ReportMetric(float64(to)/float64(tc), "ratio-relay:copy")
}
