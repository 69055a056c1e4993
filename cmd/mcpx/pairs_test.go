package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// This file checks progress and cancellation in each pair of eras: a
// legacy or modern client in front of mcpx, a legacy (the fixture) or
// modern (the Go SDK, modern only) upstream behind it.

// pairUpstream is one upstream of the pairs, as the test drives it
// through mcpx.
type pairUpstream struct {
	name string
	// progress is a tool that reports progress under the caller's token.
	progress, progressArgs string
	// block is a tool that runs until it is cancelled.
	block, blockArgs string
	// started and cancelled count the upstream's calls of block that
	// began and that ended cancelled, as the upstream itself tells.
	started, cancelled func(c *pairClient) int
}

func pairUpstreams(up *modernUpstream) []pairUpstream {
	// The fixture counts for itself, asked through mcpx.
	count := func(tool, field string) func(c *pairClient) int {
		return func(c *pairClient) int {
			var r struct{ StructuredContent map[string]int }
			json.Unmarshal(c.call(tool, `{}`, ""), &r)
			return r.StructuredContent[field]
		}
	}
	return []pairUpstream{
		{
			name:     "legacy upstream",
			progress: "legacy_sleep", progressArgs: `{"ms":10,"steps":2}`,
			block: "legacy_sleep", blockArgs: `{"ms":600000}`,
			started: count("legacy_stats", "active"), cancelled: count("legacy_cancels", "cancelled"),
		},
		{
			name:     "modern upstream",
			progress: "modern_progress", progressArgs: `{}`,
			block: "modern_block", blockArgs: `{}`,
			started:   func(*pairClient) int { return int(up.started.Load()) },
			cancelled: func(*pairClient) int { return int(up.cancelled.Load()) },
		},
	}
}

// pairClient is a raw JSON-RPC client of serve --stdio in one era.
type pairClient struct {
	*rawStdio
	modern bool
	id     int
}

// request sends tools/call of tool and returns its id; token, unless "",
// is its progressToken.
func (c *pairClient) request(tool, args, token string) string {
	c.id++
	meta := map[string]any{}
	if c.modern {
		meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
	}
	if token != "" {
		meta["progressToken"] = token
	}
	m, _ := json.Marshal(meta)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":%s}}`, c.id, tool, args, m))
	return fmt.Sprint(c.id)
}

// call calls tool and returns its result.
func (c *pairClient) call(tool, args, token string) json.RawMessage {
	c.t.Helper()
	m, _ := c.answer(c.request(tool, args, token))
	if m["error"] != nil {
		c.t.Fatalf("%s: %s", tool, m["error"])
	}
	return m["result"]
}

// answer returns the answer to id and the params of each
// notifications/progress read before it.
func (c *pairClient) answer(id string) (map[string]json.RawMessage, []json.RawMessage) {
	c.t.Helper()
	var progress []json.RawMessage
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("mcpx closed stdout waiting for %s", id)
			}
			if string(m["method"]) == `"notifications/progress"` {
				progress = append(progress, m["params"])
			}
			if string(m["id"]) == id {
				return m, progress
			}
		case <-timeout:
			c.t.Fatalf("no answer to %s", id)
		}
	}
}

// TestProgressAndCancelPairs: in each pair of eras, a progress
// notification of the upstream reaches the client under the client's
// token, and the client's notifications/cancelled reaches the upstream
// (the upstream says so itself).
func TestProgressAndCancelPairs(t *testing.T) {
	up := startModernUpstream(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"legacy": fx("--limit-tools"),
		"modern": map[string]any{"url": up.url},
	}})
	for _, era := range []string{"legacy client", "modern client"} {
		t.Run(era, func(t *testing.T) {
			c := &pairClient{rawStdio: startRawStdio(t, cfg), modern: era == "modern client"}
			if !c.modern {
				c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pairs","version":"1"}}}`)
				c.next(`"init"`, "")
				c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for _, u := range pairUpstreams(up) {
				t.Run(u.name, func(t *testing.T) {
					token := strings.ReplaceAll(era+" "+u.name, " ", "-")
					m, progress := c.answer(c.request(u.progress, u.progressArgs, token))
					if m["error"] != nil {
						t.Fatalf("%s: %s", u.progress, m["error"])
					}
					if len(progress) == 0 {
						t.Errorf("%s: no progress reached the client", u.progress)
					}
					for _, p := range progress {
						var n struct{ ProgressToken string }
						json.Unmarshal(p, &n)
						if n.ProgressToken != token {
							t.Errorf("progress %s, want the client's token %q", p, token)
						}
					}

					started, cancelled := u.started(c), u.cancelled(c)
					id := c.request(u.block, u.blockArgs, "")
					testenv.Eventually(t, 20*time.Second, func() bool { return u.started(c) > started },
						"%s never reached the upstream", u.block)
					c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`)
					testenv.Eventually(t, 20*time.Second, func() bool { return u.cancelled(c) > cancelled },
						"the client's cancel of %s never reached the upstream", u.block)
				})
			}
		})
	}
}

// TestModernHTTPCancel: a modern client over HTTP cancels a request by
// closing it; the cancel reaches a legacy and a modern upstream alike.
func TestModernHTTPCancel(t *testing.T) {
	up := startModernUpstream(t)
	cfg := writeConfig(t, map[string]any{"expose": "direct", "servers": map[string]any{
		"legacy": fx("--limit-tools"),
		"modern": map[string]any{"url": up.url},
	}})
	url := startHTTP(t, cfg, nil).url + "/mcp"
	meta := modernMeta(`{}`)
	count := func(tool, field string) func() int {
		return func() int {
			r := post(t, url, "tools/call", tool, `{"name":"`+tool+`","arguments":{},"_meta":`+meta+`}`, nil)
			var st map[string]int
			json.Unmarshal(r.Result["structuredContent"], &st)
			return st[field]
		}
	}
	for _, u := range []struct {
		name, tool, args   string
		started, cancelled func() int
	}{
		{"legacy upstream", "legacy_sleep", `{"ms":600000}`, count("legacy_stats", "active"), count("legacy_cancels", "cancelled")},
		{"modern upstream", "modern_block", `{}`, func() int { return int(up.started.Load()) }, func() int { return int(up.cancelled.Load()) }},
	} {
		t.Run(u.name, func(t *testing.T) {
			started, cancelled := u.started(), u.cancelled()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + u.tool + `","arguments":` + u.args + `,"_meta":` + meta + `}}`
			req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", u.tool)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body) // until the request is closed
					resp.Body.Close()
				}
			}()
			testenv.Eventually(t, 20*time.Second, func() bool { return u.started() > started }, "%s never reached the upstream", u.tool)
			cancel()
			<-done
			testenv.Eventually(t, 20*time.Second, func() bool { return u.cancelled() > cancelled },
				"closing the request of %s did not cancel the upstream's call", u.tool)
		})
	}
}
