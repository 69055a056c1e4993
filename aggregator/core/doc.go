// Package core is the session core of mcpx's MCP server side: it answers
// one message at a time and knows the protocol era each one belongs to.
// Both eras live here; package aggregator keeps the catalog and routing
// and implements the interfaces the core calls ([Catalog], [Sender],
// [Legacy]), and the transports (stdio, HTTP) only read bytes, hand each
// message to the core, and write what it gives back.
//
// The modern era (revision 2026-07-28) is a [Server]: a request carries
// its protocol version and the client's capabilities in `_meta`, is
// answered statelessly (no session, no Mcp-Session-Id), and any mcpx
// replica can answer it. The client of one request is a [Peer], passed
// to the catalog with the call.
//
//	srv, err := core.NewServer(catalog, &core.Options{Version: "1.2.3"})
//	...
//	res, rpcErr := srv.Handle(ctx, req, notify)   // one request, answered whole
//	cancel := srv.Serve(ctx, req, notify, respond) // answered when ready
//
// A transport carries them: the HTTP one (package httpserve) answers a
// POST through Serve, as JSON or an event stream.
//
// The legacy era (initialize, sessions) is a [Session] ([ServeLegacy]):
// the client's initialize, the requests in flight and their
// cancellation, progress, the requests mcpx sends the client (sampling,
// elicitation, roots), the lists it fetched, and its output, one writer
// per session. The session reads and writes through a [Conn], whose
// contract (one reader, one writer, close once) conn.go writes down: a
// byte stream's ([NewStreamConn], stdio), whose writes the session makes
// in place; an HTTP session's (package httpserve), which puts each
// message on a stream by what it is ([Routed]); a test's in memory. The
// client is a long-lived [Client], passed to the catalog on every call it
// makes. A message that carries modern `_meta` in a session that never
// sent initialize is handed to the [Server].
//
//	err := core.ServeLegacy(ctx, catalog, core.NewStreamConn(os.Stdin, os.Stdout), core.SessionOptions{ID: "stdio"})
//
// A tools/call the catalog can send without waiting (an upstream over
// stdio) is sent from the transport's goroutine and answered from the
// upstream's reader: no goroutine per call (sendCall, [Sender]).
//
// What an upstream asks of the user in the middle of a call (sampling,
// elicitation, roots) reaches a modern client as an `input_required`
// result whose `requestState` this package mints and verifies (see
// [States]); the upstream call waits inside this process for the retry.
package core
