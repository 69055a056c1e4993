// Package core is the session core of mcpx's MCP server side: it answers
// one message at a time and knows the protocol era each one belongs to.
//
// Today it serves the modern era (revision 2026-07-28) whole: a request
// carries its protocol version and the client's capabilities in `_meta`,
// is answered statelessly (no session, no Mcp-Session-Id), and any mcpx
// replica can answer it. The legacy era (initialize, sessions, the GET
// stream) is still served by the aggregator's stdio loop; both
// transports hand a modern message to a [Server] after decoding its
// envelope once.
//
//	srv, err := core.NewServer(catalog, &core.Options{Version: "1.2.3"})
//	...
//	res, rpcErr := srv.Handle(ctx, req, notify) // stdio
//	srv.ServeHTTP(w, r, msg, body)              // streamable HTTP
//
// What an upstream asks of the user in the middle of a call (sampling,
// elicitation, roots) reaches a modern client as an `input_required`
// result whose `requestState` this package mints and verifies (see
// [States]); the upstream call waits inside this process for the retry.
package core
