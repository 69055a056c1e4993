package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx/mcpx/internal/testenv"
)

// reference is the Go SDK's everything-server, built once for the tests
// of this binary into TestMain's directory (a build takes seconds).
var reference struct {
	sync.Once
	path string
	err  error
}

// modernConfig is a config serving the Go SDK's everything-server (the
// reference of revision 2026-07-28) over stdio, unprefixed, as a default
// config does: it speaks both eras, and each client is served in its own.
func modernConfig(t *testing.T) string { return goReferenceConfig(t, "") }

// bridgeConfig is modernConfig with the server reached in the legacy
// era, so that a modern client's calls go through mcpx's bridge: its
// questions become input_required with a requestState of mcpx's, which
// is answered once.
func bridgeConfig(t *testing.T) string { return goReferenceConfig(t, "legacy") }

// goReferenceConfig is a config serving the everything-server under
// protocol ("" for the default).
func goReferenceConfig(t *testing.T, protocol string) string {
	t.Helper()
	reference.Do(func() {
		reference.path = filepath.Join(testDir, "everything-server")
		cmd := exec.Command("go", "build", "-o", reference.path, goSDKServer)
		cmd.Dir = testenv.ModuleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			reference.err = fmt.Errorf("go build %s: %v\n%s", goSDKServer, err, out)
		}
	})
	if reference.err != nil {
		t.Fatal(reference.err)
	}
	server := map[string]any{"command": reference.path, "prefix": ""}
	if protocol != "" {
		server["protocol"] = protocol
	}
	return writeConfig(t, map[string]any{
		"expose": "direct",
		"servers": map[string]any{
			"everything": server,
		},
	})
}

// TestModernClient connects the Go SDK's dual-era client to serve --stdio
// and serve --http: it stays on revision 2026-07-28 (server/discover
// answers), lists and calls tools, sees progress, and answers an
// upstream's elicitation through input_required and a retry (the client
// SDK does the retry itself).
func TestModernClient(t *testing.T) {
	cfg := modernConfig(t)
	for name, transport := range modernTransports(cfg) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var progress atomic.Int32
			client := mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
			})
			cs, err := client.Connect(ctx, transport(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28 (the client fell back)", v)
			}
			if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "mcpx" {
				t.Errorf("server info %+v, want mcpx", info)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !hasTool(tools.Tools, "test_simple_text") {
				t.Fatalf("tools/list has no test_simple_text: %d tools", len(tools.Tools))
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("test_simple_text: %+v, %v", res, err)
			}
			params := &mcp.CallToolParams{Name: "test_tool_with_progress"}
			params.SetProgressToken("p1")
			if res, err = cs.CallTool(ctx, params); err != nil || res.IsError {
				t.Fatalf("test_tool_with_progress: %+v, %v", res, err)
			}
			if progress.Load() == 0 {
				t.Error("no progress notification reached the client")
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_elicitation"})
			if err != nil {
				t.Fatalf("elicitation through input_required: %v", err)
			}
			if got := textOf(res); got != "Hello, Ada!" {
				t.Errorf("elicitation through input_required: %q, want the upstream's greeting of the answer", got)
			}
		})
	}
}

// modernTransports are the ways a Go SDK client reaches mcpx serving
// cfg: serve --stdio, and serve --http (started by the subtest).
func modernTransports(cfg string) map[string]func(t *testing.T) mcp.Transport {
	return map[string]func(t *testing.T) mcp.Transport{
		"stdio": func(t *testing.T) mcp.Transport {
			return &mcp.CommandTransport{Command: mcpxCommand("serve", "--stdio", "--config", cfg)}
		},
		"http": func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: startHTTP(t, cfg, nil).url + "/mcp", DisableStandaloneSSE: true}
		},
	}
}

