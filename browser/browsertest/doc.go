// Package browsertest is the httptest of mcpx's browser support: an
// in-process browser relay, a scripted browser extension, and a launcher
// for headless Chromium with a real MV3 test extension.
//
// [Relay] speaks the MCP Proxy Protocol 1.0 (JSON-RPC 2.0 over WebSocket)
// as the hosted relay does: MCP clients dial [Relay.MCPURL] and send
// mcp_handshake, list_extensions, connect, disconnect and forwarded
// requests (ids mapped to "conn-X:<id>" and back); extensions dial
// [Relay.ExtensionURL] and answer authenticate. Tokens are HS256 JWTs from
// [Relay.Token]. The relay records every frame it receives
// ([Relay.Frames]), can drop every socket ([Relay.CloseClientConnections])
// or restart on the same port ([Relay.Restart]), and takes fault hooks in
// [RelayOptions].
//
// [Relay] is mcpx's own relay server (package relay) with the hosted
// relay's token check on top; RelayOptions.Local drops the tokens, as
// mcpx's local mode does. [LegacyRelay] is a relay of the legacy proxy
// protocol (the Browser MCP Proxy Protocol that preceded 1.0: no handshake
// reply, answers without ids, routing by connectionId) that plays its
// extension itself, for testing the relay client against it.
//
// [Extension] is a scripted extension that answers like the real ones
// ([V15] or [V19]) or like a legacy one ([Legacy]: extension_handshake,
// answers without ids); [Extension.Handle] overrides a method, and
// [ErrorShape] picks one of the three error shapes real extensions send.
//
// [StartChromium] runs headless Chromium with testdata/extension, whose
// service worker drives chrome.tabs and chrome.debugger.
//
//	relay := browsertest.NewRelay(nil)
//	defer relay.Close()
//	ext := browsertest.NewExtension(browsertest.V19, "Chrome 141")
//	defer ext.Close()
//	if err := ext.Connect(ctx, relay.ExtensionURL(), relay.Token("alice", time.Hour)); err != nil {
//		t.Fatal(err)
//	}
//	// mcpx dials relay.MCPURL() with relay.Token("alice", time.Hour).
//
// The package does not import package browser, so that package's tests
// can use it.
package browsertest
