package pagetools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"log/slog"

	"github.com/mcpx/mcpx/browser"
)

//go:embed js/webmcp.js
var webmcpJS string

// Options configure a Hub. Zero values mean the defaults given.
type Options struct {
	// Name is the source's name in the catalog (default "page").
	Name string
	// Driver is the browser tools' relay client. The tab it works in is a
	// tab mcpx drives; the Hub evaluates in that tab through it and never
	// moves it to another tab. Required.
	Driver *browser.Client
	// Looker is a second relay connection of the Hub's own, with which it
	// selects the other tabs it looks into and opens pages again. Nil
	// means the Hub sees only the Driver's tab, and cannot reopen.
	Looker *browser.Client
	// AllTabs looks into every open tab the extension reports, not only
	// those mcpx drove.
	AllTabs bool
	// NoCache forgets a tab's tools when the tab goes; by default each
	// tool stays listed with the page that registered it, and a call
	// opens that page again.
	NoCache bool
	// Allow and Deny are globs (path.Match) on host names. A domain is
	// listed when Deny matches none and Allow matches it; an empty Allow
	// means the sites the model opened in this session (the hosts of
	// the tabs mcpx drove).
	Allow, Deny []string
	// Interval is how often tabs are checked again (default 1s).
	Interval time.Duration
	// CallTimeout bounds a page tool call, the page's answer included
	// (default 60s).
	CallTimeout time.Duration
	// OpenTimeout bounds how long a call that reopened a page waits for
	// the page to register the tool again (default 15s).
	OpenTimeout time.Duration
	// Separator joins domain, tab and tool in exposed names (default "_").
	Separator string
	// OnChange is called, once per check, when the list of tools changed.
	OnChange func()
	// Logger receives discovery events. Nil discards.
	Logger *slog.Logger
}

