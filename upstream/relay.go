package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/upstream/jsonrpc"
)

// ServerRequestFunc answers a request an upstream server sends to mcpx
// (sampling/createMessage, elicitation/create, roots/list), usually by
// asking mcpx's own client. An *RPCError is answered with its code.
type ServerRequestFunc func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error)

// NotificationFunc receives an upstream's notifications that mcpx relays
// (notifications/message, notifications/resources/updated), raw. It runs
// on the connection's reader, before later responses are delivered, so it
// keeps their order; it must not call the server.
type NotificationFunc func(server, method string, params json.RawMessage)

// relayedRequests are the server-to-client requests mcpx passes on.
var relayedRequests = map[string]bool{
	string(mcp.MethodSamplingCreateMessage): true,
	string(mcp.MethodElicitationCreate):     true,
	string(mcp.MethodListRoots):             true,
}

// clientCapabilities are what mcpx declares to an upstream: everything it
// can relay when it relays at all. Every transport answers server
// requests, the legacy SSE one included.
func clientCapabilities(relay bool) mcp.ClientCapabilities {
	if !relay {
		return mcp.ClientCapabilities{}
	}
	caps := mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapability{},
		Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
	}
	caps.Roots = &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}
	return caps
}

// onServerRequest answers a request from the server over the raw
// transport, so nothing in its params or in the answer is lost.
func (cn *conn) onServerRequest(ctx context.Context, req jsonrpc.Request) (*jsonrpc.Response, error) {
	if req.Method == string(mcp.MethodPing) {
		return jsonrpc.NewResult(req.ID, json.RawMessage(`{}`)), nil
	}
	handler := cn.c.opts.OnServerRequest
	if !relayedRequests[req.Method] || handler == nil {
		return jsonrpc.NewError(req.ID, mcp.METHOD_NOT_FOUND, "mcpx does not support "+req.Method, nil), nil
	}
	params, err := json.Marshal(req.Params)
	if err != nil {
		return jsonrpc.NewError(req.ID, mcp.INVALID_PARAMS, "unreadable params", nil), nil
	}
	res, err := handler(ctx, cn.c.cfg.Name, req.Method, params)
	if err != nil {
		var rpc *RPCError
		if errors.As(err, &rpc) {
			return jsonrpc.NewError(req.ID, rpc.Code, rpc.Message, rpc.Data), nil
		}
		return jsonrpc.NewError(req.ID, mcp.INTERNAL_ERROR, cn.c.opts.Redact(err.Error()), nil), nil
	}
	return jsonrpc.NewResult(req.ID, res), nil
}

// relayNotification passes a notification on to OnNotification.
func (cn *conn) relayNotification(n mcp.JSONRPCNotification) {
	f := cn.c.opts.OnNotification
	if f == nil {
		return
	}
	// The id of mcpx's own listen stream means nothing to the clients.
	delete(n.Params.Meta, metaSubscriptionID)
	if len(n.Params.Meta) == 0 {
		n.Params.Meta = nil // mcp-go fills in an empty one the server never sent
	}
	params, err := json.Marshal(n.Params)
	if err != nil {
		return
	}
	f(cn.c.cfg.Name, n.Method, params)
}

// Notify sends a notification to the server, e.g.
// notifications/roots/list_changed. A server that is not connected is
// skipped: it will list roots afresh when it connects.
func (c *Client) Notify(ctx context.Context, method string, params map[string]any) error {
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn == nil {
		return nil
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION}
	n.Method = method
	n.Params.AdditionalFields = params
	return cn.tr.SendNotification(ctx, n)
}

// SetLogLevel asks the server to send log messages at level and above,
// now and after every reconnect. A server without the logging capability
// is left alone.
func (c *Client) SetLogLevel(ctx context.Context, level string) error {
	c.mu.Lock()
	c.logLevel = level
	cn := c.conn
	c.mu.Unlock()
	if cn == nil || cn.caps.Logging == nil {
		return nil
	}
	if cn.modern() {
		// No logging/setLevel in the modern era: the level goes in
		// every request's _meta from now on.
		meta, err := cn.metaFields()
		if err != nil {
			return err
		}
		cn.meta.Store(&meta)
		return nil
	}
	return cn.setLogLevel(ctx, level)
}

func (cn *conn) setLogLevel(ctx context.Context, level string) error {
	params, _ := json.Marshal(map[string]string{"level": level})
	if _, err := cn.request(ctx, string(mcp.MethodSetLogLevel), params); err != nil {
		return fmt.Errorf("logging/setLevel: %w", err)
	}
	return nil
}
