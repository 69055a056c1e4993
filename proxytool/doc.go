// Package proxytool implements mcpx's proxy tool: one MCP tool, named
// "proxy", through which a model lists, inspects and calls every tool,
// resource and prompt of the upstream servers, in the wire format of Magg's
// MCP Proxy Extension (shared/spec/proxy-tool.md).
//
// The package owns the tool's schema and its description of a catalog
// ([ToolFor]), the validation of its arguments, the three actions (list,
// info, call), what a page of list shows (summaries by default, whole
// objects with detail "full", and the paging a model reads), the "did
// you mean" of a name not found, the objectification of resource
// contents and the proxy annotations. It knows the catalog only through
// the small [Catalog] interface, which the aggregator satisfies, and its
// optional abilities ([Searcher] for the ranked search of package search,
// [Starter], [Keeper], [Hinter], [Sender]).
//
//	p := proxytool.New(catalog)
//	tools = append(tools, proxytool.ToolFor(servers, catalog)) // answer tools/list
//	...
//	if name == proxytool.Name {
//		result := p.Call(ctx, params) // the whole tools/call params
//	}
//
// [Proxy.Call] never fails: a bad argument, an unknown capability or an
// upstream error comes back as a CallToolResult with isError set and one
// text item saying what was wrong. Upstream content, annotations and _meta
// pass through unchanged except for the proxy's own annotation keys.
package proxytool