// Hub discovers page tools in the user's tabs and serves them as a
// catalog source. Its methods are safe for concurrent use.
type Hub struct {
	opts Options
	// lookMu keeps each selectTab and the evaluation that follows it on
	// the Looker together: another select in between would evaluate in
	// the wrong tab.
	lookMu sync.Mutex
	// holdMu guards holds: the checks and calls using the Looker now.
	// When the last ends, the Looker lets go of its tab (see holdLooker).
	holdMu sync.Mutex
	holds  int

	mu      sync.Mutex
	tabs    map[string]*tabState // by tab id: tabs looked into, with what they offer
	driven  map[string]bool      // tab ids mcpx drove (the Driver's, and pages reopened)
	gone    map[string]bool      // tab ids mcpx drove that closed
	warned  map[string]bool      // what was logged already
	opened  map[string]bool      // hosts of the pages mcpx drove: the default allow list
	cache   map[toolKey]*cached  // each tool as the page that registered it last offered it
	checks  uint64               // checks done, to tell the cache's oldest entries
	ordinal map[string]int       // by tab id: the tab's number within its domain
	next    map[string]int       // by host: the next tab number
	list    []json.RawMessage    // the tools as listed, sorted by name
	routes  map[string]route     // by listed name
	scanned chan struct{}        // closed after the first check
	calls   int64                // call ids

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// tabState is one tab as last seen.
type tabState struct {
	id, url, host, title string
	active               bool
	tools                []pageTool
	sig                  string    // the tool set's identity, to tell tabs apart
	recent               time.Time // when it was last active, or first seen
}

// New returns a Hub; nothing runs until Start.
func New(opts Options) *Hub {
	if opts.Name == "" {
		opts.Name = "page"
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 60 * time.Second
	}
	if opts.OpenTimeout <= 0 {
		opts.OpenTimeout = 15 * time.Second
	}
	if opts.Separator == "" {
		opts.Separator = "_"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{opts: opts, tabs: map[string]*tabState{}, driven: map[string]bool{}, gone: map[string]bool{}, warned: map[string]bool{}, opened: map[string]bool{},
		cache: map[toolKey]*cached{}, ordinal: map[string]int{}, next: map[string]int{},
		routes: map[string]route{}, scanned: make(chan struct{}), done: make(chan struct{})}
}

// Start begins checking tabs every Interval until Close.
func (h *Hub) Start(ctx context.Context) {
	ctx, h.cancel = context.WithCancel(ctx)
	go func() {
		defer close(h.done)
		t := time.NewTicker(h.opts.Interval)
		defer t.Stop()
		for {
			h.check(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Close stops the checks and waits for the one under way. It is
// idempotent. The clients are the caller's to close.
func (h *Hub) Close() {
	h.once.Do(func() {
		if h.cancel == nil {
			close(h.done)
			return
		}
		h.cancel()
		<-h.done
	})
}

// WaitChecked waits until the first check is done, for one-shot commands
// that list the catalog once.
func (h *Hub) WaitChecked(ctx context.Context) error {
	select {
	case <-h.scanned:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// check looks into the tabs once and announces a changed list.
func (h *Hub) check(ctx context.Context) {
	defer func() {
		select {
		case <-h.scanned:
		default:
			close(h.scanned)
		}
	}()
	// One check never runs past the next: a tab that hangs the relay
	// must not stop the others being seen.
	ctx, cancel := context.WithTimeout(ctx, max(5*h.opts.Interval, 5*time.Second))
	defer cancel()
	cur := h.opts.Driver.AttachedTab()
	worked := h.opts.Driver.WorkedTabs()
	h.mu.Lock()
	remembered := make(map[string]bool, len(worked))
	for _, id := range worked {
		remembered[id] = true
		if !h.gone[id] {
			h.driven[id] = true
		}
	}
	for id := range h.gone {
		if !remembered[id] {
			delete(h.gone, id) // the Driver forgot it too
		}
	}
	idle := len(h.driven) == 0 && len(h.tabs) == 0 && !h.opts.AllTabs
	h.mu.Unlock()
	if idle {
		return
	}
	defer h.holdLooker()()
	tabs, err := h.client().Tabs(ctx)
	if err != nil {
		// The relay or the browser is away: keep what is known.
		h.opts.Logger.Debug("page tools: list tabs", "err", err)
		return
	}
	var look []browser.Tab
	h.mu.Lock()
	h.checks++
	present := map[string]bool{}
	for _, t := range tabs {
		id := string(t.ID)
		present[id] = true
		host := hostOf(t.URL)
		if h.driven[id] && host != "" {
			h.opened[host] = true
		}
		if host == "" || !(h.driven[id] || h.opts.AllTabs) {
			h.forget(id, "no site, or not a tab the model opened")
			continue
		}
		if !h.allowed(host) {
			h.forget(id, "its site is not allowed")
			continue
		}
		if h.opts.Looker == nil && id != cur {
			continue // cannot look there; keep what was seen
		}
		look = append(look, t)
	}
	for id := range h.tabs {
		if !present[id] {
			h.forget(id, "no longer among the browser's tabs")
		}
	}
	for id := range h.driven {
		if !present[id] {
			delete(h.driven, id)
			h.gone[id] = true // the Driver still remembers it: do not take it back
		}
	}
	h.mu.Unlock()

	now := time.Now()
	for _, t := range look {
		id := string(t.ID)
		l, err := h.listTab(ctx, id, cur)
		h.mu.Lock()
		st := h.tabs[id]
		host := hostOf(t.URL)
		if st != nil && st.host != host {
			h.forget(id, "navigated to another site") // its tools went with the old page
			st = nil
		}
		if err != nil {
			// Navigating, or not scriptable: try again next time.
			h.opts.Logger.Debug("page tools: look into tab", "tab", id, "err", err)
			h.mu.Unlock()
			continue
		}
		if lh := hostOf(l.Href); lh != "" && lh != host {
			host = lh // the page moved on since getTabs
		}
		if st == nil {
			st = &tabState{id: id, recent: now}
			h.tabs[id] = st
		}
		st.url, st.host, st.title, st.active = l.Href, host, l.Title, t.Active
		if t.Active {
			st.recent = now
		}
		st.tools = h.sanitize(host, l.Tools)
		st.sig = signature(st.tools)
		if len(st.tools) > 0 {
			if _, ok := h.ordinal[id]; !ok {
				h.next[host]++
				h.ordinal[id] = h.next[host]
			}
		}
		if !h.opts.NoCache {
			h.remember(st)
		}
		h.mu.Unlock()
	}
	if h.rebuild() {
		h.mu.Lock()
		n := len(h.list)
		h.mu.Unlock()
		h.opts.Logger.Info("page tools changed", "tools", n)
		if h.opts.OnChange != nil {
			h.opts.OnChange()
		}
	}
}

// forget drops a tab (closed, navigated away, or no longer looked into);
// its page's tools stay in the cache. h.mu is held.
func (h *Hub) forget(id, why string) {
	if _, known := h.tabs[id]; known {
		// A tab seen again later gets a new number: say why it went.
		h.opts.Logger.Debug("page tools: forget tab", "tab", id, "why", why)
	}
	delete(h.tabs, id)
	delete(h.ordinal, id)
}

// client is the connection for getTabs and reopening: the Looker when
// there is one.
func (h *Hub) client() *browser.Client {
	if h.opts.Looker != nil {
		return h.opts.Looker
	}
	return h.opts.Driver
}

// pageList is the script's answer to "list".
type pageList struct {
	Href  string    `json:"href"`
	Title string    `json:"title"`
	API   string    `json:"api"`
	Tools []rawTool `json:"tools"`
}

// rawTool is a tool as the page describes it, before any checks.
type rawTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations"`
}

func (h *Hub) listTab(ctx context.Context, tabID, cur string) (pageList, error) {
	var l pageList
	raw, err := h.eval(ctx, tabID, cur, map[string]any{"op": "list"})
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return l, fmt.Errorf("the page's tool list is not what mcpx asked for: %w", err)
	}
	return l, nil
}

// holdLooker marks the Looker in use until the returned func is called;
// when no check or call uses it any more it lets go of the tab it
// attached, so that the model can select that tab (extensions refuse a
// tab another connection holds).
func (h *Hub) holdLooker() (done func()) {
	if h.opts.Looker == nil {
		return func() {}
	}
	h.holdMu.Lock()
	h.holds++
	h.holdMu.Unlock()
	return func() {
		h.holdMu.Lock()
		defer h.holdMu.Unlock()
		if h.holds--; h.holds > 0 || h.opts.Looker.AttachedTab() == "" {
			return
		}
		h.lookMu.Lock()
		defer h.lookMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := h.opts.Looker.Release(ctx); err != nil {
			h.opts.Logger.Debug("page tools: let go of a tab", "err", err)
		}
	}
}

// errNoLooker is returned when a tab other than the Driver's must be
// looked into and the Hub has no connection of its own.
var errNoLooker = errors.New("page tools: no relay connection to look into other tabs")

// eval runs the embedded script with req in a tab: through the Driver
// when it is the Driver's tab (cur), else by selecting it on the Looker.
func (h *Hub) eval(ctx context.Context, tabID, cur string, req any) (json.RawMessage, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	expr := "(" + strings.TrimSpace(webmcpJS) + ")(" + string(b) + ")"
	if tabID == cur {
		res, err := h.opts.Driver.EvalTab(ctx, tabID, expr, false)
		if !errors.Is(err, browser.ErrNotAttachedTab) {
			return res, err
		}
	}
	if h.opts.Looker == nil {
		return nil, errNoLooker
	}
	h.lookMu.Lock()
	defer h.lookMu.Unlock()
	return h.opts.Looker.EvalTab(ctx, tabID, expr, true)
}

// hostOf returns the lower-case host name of an http(s) URL, else "".
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.ToLower(u.Hostname())
}
