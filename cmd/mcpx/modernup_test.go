package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx/mcpx/internal/testenv"
)

// modernUpstream is the Go SDK as an upstream that speaks revision
// 2026-07-28 only, over streamable HTTP, with tools that ask for input
// (input_required), report progress, and wait to be cancelled.
type modernUpstream struct {
	url       string
	started   atomic.Int32 // calls of block that began
	cancelled atomic.Int32 // POSTs of block the client closed before the answer
}

func startModernUpstream(t *testing.T) *modernUpstream {
	t.Helper()
	u := &modernUpstream{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "modern-up", Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}})
	testenv.AddConfirmTool(srv)
	// progress reports two steps under the caller's token, then answers.
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 2; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2}); err != nil {
						return nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	// block runs until its call is cancelled, or the test ends.
	stop := make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			u.started.Add(1)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-stop:
				return nil, errors.New("the test ended")
			}
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A modern client cancels a request over HTTP by closing it:
		// counted here, where the server sees it close before its answer.
		// (The Go SDK's stateless handler neither ends the tool's context
		// nor returns then: block ends with the test.)
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Name") == "block" {
			answered := make(chan struct{})
			defer context.AfterFunc(r.Context(), func() {
				select {
				case <-answered:
				default:
					u.cancelled.Add(1)
				}
			})()
			defer close(answered)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(stop) }) // before Close, which waits for the handlers
	u.url = hs.URL
	return u
}

// wire is a go-sdk LoggingTransport's writer that keeps the lines mcpx
// wrote to the client.
type wire struct {
	mu    sync.Mutex
	lines []string
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

// inputRequired returns the input_required results the client read.
func (w *wire) inputRequired() []map[string]json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]json.RawMessage
	for _, l := range w.lines {
		_, msg, ok := strings.Cut(l, "read: ")
		if !ok || !strings.Contains(msg, `"input_required"`) {
			continue
		}
		var m struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(msg), &m) == nil && m.Result != nil {
			out = append(out, m.Result)
		}
	}
	return out
}

// TestModernPassthrough: a modern client (the Go SDK) in front of mcpx
// (stdio and HTTP) calls a modern-only upstream's tool that asks for
// input twice: the client sees the upstream's own inputRequests keys,
// answers, and gets the final result; the requestState it sees is mcpx's
// (the upstream's kept inside), and an altered one is refused.
func TestModernPassthrough(t *testing.T) {
	up := startModernUpstream(t)
	cfg := writeConfig(t, map[string]any{
		"expose":  "direct",
		"servers": map[string]any{"up": map[string]any{"url": up.url, "prefix": ""}},
	})
	for name, transport := range modernTransports(cfg) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var asked []string
			actions := []string{"accept", "decline"}
			client := mcp.NewClient(&mcp.Implementation{Name: "passthrough-test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked = append(asked, req.Params.Message)
					if len(asked) > len(actions) {
						return nil, errors.New("asked too often")
					}
					return &mcp.ElicitResult{Action: actions[len(asked)-1], Content: map[string]any{}}, nil
				},
			})
			w := &wire{}
			cs, err := client.Connect(ctx, &mcp.LoggingTransport{Transport: transport(t), Writer: w}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", v)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("confirm: %v", err)
			}
			if got := textOf(res); got != "told accept then decline" {
				t.Errorf("confirm said %q, want the upstream's answer to both rounds", got)
			}
			rounds := w.inputRequired()
			if len(rounds) != 2 {
				t.Fatalf("the client read %d input_required results, want 2 (one per round)", len(rounds))
			}
			for i, key := range []string{"first-question", "second-question"} {
				var reqs map[string]json.RawMessage
				json.Unmarshal(rounds[i]["inputRequests"], &reqs)
				if len(reqs) != 1 || reqs[key] == nil {
					t.Errorf("round %d asked %s, want the upstream's own key %q", i+1, rounds[i]["inputRequests"], key)
				}
				var state string
				json.Unmarshal(rounds[i]["requestState"], &state)
				if state == "" || strings.HasPrefix(state, "round-") {
					t.Errorf("round %d requestState %q: want mcpx's, the upstream's kept inside it", i+1, state)
				}
			}
		})
	}
}

// TestModernPassthroughState: the requestState of a passed-through
// input_required is mcpx's, and protects the upstream's: an altered one is
// refused with invalid params; the one mcpx gave carries the answers to
// the upstream that asked, even after a reload renamed its tool.
func TestModernPassthroughState(t *testing.T) {
	up := startModernUpstream(t)
	servers := map[string]any{"up": map[string]any{"url": up.url, "prefix": "up"}}
	doc := map[string]any{"servers": servers, "expose": "direct"}
	cfg := writeConfig(t, doc)
	p := startRawStdio(t, cfg)
	meta := modernMeta(`{"elicitation":{}}`)
	call := func(id int, extra string) map[string]json.RawMessage {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"up_confirm","arguments":{}%s,"_meta":%s}}`, id, extra, meta))
		return p.next(fmt.Sprint(id), "")
	}
	var first struct {
		ResultType    string
		RequestState  string
		InputRequests map[string]json.RawMessage
	}
	m1 := call(1, "")
	json.Unmarshal(m1["result"], &first)
	if first.ResultType != "input_required" || first.InputRequests["first-question"] == nil {
		t.Fatalf("first call: %s %s, want the upstream's input_required", m1["result"], m1["error"])
	}
	answer := `,"inputResponses":{"first-question":{"action":"accept","content":{}}}`
	payload, mac, _ := strings.Cut(first.RequestState, ".")
	for name, state := range map[string]string{
		"altered signature": first.RequestState + "x",
		"altered payload":   "A" + payload[1:] + "." + mac,
		"upstream's own":    "round-1",
	} {
		if m := call(2, `,"requestState":`+quoteJSON(state)+answer); errCode(m) != -32602 {
			t.Errorf("%s requestState: %s %s, want -32602", name, m["result"], m["error"])
		}
	}
	// A reload renames the tool: the retry still reaches the server that
	// asked, under the name the client called it by.
	servers["up"] = map[string]any{"url": up.url, "prefix": "renamed"}
	saveByRename(t, cfg, doc)
	id := 100
	testenv.Eventually(t, 20*time.Second, func() bool {
		id++
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":%s}}`, id, meta))
		return strings.Contains(string(p.next(fmt.Sprint(id), "")["result"]), `"renamed_confirm"`)
	}, "the reload did not rename up_confirm to renamed_confirm")
	var second struct {
		InputRequests map[string]json.RawMessage
	}
	json.Unmarshal(call(3, `,"requestState":`+quoteJSON(first.RequestState)+answer)["result"], &second)
	if second.InputRequests["second-question"] == nil {
		t.Errorf("retry with mcpx's requestState after a rename: %+v, want the upstream's second question", second)
	}
}
