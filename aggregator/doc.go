// Package aggregator owns mcpx's catalog: it merges the capabilities of
// every [Source] (upstream servers, later the browser) into one namespace,
// routes each call, read and get to the source that owns it, rebuilds the
// catalog when a source changes, and hands it to the server core
// (package core) for an MCP client on stdio and over HTTP. It answers no
// HTTP itself: package httpserve is the HTTP transport, to which an
// Aggregator is the catalog it serves (ServeSession, Modern, StartView,
// HasProfile, Tracing); package termapi serves the terminal API and
// package dashboard the dashboard from it.
//
//	agg := aggregator.New(cfg, &aggregator.Options{Logger: logger})
//	agg.Start(ctx)
//	defer agg.Close()
//	agg.WaitReady(ctx)
//	for _, t := range agg.Catalog().Tools {
//		fmt.Println(t.Name, t.Server)
//	}
//	err := agg.ServeStdio(ctx, os.Stdin, os.Stdout)
//
// Names: a tool or prompt is exposed as prefix + separator + its original
// name; a name a client would reject is made valid and shortened with a
// stable hash. Resource URIs and URI templates are never rewritten. When two
// sources claim the same exposed name or URI the first (in config order)
// keeps it and the clash is reported in [Catalog.Collisions] and the log.
//
// Capability objects travel as raw JSON from the upstream to the client:
// only the name is rewritten, so schemas, annotations and _meta pass through
// exactly as the upstream sent them.
package aggregator
