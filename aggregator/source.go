package aggregator

import (
	"context"
	"encoding/json"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/trust"
	"github.com/mcpx/mcpx/upstream"
)

// Source is anything that offers MCP capabilities: an upstream server, or
// the browser. The list methods return snapshots as raw JSON objects in the
// MCP schema's shape and may be called from any goroutine; Request sends
// one MCP request (tools/call, resources/read, prompts/get with the
// source's own names) and returns the raw result.
type Source interface {
	Name() string
	Tools() []json.RawMessage
	Resources() []json.RawMessage
	ResourceTemplates() []json.RawMessage
	Prompts() []json.RawMessage
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// instructed is a Source that says how to use it: an upstream server's
// instructions, for the catalog's search to index beside its tools. It
// is optional (the browser and the page tools have none) and found by
// type assertion. Instructions may be called from any goroutine; the
// text is clean of hidden characters and bounded, but it is still the
// server's, never to be logged; "" means none.
type instructed interface {
	Instructions() string
}

var _ instructed = (*upstream.Client)(nil)

// member is a Source as the catalog sees it: with its prefix and filters.
type member struct {
	src     Source
	prefix  string
	tools   config.Filter
	prompts config.Filter
	// direct members' tools are listed to the client in every expose mode
	// (the browser tools), not only through the proxy.
	direct bool
	// trust is how the member's definitions are pinned; "" for mcpx's own
	// sources (the browser tools, the page tools), which are not.
	trust trust.Mode
}

// upstreamMember is the member of a configured server.
func upstreamMember(c Source, cfg *config.Config, s config.Server) *member {
	return &member{src: c, prefix: s.Prefix, tools: s.Tools, prompts: s.Prompts, trust: trust.Mode(cfg.TrustOf(s))}
}
