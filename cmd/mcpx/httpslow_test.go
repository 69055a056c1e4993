package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// rawSession is a streamable HTTP session driven by hand.
type rawSession struct {
	t   *testing.T
	url string
	id  string
}

func openRaw(t *testing.T, url string) *rawSession {
	t.Helper()
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	code, h, body := do(t, "POST", url, hdr, initBody)
	if code != 200 || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	s := &rawSession{t: t, url: url, id: h.Get("Mcp-Session-Id")}
	if code, _, body := do(t, "POST", url, s.header("application/json"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
		t.Fatalf("initialized: %d %s", code, body)
	}
	return s
}

func (s *rawSession) header(accept string) map[string]string {
	return map[string]string{"Content-Type": "application/json", "Accept": accept,
		"Mcp-Session-Id": s.id, "MCP-Protocol-Version": "2025-11-25"}
}

// open POSTs a request answered on an SSE stream and returns the
// response without reading its body.
func (s *rawSession) open(body string) *http.Response {
	s.t.Helper()
	return s.stream("POST", body, "application/json, text/event-stream")
}

// stream sends one request of the session that is answered 200 with an
// SSE stream, and returns the response without reading its body.
func (s *rawSession) stream(method, body, accept string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.url, strings.NewReader(body))
	for k, v := range s.header(accept) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		s.t.Fatalf("%s: %d", method, resp.StatusCode)
	}
	return resp
}

// TestServeHTTPSlowSession: a session whose client stops reading while
// its call floods it with progress (here its stream's connection went
// away and nobody resumed it) holds up nobody else: mcpx buffers what the
// stream can hold, then drops that session's notifications, and another
// session calling the same upstream gets every answer.
func TestServeHTTPSlowSession(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "prefix": ""}}})
	srv := startHTTP(t, cfg, nil)
	url := srv.url + "/mcp"

	slow := openRaw(t, url)
	flood := slow.open(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":60,"steps":100000},"_meta":{"progressToken":"p1"}}}`)
	sc := bufio.NewScanner(flood.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	}
	flood.Body.Close()
	testenv.Eventually(t, 30*time.Second, func() bool { return strings.Contains(srv.stderr.String(), "not keeping up") },
		"mcpx never gave up on the session that stopped reading")

	fast := openRaw(t, url)
	for i := range 20 {
		code, _, body := do(t, "POST", url, fast.header("application/json"),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`, i+1, i))
		if code != 200 || !strings.Contains(body, fmt.Sprintf("Echo: m%d", i)) {
			t.Fatalf("call %d from the other session while one is stalled: %d %s", i, code, body)
		}
	}
}

// TestServeHTTPDrain: on SIGTERM with a call in flight and a stream open,
// mcpx ends the sessions, closes the streams and exits cleanly.
func TestServeHTTPDrain(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "shutdownTimeout": "3s", "servers": map[string]any{
		"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}, "prefix": ""}}})
	srv := startHTTP(t, cfg, nil)
	s := openRaw(t, srv.url+"/mcp")
	resp := s.open(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":60,"steps":60},"_meta":{"progressToken":"p1"}}}`)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "notifications/progress") {
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
	// The stream ends (the session is gone) rather than hanging.
	for sc.Scan() {
	}
	if !waitExit(srv.cmd, 15*time.Second) {
		t.Fatalf("mcpx did not exit after SIGTERM; stderr:\n%s", srv.stderr.String())
	}
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, srv.stderr.String())
	}
}
