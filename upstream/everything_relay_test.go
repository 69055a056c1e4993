package upstream_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// everythingServer is the reference server over one transport, started
// for the test.
func everythingServer(t *testing.T, transport config.Transport) config.Server {
	t.Helper()
	srv := config.Server{Name: "everything-" + string(transport), Transport: transport, Enabled: true, Timeout: 20 * time.Second}
	switch transport {
	case config.TransportStdio:
		srv.Command, srv.Args = "node", []string{everythingJS(t), "stdio"}
	case config.TransportHTTP:
		srv.URL = "http://localhost:" + strconv.Itoa(startEverything(t, "streamableHttp")) + "/mcp"
	case config.TransportSSE:
		srv.URL = "http://localhost:" + strconv.Itoa(startEverything(t, "sse")) + "/sse"
	}
	return srv
}

// TestEverythingRelaysServerRequests: over every transport, a sampling
// request the reference server sends in the middle of a tool call reaches
// OnServerRequest whole, and the answer mcpx gives goes back into the
// tool's result; progress of a long call arrives, in order, before its
// result.
func TestEverythingRelaysServerRequests(t *testing.T) {
	t.Parallel()
	for _, tr := range []config.Transport{config.TransportHTTP, config.TransportSSE, config.TransportStdio} {
		t.Run(string(tr), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var asked []string
			opts := fastOptions()
			opts.OnServerRequest = func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
				mu.Lock()
				asked = append(asked, method+" "+string(params))
				mu.Unlock()
				return json.RawMessage(`{"role":"assistant","model":"mcpx-test","content":{"type":"text","text":"sampled by the test"}}`), nil
			}
			c := connect(t, everythingServer(t, tr), opts)

			got := mustCallText(t, c, "trigger-sampling-request", map[string]any{"prompt": "the question", "maxTokens": 7})
			if !strings.Contains(got, "sampled by the test") {
				t.Errorf("the tool's result does not carry the sampling answer: %q", got)
			}
			mu.Lock()
			// The server may also ask for the roots mcpx declared, at a
			// time of its own (after initialized): that is no sampling.
			var sampling []string
			for _, a := range asked {
				if !strings.HasPrefix(a, "roots/list ") {
					sampling = append(sampling, a)
				}
			}
			if len(sampling) != 1 || !strings.HasPrefix(sampling[0], "sampling/createMessage ") ||
				!strings.Contains(sampling[0], "the question") || !strings.Contains(sampling[0], `"maxTokens":7`) {
				t.Errorf("OnServerRequest got %q, want one sampling/createMessage with the prompt and maxTokens", asked)
			}
			mu.Unlock()

			var progress []string
			resultSeen := false
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			callOpts := &upstream.CallOptions{Progress: func(p json.RawMessage) {
				if resultSeen {
					t.Errorf("progress after the result: %s", p)
				}
				progress = append(progress, string(p))
			}}
			params := `{"name":"trigger-long-running-operation","arguments":{"duration":0.3,"steps":3},"_meta":{"progressToken":"tok-1"}}`
			raw, err := c.RequestWith(ctx, "tools/call", json.RawMessage(params), callOpts)
			resultSeen = true
			if err != nil {
				t.Fatalf("long-running operation: %v", err)
			}
			if !strings.Contains(string(raw), "Long running operation completed") {
				t.Errorf("result %s", raw)
			}
			if len(progress) != 3 {
				t.Fatalf("%d progress notifications, want 3: %q", len(progress), progress)
			}
			for i, p := range progress {
				if !strings.Contains(p, `"progressToken":"tok-1"`) || !strings.Contains(p, `"progress":`+strconv.Itoa(i+1)) {
					t.Errorf("progress %d = %s, want the caller's token and step %d", i, p, i+1)
				}
			}
		})
	}
}
