// Package proxytool implements mcpx's proxy tool: one MCP tool, named
// "proxy", through which a model lists, inspects and calls every tool,
// resource and prompt of the upstream servers, in the wire format of Magg's
// MCP Proxy Extension (shared/spec/proxy-tool.md).
//
// The package owns the tool's schema ([Tool]), the validation of its
// arguments, the three actions (list, info, call), the objectification of
// resource contents and the proxy annotations. It knows the catalog only
// through the small [Catalog] interface, which the aggregator satisfies.
//
//	p := proxytool.New(catalog)
//	tools = append(tools, proxytool.Tool()) // answer tools/list
//	...
//	if name == proxytool.Name {
//		result := p.Call(ctx, params) // the whole tools/call params
//	}
//
// [Proxy.Call] never fails: a bad argument, an unknown capability or an
// upstream error comes back as a CallToolResult with isError set and one
// text item saying what was wrong. Upstream content, annotations and _meta
// pass through unchanged except for the proxy's own annotation keys.
//
// [Search] is the keyword search behind list's "query" argument, shared with
// the command line.
package proxytool
