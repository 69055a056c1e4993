package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// Eras a test server speaks.
const (
	dualEra    = "dual"   // the Go SDK as it is: server/discover and initialize
	modernOnly = "modern" // initialize refused with -32022, as a 2026-07-28-only server does
	legacyOnly = "legacy" // server/discover refused with a plain 400, as a pre-2026 server does
)

// supportedVersions is the list of versions in a server/discover result.
var supportedVersions = regexp.MustCompile(`"supportedVersions":\[[^\]]*\]`)

// goSDKInstructions are the instructions a goSDKServer sends, in
// initialize and in server/discover.
const goSDKInstructions = "Call echo with a message; confirm asks twice."

// goSDKServer is the official Go SDK's streamable HTTP server with one
// tool, echo, in front of which a wrapper makes it speak one era (which
// a test may change) and records the method of every POST.
type goSDKServer struct {
	url  string
	hs   *httptest.Server
	era  atomic.Value // string
	mu   sync.Mutex
	seen []string // "method version-header", one per POST
	last []byte   // the body of the last tools/call
}

func startGoSDKServer(t testing.TB, era string) *goSDKServer {
	t.Helper()
	sopts := testenv.SubscribeOptions()
	sopts.Instructions = goSDKInstructions
	srv := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1.0.0"}, sopts)
	testenv.AddChangeTools(srv, watchedURI)
	type in struct {
		Message string `json:"message"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "says it back"},
		func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + args.Message}}}, nil, nil
		})
	testenv.AddConfirmTool(srv)
	// ask_legacy asks its client in the middle of the call, as a tool
	// written for the legacy era does; the SDK refuses that in a modern
	// request, and the tool says so.
	srv.AddTool(&mcp.Tool{Name: "ask_legacy", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "sure?", RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered: " + r.Action}}}, nil
		})
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	s := &goSDKServer{}
	s.era.Store(era)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			stateful.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		version := r.Header.Get("Mcp-Protocol-Version")
		s.mu.Lock()
		s.seen = append(s.seen, msg.Method+" "+version)
		if msg.Method == "tools/call" {
			s.last = body
		}
		s.mu.Unlock()
		modern := version >= "2026-07-28"
		switch s.era.Load().(string) {
		case modernOnly:
			if !modern && msg.ID != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{
					"code": -32022, "message": "Unsupported protocol version",
					"data": map[string]any{"supported": []string{"2026-07-28"}, "requested": version}}})
				return
			}
			if msg.Method == "server/discover" {
				// Only the modern version, as a modern-only server lists.
				rec := httptest.NewRecorder()
				stateless.ServeHTTP(rec, r)
				maps.Copy(w.Header(), rec.Header())
				w.WriteHeader(rec.Code)
				w.Write(supportedVersions.ReplaceAll(rec.Body.Bytes(), []byte(`"supportedVersions":["2026-07-28"]`)))
				return
			}
			stateless.ServeHTTP(w, r)
		case legacyOnly:
			if modern || msg.Method == "server/discover" {
				http.Error(w, "Bad Request: session ID required", http.StatusBadRequest)
				return
			}
			stateful.ServeHTTP(w, r)
		default:
			if modern {
				stateless.ServeHTTP(w, r)
			} else {
				stateful.ServeHTTP(w, r)
			}
		}
	}))
	t.Cleanup(hs.Close)
	s.url, s.hs = hs.URL, hs
	return s
}

// methods returns the methods POSTed since the last call, and forgets them.
func (s *goSDKServer) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.seen))
	for _, m := range s.seen {
		method, _, _ := strings.Cut(m, " ")
		if method == "notifications/cancelled" {
			continue // a listen stream's, cancelled as a client closed: no request
		}
		out = append(out, method)
	}
	s.seen = nil
	return out
}

func remoteServer(name, url string) config.Server {
	return config.Server{Name: name, Transport: config.TransportHTTP, URL: url, Enabled: true, Timeout: 10 * time.Second}
}

// TestEraChosen connects to the Go SDK as a dual-era server, as a
// modern-only one and as a legacy-only one, under each protocol key:
// auto speaks the era the server speaks, legacy when it speaks both
// (server/discover first, initialize after a refusal or a legacy version
// listed too); legacy never probes; modern never falls back, and speaks
// modern to a server that speaks both. echo works against all, and a second
// start with the same cache goes straight to the era remembered, without
// the probe it made the first time.
func TestEraChosen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		era      string
		protocol config.Protocol
		want     upstream.Era
		first    []string // the handshake's POSTs on the first start
		again    []string // and on the second, with the era remembered
		notAgain string   // a method the second start must not send
	}{
		{dualEra, "", upstream.EraLegacy, []string{"server/discover", "initialize"}, []string{"initialize"}, "server/discover"},
		{dualEra, config.ProtocolModern, upstream.EraModern, []string{"server/discover"}, []string{"server/discover"}, "initialize"},
		{dualEra, config.ProtocolLegacy, upstream.EraLegacy, []string{"initialize"}, []string{"initialize"}, "server/discover"},
		{modernOnly, config.ProtocolAuto, upstream.EraModern, []string{"server/discover"}, []string{"server/discover"}, "initialize"},
		{modernOnly, config.ProtocolModern, upstream.EraModern, []string{"server/discover"}, []string{"server/discover"}, "initialize"},
		{legacyOnly, config.ProtocolAuto, upstream.EraLegacy, []string{"server/discover", "initialize"}, []string{"initialize"}, "server/discover"},
	} {
		t.Run(fmt.Sprintf("%s/protocol=%s", tc.era, tc.protocol), func(t *testing.T) {
			t.Parallel()
			s := startGoSDKServer(t, tc.era)
			opts := fastOptions()
			opts.CacheDir = t.TempDir()
			cfg := remoteServer("gosdk", s.url+"/mcp")
			cfg.Protocol = tc.protocol
			for i, want := range [][]string{tc.first, tc.again} {
				c := connect(t, cfg, opts)
				st := c.Status()
				if got := upstream.EraOf(st.ProtocolVersion); got != tc.want {
					t.Errorf("start %d: era %q (protocol %q), want %q", i+1, got, st.ProtocolVersion, tc.want)
				}
				if got := mustCallText(t, c, "echo", map[string]any{"message": "hi"}); got != "echo: hi" {
					t.Errorf("start %d: echo said %q", i+1, got)
				}
				c.Close()
				// A listen stream opens on its own goroutine, so the last
				// start's may reach the server after its Close: only the
				// handshake's order is asserted.
				seen := slices.DeleteFunc(s.methods(), func(m string) bool { return m == "subscriptions/listen" })
				if !slices.Equal(seen[:min(len(want), len(seen))], want) {
					t.Errorf("start %d: POSTs %q, want them to begin %q", i+1, seen, want)
				}
				if i == 1 && slices.Contains(seen, tc.notAgain) {
					t.Errorf("start 2 sent %s, though the era was remembered: %q", tc.notAgain, seen)
				}
			}
		})
	}
}

// TestEraModernRequired: under protocol modern, a legacy-only server is a
// failed connect that says why, not a fallback to initialize.
func TestEraModernRequired(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, legacyOnly)
	cfg := remoteServer("gosdk", s.url+"/mcp")
	cfg.Protocol = config.ProtocolModern
	c := startClient(t, cfg, nil)
	st := c.Status()
	if st.State != upstream.StateFailed || !strings.Contains(st.Err, "protocol modern") {
		t.Errorf("state %s (%s), want failed, naming protocol modern", st.State, st.Err)
	}
	if seen := s.methods(); slices.Contains(seen, "initialize") {
		t.Errorf("protocol modern sent initialize: %q", seen)
	}
}

// TestEraReprobed: a server remembered as legacy that now speaks only the
// modern era is found modern at the next start (initialize refused, then
// server/discover), and a live legacy connection whose call is refused
// with -32022 connects again in the modern era, where the call works.
func TestEraReprobed(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, legacyOnly)
	opts := fastOptions()
	opts.CacheDir = t.TempDir()
	opts.Reconnect = true
	cfg := remoteServer("gosdk", s.url+"/mcp")

	c := connect(t, cfg, opts)
	if v := c.Status().ProtocolVersion; upstream.EraOf(v) != upstream.EraLegacy {
		t.Fatalf("protocol %q, want a legacy one", v)
	}
	s.era.Store(modernOnly)
	_, err := callTool(t, c, "echo", map[string]any{"message": "refused"})
	var rpc *upstream.RPCError
	if !errors.As(err, &rpc) || rpc.Code != upstream.CodeUnsupportedProtocolVersion {
		t.Fatalf("call after the server turned modern-only: %v, want the server's -32022", err)
	}
	testenv.Eventually(t, 10*time.Second, func() bool {
		st := c.Status()
		return st.State == upstream.StateConnected && upstream.EraOf(st.ProtocolVersion) == upstream.EraModern
	}, "no modern connection after the refusal: %+v", c.Status())
	if got := mustCallText(t, c, "echo", map[string]any{"message": "again"}); got != "echo: again" {
		t.Errorf("echo said %q", got)
	}
	c.Close()

	// The cache says modern now; make the server legacy-only again: the
	// next start falls back to initialize.
	s.era.Store(legacyOnly)
	s.methods()
	c = connect(t, cfg, opts)
	if v := c.Status().ProtocolVersion; upstream.EraOf(v) != upstream.EraLegacy {
		t.Errorf("protocol %q after the server went back to legacy, want a legacy one", v)
	}
	if got := mustCallText(t, c, "echo", map[string]any{"message": "back"}); got != "echo: back" {
		t.Errorf("echo said %q", got)
	}
}

// TestEraStdio: over stdio, the Go SDK's reference server (dual-era) is
// legacy (started again for initialize after server/discover), and
// modern under protocol modern, and the fixture (legacy, which answers server/discover with method not
// found) falls back to initialize.
func TestEraStdio(t *testing.T) {
	t.Parallel()
	reference := testenv.GoTool(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	gosdk := config.Server{Name: "gosdk", Transport: config.TransportStdio, Command: reference, Enabled: true, Timeout: 10 * time.Second}
	gosdkModern := gosdk
	gosdkModern.Protocol = config.ProtocolModern
	for _, tc := range []struct {
		name string
		srv  config.Server
		want upstream.Era
		tool string
		args map[string]any
	}{
		{"gosdk", gosdk, upstream.EraLegacy, "test_simple_text", map[string]any{}},
		{"gosdk-modern", gosdkModern, upstream.EraModern, "test_simple_text", map[string]any{}},
		{"fixture", stdioServer("fixture"), upstream.EraLegacy, "echo", map[string]any{"message": "hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := connect(t, tc.srv, fastOptions())
			if v := c.Status().ProtocolVersion; upstream.EraOf(v) != tc.want {
				t.Errorf("protocol %q, want era %s", v, tc.want)
			}
			raw, err := callTool(t, c, tc.tool, tc.args)
			if err != nil || decodeResult(t, raw).IsError {
				t.Errorf("call %s: %v %s", tc.tool, err, truncate(raw))
			}
		})
	}
}

// TestInputRequired: a modern server's input_required result is answered
// through OnServerRequest (as a legacy upstream's elicitation/create would
// be), round after round, and the call returns the final result; under
// PassInput the caller gets the input_required result as it came.
func TestInputRequired(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, modernOnly)
	opts := fastOptions()
	var mu sync.Mutex
	var asked []string
	actions := []string{"accept", "decline"}
	opts.OnServerRequest = func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		var p struct{ Message string }
		json.Unmarshal(params, &p)
		asked = append(asked, method+": "+p.Message)
		return json.Marshal(map[string]any{"action": actions[len(asked)-1], "content": map[string]any{}})
	}
	c := connect(t, remoteServer("gosdk", s.url+"/mcp"), opts)

	if got := mustCallText(t, c, "confirm", map[string]any{}); got != "told accept then decline" {
		t.Errorf("confirm said %q", got)
	}
	want := []string{"elicitation/create: sure (first-question)?", "elicitation/create: sure (second-question)?"}
	if !slices.Equal(asked, want) {
		t.Errorf("the client was asked %q, want %q", asked, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.RequestWith(ctx, "tools/call", toolParams(t, "confirm", map[string]any{}), &upstream.CallOptions{PassInput: true})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		ResultType    string                     `json:"resultType"`
		RequestState  string                     `json:"requestState"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
	}
	json.Unmarshal(raw, &res)
	if res.ResultType != "input_required" || res.RequestState != "round-1" || res.InputRequests["first-question"] == nil {
		t.Errorf("with PassInput: %s, want the input_required result as it came", truncate(raw))
	}
	if len(asked) != 2 {
		t.Errorf("the client was asked again with PassInput: %q", asked)
	}
}

