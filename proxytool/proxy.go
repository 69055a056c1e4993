package proxytool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/search"
)

// Name is the proxy tool's name.
const Name = "proxy"

// Proxy answers calls to the proxy tool over a [Catalog]. One Proxy
// serves any number of concurrent calls.
type Proxy struct {
	c Catalog
	// index builds the search index of a catalog that keeps none
	// ([Searcher]); it hands back the same index while the items are
	// the same.
	index *search.Builder
}

// New returns a Proxy over c. A nil c is an empty catalog.
func New(c Catalog) *Proxy {
	if c == nil {
		c = emptyCatalog{}
	}
	p := &Proxy{c: c}
	if _, ok := c.(Searcher); !ok {
		p.index = search.NewBuilder()
	}
	return p
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
	req, meta, errResult := decodeCall(params, p.canRun())
	if errResult != nil {
		return errResult
	}
	switch req.action {
	case actionRun:
		return p.run(ctx, req, meta)
	case actionList:
		return p.list(ctx, req)
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

// decodeCall reads the params of a tools/call of the proxy tool: its
// arguments, and the _meta to pass on; a non-nil errResult is the
// answer to a call that cannot be read.
func decodeCall(params json.RawMessage, run bool) (req request, meta json.RawMessage, errResult json.RawMessage) {
	fields, err := decodeObject(params)
	if err != nil {
		return req, nil, errorResult(fmt.Sprintf("The tools/call params must be a JSON object with 'name' and 'arguments'; got %s", shown(params)))
	}
	req, err = decodeArgsFor(fields["arguments"], run)
	if err != nil {
		return req, nil, errorResult(err.Error())
	}
	if m := fields["_meta"]; len(m) > 0 && m[0] == '{' {
		meta = m
	}
	return req, meta, nil
}

// Sender is an optional ability of a [Catalog]: sending a request without
// waiting for its answer. done gets what Call would return, exactly once,
// possibly on another goroutine, and must not block; cancel ends the
// request early, done then getting the cause. ok is false, having sent
// nothing, when the request must go through Call instead.
type Sender interface {
	Send(ctx context.Context, method string, params json.RawMessage,
		done func(json.RawMessage, error)) (cancel func(cause error), ok bool)
}

// Send answers a tools/call of the proxy tool as Call does, but without
// waiting, when its catalog is a [Sender] that can take the upstream
// request now: a call of a tool. done gets the CallToolResult, exactly
// once, possibly on another goroutine; it must not block. cancel ends the
// call early, as the [Sender]'s does, done then getting the error result
// for the cause. ok is false, having done nothing, for everything else
// (list, info, resources, prompts, a tool not found, arguments in
// error), which Call answers.
func (p *Proxy) Send(ctx context.Context, params json.RawMessage, done func(json.RawMessage)) (cancel func(cause error), ok bool) {
	s, ok := p.c.(Sender)
	if !ok {
		return nil, false
	}
	req, meta, errResult := decodeCall(params, false)
	if errResult != nil || req.action != actionCall || req.kind != KindTool {
		return nil, false
	}
	it, err := p.resolve(KindTool, req.path)
	if err != nil {
		return nil, false
	}
	return s.Send(ctx, "tools/call", toolParams(it, req, meta), func(raw json.RawMessage, err error) {
		done(toolResultSafe(it, req, raw, err))
	})
}

// toolResultSafe is proxiedToolResult, recovering as Call does: the result
// comes from someone else's server.
func toolResultSafe(it Item, req request, raw json.RawMessage, err error) (result json.RawMessage) {
	defer func() {
		if r := recover(); r != nil {
			result = errorResult(fmt.Sprintf("proxy: internal error: %v", r))
		}
	}()
	return proxiedToolResult(it, req, raw, err)
}

// emptyCatalog has nothing in it.
type emptyCatalog struct{}

func (emptyCatalog) Items(Kind) []Item                { return nil }
func (emptyCatalog) Lookup(Kind, string) (Item, bool) { return Item{}, false }
func (emptyCatalog) Call(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("%s: the catalog is empty", method)
}