func hasTool(tools []*mcp.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// modernMeta is a valid _meta of revision 2026-07-28.
func modernMeta(caps string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// rpcReply is a JSON-RPC answer as a test reads it.
type rpcReply struct {
	status int
	header http.Header
	ID     json.RawMessage
	Result map[string]json.RawMessage
	Error  *struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
}

// post sends one modern request to url with the headers the body calls
// for (Mcp-Method, Mcp-Name, MCP-Protocol-Version), overridden by hdr,
// and reads its answer (JSON, or the last message of an event stream).
func post(t *testing.T, url, method, name, params string, hdr map[string]string) rpcReply {
	t.Helper()
	r, err := tryPost(http.DefaultClient, url, 7, method, name, params, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryPost is post for a goroutine of a test: it sends the request with
// id through c and returns what failed instead of ending the test.
func tryPost(c *http.Client, url string, id int, method, name, params string, hdr map[string]string) (rpcReply, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return rpcReply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		return rpcReply{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return rpcReply{status: resp.StatusCode, header: resp.Header}, fmt.Errorf("%s %s: HTTP %d, reading the answer: %v", method, name, resp.StatusCode, err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		for _, line := range bytes.Split(raw, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id"`)) {
				last = d
			}
		}
		raw = last
	}
	r := rpcReply{status: resp.StatusCode, header: resp.Header}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("%s %s: HTTP %d, answer %q: %v", method, name, resp.StatusCode, raw, err)
	}
	return r, nil
}

// TestModernBadInput sends serve --http what a modern client must not:
// each gets the spec's error and HTTP status, and mcpx goes on serving.
// The server is reached through the bridge, whose requestState is
// answered once; a state passed through is the server's to judge.
func TestModernBadInput(t *testing.T) {
	srv := startHTTP(t, bridgeConfig(t), nil)
	url := srv.url + "/mcp"
	meta := modernMeta(`{"elicitation":{}}`)
	tests := []struct {
		name, method, target, params string
		hdr                          map[string]string
		status, code                 int
	}{
		{"missing _meta", "tools/list", "", `{}`, nil, 400, -32602},
		{"_meta without version", "tools/list", "", `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, nil, 400, -32602},
		{"_meta without capabilities", "tools/list", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, nil, 400, -32602},
		{"_meta not an object", "tools/list", "", `{"_meta":"2026-07-28"}`, nil, 400, -32602},
		{"unknown version", "tools/list", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`,
			map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400, -32022},
		{"version header disagrees", "tools/list", "", `{"_meta":` + meta + `}`, map[string]string{"Mcp-Protocol-Version": "2099-01-01"}, 400, -32020},
		{"no Mcp-Method", "tools/list", "", `{"_meta":` + meta + `}`, map[string]string{"Mcp-Method": ""}, 400, -32020},
		{"Mcp-Method disagrees", "tools/list", "", `{"_meta":` + meta + `}`, map[string]string{"Mcp-Method": "prompts/list"}, 400, -32020},
		{"Mcp-Name disagrees", "tools/call", "test_simple_text", `{"name":"test_simple_text","_meta":` + meta + `}`, map[string]string{"Mcp-Name": "other"}, 400, -32020},
		{"no Mcp-Name", "tools/call", "", `{"name":"test_simple_text","_meta":` + meta + `}`, nil, 400, -32020},
		{"removed method", "ping", "", `{"_meta":` + meta + `}`, nil, 404, -32601},
		{"unknown resource", "resources/read", "test://nothing", `{"uri":"test://nothing","_meta":` + meta + `}`, nil, 400, -32602},
		{"requestState altered", "tools/call", "test_input_required_result_elicitation",
			`{"name":"test_input_required_result_elicitation","requestState":"eyJ2IjoxfQ.AAAA","_meta":` + meta + `}`, nil, 400, -32602},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, url, tt.method, tt.target, tt.params, tt.hdr)
			if r.status != tt.status || r.Error == nil || r.Error.Code != tt.code {
				t.Errorf("HTTP %d %+v, want HTTP %d and error %d", r.status, r.Error, tt.status, tt.code)
			}
			if string(r.ID) != "7" {
				t.Errorf("error answer id %s, want the request's", r.ID)
			}
		})
	}

	// A requestState is answered once: the retry that answers it
	// completes the call, the same state again is refused.
	call := `{"name":"test_input_required_result_elicitation","arguments":{},"_meta":` + meta + `}`
	first := post(t, url, "tools/call", "test_input_required_result_elicitation", call, nil)
	var state string
	var asks map[string]json.RawMessage
	if json.Unmarshal(first.Result["requestState"], &state) != nil || json.Unmarshal(first.Result["inputRequests"], &asks) != nil || len(asks) != 1 {
		t.Fatalf("first call: %+v, want input_required with one question and a requestState", first)
	}
	var key string
	for k := range asks {
		key = k
	}
	retry := `{"name":"test_input_required_result_elicitation","arguments":{},"requestState":` + quoteJSON(state) +
		`,"inputResponses":{` + quoteJSON(key) + `:{"action":"accept","content":{"name":"Ada"}}},"_meta":` + meta + `}`
	if r := post(t, url, "tools/call", "test_input_required_result_elicitation", retry, nil); r.Error != nil || !strings.Contains(string(r.Result["content"]), "Hello, Ada!") {
		t.Fatalf("retry: %+v", r)
	}
	if r := post(t, url, "tools/call", "test_input_required_result_elicitation", retry, nil); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("replayed requestState: %+v, want -32602", r)
	}
	// Another tool's call cannot use it either.
	other := strings.Replace(retry, `"name":"test_input_required_result_elicitation"`, `"name":"test_simple_text"`, 1)
	if r := post(t, url, "tools/call", "test_simple_text", other, nil); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("requestState of another call: %+v, want -32602", r)
	}
	if r := post(t, url, "tools/list", "", `{"_meta":`+meta+`}`, nil); r.Error != nil {
		t.Errorf("mcpx stopped serving after bad input: %+v", r.Error)
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

// rawStdio is a raw JSON-RPC client of `mcpx serve --stdio`.
type rawStdio struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]json.RawMessage
}