// TestModernHeartbeat: the heartbeat of a modern server is
// server/discover, not ping, which the modern era has not (the Go SDK
// answers it 404): beat after beat, the connection stays up.
func TestModernHeartbeat(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, modernOnly)
	opts := fastOptions()
	opts.Heartbeat = 20 * time.Millisecond
	c := connect(t, remoteServer("gosdk", s.url+"/mcp"), opts)
	s.methods()
	beats := 0
	testenv.Eventually(t, 10*time.Second, func() bool {
		for _, m := range s.methods() {
			if m == "ping" {
				t.Fatal("a modern server was sent ping")
			}
			if m == "server/discover" {
				beats++
			}
		}
		return beats >= 3
	}, "fewer than 3 heartbeats (server/discover)")
	if st := c.Status(); st.State != upstream.StateConnected || st.Restarts != 0 {
		t.Errorf("after %d heartbeats: %s, %d restarts (%s)", beats, st.State, st.Restarts, st.Err)
	}
}

// TestModernLogLevel: a modern server has no logging/setLevel; the level
// a client sets travels in every later request's _meta instead.
func TestModernLogLevel(t *testing.T) {
	t.Parallel()
	s := startGoSDKServer(t, modernOnly)
	c := connect(t, remoteServer("gosdk", s.url+"/mcp"), nil)
	if err := c.SetLogLevel(context.Background(), "debug"); err != nil {
		t.Fatal(err)
	}
	s.methods()
	mustCallText(t, c, "echo", map[string]any{"message": "hi"})
	if seen := s.methods(); slices.Contains(seen, "logging/setLevel") {
		t.Errorf("a modern server was sent logging/setLevel: %q", seen)
	}
	s.mu.Lock()
	last := string(s.last)
	s.mu.Unlock()
	if !strings.Contains(last, `"io.modelcontextprotocol/logLevel":"debug"`) {
		t.Errorf("the call after SetLogLevel carries no logLevel in _meta: %s", last)
	}
}

