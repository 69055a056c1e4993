// Package relay is the browser relay server: the MCP Proxy Protocol 1.0
// (JSON-RPC 2.0 over WebSocket) between MCP clients on /mcp and browser
// extensions on /extension, plus the legacy proxy protocol (the Browser MCP
// Proxy Protocol that preceded 1.0: no JSON-RPC ids, routing by
// connectionId) for extensions that open with extension_handshake.
//
// A [Server] is an [net/http.Handler]. It answers the relay's own methods
// (mcp_handshake, list_extensions, connect, disconnect), forwards every
// other request of a connected MCP client to its extension under a mapped
// id ("conn-X:<id>") and maps the answer back, relays the extension's
// notifications, tells each side when the other goes ("disconnected"),
// and sends status notifications that keep an MV3 service worker alive.
// Each MCP client gets its own connection id, which the extensions map to
// a tab of its own.
//
// It is a door into the user's logged-in browser, so it checks every
// upgrade before it looks at a frame: the Host must be a loopback name
// (DNS rebinding), /extension takes only a chrome-extension:// (or
// moz-extension://) Origin, optionally of listed ids, and /mcp refuses any
// request that carries an Origin (a web page's script always sends one)
// and, with [Options.Secret], any that does not present the secret.
//
// [Local] is how mcpx runs it on the user's machine: the first mcpx to
// bind the address hosts the relay, the others join it as MCP clients,
// and one of them takes the address over when the host goes.
//
//	srv := relay.New(&relay.Options{Secret: secret})
//	defer srv.Close()
//	ln, _ := net.Listen("tcp", "127.0.0.1:5555")
//	go srv.Serve(ln)
package relay
