package aggregator

import (
	"context"

	"log/slog"

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
	logger := a.opts.Logger.With("server", PageServerName)
	// The page tools' connection lets go of its tab after each use and
	// connects again for the next: its connect notes would flood the log.
	quiet := slog.New(atLeast{logger.Handler(), slog.LevelWarn})
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

// atLeast is a quieter view of a shared handler: it passes on only the
// records of level min or above, whatever the handler's own level.
type atLeast struct {
	slog.Handler
	min slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(attrs []slog.Attr) slog.Handler {
	return atLeast{h.Handler.WithAttrs(attrs), h.min}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{h.Handler.WithGroup(name), h.min}
}
