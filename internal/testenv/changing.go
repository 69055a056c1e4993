package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddChangeTools gives a Go SDK server what makes changes while mcpx
// runs, for the tests of how they reach mcpx and its clients: the
// resource uri, and two tools. grow adds a tool (grown-1, grown-2, ...);
// touch says uri was updated. The server needs subscribe handlers for
// its updates to be subscribed to.
func AddChangeTools(srv *mcp.Server, uri string) {
	object := json.RawMessage(`{"type":"object"}`)
	srv.AddResource(&mcp.Resource{URI: uri, Name: "watched"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "now"}}}, nil
		})
	var grown atomic.Int64
	srv.AddTool(&mcp.Tool{Name: "grow", InputSchema: object},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := fmt.Sprintf("grown-%d", grown.Add(1))
			srv.AddTool(&mcp.Tool{Name: name, InputSchema: object},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "touch", InputSchema: object},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
		})
}

// SubscribeOptions are server options with subscribe handlers that take
// every subscription: the Go SDK then announces resources.subscribe and
// sends a resource's updates to whoever subscribed.
func SubscribeOptions() *mcp.ServerOptions {
	return &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	}
}

// AddConfirmTool gives a Go SDK server of revision 2026-07-28 the tool
// confirm, which asks in its result (input_required, SEP-2322) for two
// confirmations, one round each, under the keys first-question and
// second-question and states of its own, and then says what it was told:
// "told ACTION then ACTION".
func AddConfirmTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ask := func(key, state string) *mcp.CallToolResult {
				return &mcp.CallToolResult{RequestState: state, InputRequests: mcp.InputRequestMap{
					key: &mcp.ElicitParams{Message: "sure (" + key + ")?", RequestedSchema: map[string]any{"type": "object"}}}}
			}
			p := req.Params
			answer := func(key string) string {
				if r, ok := p.InputResponses[key].(*mcp.ElicitResult); ok {
					return r.Action
				}
				return ""
			}
			switch {
			case len(p.InputResponses) == 0:
				return ask("first-question", "round-1"), nil
			case p.RequestState == "round-1" && answer("first-question") != "":
				return ask("second-question", "round-2:"+answer("first-question")), nil
			case strings.HasPrefix(p.RequestState, "round-2:") && answer("second-question") != "":
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
					Text: "told " + strings.TrimPrefix(p.RequestState, "round-2:") + " then " + answer("second-question")}}}, nil
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "unexpected retry: state " + p.RequestState}}}, nil
		})
}
