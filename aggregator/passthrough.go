package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/rawjson"
)

// This file passes a modern upstream's input_required result through to a
// modern client as it came (its inputRequests keys unchanged), and the
// client's retry back to the same upstream. The core keeps the upstream's
// requestState inside one of its own, signed, with a route that names the
// server and the upstream's own name of what was called: the retry goes
// there even after a reload renamed the tool, and no client can redirect
// it. A call through the proxy tool is not passed through: its result is
// the proxy's, so the bridge asks the questions (core/bridge.go).

// passesInput reports whether a modern client's request reaches its
// upstream directly, so that the upstream's input_required can be its
// answer: tools/call of a tool by name, prompts/get, resources/read.
func passesInput(method string, params json.RawMessage) bool {
	switch method {
	case "prompts/get", "resources/read":
		return true
	case "tools/call":
		name, err := paramString(params, "name")
		return err == nil && name != proxytool.Name
	}
	return false
}

// inputRequired reports whether res asks the client for input. Most
// results do not, and one substring scan tells.
func inputRequired(res json.RawMessage) bool {
	if !bytes.Contains(res, []byte(`"input_required"`)) {
		return false
	}
	rt, _ := rawjson.Get(res, "resultType")
	return string(rt) == `"input_required"`
}

// route is where a passthrough retry goes: the server's name and its own
// name of the tool or prompt ("" for a resource, whose URI is its own).
func route(e *Entry) string {
	if e.Kind == KindResource || e.Kind == KindTemplate {
		return e.Server + "\x00"
	}
	return e.Server + "\x00" + e.Original
}

// routeOf is the route of the entry a request names, "" when the catalog
// has none now.
func (a *Aggregator) routeOf(method string, params json.RawMessage) string {
	var e *Entry
	var ok bool
	switch method {
	case "tools/call", "prompts/get":
		name, err := paramString(params, "name")
		if err != nil {
			return ""
		}
		if method == "tools/call" {
			e, ok = a.Catalog().Tool(name)
		} else {
			e, ok = a.Catalog().Prompt(name)
		}
	case "resources/read":
		uri, err := paramString(params, "uri")
		if err != nil {
			return ""
		}
		e, ok = a.Catalog().Resource(uri)
	}
	if !ok {
		return ""
	}
	return route(e)
}

// routed sends the retry of a passthrough input_required result to the
// server its route names, under that server's own name of what it
// answers, whatever the catalog exposes it as now, for the client l.
func (a *Aggregator) routed(ctx context.Context, l *listener, method string, params json.RawMessage, to string) (json.RawMessage, *jsonrpc.Error) {
	a.waitReady(ctx)
	server, original, _ := strings.Cut(to, "\x00")
	e, err := a.routedEntry(method, params, server, original)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if method != "resources/read" {
		if params, _, err = rawjson.Replace(orEmpty(params), "name", e.quotedOriginal()); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: must be an object"}
		}
	}
	res, err := a.do(ctx, sourceCall{l: l, src: e.src, entry: e, method: method, params: params, via: results.ViaRead})
	if method == "tools/call" {
		return a.toolOutcome(e.Name, res, err)
	}
	return res, toRPCError(err, jsonrpc.CodeInvalidParams, a.opts.Redact)
}

// routedEntry finds what server serves as original (a resource: the URI
// in params) in the catalog as it is now; a tool only if it is served.
func (a *Aggregator) routedEntry(method string, params json.RawMessage, server, original string) (*Entry, error) {
	cat := a.Catalog()
	var entries []*Entry
	switch method {
	case "tools/call":
		entries = cat.Tools
	case "prompts/get":
		entries = cat.Prompts
	case "resources/read":
		uri, err := paramString(params, "uri")
		if err != nil {
			return nil, err
		}
		if e, ok := cat.Resource(uri); ok && e.Server == server {
			return e, nil
		}
		for _, e := range cat.Resources {
			if e.Server == server && e.Name == uri {
				return e, nil
			}
		}
		for _, e := range cat.ResourceTemplates {
			if e.Server == server && e.template != nil && e.template.Match(uri) != nil {
				return e, nil
			}
		}
		return nil, fmt.Errorf("invalid requestState: server %q, which asked for this input, no longer serves %q: send the request again without requestState", server, uri)
	}
	for _, e := range entries {
		if e.Server == server && e.Original == original && (method != "tools/call" || a.exposeDirect() || e.direct) {
			return e, nil
		}
	}
	return nil, fmt.Errorf("invalid requestState: server %q, which asked for this input, no longer serves %q: send the request again without requestState", server, original)
}
