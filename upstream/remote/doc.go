// Package remote holds mcpx's client transports to MCP servers over HTTP:
// [Streamable] for the streamable HTTP transport (protocol 2025-03-26 and
// later) and [SSE] for the older HTTP+SSE transport (2024-11-05).
//
// Both deliver what the server sends the same way: the answer to a
// request goes to the caller waiting for it, notifications go to one
// handler in the order they arrived (a request's progress before its
// answer), and requests from the server (sampling, elicitation, roots)
// are answered on goroutines of their own and the answer POSTed back.
//
// They replace mcp-go's client transports, whose package imports mcp-go's
// server and with it a JSON-schema library that took about half of
// mcpx's start (BenchmarkInit in cmd/mcpx). Authentication, size limits
// and backoff are not theirs: they live in the http.Client a transport is
// given.
package remote
