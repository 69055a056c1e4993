// Package jsonrpc is mcpx's one JSON-RPC 2.0 vocabulary, shared by every
// package that speaks it: the client side (the aggregator's stdio and HTTP
// sessions), the upstream side (child pipes, streamable HTTP, legacy SSE)
// and the browser relay (its server, its client, the test kit's peers).
//
// It owns:
//
//   - [Message], any message, each member kept as the bytes the peer sent:
//     an id is never decoded, so 9007199254740993 stays that and a peer's
//     "7" stays a string. [Message.IsRequest], [Message.IsNotification]
//     and [Message.IsResponse] tell the kinds apart; [IDKey] is the text
//     calls are matched by.
//   - [Envelope] and [ReadEnvelope], the same members found in one scan of
//     a line with nothing decoded, for the hot path.
//   - [Error], the error object, which is also a Go error, and the error
//     codes of JSON-RPC and of MCP ([CodeParseError] … [CodeURLElicitationRequired]).
//   - encoders that append one message to a []byte without reflection:
//     [AppendResult], [AppendError], [AppendRequest], [AppendNotification].
//
// Decoding a message:
//
//	var m jsonrpc.Message
//	if err := json.Unmarshal(line, &m); err != nil { ... }
//	switch {
//	case m.IsRequest():
//		out = jsonrpc.AppendResult(out, m.ID, result)
//	case m.IsResponse():
//		if e := m.Err(); e != nil { ... }
//	}
//
// What a transport does with messages (framing, sessions, pending calls)
// stays with the transport.
//
// mcp-go's own client/transport types are not used: that package imports
// mcp-go's server, and with it a JSON-schema library whose package
// initialisation alone took about half of mcpx's start (see BenchmarkInit
// in cmd/mcpx).
package jsonrpc
