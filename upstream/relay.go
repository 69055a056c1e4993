package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
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
func (cn *conn) onServerRequest(ctx context.Context, req jsonrpc.Message) (*jsonrpc.Message, error) {
	if req.Method == string(mcp.MethodPing) {
		return jsonrpc.NewResult(req.ID, json.RawMessage(`{}`)), nil
	}
	handler := cn.c.opts.OnServerRequest
	if !relayedRequests[req.Method] || handler == nil {
		return jsonrpc.NewError(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not support " + req.Method}), nil
	}
	// Compacted: a remote server's params may span lines, and the client
	// mcpx relays them to may read one message a line.
	params, err := json.Marshal(req.Params)
	if err != nil {
		return jsonrpc.NewError(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unreadable params"}), nil
	}
	res, err := handler(ctx, cn.c.cfg.Name, req.Method, params)
	if err != nil {
		var rpc *RPCError
		if errors.As(err, &rpc) {
			return jsonrpc.NewError(req.ID, rpc), nil
		}
		return jsonrpc.NewError(req.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: cn.c.opts.Redact(err.Error())}), nil
	}
	return jsonrpc.NewResult(req.ID, res), nil
}

// relayNotification passes a notification on to OnNotification.
// The params go as the server sent them, on one line.
func (cn *conn) relayNotification(n jsonrpc.Message) {
	f := cn.c.opts.OnNotification
	if f == nil {
		return
	}
	params := withoutSubscriptionID(jsonrpc.OneLine(n.Params))
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
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
	n := jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: method}
	if len(params) > 0 {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("%s params: %w", method, err)
		}
		n.Params = b
	}
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

// withoutSubscriptionID is params without the id of mcpx's own listen
// stream in its _meta, which means nothing to the clients: the params as
// they came when there is none (most notifications: one substring scan).
func withoutSubscriptionID(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(metaSubscriptionID)) {
		return params
	}
	return withoutMeta(params, func(k rawjson.Key) bool { return k.Is(metaSubscriptionID) })
}
