package upstream_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// TestMaxMessageBytesStdio: an answer over the limit fails its call with
// an error naming the server, the size and the limit, costs mcpx a small
// multiple of the limit in memory, and leaves the connection up.
func TestMaxMessageBytesStdio(t *testing.T) {
	// Not parallel: TotalAlloc counts the whole process, and other tests'
	// allocations must not be charged to this answer.
	const limit = 1 << 20
	opts := fastOptions()
	opts.MaxMessageBytes = limit
	c := connect(t, stdioServer("huge"), opts)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := callTool(t, c, "big", map[string]any{"bytes": 64 << 20})
	runtime.ReadMemStats(&after)
	var rpc *upstream.RPCError
	if !errors.As(err, &rpc) {
		t.Fatalf("err = %v, want the server's answer turned into an *RPCError", err)
	}
	for _, want := range []string{`server "huge"`, "64 MiB", "over the limit of 1 MiB", "maxMessageBytes"} {
		if !strings.Contains(rpc.Message, want) {
			t.Errorf("error %q does not say %q", rpc.Message, want)
		}
	}
	// Loose, for what background goroutines allocate meanwhile: reading
	// the 64 MiB answer whole would cost more than 64 MiB by itself.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32*limit {
		t.Errorf("a 64 MiB answer under a 1 MiB limit allocated %d MiB", alloc>>20)
	} else {
		t.Logf("a 64 MiB answer under a 1 MiB limit allocated %.1f MiB", float64(alloc)/(1<<20))
	}
	if got := mustCallText(t, c, "big", map[string]any{"bytes": 1000}); len(got) != 1000 {
		t.Errorf("a small answer after the big one: %d bytes", len(got))
	}
	if st := c.Status(); st.State != upstream.StateConnected || st.Restarts != 0 {
		t.Errorf("state %s after %d restarts, want connected without one", st.State, st.Restarts)
	}
}

// tinyHTTPServer is a streamable-HTTP MCP server with one tool, big
// {bytes, sse}, that answers with that many bytes of text, as a JSON body
// or as an SSE event.
func tinyHTTPServer(t testing.TB) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Bytes int  `json:"bytes"`
					SSE   bool `json:"sse"`
				} `json:"arguments"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		sse := false
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"big","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			text, _ := json.Marshal(strings.Repeat("b", req.Params.Arguments.Bytes))
			result = `{"content":[{"type":"text","text":` + string(text) + `}]}`
			sse = req.Params.Arguments.SSE
		default:
			result = `{}`
		}
		msg := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, msg)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestMaxMessageBytesHTTP: the same limit holds for a remote server's
// JSON bodies and SSE events.
func TestMaxMessageBytesHTTP(t *testing.T) {
	t.Parallel()
	srv := tinyHTTPServer(t)
	opts := fastOptions()
	opts.MaxMessageBytes = 64 << 10
	opts.Heartbeat = -1
	c := connect(t, config.Server{Name: "tiny", Transport: config.TransportHTTP, URL: srv.URL + "/mcp",
		Enabled: true, Timeout: 10 * time.Second}, opts)
	for _, sse := range []bool{false, true} {
		_, err := callTool(t, c, "big", map[string]any{"bytes": 1 << 20, "sse": sse})
		var rpc *upstream.RPCError
		if !errors.As(err, &rpc) || !strings.Contains(rpc.Message, "over the limit of 64 KiB") || !strings.Contains(rpc.Message, `server "tiny"`) {
			t.Errorf("sse %v: err = %v, want an error naming the server and the limit", sse, err)
		}
		raw, err := callTool(t, c, "big", map[string]any{"bytes": 100, "sse": sse})
		if err != nil || !strings.Contains(string(raw), strings.Repeat("b", 100)) {
			t.Errorf("sse %v: a small answer after the big one: %s, %v", sse, truncate(raw), err)
		}
	}
}
