// Package dashboard owns the web dashboard `mcpx serve --http` serves at
// /ui: its pages (servers, tools, trust, activity, numbers), their
// templates, script and style, embedded in the binary, and the handlers
// of the buttons on them.
//
// The pages are HTML rendered on the server (html/template); one small
// script of its own (static/app.js) refreshes the live part of a page
// and sends the tool forms without a reload. Nothing is loaded from
// elsewhere: every answer carries a Content-Security-Policy of
// default-src 'self'.
//
// Everything shown is read from the running catalog through the small
// interfaces declared here ([Catalog], [Control]), which the aggregator
// and the composition root satisfy: a tool tried from the page is called
// through the catalog's ordinary call path (gates, audit, spans), and a
// button makes the same state change the CLI makes on a running serve.
//
//	ui, err := dashboard.New(&dashboard.Options{
//		View:    func(profile string) dashboard.Catalog { ... },
//		Control: control,
//	})
//	...
//	httpserve.ListenAndServe(ctx, addr, agg, &httpserve.Options{UI: ui})
//
// The handler does not check who is asking: package httpserve mounts it
// behind the same door as /mcp. It shows the profile the request's
// context carries (principal.ProfileOf) and only that, and every POST
// must come from the dashboard's own page (Origin, Sec-Fetch-Site) with
// the CSRF token rendered into it (csrf.go). A GET never changes state.
package dashboard
