package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCodeModeApprovalModern: with the Go SDK's client on revision
// 2026-07-28, over stdio and over HTTP, a script's call of a tool that
// may write pauses the run and reaches the client as input_required
// naming the call; the client's answer, sent on its retry, resumes the
// run: an accepted call goes ahead, a declined one throws in the
// script. A client that declared no elicitation is refused, not asked.
func TestCodeModeApprovalModern(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"servers": map[string]any{"fx": fx("--name", "fx")}})
	for name, transport := range modernTransports(cfg) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			var asked []string
			client := mcp.NewClient(&mcp.Implementation{Name: "codemode-modern", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					if strings.Contains(req.Params.Message, "fx_fail") {
						return &mcp.ElicitResult{Action: "decline"}, nil
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"always": false}}, nil
				},
			})
			cs, err := client.Connect(ctx, transport(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
				t.Fatalf("negotiated %q, want 2026-07-28", v)
			}
			code := `
				const a = await proxy.call("fx_structured", {a: 20, b: 1});
				const b = await proxy.call("fx_structured", {a: 1, b: 1});
				let declined = null;
				try { await proxy.call("fx_fail", {}) } catch (e) { declined = e.message }
				return {a: a.sum, b: b.sum, declined}`
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proxy", Arguments: map[string]any{"action": "run", "code": code}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("the run failed: %s", textOf(res))
			}
			var v struct {
				A, B     int
				Declined string
			}
			if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &v); err != nil {
				t.Fatalf("the run's value %q: %v", textOf(res), err)
			}
			if v.A != 21 || v.B != 2 || !strings.Contains(v.Declined, "declined") {
				t.Errorf("the run's value: %+v", v)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 3 || !strings.Contains(asked[0], `{"a":20,"b":1}`) || !strings.Contains(asked[2], "fx_fail") {
				t.Errorf("asked %d times, want 3 (each call, since always was false): %q", len(asked), asked)
			}
		})
	}
	t.Run("no elicitation", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "codemode-modern", Version: "1"}, nil)
		cs, err := client.Connect(ctx, modernTransports(cfg)["stdio"](t), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proxy", Arguments: map[string]any{"action": "run",
			"code": `await proxy.call("fx_structured", {})`}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(textOf(res), "did not declare elicitation") {
			t.Errorf("a client that cannot be asked: %s", textOf(res))
		}
	})
}
