package browsertest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// testCtx is the test's context, bounded so that a hang fails fast.
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newRelay(t testing.TB, opts *RelayOptions) *Relay {
	t.Helper()
	r := NewRelay(opts)
	t.Cleanup(r.Close)
	return r
}

// dialMCP dials the relay's MCP side with a raw client.
func dialMCP(t testing.TB, r *Relay) *rpcClient {
	t.Helper()
	rc, err := dialRPC(testCtx(t), r.MCPURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.close)
	return rc
}

// handshakeMCP dials and handshakes as userID.
func handshakeMCP(t testing.TB, r *Relay, userID string) *rpcClient {
	t.Helper()
	rc := dialMCP(t, r)
	mustCall(t, rc, "mcp_handshake", map[string]any{"access_token": r.Token(userID, time.Hour), "client_id": "test"})
	return rc
}

// connectExtension connects a scripted extension as userID.
func connectExtension(t testing.TB, r *Relay, d Dialect, name, userID string) *Extension {
	t.Helper()
	e := NewExtension(d, name)
	t.Cleanup(e.Close)
	if err := e.Connect(testCtx(t), r.ExtensionURL(), r.Token(userID, time.Hour)); err != nil {
		t.Fatal(err)
	}
	return e
}

// session is an MCP client connected through a relay to a scripted
// extension, both as user "alice".
type session struct {
	r      *Relay
	rc     *rpcClient
	ext    *Extension
	connID string
}

func newSession(t testing.TB, d Dialect, opts *RelayOptions) *session {
	t.Helper()
	r := newRelay(t, opts)
	ext := connectExtension(t, r, d, "Chrome 141", "alice")
	rc := handshakeMCP(t, r, "alice")
	var res struct {
		ConnectionID string `json:"connection_id"`
	}
	unmarshal(t, mustCall(t, rc, "connect", map[string]any{"extension_id": ext.ID()}), &res)
	return &session{r: r, rc: rc, ext: ext, connID: res.ConnectionID}
}

// mustCall calls and fails the test on any error.
func mustCall(t testing.TB, rc *rpcClient, method string, params any) json.RawMessage {
	t.Helper()
	res, rpcErr, err := rc.call(testCtx(t), method, params)
	if err != nil {
		t.Fatal(err)
	}
	if rpcErr != nil {
		t.Fatalf("%s: error %s", method, rpcErr)
	}
	return res
}

// callErr calls and returns the error member, failing the test if there is
// none.
func callErr(t testing.TB, rc *rpcClient, method string, params any) json.RawMessage {
	t.Helper()
	res, rpcErr, err := rc.call(testCtx(t), method, params)
	if err != nil {
		t.Fatal(err)
	}
	if rpcErr == nil {
		t.Fatalf("%s: want an error, got result %s", method, res)
	}
	return rpcErr
}

// cdp calls forwardCDPCommand.
func cdp(method string, params any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	return map[string]any{"method": method, "params": params}
}

type codeMessage struct {
	Code    *int   `json:"code"`
	Message string `json:"message"`
	Stack   string `json:"stack"`
}

func decodeErr(t testing.TB, raw json.RawMessage) codeMessage {
	t.Helper()
	var e codeMessage
	unmarshal(t, raw, &e)
	return e
}

// wantCode checks a {code, message} error.
func wantCode(t testing.TB, raw json.RawMessage, code int, msgPart string) {
	t.Helper()
	e := decodeErr(t, raw)
	if e.Code == nil || *e.Code != code || !strings.Contains(e.Message, msgPart) {
		t.Fatalf("error %s: want code %d and a message containing %q", raw, code, msgPart)
	}
}

func unmarshal(t testing.TB, data json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// awaitNotification waits for a notification of the given method.
func awaitNotification(t testing.TB, rc *rpcClient, method string) json.RawMessage {
	t.Helper()
	data, err := rc.await(testCtx(t), func(m message) bool { return m.Method == method && !m.HasID() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", method, err)
	}
	var m message
	unmarshal(t, data, &m)
	return m.Params
}
