package upstream_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/mcpx/mcpx/upstream"
)

func TestConnect(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("alpha"), nil)

	st := c.Status()
	if st.Name != "alpha" || st.ServerInfo.Name != "alpha" {
		t.Errorf("Name %q, ServerInfo.Name %q; want alpha for both", st.Name, st.ServerInfo.Name)
	}
	if st.ConnectTime <= 0 {
		t.Errorf("ConnectTime = %v, want > 0", st.ConnectTime)
	}
	if st.Attempts != 1 || st.Restarts != 0 || st.Err != "" {
		t.Errorf("Attempts %d, Restarts %d, Err %q; want 1, 0, empty", st.Attempts, st.Restarts, st.Err)
	}
	if st.ProtocolVersion == "" {
		t.Error("ProtocolVersion is empty")
	}
	// The fixture's catalog: 10 built-in tools, 4 resources, 1 template,
	// 1 prompt (testdata/fixture/README.md).
	cat := c.Catalog()
	got := [4]int{len(cat.Tools), len(cat.Resources), len(cat.ResourceTemplates), len(cat.Prompts)}
	if want := [4]int{10, 4, 1, 1}; got != want {
		t.Errorf("catalog sizes (tools, resources, templates, prompts) = %v, want %v", got, want)
	}
	counts := [4]int{st.Tools, st.Resources, st.ResourceTemplates, st.Prompts}
	if counts != got {
		t.Errorf("Status counts %v disagree with the catalog %v", counts, got)
	}
}

func TestConnectGeneratedTools(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("many", "--tools", "500"), nil)
	if n := len(c.Tools()); n != 510 {
		t.Errorf("%d tools, want 510 (10 built-in and 500 generated)", n)
	}
}

func TestDisabledNeverStarts(t *testing.T) {
	t.Parallel()
	srv := stdioServer("off")
	srv.Enabled = false
	c := startClient(t, srv, nil)
	if st := c.Status(); st.State != upstream.StateDisabled || st.Attempts != 0 {
		t.Errorf("state %s after %d attempts, want disabled after none", st.State, st.Attempts)
	}
	_, err := callTool(t, c, "echo", map[string]any{"message": "x"})
	if !errors.Is(err, upstream.ErrNotConnected) {
		t.Errorf("request on a disabled server: %v, want ErrNotConnected", err)
	}
}

// A server whose config has a Problem (an unset ${VAR}) is failed with
// it as the error, and never started.
func TestProblemNeverStarts(t *testing.T) {
	t.Parallel()
	srv := stdioServer("unset")
	srv.Problem = "TOKEN is not set (env TOKEN)"
	c := startClient(t, srv, nil)
	<-c.Ready()
	if st := c.Status(); st.State != upstream.StateFailed || st.Err != srv.Problem || st.Attempts != 0 {
		t.Errorf("state %s, error %q after %d attempts; want failed, %q after none", st.State, st.Err, st.Attempts, srv.Problem)
	}
	_, err := callTool(t, c, "echo", map[string]any{"message": "x"})
	if !errors.Is(err, upstream.ErrNotConnected) {
		t.Errorf("request on a server with a config problem: %v, want ErrNotConnected", err)
	}
}

func TestCloseTwiceAndConcurrently(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("closer"), nil)
	done := make(chan struct{})
	for range 3 {
		go func() { c.Close(); done <- struct{}{} }()
	}
	for range 3 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("concurrent Close calls did not all return")
		}
	}
	if st := c.Status(); st.State != upstream.StateStopped {
		t.Errorf("state after Close = %s, want stopped", st.State)
	}
	if n := len(c.Tools()); n != 0 {
		t.Errorf("%d tools after Close, want none", n)
	}
	c.Close()
}

