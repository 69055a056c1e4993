// Package browser owns mcpx's way into the user's Chrome: a [Client] for
// the browser relay (JSON-RPC 2.0 over WebSocket, the MCP Proxy Protocol:
// mcp_handshake, list_extensions, connect, then forwarded requests), and
// the browser_* tools built on it ([Tools]).
//
// The tools use only what real extensions implement: getTabs, createTab,
// selectTab, closeTab and forwardCDPCommand with portable CDP methods
// (Runtime.evaluate, Page.navigate, Page.captureScreenshot,
// Input.dispatchMouseEvent, ...). The page outline behind browser_snapshot
// comes from a JavaScript walker embedded in the binary (js/snapshot.js),
// run as one Runtime.evaluate: it follows Chromium's accessibility tree
// (roles, accessible names, what is reachable) and gives a ref to each
// element a user can act on; js/resolve.js turns a ref back into a point
// to click, refusing what is disabled, inert or covered. Every result
// fits the client: text within [ToolsOptions].MaxSnapshotChars, images
// within MaxImageBytes and 2000 px a side, each cut saying so.
//
//	c, err := browser.NewClient(browser.Options{Token: tok, Logger: logger})
//	c.Start(ctx) // never blocks: the relay may be down
//	defer c.Close()
//	tools := browser.NewTools(c, nil)
//	res := tools.Call(ctx, "navigate", json.RawMessage(`{"url":"https://example.com"}`))
//
// The relay may be down, slow or restarting: startup never waits on it, a
// call that cannot reach the browser returns a clear error, a dropped
// socket is redialed with backoff, and the token never appears in a log.
// A call made before the browser's extension has found the relay waits
// for it, at most [Options].ExtensionWait after the relay connection came
// up. A tab is opened only at a URL (browser_navigate when there is none,
// browser_tabs new), never blank first: the Blueprint v1.5 extension
// refuses to automate about:blank, and a tab it refused is closed again.
package browser