// TestModernProgress: progress of a call to a modern server (the Go SDK's
// reference server over stdio, under protocol modern) reaches the caller
// with its own token, ahead of the result.
func TestModernProgress(t *testing.T) {
	t.Parallel()
	reference := testenv.GoTool(t, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
	opts := fastOptions()
	c := connect(t, config.Server{Name: "gosdk", Transport: config.TransportStdio, Command: reference, Enabled: true, Timeout: 10 * time.Second,
		Protocol: config.ProtocolModern}, opts)
	if v := c.Status().ProtocolVersion; upstream.EraOf(v) != upstream.EraModern {
		t.Fatalf("protocol %q, want modern", v)
	}
	var mu sync.Mutex
	var tokens []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	progress := func(p json.RawMessage) {
		var n struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		}
		json.Unmarshal(p, &n)
		mu.Lock()
		tokens = append(tokens, string(n.ProgressToken))
		mu.Unlock()
	}
	raw, err := c.RequestWith(ctx, "tools/call", json.RawMessage(`{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"mine"}}`),
		&upstream.CallOptions{Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) == 0 {
		t.Fatalf("no progress before the result %s", truncate(raw))
	}
	for _, tok := range tokens {
		if tok != `"mine"` {
			t.Errorf("progress came with token %s, want the caller's \"mine\"", tok)
		}
	}
}
