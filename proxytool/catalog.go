package proxytool

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/search"
)

// Kind is a capability type as the proxy tool names it: the value of its
// "type" argument.
type Kind string

const (
	KindTool     Kind = "tool"
	KindResource Kind = "resource"
	KindPrompt   Kind = "prompt"
)

// Item is one capability in the catalog.
type Item struct {
	Kind Kind
	// Template marks a resource template (Kind is KindResource).
	Template bool
	// Name is the exposed name of a tool or prompt, the URI of a resource,
	// or the URI template of a template.
	Name string
	// Original is the name (tools, prompts) or URI the source itself uses.
	Original string
	// Server is the name of the upstream server that owns the capability.
	Server      string
	Title       string
	Description string
	// JSON is the MCP object (Tool, Resource, ResourceTemplate, Prompt) as
	// the catalog exposes it, with Name as its name. It must be valid JSON;
	// the proxy copies it into its results byte for byte.
	JSON json.RawMessage
}

// Catalog is what the proxy tool needs from mcpx's catalog. The aggregator
// satisfies it. Methods may be called concurrently.
type Catalog interface {
	Finder
	// Call sends tools/call, resources/read or prompts/get, with exposed
	// names and params as the MCP schema shapes them (including _meta), to
	// the owning source and returns the raw MCP result. The proxy shows an
	// error's text to the model as it is, so for a JSON-RPC error from the
	// upstream the text must be the upstream's message, verbatim.
	Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// Searcher is an optional ability of a [Catalog]: the ranked search of
// list's query (package search), over an index the catalog keeps beside
// its snapshot so that every session and profile shares it. It returns
// the items it searched, which the hits index (they may include items the
// catalog does not show: the hits never do); keep, when not nil, narrows
// the hits further. Without it the proxy builds an index of its own from
// Items. It is called from any goroutine.
type Searcher interface {
	Search(kind Kind, query string, keep func(*Item) bool) ([]Item, search.Result)
}

// Starter is an optional ability of a [Catalog]: before it lists, the
// proxy waits, bounded as a call to a server still starting is, for the
// sources still starting, and names in its answer those that still are.
// It is called from the proxy's handlers, from any goroutine.
type Starter interface {
	AwaitStarting(ctx context.Context) (starting []string)
}

// Keeper is an optional ability of a [Catalog]: things it keeps itself
// rather than a server's resources (mcpx's cut results,
// mcpx://results/ID?offset=N&length=M), which the proxy reads by URI,
// paging query and all, unresolved and never objectified. Its methods are
// called from the proxy's handlers, from any goroutine.
type Keeper interface {
	// Kept reports whether uri names something the catalog keeps.
	Kept(uri string) bool
	// ReadKept answers a read of such a uri with a ReadResourceResult
	// holding one slice, small enough that the answer with reserve bytes
	// more (what the proxy adds around it) stays within the size cap the
	// result was cut under. Its _meta has mcpx/offset, mcpx/length and
	// mcpx/total and, while more remains, mcpx/next: the URI of the next
	// slice, uri without its query followed by ?offset=N&length=M (each
	// number at most 19 digits).
	ReadKept(ctx context.Context, uri string, reserve int) (json.RawMessage, error)
}

// Hinter is an optional ability of a [Catalog]: a sentence to add when a
// name is not found, such as that the server it would belong to waits for
// a login. "" adds nothing. It is called from the proxy's handlers, at any
// time, from any goroutine.
type Hinter interface {
	NotFoundHint(kind Kind, name string) string
}

// hint returns the catalog's hint for a name not found, as a sentence to
// append, or "".
func (p *Proxy) hint(kind Kind, name string) string {
	h, ok := p.c.(Hinter)
	if !ok {
		return ""
	}
	if s := h.NotFoundHint(kind, name); s != "" {
		return " (" + s + ")"
	}
	return ""
}
