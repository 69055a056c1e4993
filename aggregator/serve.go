package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/nbpipe"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// ServeStdio serves the catalog as one MCP server on a stream of
// newline-delimited JSON-RPC messages (an MCP client's stdin and stdout)
// until in ends, a write fails, or ctx is done: a legacy session of the
// session core over the stream's Conn (core.NewStreamConn).
func (a *Aggregator) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	// A pipe in non-blocking mode takes answers from the upstreams'
	// readers without a hand-off to the session's writer (core.TryWriter).
	if f, ok := out.(*os.File); ok {
		if w, ok := nbpipe.NewWriter(f); ok {
			out = w
		}
	}
	return a.ServeSession(ctx, "", core.NewStreamConn(in, out), core.SessionOptions{ID: "stdio"})
}

// ServeSession serves one legacy client, whose connection is conn,
// through the session core (on stdio, and on HTTP through package
// httpserve) until its input ends or ctx is done. The session is shown
// profile view ("": the catalog as a shows it), on an Aggregator of its
// own over a's sources when it has servers of its own (perSession) or a
// profile.
func (a *Aggregator) ServeSession(ctx context.Context, view string, conn core.Conn, o core.SessionOptions) error {
	if own := a.sessionCatalog(view); own != nil {
		own.Start(ctx)
		defer a.children.Delete(own)
		defer own.Close()
		return own.ServeSession(ctx, "", conn, o)
	}
	o.Version, o.MaxMessageBytes, o.Logger, o.Telemetry = a.opts.Version, a.cfg.MaxMessageBytes, a.log, a.tel
	o.Drain, o.Linger = a.opts.Drain, a.opts.Linger
	return core.ServeLegacy(ctx, served{a}, conn, o)
}

// ListResult is the result of a list method (tools/list, resources/list,
// resources/templates/list, prompts/list) as a client is served it now.
// Only tools are shaped by the expose setting: the proxy tool with expose
// proxy or both, upstream tools under their prefixed names with direct or
// both. Prompts and resources are listed under every setting: a client
// shows them in its pickers and they cost the model no context, so
// hiding them behind the proxy tool would save nothing.
func (a *Aggregator) ListResult(method string) json.RawMessage {
	c := a.Catalog()
	switch method {
	case "tools/list":
		tools := c.Tools
		if !a.exposeDirect() {
			tools = nil
			for _, e := range c.Tools {
				if e.direct {
					tools = append(tools, e)
				}
			}
		}
		if a.exposeProxy() {
			tools = append([]*Entry{c.proxyTool()}, tools...)
		}
		return listResult("tools", tools)
	case "resources/list":
		return listResult("resources", c.Resources)
	case "resources/templates/list":
		return listResult("resourceTemplates", c.ResourceTemplates)
	default:
		return listResult("prompts", c.Prompts)
	}
}

// exposeDirect reports whether upstream capabilities are served to the
// client under their prefixed names.
func (a *Aggregator) exposeDirect() bool {
	return a.cfg.Expose == config.ExposeDirect || a.cfg.Expose == config.ExposeBoth
}

// exposeProxy reports whether the client sees the proxy tool; it is the
// default.
func (a *Aggregator) exposeProxy() bool {
	return !a.exposeDirect() || a.cfg.Expose == config.ExposeBoth
}

// served reports whether the client was shown the upstream tool name:
// every one with expose direct or both, else only those listed in every
// mode (the browser's).
func (a *Aggregator) served(name string) bool {
	e, ok := a.Catalog().Tool(name)
	return ok && (a.exposeDirect() || e.direct)
}

// waitBuilt waits for the first catalog Start builds, of the catalogs
// remembered and the browser's tools: what tools/list holds with expose
// proxy, which needs no upstream up, but whose proxy entry names the
// servers.
func (a *Aggregator) waitBuilt(ctx context.Context) {
	if a.parent != nil {
		a.parent.waitBuilt(ctx)
	}
	select {
	case <-a.built:
	case <-a.ready:
	case <-ctx.Done():
	}
}

