package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/upstream"
)

// proxyCatalog is the aggregator as the proxy tool of one served client
// sees it: the client's calls are made for l (nil: none, as for mcpx's
// own commands), and those sent without waiting carry send, whose batch
// is its read loop's (only that loop calls Send; nil: none).
type proxyCatalog struct {
	a    *Aggregator
	l    *listener
	send *upstream.CallOptions
}

// proxyFor is the proxy tool as the client l calls it: its own when it
// has one (a legacy session's, made with the session), else one made
// now; nil l, the aggregator's own.
func (a *Aggregator) proxyFor(l *listener) *proxytool.Proxy {
	switch {
	case l == nil:
		return a.proxy
	case l.proxy != nil:
		return l.proxy
	}
	return a.newProxy(proxyCatalog{a: a, l: l})
}

var _ proxytool.Catalog = proxyCatalog{}

func (p proxyCatalog) Items(kind proxytool.Kind) []proxytool.Item {
	return p.a.Catalog().Items(kind)
}

func (p proxyCatalog) Lookup(kind proxytool.Kind, name string) (proxytool.Item, bool) {
	return p.a.Catalog().Lookup(kind, name)
}

var _ proxytool.Finder = (*Catalog)(nil)

// Items lists the catalog's capabilities of a kind as the proxy tool sees
// them.
func (c *Catalog) Items(kind proxytool.Kind) []proxytool.Item { return c.items[kind] }

// Lookup finds a capability by exposed name, or a resource by URI.
func (c *Catalog) Lookup(kind proxytool.Kind, name string) (proxytool.Item, bool) {
	e, ok := c.entry(kind, name)
	if !ok {
		return proxytool.Item{}, false
	}
	return e.item(), true
}

func (c *Catalog) entry(kind proxytool.Kind, name string) (*Entry, bool) {
	switch kind {
	case proxytool.KindTool:
		return c.Tool(name)
	case proxytool.KindPrompt:
		return c.Prompt(name)
	case proxytool.KindResource:
		return c.Resource(name)
	}
	return nil, false
}

// Find resolves a name as the proxy tool does ([proxytool.Resolve]): the
// exposed name, a resource's URI or name, or the source's own name when
// only one capability has it. Nothing found is [proxytool.ErrNotFound].
func (c *Catalog) Find(kind proxytool.Kind, name string) (*Entry, error) {
	it, err := proxytool.Resolve(c, kind, name)
	if err != nil {
		return nil, err
	}
	if it.Template {
		for _, e := range c.ResourceTemplates {
			if e.Name == it.Name {
				return e, nil
			}
		}
	} else if e, ok := c.entry(kind, it.Name); ok {
		return e, nil
	}
	return nil, fmt.Errorf("%s %q: %w", kind, name, proxytool.ErrNotFound)
}

var _ proxytool.Keeper = proxyCatalog{}

// Kept reports whether uri names a result kept by maxResultBytes, which
// the proxy tool reads as it is (resultcap.go).
func (p proxyCatalog) Kept(uri string) bool { return results.IsURI(uri) }

// ReadKept reads a slice of the kept result uri for the proxy's client,
// within the result's cap with reserve bytes to spare for the proxy's
// own (readKept).
func (p proxyCatalog) ReadKept(_ context.Context, uri string, reserve int) (json.RawMessage, error) {
	return proxyResult(p.a.readKept(p.l, uri, reserve))
}

// NotFoundHint says why the tool or prompt name would be is not offered:
// a filter in the config keeps it out, or its server waits for a login
// (and how to give it one).
func (p proxyCatalog) NotFoundHint(kind proxytool.Kind, name string) string {
	if kind == proxytool.KindResource {
		return ""
	}
	if f := p.a.Catalog().FilteredOut(Kind(kind), name); f != nil {
		return f.Error()
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
		res, err = p.a.callTool(ctx, p.l, params, results.ViaProxy)
	case "resources/read":
		res, err = p.a.readResource(ctx, p.l, params)
	case "prompts/get":
		res, err = p.a.getPrompt(ctx, p.l, params)
	default:
		return nil, fmt.Errorf("the proxy cannot send %s", method)
	}
	return proxyResult(res, err)
}

var _ proxytool.Sender = proxyCatalog{}

// Send is Call for a tools/call that a source can take without waiting
// (sendTool); it reports false for anything else.
func (p proxyCatalog) Send(ctx context.Context, method string, params json.RawMessage,
	done func(json.RawMessage, error)) (cancel func(error), ok bool) {
	if method != "tools/call" {
		return nil, false
	}
	name, err := paramString(params, "name")
	if err != nil {
		return nil, false
	}
	return p.a.sendTool(ctx, p.l, p.send, name, params, results.ViaProxy, func(res json.RawMessage, err error) { done(proxyResult(res, err)) })
}

// proxyResult is what the proxy shows of an answer: an upstream's
// JSON-RPC error becomes its message alone.
func proxyResult(res json.RawMessage, err error) (json.RawMessage, error) {
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

var _ proxytool.Starter = proxyCatalog{}

// AwaitStarting waits for the first catalog, bounded by ReadyTimeout as
// the first tools/list is, and names the servers that are still starting
// with nothing to list (no catalog remembered from an earlier run): a
// list on a cold start then says what it lacks instead of answering []
// as if nothing were there.
func (p proxyCatalog) AwaitStarting(ctx context.Context) []string {
	p.a.waitReady(ctx)
	var out []string
	for _, c := range p.a.sessionClients() {
		st := c.Status()
		if st.State == upstream.StateConnecting && st.Tools+st.Resources+st.ResourceTemplates+st.Prompts == 0 {
			out = append(out, st.Name)
		}
	}
	return out
}