// TestVerbatim checks that what the client keeps and returns is what the
// server sent, as parsed JSON: the fixture's echo tool carries $schema,
// $defs, anyOf, x- keys, unknown annotation keys and _meta that a typed
// MCP struct would drop.
func TestVerbatim(t *testing.T) {
	t.Parallel()
	direct := startDirect(t, "--name", "verbatim")
	direct.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}`)
	direct.notify("notifications/initialized")
	wantCat := map[string]json.RawMessage{}
	for _, l := range []struct{ method, field string }{
		{"tools/list", "tools"},
		{"resources/list", "resources"},
		{"resources/templates/list", "resourceTemplates"},
		{"prompts/list", "prompts"},
	} {
		var page map[string]json.RawMessage
		if err := json.Unmarshal(direct.request(l.method, `{}`), &page); err != nil {
			t.Fatalf("%s: %v", l.method, err)
		}
		wantCat[l.field] = page[l.field]
	}
	args := map[string]any{"message": `hi <&> "ünï"`, "repeat": 2}
	wantEcho := direct.request("tools/call", string(toolParams(t, "echo", args)))

	c := connect(t, stdioServer("verbatim"), nil)
	cat := c.Catalog()

	// The echo tool on its own, so that a failure points at it.
	wantTool := findByKey(t, encodeAll(t, decodeArray(t, wantCat["tools"])), "name", "echo")
	for _, key := range []string{`"$schema"`, `"$defs"`, `"anyOf"`, `"x-custom"`, `"x-annotation"`, `"_meta"`, `"x-tool-extra"`} {
		if !bytes.Contains(wantTool, []byte(key)) {
			t.Fatalf("the fixture's echo tool lacks %s, so this test proves nothing: %s", key, wantTool)
		}
	}
	echo := findByKey(t, cat.Tools, "name", "echo")
	if !reflect.DeepEqual(decode(t, echo), decode(t, wantTool)) {
		t.Errorf("echo tool changed on the way:\n got %s\nwant %s", echo, wantTool)
	}
	// A resource with an unknown annotation key and _meta.
	res := findByKey(t, cat.Resources, "uri", "fixture://readme")
	wantRes := findByKey(t, encodeAll(t, decodeArray(t, wantCat["resources"])), "uri", "fixture://readme")
	if !reflect.DeepEqual(decode(t, res), decode(t, wantRes)) {
		t.Errorf("resource changed on the way:\n got %s\nwant %s", res, wantRes)
	}
	// And every list whole, in order.
	for field, got := range map[string][]json.RawMessage{
		"tools": cat.Tools, "resources": cat.Resources,
		"resourceTemplates": cat.ResourceTemplates, "prompts": cat.Prompts,
	} {
		if g, w := decodeAll(t, got), decodeArray(t, wantCat[field]); !reflect.DeepEqual(g, w) {
			t.Errorf("%s differ:\n got %s\nwant %s", field, marshal(t, g), wantCat[field])
		}
	}

	gotEcho, err := callTool(t, c, "echo", args)
	if err != nil {
		t.Fatalf("call echo: %v", err)
	}
	if !reflect.DeepEqual(decode(t, gotEcho), decode(t, wantEcho)) {
		t.Errorf("echo result changed on the way:\n got %s\nwant %s", gotEcho, wantEcho)
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	c := connect(t, stdioServer("errs"), nil)

	t.Run("unknown tool is an RPCError", func(t *testing.T) {
		_, err := callTool(t, c, "no-such-tool", nil)
		var rpc *upstream.RPCError
		if !errors.As(err, &rpc) {
			t.Fatalf("err = %v (%T), want *upstream.RPCError", err, err)
		}
		if rpc.Code != -32602 {
			t.Errorf("code %d, want -32602 (the fixture's invalid params)", rpc.Code)
		}
		if rpc.Message != "unknown tool: no-such-tool" {
			t.Errorf("message %q, want the fixture's own", rpc.Message)
		}
	})
	t.Run("unknown resource keeps its data", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Request(ctx, "resources/read", json.RawMessage(`{"uri":"fixture://nope"}`))
		var rpc *upstream.RPCError
		if !errors.As(err, &rpc) {
			t.Fatalf("err = %v (%T), want *upstream.RPCError", err, err)
		}
		if rpc.Code != -32002 {
			t.Errorf("code %d, want -32002", rpc.Code)
		}
		if !reflect.DeepEqual(decode(t, rpc.Data), map[string]any{"uri": "fixture://nope"}) {
			t.Errorf("data %s, want {\"uri\":\"fixture://nope\"}", rpc.Data)
		}
	})
	t.Run("tool error is a result", func(t *testing.T) {
		raw, err := callTool(t, c, "fail", nil)
		if err != nil {
			t.Fatalf("call fail: %v", err)
		}
		if res := decodeResult(t, raw); !res.IsError {
			t.Errorf("isError is not true in %s", raw)
		}
	})
	t.Run("method not found", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Request(ctx, "no/such/method", nil)
		var rpc *upstream.RPCError
		if !errors.As(err, &rpc) || rpc.Code != -32601 {
			t.Errorf("err = %v, want an RPCError with code -32601", err)
		}
	})
	t.Run("failed client is not connected", func(t *testing.T) {
		srv := stdioServer("dead", "--exit-at-start", "1")
		failed := startClient(t, srv, nil)
		_, err := callTool(t, failed, "echo", map[string]any{"message": "x"})
		if !errors.Is(err, upstream.ErrNotConnected) {
			t.Errorf("err = %v, want ErrNotConnected", err)
		}
	})
	// The connection survives all of the above.
	if got := mustCallText(t, c, "echo", map[string]any{"message": "still here"}); got != "still here" {
		t.Errorf("echo after errors = %q", got)
	}
}

// direct drives a fixture process without the package under test, to
// learn what the server itself sends.
type direct struct {
	t   testing.TB
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startDirect(t testing.TB, args ...string) *direct {
	t.Helper()
	cmd := exec.Command(fixturePath, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return &direct{t: t, in: in, out: bufio.NewReader(out)}
}

func (d *direct) notify(method string) {
	d.t.Helper()
	d.write(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method))
}

func (d *direct) write(line string) {
	d.t.Helper()
	if _, err := io.WriteString(d.in, line+"\n"); err != nil {
		d.t.Fatalf("write to fixture: %v", err)
	}
}

// request sends one request and returns its raw result, skipping anything
// else the server sends meanwhile.
func (d *direct) request(method, params string) json.RawMessage {
	d.t.Helper()
	d.id++
	d.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, d.id, method, params))
	for {
		line, err := d.out.ReadBytes('\n')
		if err != nil {
			d.t.Fatalf("%s: read from fixture: %v", method, err)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || string(msg.ID) != fmt.Sprint(d.id) {
			continue
		}
		if msg.Error != nil {
			d.t.Fatalf("%s: fixture answered an error: %s", method, msg.Error)
		}
		return msg.Result
	}
}

func decode(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, truncate(raw))
	}
	return v
}

func decodeAll(t testing.TB, raws []json.RawMessage) []any {
	t.Helper()
	out := make([]any, len(raws))
	for i, r := range raws {
		out[i] = decode(t, r)
	}
	return out
}

func decodeArray(t testing.TB, raw json.RawMessage) []any {
	t.Helper()
	var v []any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not a JSON array: %v: %s", err, truncate(raw))
	}
	return v
}

func encodeAll(t testing.TB, vs []any) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = marshal(t, v)
	}
	return out
}

func marshal(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// findByKey returns the item whose string field key is value.
func findByKey(t testing.TB, items []json.RawMessage, key, value string) json.RawMessage {
	t.Helper()
	for _, raw := range items {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("item is not an object: %v: %s", err, truncate(raw))
		}
		if m[key] == value {
			return raw
		}
	}
	t.Fatalf("no item with %s %q among %d", key, value, len(items))
	return nil
}

// TestListsTogether: the catalog's four lists are asked for together. The
// server here answers none of them before it has all four requests, so a
// client asking one at a time never connects.
func TestListsTogether(t *testing.T) {
	t.Parallel()
	srv := stdioServer("together", "--hold-lists")
	srv.Timeout = 5 * time.Second
	c := connect(t, srv, nil)
	st := c.Status()
	if st.Tools == 0 || st.Resources == 0 || st.ResourceTemplates == 0 || st.Prompts == 0 {
		t.Errorf("status %+v: want every list of the fixture", st)
	}
}
