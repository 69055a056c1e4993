package proxytool

import (
	"context"
	"encoding/json"
	"fmt"
)

// Name is the proxy tool's name.
const Name = "proxy"

// Proxy answers calls to the proxy tool over a [Catalog]. It holds no
// state of its own, so one Proxy serves any number of concurrent calls.
type Proxy struct {
	c Catalog
}

// New returns a Proxy over c. A nil c is an empty catalog.
func New(c Catalog) *Proxy {
	if c == nil {
		c = emptyCatalog{}
	}
	return &Proxy{c: c}
}

// Call answers one tools/call of the proxy tool. params is the whole params
// object of the request ({"name":"proxy","arguments":{...},"_meta":{...}});
// the result is a CallToolResult. Call never fails: a bad argument, an
// unknown capability or an upstream error is a result with isError set and
// one text item naming the problem. When the proxy calls upstream, the
// incoming _meta (a progressToken, say) goes along unchanged.
func (p *Proxy) Call(ctx context.Context, params json.RawMessage) (result json.RawMessage) {
	defer func() {
		// The catalog is someone else's code; a panic in it must not take
		// the server down with it.
		if r := recover(); r != nil {
			result = errorResult(fmt.Sprintf("proxy: internal error: %v", r))
		}
	}()
	return p.call(ctx, params)
}

func (p *Proxy) call(ctx context.Context, params json.RawMessage) json.RawMessage {
	fields, err := decodeObject(params)
	if err != nil {
		return errorResult(fmt.Sprintf("The tools/call params must be a JSON object with 'name' and 'arguments'; got %s", shown(params)))
	}
	req, err := decodeArgs(fields["arguments"])
	if err != nil {
		return errorResult(err.Error())
	}
	var meta json.RawMessage
	if m := fields["_meta"]; len(m) > 0 && m[0] == '{' {
		meta = m
	}
	switch req.action {
	case actionList:
		return p.list(req)
	case actionInfo:
		return p.info(req)
	}
	switch req.kind {
	case KindTool:
		return p.callTool(ctx, req, meta)
	case KindResource:
		return p.readResource(ctx, req, meta)
	default:
		return p.getPrompt(ctx, req, meta)
	}
}

// emptyCatalog has nothing in it.
type emptyCatalog struct{}

func (emptyCatalog) Items(Kind) []Item                { return nil }
func (emptyCatalog) Lookup(Kind, string) (Item, bool) { return Item{}, false }
func (emptyCatalog) Call(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("%s: the catalog is empty", method)
}
