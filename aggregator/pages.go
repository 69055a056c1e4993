package aggregator

import (
	"context"

	"github.com/charmbracelet/log"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/pagetools"
	"github.com/mcpx/mcpx/config"
)

// PageServerName is the source name of page tools (MCP-B: the WebMCP
// tools websites register in the user's tabs).
const PageServerName = "page"

// startPages adds the page tools as the last member of the catalog, so
// that a page never takes a name another server or the browser has: the
// first member to claim a name keeps it, and the loss is reported as a
// collision. They look into tabs through the browser tools' client and a
// second relay connection of their own, with the same relay settings.
func (a *Aggregator) startPages(ctx context.Context, b *config.Browser, opts browser.Options) {
	pt := b.PageTools
	if pt.Disabled || a.browser == nil {
		return
	}
	logger := a.opts.Logger.WithPrefix(PageServerName)
	// The page tools' connection lets go of its tab after each use and
	// connects again for the next: its connect notes would flood the log.
	quiet := logger.With()
	if quiet.GetLevel() < log.WarnLevel {
		quiet.SetLevel(log.WarnLevel)
	}
	opts.ClientID, opts.Logger = "mcpx-pages", quiet
	a.pagesClient = browser.NewClient(opts)
	a.pagesClient.Start(ctx)
	// A page that never answers is bounded by the top-level callTimeout,
	// as an upstream server is ("0", no limit, leaves the page tools'
	// own default).
	a.pages = pagetools.New(pagetools.Options{
		Name: PageServerName, Driver: a.browser, Looker: a.pagesClient, CallTimeout: a.cfg.Limits.CallTimeout,
		AllTabs: pt.AllTabs, NoCache: pt.NoCache, Allow: pt.Allow, Deny: pt.Deny,
		Interval: pt.Interval, Separator: a.cfg.Separator, OnChange: a.changed, Logger: logger,
	})
	a.pages.Start(ctx)
	a.members = append(a.members, &member{src: a.pages, direct: true})
}

// closePages stops the page tools and their relay connection.
func (a *Aggregator) closePages() {
	if a.pages != nil {
		a.pages.Close()
		a.pagesClient.Close()
	}
}
