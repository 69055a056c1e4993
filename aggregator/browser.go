package aggregator

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/relay"
	"github.com/mcpx/mcpx/config"
)

// startBrowser connects the browser tools to their relay: a remote one
// with a token, or in local mode the one this process hosts or joins.
func (a *Aggregator) startBrowser(ctx context.Context, b *config.Browser) {
	logger := a.opts.Logger.With("server", config.BrowserServerName)
	// maxMessageBytes bounds relay frames too; a frame over it closes that
	// socket (WebSocket has no way to skip one), and the client redials.
	opts := browser.Options{URL: b.URL, Token: b.Token, Extension: b.Extension, ClientID: "mcpx", Logger: logger,
		ReadLimit: a.cfg.MaxMessageBytes, ExtensionWait: b.ExtensionWait}
	if b.Local() {
		l, err := relay.NewLocal(relay.LocalOptions{Addr: b.Listen, ExtensionIDs: b.ExtensionIDs, Logger: logger,
			ReadLimit: a.cfg.MaxMessageBytes})
		if err != nil {
			// config has checked the address; this is the secret's place.
			logger.Error("browser relay", "err", err)
		} else {
			a.relay = l
			opts.URL, opts.Prepare = l.MCPURL(), l.Prepare
			// A host that went is replaced by whoever redials first: keep
			// the redial quick so that the browser is back within seconds.
			opts.MinBackoff, opts.MaxBackoff = 100*time.Millisecond, time.Second
		}
	}
	a.browserOpts = opts
	a.browser = browser.NewClient(opts)
	a.browser.Start(ctx)
	tools := browser.NewTools(a.browser, &browser.ToolsOptions{
		CDP: b.CDP, MaxSnapshotChars: b.MaxSnapshotChars, MaxImageBytes: int(b.MaxImageBytes),
	})
	a.members = append(a.members, &member{src: browser.NewServer(config.BrowserServerName, tools), prefix: b.Prefix, direct: true})
}

// Browser reports the browser connection, or nil when none is configured.
// With probe, it first waits for the relay and connects to the browser,
// as a one-shot command wants.
func (a *Aggregator) Browser(ctx context.Context, probe bool) *browser.Status {
	if a.browser == nil {
		return nil
	}
	var st browser.Status
	if probe {
		st = a.browser.Probe(ctx)
	} else {
		st = a.browser.Status()
	}
	st.Mode = "remote"
	if a.relay != nil {
		st.Mode = fmt.Sprintf("local (%s)", a.relay.Role())
		if stats, hosting := a.relay.Stats(); hosting {
			st.Clients = stats.Clients
		}
	}
	return &st
}
