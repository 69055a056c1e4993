package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// proxyCatalog is the aggregator as the proxy tool sees it.
type proxyCatalog struct{ a *Aggregator }

var _ proxytool.Catalog = proxyCatalog{}

func (p proxyCatalog) Items(kind proxytool.Kind) []proxytool.Item {
	return p.a.Catalog().items[kind]
}

func (p proxyCatalog) Lookup(kind proxytool.Kind, name string) (proxytool.Item, bool) {
	c := p.a.Catalog()
	var e *Entry
	var ok bool
	switch kind {
	case proxytool.KindTool:
		e, ok = c.Tool(name)
	case proxytool.KindPrompt:
		e, ok = c.Prompt(name)
	case proxytool.KindResource:
		e, ok = c.Resource(name)
	}
	if !ok {
		return proxytool.Item{}, false
	}
	return e.item(), true
}

// NotFoundHint says how to make a server that waits for a login offer the
// tool or prompt name would be.
func (p proxyCatalog) NotFoundHint(kind proxytool.Kind, name string) string {
	if kind == proxytool.KindResource {
		return ""
	}
	return p.a.loginHint(name)
}

// Call forwards a proxied request. An upstream's JSON-RPC error becomes its
// message alone, which the proxy shows the model verbatim.
func (p proxyCatalog) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var res json.RawMessage
	var err error
	switch method {
	case "tools/call":
		res, err = p.a.callTool(ctx, params)
	case "resources/read":
		res, err = p.a.readResource(ctx, params)
	case "prompts/get":
		res, err = p.a.getPrompt(ctx, params)
	default:
		return nil, fmt.Errorf("the proxy cannot send %s", method)
	}
	var rpc *upstream.RPCError
	if errors.As(err, &rpc) {
		return nil, errors.New(rpc.Message)
	}
	return res, err
}

// item is the entry as the proxy tool sees it.
func (e *Entry) item() proxytool.Item {
	it := proxytool.Item{Name: e.Name, Original: e.Original, Server: e.Server,
		Title: e.Title, Description: e.Description, JSON: e.JSON}
	switch e.Kind {
	case KindTool:
		it.Kind = proxytool.KindTool
	case KindPrompt:
		it.Kind = proxytool.KindPrompt
	case KindResource:
		it.Kind = proxytool.KindResource
	case KindTemplate:
		it.Kind, it.Template = proxytool.KindResource, true
	}
	return it
}

// proxyItems lists the catalog for the proxy once per rebuild, so that
// `proxy list` over thousands of tools does no conversion per call.
func (c *Catalog) proxyItems() map[proxytool.Kind][]proxytool.Item {
	conv := func(lists ...[]*Entry) []proxytool.Item {
		var out []proxytool.Item
		for _, l := range lists {
			for _, e := range l {
				out = append(out, e.item())
			}
		}
		return out
	}
	return map[proxytool.Kind][]proxytool.Item{
		proxytool.KindTool:     conv(c.Tools),
		proxytool.KindResource: conv(c.Resources, c.ResourceTemplates),
		proxytool.KindPrompt:   conv(c.Prompts),
	}
}
