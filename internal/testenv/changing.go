package testenv

import (
	"context"
	"encoding/json"
	"fmt"
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
