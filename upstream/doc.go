// Package upstream owns mcpx's connections to upstream MCP servers: one
// [Client] per configured server, speaking stdio to a child process or
// streamable HTTP or SSE to a remote server (package remote). The
// handshake is mcpx's own; mcp-go provides the protocol's types.
//
// A Client connects in the background, keeps a raw copy of the server's
// catalog (tools, resources, resource templates, prompts) exactly as the
// server sent it, and its instructions ([Client.Instructions], cleaned of
// hidden text and bounded), resyncs the catalog when the server announces
// a list change, and reconnects with backoff when the connection dies.
// Requests are forwarded as raw JSON so that nothing the server sends is
// lost in typed structs.
//
//	clients := upstream.StartAll(ctx, cfg.Servers, &upstream.Options{Logger: logger})
//	defer upstream.CloseAll(clients)
//	for _, c := range clients {
//		fmt.Println(c.Status().Name, c.Status().State, len(c.Catalog().Tools))
//	}
//
// With [Options].CacheDir, a Client remembers its server's catalog after each
// connect ([Remembered], keyed by [CacheKey]) and shows it at the next start
// while it connects ([Client.Known] before [Client.Ready]); a request made
// meanwhile waits for the connection up to the server's timeout. A lazy
// server sleeps ([StateSleeping]) until its first request, and one with an
// idleTimeout goes back to sleep when nothing uses it.
//
// Child processes are started by one supervisor per mcpx process (the mcpx
// binary itself, see package supervisor), each as the leader of its own process
// group; the supervisor takes every group and the processes that left them
// down when mcpx dies, even from SIGKILL.
package upstream