func (a *Aggregator) waitReady(ctx context.Context) {
	if a.parent != nil {
		// A session's catalog is ready when the shared one is too.
		a.parent.waitReady(ctx)
	}
	select {
	case <-a.ready:
	case <-ctx.Done():
	}
}

func isRPCError(err error) bool {
	var rpc *upstream.RPCError
	return errors.As(err, &rpc)
}

// toRPCError maps an error to the JSON-RPC error the client gets: an
// upstream's own error passes through whole; any other failure (a transport
// error may quote a URL or header) goes through redact.
func toRPCError(err error, unknownCode int, redact func(string) string) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	var rpc *upstream.RPCError
	switch {
	case errors.As(err, &rpc):
		return &jsonrpc.Error{Code: rpc.Code, Message: rpc.Message, Data: rpc.Data}
	case isTimeout(err):
		return &jsonrpc.Error{Code: codeRequestTimeout, Message: redact(err.Error())}
	case errors.Is(err, ErrInvalidParams):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, ErrUnknown):
		return &jsonrpc.Error{Code: unknownCode, Message: err.Error()}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: redact(err.Error())}
	}
}

// toolOutcome is the answer to a tools/call of tool name that its source
// answered with res or err.
func (a *Aggregator) toolOutcome(name string, res json.RawMessage, err error) (json.RawMessage, *jsonrpc.Error) {
	if errors.Is(err, ErrUnknown) {
		return a.unknownTool(name), nil // gone since served() said yes
	}
	if err != nil && !isRPCError(err) && !isTimeout(err) && !errors.Is(err, ErrInvalidParams) {
		// The tool exists but its server could not run it: tell the
		// model in a result it can read, as the spec asks.
		return toolError(a.opts.Redact(err.Error())), nil
	}
	return res, toRPCError(err, jsonrpc.CodeInvalidParams, a.opts.Redact)
}

// toolError is a CallToolResult reporting a failure as text.
func toolError(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	})
	return b
}

// serveCall answers a request a source serves (tools/call, resources/read,
// prompts/get, completion/complete) for the served client l of either
// era (nil: none).
func (a *Aggregator) serveCall(ctx context.Context, l *listener, method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	switch method {
	case "tools/call":
		a.waitReady(ctx)
		name, err := paramString(params, "name")
		switch {
		case err != nil:
			return nil, toRPCError(err, jsonrpc.CodeInvalidParams, a.opts.Redact)
		case name == proxytool.Name && a.exposeProxy():
			// A server found waiting for a login while we waited is the
			// proxy's to explain, with its hint, as when found at once.
			path := proxyCallPath(params)
			if err := a.awaitTool(ctx, path); err != nil && a.loginHint(path) == "" {
				return toolError(a.opts.Redact(err.Error())), nil
			}
			a.refusedProxyCall(ctx, l, params, path)
			res := a.proxyFor(l).Call(ctx, params)
			a.countProxyAnswer(ctx, res)
			return res, nil
		case !a.served(name) && a.exposeDirect():
			// A server that waits for a login says so at once: waiting for
			// it to connect would not help.
			if a.loginHint(name) != "" {
				return a.unknownTool(name), nil
			}
			if err := a.awaitTool(ctx, name); err != nil {
				return toolError(a.opts.Redact(err.Error())), nil
			}
		}
		if !a.served(name) {
			a.refused(ctx, l, method, params, a.Catalog().FilteredOut(KindTool, name))
			return a.unknownTool(name), nil // unknowntool.go
		}
		res, err := a.callTool(ctx, l, params, results.ViaRead)
		return a.toolOutcome(name, res, err)
	case "resources/read":
		a.waitReady(ctx)
		res, err := a.readResource(ctx, l, params)
		return res, toRPCError(err, jsonrpc.CodeResourceNotFound, a.opts.Redact)
	case "prompts/get":
		a.waitReady(ctx)
		res, err := a.getPrompt(ctx, l, params)
		return res, toRPCError(err, jsonrpc.CodeInvalidParams, a.opts.Redact)
	case "completion/complete":
		a.waitReady(ctx)
		res, err := a.complete(ctx, l, params)
		return res, toRPCError(err, jsonrpc.CodeInvalidParams, a.opts.Redact)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method " + method + " not found"}
}
