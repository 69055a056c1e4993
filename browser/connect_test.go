package browser_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	"github.com/coder/websocket"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/relay"
	"github.com/mcpx/mcpx/internal/testenv"
)

// stuckRelay answers mcp_handshake and then never answers anything: a
// relay whose extension side is wedged. It counts the list_extensions it
// was asked.
func stuckRelay(t *testing.T, handshake json.RawMessage) (url string, lists chan struct{}) {
	t.Helper()
	lists = make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(data, &m)
			switch m.Method {
			case "mcp_handshake":
				out := []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + string(handshake) + `}`)
				_ = c.Write(r.Context(), websocket.MessageText, out)
			case "list_extensions":
				select {
				case lists <- struct{}{}:
				default:
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/mcp", lists
}

// TestCallsDoNotQueueBehindAConnect: while one call waits for a connect
// that the relay never finishes, another call with a short deadline
// returns at its own deadline instead of waiting behind the first, and
// the first returns as soon as it is cancelled.
func TestCallsDoNotQueueBehindAConnect(t *testing.T) {
	url, lists := stuckRelay(t, json.RawMessage(`"result":{"authenticated":true,"user_id":"u"}`))
	c := browser.NewClient(browser.Options{URL: url, ControlTimeout: time.Minute})
	c.Start(t.Context())
	defer c.Close()

	slowCtx, cancelSlow := context.WithCancel(t.Context())
	slow := make(chan error, 1)
	go func() {
		_, err := c.Call(slowCtx, "getTabs", nil)
		slow <- err
	}()
	// Wait until the connect is under way: the relay has been asked.
	select {
	case <-lists:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay was never asked list_extensions")
	}

	quickCtx, cancelQuick := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancelQuick()
	quick := make(chan error, 1)
	go func() {
		_, err := c.Call(quickCtx, "getTabs", nil)
		quick <- err
	}()
	select {
	case err := <-quick:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the quick call: %v, want its own deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the quick call waited behind the stuck connect")
	}

	cancelSlow()
	select {
	case err := <-slow:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
}

// TestHandshakeRefusals: a relay's refusal keeps its code and message,
// and authenticated: false is an error that says so.
func TestHandshakeRefusals(t *testing.T) {
	cases := []struct {
		name, answer, want string
	}{
		{"error", `"error":{"code":-32099,"message":"Relay over capacity"}`, "Relay over capacity (code -32099)"},
		{"not authenticated", `"result":{"authenticated":false}`, "authenticated: false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := stuckRelay(t, json.RawMessage(tc.answer))
			c := browser.NewClient(browser.Options{URL: url, ReadyTimeout: 5 * time.Second})
			c.Start(t.Context())
			defer c.Close()
			_, err := c.ListExtensions(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to contain %q", err, tc.want)
			}
			if st := c.Status(); !strings.Contains(st.Err, tc.want) {
				t.Fatalf("status error %q, want %q", st.Err, tc.want)
			}
		})
	}
}

// TestLocalModeSquatter: another program holds the local relay's address
// and refuses us. mcpx says so once (not once a second), keeps trying,
// and hosts the relay itself as soon as the address is free.
func TestLocalModeSquatter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var hits atomic.Int32
	squatter := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "not yours", http.StatusForbidden)
	})}
	go func() { _ = squatter.Serve(ln) }()
	defer squatter.Close()

	l, err := relay.NewLocal(relay.LocalOptions{Addr: addr, SecretFile: filepath.Join(t.TempDir(), "secret")})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	logs := &testenv.Buffer{}
	c := browser.NewClient(browser.Options{URL: l.MCPURL(), Prepare: l.Prepare,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: slog.New(log.New(logs))})
	c.Start(t.Context())
	defer c.Close()
	testenv.Eventually(t, 10*time.Second, func() bool { return hits.Load() >= 5 },
		"the client did not try the squatter 5 times")
	if n := strings.Count(logs.String(), "unreachable"); n != 1 {
		t.Fatalf("%d log lines about the refusal after %d tries, want 1:\n%s", n, hits.Load(), logs.String())
	}
	if st := c.Status(); st.Reachable || !strings.Contains(st.Err, "403") {
		t.Fatalf("status %+v, want the 403", st)
	}

	_ = squatter.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for !c.Status().Reachable {
		select {
		case <-ctx.Done():
			t.Fatalf("never took the address over: %+v\n%s", c.Status(), logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if l.Role() != relay.RoleHosting {
		t.Fatalf("role %q", l.Role())
	}
}
