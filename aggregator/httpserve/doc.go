// Package httpserve is mcpx's HTTP transport: MCP streamable HTTP at /mcp
// (and /mcp/NAME for a profile), the legacy HTTP+SSE transport at /sse and
// /messages, /healthz, /metrics and the terminal API at /mcpx/v1/, behind
// the Host, Origin and bearer token checks and the body gate, which reads
// every request body within maxMessageBytes and a memory budget that all
// bodies share (Options.MaxBodyMemory) before a handler sees it.
//
// It is a thin transport over the session core (package core): each HTTP
// session is one core.Session, fed the messages of its POSTs decoded once
// and written to its streams by what the core says each message is; a
// modern request (revision 2026-07-28) goes to the stateless core.Server.
// What it needs of the catalog it serves is the small [Catalog] interface,
// which the aggregator satisfies:
//
//	err := httpserve.ListenAndServe(ctx, "127.0.0.1:8080", agg, &httpserve.Options{
//		Token: token, API: api, Logger: logger, // api: termapi.New(...)
//	})
package httpserve