func startRawStdio(t *testing.T, cfg string) *rawStdio {
	t.Helper()
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &rawStdio{t: t, in: in, lines: make(chan map[string]json.RawMessage, 64)}
	go func() {
		dec := json.NewDecoder(out)
		for {
			var m map[string]json.RawMessage
			if dec.Decode(&m) != nil {
				close(p.lines)
				return
			}
			p.lines <- m
		}
	}()
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return p
}

func (p *rawStdio) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the next message that answers id, or (id "") the next
// notification of method.
func (p *rawStdio) next(id, method string) map[string]json.RawMessage {
	p.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("mcpx closed stdout waiting for %s%s", id, method)
			}
			if id != "" && string(m["id"]) == id || id == "" && string(m["method"]) == quoteJSON(method) {
				return m
			}
		case <-timeout:
			p.t.Fatalf("no answer to %s%s", id, method)
		}
	}
}

func errCode(m map[string]json.RawMessage) int {
	var e struct{ Code int }
	json.Unmarshal(m["error"], &e)
	return e.Code
}

// TestModernStdio: serve --stdio answers modern requests without
// initialize, refuses bad _meta and bad requestState (the bridge's) with
// the spec's codes, and serves subscriptions/listen until the client
// cancels it.
func TestModernStdio(t *testing.T) {
	p := startRawStdio(t, bridgeConfig(t))
	meta := modernMeta(`{"elicitation":{}}`)
	req := func(id int, method, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	p.send(req(1, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`))
	if m := p.next("1", ""); errCode(m) != -32022 {
		t.Errorf("unknown version: %s, want -32022", m["error"])
	}
	p.send(req(2, "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`))
	if m := p.next("2", ""); errCode(m) != -32602 {
		t.Errorf("no clientCapabilities: %s, want -32602", m["error"])
	}
	p.send(req(3, "server/discover", `{"_meta":`+meta+`}`))
	if m := p.next("3", ""); !strings.Contains(string(m["result"]), `"supportedVersions":["2026-07-28"`) {
		t.Errorf("server/discover: %s", m["result"])
	}
	call := `{"name":"test_input_required_result_elicitation","arguments":{},"_meta":` + meta + `}`
	p.send(req(4, "tools/call", call))
	var first struct {
		ResultType    string
		RequestState  string
		InputRequests map[string]json.RawMessage
	}
	json.Unmarshal(p.next("4", "")["result"], &first)
	if first.ResultType != "input_required" || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("first call: %+v, want input_required", first)
	}
	var key string
	for k := range first.InputRequests {
		key = k
	}
	retry := func(state string) string {
		return `{"name":"test_input_required_result_elicitation","arguments":{},"requestState":` + quoteJSON(state) +
			`,"inputResponses":{` + quoteJSON(key) + `:{"action":"accept","content":{"name":"Ada"}}},"_meta":` + meta + `}`
	}
	p.send(req(5, "tools/call", retry(first.RequestState+"-TAMPERED")))
	if m := p.next("5", ""); errCode(m) != -32602 {
		t.Errorf("altered requestState: %s, want -32602", m["error"])
	}
	p.send(req(6, "tools/call", retry(first.RequestState)))
	if m := p.next("6", ""); !strings.Contains(string(m["result"]), "Hello, Ada!") {
		t.Errorf("retry: %s %s", m["result"], m["error"])
	}
	p.send(req(7, "tools/call", retry(first.RequestState)))
	if m := p.next("7", ""); errCode(m) != -32602 {
		t.Errorf("replayed requestState: %s, want -32602", m["error"])
	}
	p.send(req(8, "subscriptions/listen", `{"notifications":{"toolsListChanged":true},"_meta":`+meta+`}`))
	ack := p.next("", "notifications/subscriptions/acknowledged")
	if !strings.Contains(string(ack["params"]), `"io.modelcontextprotocol/subscriptionId":8`) {
		t.Errorf("acknowledgement: %s", ack["params"])
	}
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_trigger_tool_change","arguments":{},"_meta":` + meta + `}}`)
	p.next("9", "")
	if n := p.next("", "notifications/tools/list_changed"); !strings.Contains(string(n["params"]), `"io.modelcontextprotocol/subscriptionId":8`) {
		t.Errorf("list change on the stream: %s", n["params"])
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`)
	p.send(req(10, "tools/list", `{"_meta":`+meta+`}`))
	if m := p.next("10", ""); !strings.Contains(string(m["result"]), `"resultType":"complete"`) {
		t.Errorf("tools/list: %.200s %s", m["result"], m["error"])
	}
}

// TestModernStdioNoCapabilities: a modern client that declares no
// capability is answered without the bridge between the eras (the fast
// path of its calls), and that changes nothing it sees: the progress of
// a call that asked for it comes ahead of the answer with the client's
// token, and an upstream that asks for something in the middle of a call
// is refused at once with MissingClientCapability, never sent on to the
// client as a request of mcpx's own.
func TestModernStdioNoCapabilities(t *testing.T) {
	p := startRawStdio(t, modernConfig(t))
	meta := modernMeta(`{}`)
	withToken := strings.TrimSuffix(meta, "}") + `,"progressToken":"tok-1"}`
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":` + withToken + `}}`)
	var progress int
	for m := range p.until(t, "1") {
		switch {
		case string(m["method"]) == `"notifications/progress"`:
			var n struct{ ProgressToken string }
			if json.Unmarshal(m["params"], &n) != nil || n.ProgressToken != "tok-1" {
				t.Errorf("progress %s, want the client's token", m["params"])
			}
			progress++
		case m["id"] != nil && m["method"] != nil:
			t.Errorf("mcpx asked the modern client %s", m["method"])
		case string(m["id"]) == "1":
			if !strings.Contains(string(m["result"]), `"resultType":"complete"`) {
				t.Errorf("call with progress: %s %s", m["result"], m["error"])
			}
		}
	}
	if progress == 0 {
		t.Error("no progress reached the client ahead of the answer")
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"name?"},"_meta":` + meta + `}}`)
	for m := range p.until(t, "2") {
		switch {
		case m["id"] != nil && m["method"] != nil:
			t.Errorf("mcpx asked the modern client %s %s", m["method"], m["params"])
		case string(m["id"]) == "2":
			if !strings.Contains(string(m["result"])+string(m["error"]), "elicitation capability") {
				t.Errorf("elicitation without the capability: %s %s, want the refusal", m["result"], m["error"])
			}
		}
	}
}

// until yields the messages mcpx writes up to and including the answer
// to id.
func (p *rawStdio) until(t *testing.T, id string) func(func(map[string]json.RawMessage) bool) {
	return func(yield func(map[string]json.RawMessage) bool) {
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m, ok := <-p.lines:
				if !ok {
					t.Fatalf("mcpx closed stdout waiting for %s", id)
				}
				if !yield(m) || string(m["id"]) == id && m["method"] == nil {
					return
				}
			case <-timeout:
				t.Fatalf("no answer to %s", id)
			}
		}
	}
}

// TestModernToLegacyMeta: a modern client's call reaches a legacy
// upstream without what its _meta says of its own hop to mcpx (version,
// capabilities, info, log level: the upstream agreed its own at
// initialize), and with every other member as the client sent it.
func TestModernToLegacyMeta(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{"fx": fx("--meta-tool")}})
	p := startRawStdio(t, cfg)
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","example.com/k":"kept"}`
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx_meta","arguments":{},"_meta":` + meta + `}}`)
	m := p.next("1", "")
	line, _ := json.Marshal(m)
	got := receivedMeta(t, line)
	for _, k := range []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
		"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel"} {
		if _, ok := got[k]; ok {
			t.Errorf("the legacy upstream got the client's %s: %v", k, got)
		}
	}
	if got["example.com/k"] != "kept" {
		t.Errorf("the client's own _meta key: %v, want it passed on", got)
	}
	if !strings.Contains(string(m["result"]), `"resultType":"complete"`) {
		t.Errorf("answer: %s, want a modern result", m["result"])
	}
}
