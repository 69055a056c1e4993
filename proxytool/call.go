package proxytool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// callTool answers call for a tool: tools/call upstream, then the result
// with every content item annotated.
func (p *Proxy) callTool(ctx context.Context, req request, meta json.RawMessage) json.RawMessage {
	it, err := p.resolve(KindTool, req.path)
	if errors.Is(err, ErrNotFound) {
		return errorResult(fmt.Sprintf("Unknown tool: '%s'", req.path) + p.hint(KindTool, req.path) + p.suggest(KindTool, req.path))
	}
	if err != nil {
		return errorResult(err.Error())
	}
	raw, err := p.c.Call(ctx, "tools/call", toolParams(it, req, meta))
	return proxiedToolResult(it, req, raw, err)
}

// toolParams are the tools/call params for the tool it, with the call's
// arguments and _meta.
func toolParams(it Item, req request, meta json.RawMessage) json.RawMessage {
	args := req.args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	params := map[string]json.RawMessage{"name": quote(it.Name), "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	return marshalObject(params)
}

// proxiedToolResult is the proxy's answer to a call of the tool it, which
// answered raw or err.
func proxiedToolResult(it Item, req request, raw json.RawMessage, err error) json.RawMessage {
	if err != nil {
		return errorResult(err.Error())
	}
	out, err := annotateToolResult(raw, callAnnotations(KindTool, req.path))
	if err != nil {
		return errorResult(fmt.Sprintf("Tool '%s' returned a result that is not a CallToolResult: %v", it.Name, err))
	}
	return out
}

// readResource answers call for a resource: resources/read upstream, then
// each content as an embedded resource, objectified and annotated.
func (p *Proxy) readResource(ctx context.Context, req request, meta json.RawMessage) json.RawMessage {
	it, err := p.resolve(KindResource, req.path)
	if k, ok := p.c.(Keeper); ok && errors.Is(err, ErrNotFound) && k.Kept(req.path) {
		return p.readKept(ctx, k, req)
	}
	if errors.Is(err, ErrNotFound) {
		return errorResult(fmt.Sprintf("Resource '%s' not found", req.path))
	}
	if err != nil {
		return errorResult(err.Error())
	}
	// A template is read at the URI given, a resource at its own URI (the
	// path may have been its name).
	uri := it.Name
	if it.Template {
		uri = req.path
	}
	params := map[string]json.RawMessage{"uri": quote(uri)}
	if meta != nil {
		params["_meta"] = meta
	}
	raw, err := p.c.Call(ctx, "resources/read", marshalObject(params))
	if err != nil {
		return errorResult(err.Error())
	}
	out, err := resourceAsToolResult(raw, callAnnotations(KindResource, req.path), false)
	if err != nil {
		return errorResult(fmt.Sprintf("Resource '%s' returned a result that is not a ReadResourceResult: %v", uri, err))
	}
	return out
}

// getPrompt answers call for a prompt: prompts/get upstream, then the
// GetPromptResult as one embedded JSON resource.
func (p *Proxy) getPrompt(ctx context.Context, req request, meta json.RawMessage) json.RawMessage {
	it, err := p.resolve(KindPrompt, req.path)
	if errors.Is(err, ErrNotFound) {
		return errorResult(fmt.Sprintf("Prompt '%s' not found", req.path) + p.hint(KindPrompt, req.path) + p.suggest(KindPrompt, req.path))
	}
	if err != nil {
		return errorResult(err.Error())
	}
	args := req.args // already strings: see promptArgs
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	params := map[string]json.RawMessage{"name": quote(it.Name), "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	raw, err := p.c.Call(ctx, "prompts/get", marshalObject(params))
	if err != nil {
		return errorResult(err.Error())
	}
	text, err := compactJSON(raw)
	if err != nil || len(text) == 0 || text[0] != '{' {
		return errorResult(fmt.Sprintf("Prompt '%s' returned a result that is not a GetPromptResult object", it.Name))
	}
	return embedded(embeddedResource{URI: "proxy:" + it.Name, Text: string(text)}, map[string]any{
		"pythonType":  "GetPromptResult",
		"objectType":  "GetPromptResult",
		"proxyType":   KindPrompt,
		"proxyAction": "call",
		"proxyPath":   req.path,
	})
}
