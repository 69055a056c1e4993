// Package pagetools makes the tools that websites register in the user's
// tabs (WebMCP, as the MCP-B protocol specifies it: document.modelContext as the
// @mcp-b/global and @mcp-b/webmcp-polyfill packages, or Chromium itself,
// provide it) into one more source of mcpx's catalog, beside the upstream
// servers and the browser tools.
//
// A [Hub] looks into tabs through the browser relay only, with
// Runtime.evaluate forwarded by the extension (which every extension
// generation allows): an embedded script lists the page's tools and runs
// them. It looks into the tab the browser tools work in (through their
// [browser.Client], so that the model's tab is never taken from it), into
// every other tab mcpx opened, and with [Options.AllTabs] into every open
// tab, through a second relay connection of its own, which lets go of
// the tab it looked into when idle (extensions refuse to give the model a
// tab another connection holds). It checks them again
// every [Options.Interval] (default 1 s), so that a tool a page registers
// or removes shows within about two seconds, and announces a changed list
// once per check.
//
// Names and routing follow MCP-B: tools are scoped by tab and
// aggregated by domain. A tool "add_to_cart" of shop.example.com is
// listed as shop_example_com_add_to_cart; when two tabs of one domain
// offer different tool sets each tab's tools carry a tab number
// (shop_example_com_tab2_add_to_cart). A call goes to the tab that
// registered the tool: the active one when several did, else the most
// recent. Each tool is kept with the page that registered it: when that
// page goes (its tab closed or navigated away) while [Options.NoCache] is
// false, the tool stays listed, even beside other pages of its domain
// that are open, and a call opens that page again, waits for the tool
// and calls it.
//
// Page tools are content from the web. Only domains that [Options.Allow]
// admits (by default: the sites the model opened in this session) and
// [Options.Deny] does not are listed; names, titles and descriptions are
// length-capped and stripped of control characters; the aggregator lists
// them last, so that they never shadow another source's names.
//
//	hub := pagetools.New(pagetools.Options{Driver: c, Looker: second, OnChange: rebuild})
//	hub.Start(ctx)
//	defer hub.Close()
//	catalog.Add(hub) // a Source: Name, Tools, Request
package pagetools
