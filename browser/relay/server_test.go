package relay

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/jsonrpc"
)

// serve starts srv on a free loopback port and returns host:port.
func serve(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return ln.Addr().String()
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// upgrade tries a WebSocket upgrade and returns the HTTP status (101 on
// success) and the body of a refusal.
//
// A "Host" in hdr goes in the URL, with the connection made to the real
// address, as a browser whose DNS answer was rebound to 127.0.0.1 would.
func upgrade(t *testing.T, url string, hdr http.Header) (int, string) {
	t.Helper()
	opts := &websocket.DialOptions{HTTPHeader: hdr}
	if host := hdr.Get("Host"); host != "" {
		addr := strings.SplitN(strings.TrimPrefix(url, "ws://"), "/", 2)[0]
		url = strings.Replace(url, addr, host, 1)
		opts.HTTPClient = &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
		}}
	}
	c, resp, err := websocket.Dial(testCtx(t), url, opts)
	if err == nil {
		defer c.CloseNow()
		return resp.StatusCode, ""
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	return resp.StatusCode, err.Error()
}

// TestDoors checks who may open a socket: the relay is a door into the
// user's logged-in browser.
func TestDoors(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	srv := New(&Options{Secret: secret, ExtensionIDs: []string{"allowedallowedallowedallowedallo"}})
	addr := serve(t, srv)
	ext := "ws://" + addr + "/extension"
	mcp := "ws://" + addr + "/mcp"
	bearer := http.Header{"Authorization": {"Bearer " + secret}}
	with := func(h http.Header, k, v string) http.Header {
		out := h.Clone()
		if out == nil {
			out = http.Header{}
		}
		out.Set(k, v)
		return out
	}
	cases := []struct {
		name   string
		url    string
		hdr    http.Header
		status int
	}{
		{"extension with an allowed extension origin", ext, http.Header{"Origin": {"chrome-extension://allowedallowedallowedallowedallo"}}, 101},
		{"extension from another extension", ext, http.Header{"Origin": {"chrome-extension://otherotherotherotherotherotherot"}}, 403},
		{"extension from a web page", ext, http.Header{"Origin": {"https://evil.example"}}, 403},
		{"extension without an origin", ext, nil, 403},
		{"mcp with the secret", mcp, bearer, 101},
		{"mcp without the secret", mcp, nil, 401},
		{"mcp with a wrong secret", mcp, http.Header{"Authorization": {"Bearer " + strings.Repeat("x", len(secret))}}, 401},
		{"mcp with a secret but from a web page", mcp, with(bearer, "Origin", "https://evil.example"), 403},
		{"mcp from an extension page", mcp, with(bearer, "Origin", "chrome-extension://allowedallowedallowedallowedallo"), 403},
		{"mcp through a rebound DNS name", mcp, with(bearer, "Host", "evil.example:5555"), 403},
		{"extension through a rebound DNS name", ext, http.Header{"Origin": {"chrome-extension://allowedallowedallowedallowedallo"}, "Host": {"attacker.test"}}, 403},
		{"mcp by localhost name", mcp, with(bearer, "Host", "localhost:5555"), 101},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, body := upgrade(t, tc.url, tc.hdr)
			if got != tc.status {
				t.Fatalf("status %d (%s), want %d", got, body, tc.status)
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:5555": true, "127.8.9.10": true, "localhost:1": true, "LOCALHOST": true,
		"[::1]:5555": true, "::1": true, "evil.example:5555": false, "192.168.1.2:5555": false,
		"0.0.0.0:5555": false, "": false, "localhost.evil.example": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestLocalModeNeedsNoToken: without Authenticate, an extension that
// answers authenticate without any token and an MCP client that sends
// mcp_handshake without one both get in, as the same user.
func TestLocalModeNeedsNoToken(t *testing.T) {
	srv := New(nil)
	addr := serve(t, srv)
	ctx := testCtx(t)
	ec, _, err := websocket.Dial(ctx, "ws://"+addr+"/extension", &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {"chrome-extension://abcdefghabcdefghabcdefghabcdefgh"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ec.CloseNow()
	var auth message
	readJSON(t, ec, &auth)
	if auth.Method != "authenticate" || jsonrpc.IDKey(auth.ID) != "proxy:1" {
		t.Fatalf("first frame %+v, want authenticate proxy:1", auth)
	}
	writeJSON(t, ec, map[string]any{"jsonrpc": "2.0", "id": "proxy:1", "result": map[string]any{"name": "Chrome 156", "client_id": "chrome-1", "currentTab": nil}})
	if _, err := srv.WaitExtension(ctx, "Chrome 156"); err != nil {
		t.Fatal(err)
	}

	mc, _, err := websocket.Dial(ctx, "ws://"+addr+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.CloseNow()
	writeJSON(t, mc, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "mcp_handshake", "params": map[string]any{"client_id": "mcpx"}})
	var hs struct {
		Result struct {
			Authenticated bool   `json:"authenticated"`
			UserID        string `json:"user_id"`
		} `json:"result"`
	}
	readJSON(t, mc, &hs)
	if !hs.Result.Authenticated || hs.Result.UserID != LocalUser {
		t.Fatalf("handshake %+v", hs)
	}
	writeJSON(t, mc, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "list_extensions"})
	for {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				Extensions []struct{ Name string } `json:"extensions"`
			} `json:"result"`
		}
		readJSON(t, mc, &m)
		if string(m.ID) != "2" {
			continue // the status notification after the handshake
		}
		if len(m.Result.Extensions) != 1 || m.Result.Extensions[0].Name != "Chrome 156" {
			t.Fatalf("list_extensions %+v", m.Result)
		}
		break
	}
	if st := srv.Stats(); st.Clients != 1 || len(st.Extensions) != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func readJSON(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	_, data, err := c.Read(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
}

func writeJSON(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	data, _ := json.Marshal(v)
	if err := c.Write(testCtx(t), websocket.MessageText, data); err != nil {
		t.Fatal(err)
	}
}
