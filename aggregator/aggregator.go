package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/browser"
	"github.com/mcpx/mcpx/browser/pagetools"
	"github.com/mcpx/mcpx/browser/relay"
	"github.com/mcpx/mcpx/codemode"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/search"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/trust"
	"github.com/mcpx/mcpx/upstream"
)

// Options configure an Aggregator. A nil *Options means the defaults.
type Options struct {
	// Logger receives catalog events; each source (an upstream, the
	// browser, the page tools) logs with a "server" attribute naming it.
	// Nil discards.
	Logger *slog.Logger
	// Redact removes secrets from text bound for a log or an error.
	Redact func(string) string
	// Reconnect restarts failed upstreams with backoff (serve does; one-shot
	// commands do not).
	Reconnect bool
	// ReadyTimeout bounds how long the first list request waits for
	// upstreams still connecting; later arrivals are announced with
	// list_changed. Default 10s.
	ReadyTimeout time.Duration
	// Upstream holds the options passed to every upstream client; its
	// Logger, Redact, Reconnect and OnChange are set by the Aggregator.
	Upstream upstream.Options
	// Version is mcpx's version, reported to clients and upstreams.
	Version string
	// Serving says the catalog is served to an MCP client, to which the
	// upstreams' sampling, elicitation and roots requests are relayed.
	// Off (a command in a terminal), those capabilities are still
	// declared, so that servers list the same tools, but their requests
	// are refused, saying why; roots/list gets no roots.
	Serving bool
	// Drain bounds each step of ServeStdio's end once the client has gone
	// or ctx is done: waiting for calls in flight to end, then for queued
	// output to be written. What is left is abandoned to the shutdown.
	// Default 1s.
	Drain time.Duration
	// Linger is how much longer than Drain ServeStdio waits, once its
	// input has ended, for the answers to the requests it read before
	// cancelling those still running. Zero means Drain alone.
	Linger time.Duration
	// Remembered makes the catalog ready as soon as every upstream has one
	// to show, remembered from its last run or live, rather than after
	// every first connect attempt: serve answers at once and announces the
	// live lists that differ with list_changed. Off, commands see live
	// catalogs.
	Remembered bool
	// Deferred makes Start start no upstream: each shows its remembered
	// catalog, if any, until [Aggregator.StartServers] starts it. A
	// one-shot command starts only the servers it needs.
	Deferred bool
	// Audit receives every tools/call, resources/read and prompts/get
	// sent to a source; nil records nothing. The caller closes it.
	Audit *audit.Recorder
	// Trust pins the upstreams' tool and prompt definitions, withholding
	// those changed or added since approved (see docs/trust.md); nil pins
	// nothing. After an approval, Rebuild shows what was approved.
	Trust *trust.Store
	// Approve decides, where no client can be asked (the terminal's
	// mcpx run), whether a script may call a tool code.approve names:
	// nil refuses every such call, an error refuses that one.
	Approve func(ctx context.Context, server, tool string, args json.RawMessage) error
	// TracerProvider records a span per client request and per call to
	// an upstream (telemetry.Telemetry); nil records none.
	TracerProvider trace.TracerProvider
	// MeterProvider records the call, state, restart and withheld-tool
	// metrics; nil records none. Both providers are the caller's to
	// shut down; the gauges read the Aggregator until then, so that the
	// last export after Close shows the upstreams stopped.
	MeterProvider metric.MeterProvider
	// StateSecret signs the requestState of the input_required results
	// modern clients get (aggregator/core): replicas behind one load
	// balancer share it to verify each other's. "" means a key drawn at
	// random when the process starts.
	StateSecret string
	// Replica names this process among replicas behind a load balancer,
	// which routes back by it a retry of a bridged call (core.Options)
	// and a read of a kept result (results.Options).
	Replica string
}

// Aggregator is the catalog over all sources plus the MCP server that
// shows it. Its methods are safe for concurrent use.
type Aggregator struct {
	cfg       *config.Config
	code      config.Code // code mode as the config had it at start: a reload leaves it
	engine    *codemode.Engine
	opts      Options
	log       *slog.Logger
	srvMu     sync.RWMutex // guards upstreams and members, which a reload replaces
	upstreams []*upstream.Client
	members   []*member
	prof      *config.Profile // the profile shown; nil: the whole catalog (guarded by srvMu)
	// profs are the config's profiles by name, for sessions that choose
	// one (serve --http's /mcp/NAME); guarded by srvMu.
	profs map[string]*config.Profile
	// view is the profile a session's Aggregator shows ("": its parent's).
	view string
	ctx  context.Context  // Start's, for upstreams a reload adds
	uo   upstream.Options // for upstreams a reload adds

	catalog   atomic.Pointer[Catalog] // as shown: full through the profile
	full      atomic.Pointer[Catalog] // as built, before any profile: the views' (Catalog.View)
	early     atomic.Int64            // tools/list answered through the proxy before ready, not yet counted (tokens.go)
	proxy     *proxytool.Proxy
	browser   *browser.Client // nil without a browser section
	relay     *relay.Local    // local mode: the relay hosted or joined; else nil
	ready     chan struct{}
	built     chan struct{} // closed after Start's first rebuild (waitBuilt)
	builtOnce sync.Once

	rebuildMu sync.Mutex // serializes rebuilds
	changes   chan struct{}
	listeners sync.Map    // *listener -> struct{}: servers to tell about changes
	legacy    sync.Map    // *core.Client -> *listener: the legacy clients Join made listeners of
	callers   *callers    // who calls which upstream, for its requests (route.go)
	parent    *Aggregator // a session's own catalog: the shared one (persession.go)
	children  sync.Map    // *Aggregator -> struct{}: sessions' own catalogs
	apiViews  apiViews    // the catalog per profile of the terminal API and the dashboard (views.go)
	modern    modern      // the core serving modern requests (modern.go)
	reported  map[string]bool
	logins    loginAsks       // logins asked of clients (login.go)
	levels    sessionLevels   // the log level set on the shared upstreams (sessionlog.go)
	subs      subscriptions   // who subscribed to what (subscriptions.go)
	results   *results.Store  // results over maxResultBytes, kept for their clients (resultcap.go)
	search    *search.Builder // the catalog's search indexes, shared with the sessions' own catalogs (search.go)

	// The page tools (WebMCP); nil without a browser or with them off.
	pages       *pagetools.Hub
	pagesClient *browser.Client
	browserOpts browser.Options // the browser client's, for the page tools' own

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
	all    sync.Once // every upstream was started (StartServers(nil))

	statusMu sync.Mutex
	statusCh chan struct{} // closed and replaced on every upstream change

	hidden map[string]int // names hidden per server, as last logged (reportHidden); guarded by rebuildMu

	tel *telemetry.Telemetry // spans and metrics; nil: none (telemetry.go)
}

// New creates an Aggregator for cfg. Nothing starts until [Aggregator.Start].
func New(cfg *config.Config, opts *Options) *Aggregator {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 10 * time.Second
	}
	if o.Drain <= 0 {
		o.Drain = time.Second
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	a := &Aggregator{cfg: cfg, code: cfg.Code.WithDefaults(), engine: codemode.NewEngine(codeLimits(cfg)), prof: cfg.Profile, profs: cfg.Profiles, opts: o, log: o.Logger, ready: make(chan struct{}), built: make(chan struct{}),
		changes: make(chan struct{}, 1), reported: map[string]bool{}, hidden: map[string]int{}, statusCh: make(chan struct{}), callers: &callers{},
		results: results.NewStore(&results.Options{MaxMemory: cfg.Results.MaxMemory,
			MaxDisk: cfg.Results.MaxDisk, MaxAge: cfg.Results.MaxAge, Replica: o.Replica}),
		search: search.NewBuilder()}
	first := build(nil, cfg.Separator, nil, nil)
	first.run = !a.code.Disabled
	a.catalog.Store(first)
	a.full.Store(first)
	a.startTelemetry()
	a.proxy = a.newProxy(proxyCatalog{a: a})
	return a
}

// Start connects to every enabled upstream in parallel and returns at once.
func (a *Aggregator) Start(ctx context.Context) {
	ctx, a.cancel = context.WithCancel(ctx)
	a.ctx = ctx
	uo := a.opts.Upstream
	uo.Logger = a.opts.Logger
	uo.Redact = a.opts.Redact
	uo.Reconnect = a.opts.Reconnect
	uo.Version = a.opts.Version
	uo.OnChange = func(*upstream.Client) {
		a.statusChanged()
		a.changed()
		a.offerLogins()
	}
	uo.OnNotification = a.serverNotification
	uo.MaxMessageBytes = a.cfg.MaxMessageBytes
	// Declared in every mode, so that a server lists the terminal the
	// tools it lists a client (some add tools only for a client that
	// can answer sampling, elicitation or roots).
	uo.OnServerRequest = a.serverRequest
	a.uo = uo
	a.srvMu.Lock()
	a.upstreams = make([]*upstream.Client, 0, len(a.cfg.Servers))
	if b := a.cfg.Browser; b != nil {
		// First, so that its tools keep their names in any collision.
		a.startBrowser(ctx, b)
	}
	for _, s := range a.cfg.Servers {
		if !a.runs(s) {
			continue
		}
		c := upstream.New(s, &uo)
		a.upstreams = append(a.upstreams, c)
		a.members = append(a.members, upstreamMember(c, a.cfg, s))
	}
	if b := a.cfg.Browser; b != nil {
		// Last, so that page tools never shadow another source's names.
		a.startPages(ctx, b, a.browserOpts)
	}
	upstreams := a.upstreams
	a.srvMu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.rebuildLoop(ctx)
	}()
	if a.opts.Deferred {
		for _, c := range upstreams {
			c.Remember()
		}
		a.Rebuild()
		a.builtOnce.Do(func() { close(a.built) })
		return
	}
	a.StartServers(nil)
}

// StartServers starts the named upstreams (nil: every one) that are not
// started yet; names that are no upstream are ignored. Only Start with
// Deferred leaves any to start. Once every upstream is started, the
// catalog is ready (see [Aggregator.WaitReady]) after their first
// connect attempts.
func (a *Aggregator) StartServers(names []string) {
	a.srvMu.RLock()
	upstreams := a.upstreams
	a.srvMu.RUnlock()
	var start []*upstream.Client
	for _, c := range upstreams {
		if names == nil || slices.Contains(names, c.Name()) {
			start = append(start, c)
		}
	}
	upstream.StartEach(a.ctx, start)
	if names == nil {
		a.all.Do(func() { a.readyAfter(upstreams) })
	}
}

// firstSightHold bounds how long the first sights of a start wait for
// the servers still coming up before they are written.
const firstSightHold = 30 * time.Second

// readyAfter marks the catalog ready once every upstream has a catalog
// to show, or has finished its first connect attempt, or ReadyTimeout
// passed.
//
// Nothing of it runs on the caller's path: a start of a thousand servers
// answers a client's initialize while it reads their remembered catalogs
// and reviews their pins.
func (a *Aggregator) readyAfter(upstreams []*upstream.Client) {
	if a.opts.Trust != nil && a.parent == nil {
		// The first sights of this start are written once every server
		// has come up (or firstSightHold passed), each scanned against
		// the names all of them bring. A session's or a view's catalog
		// does not hold them: its start is not mcpx's.
		release := a.opts.Trust.Hold()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer release()
			ctx, cancel := context.WithTimeout(a.ctx, firstSightHold)
			defer cancel()
			upstream.WaitReady(ctx, upstreams)
			if a.ctx.Err() == nil {
				a.Rebuild()
			}
		}()
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		// First: the browser's tools and the catalogs remembered so far,
		// which the proxy tool's entry describes (see waitBuilt).
		a.Rebuild()
		a.builtOnce.Do(func() { close(a.built) })
		wctx, cancel := context.WithTimeout(a.ctx, a.opts.ReadyTimeout)
		defer cancel()
		if a.opts.Remembered {
			upstream.WaitKnown(wctx, upstreams)
		} else {
			upstream.WaitReady(wctx, upstreams)
		}
		if a.pages != nil {
			_ = a.pages.WaitChecked(wctx)
		}
		a.Rebuild()
		close(a.ready)
		a.warmSearch()
	}()
}

// WaitReady waits until every upstream has finished its first connect
// attempt (or ReadyTimeout passed) and the catalog reflects them.
// A profile's view (ProfileView) is ready once the shared catalog is.
func (a *Aggregator) WaitReady(ctx context.Context) error {
	a.waitReady(ctx)
	select {
	case <-a.ready:
		return nil
	default:
		return ctx.Err()
	}
}

// Close stops every upstream in parallel and waits for them.
func (a *Aggregator) Close() error {
	a.closed.Do(func() {
		if a.cancel != nil {
			a.cancel()
		}
		var wg sync.WaitGroup
		if a.browser != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.closePages()
				a.browser.Close()
				if a.relay != nil {
					_ = a.relay.Close() // a joined peer takes the address over
				}
			}()
		}
		a.srvMu.RLock()
		upstreams := a.upstreams
		a.srvMu.RUnlock()
		upstream.CloseAll(upstreams)
		wg.Wait()
		a.wg.Wait()
		if err := a.results.Close(); err != nil {
			a.log.Warn("results kept on disk not removed", "err", err)
		}
	})
	return nil
}

// Kill stops every child server's process tree at once, for a shutdown
// that ran out of time; Close must still be called, and may then return
// sooner.
func (a *Aggregator) Kill() { upstream.KillAll(a.upstreams) }

// Catalog returns the current catalog snapshot.
func (a *Aggregator) Catalog() *Catalog { return a.catalog.Load() }

// Upstreams returns the status of every configured server, in config order.
func (a *Aggregator) Upstreams() []upstream.Status {
	a.srvMu.RLock()
	defer a.srvMu.RUnlock()
	out := make([]upstream.Status, len(a.upstreams))
	for i, c := range a.upstreams {
		out[i] = c.Status()
	}
	return out
}

func (a *Aggregator) changed() {
	select {
	case a.changes <- struct{}{}:
	default:
	}
}

// rebuildLoop rebuilds the catalog after sources change, coalescing bursts.
func (a *Aggregator) rebuildLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.changes:
		}
		a.Rebuild()
		a.warmSearch()
	}
}

// Rebuild makes a new catalog from the sources now and tells connected
// clients which lists changed.
func (a *Aggregator) Rebuild() {
	kinds := a.rebuild()
	// Sessions' own catalogs are made from this one's sources or seen
	// through its snapshot: next, and before any client is told, so that
	// a session told of a change lists the new catalog.
	a.children.Range(func(k, _ any) bool {
		k.(*Aggregator).Rebuild()
		return true
	})
	if len(kinds) > 0 {
		// Outside the lock: a client slow to read must not hold up the
		// next rebuild.
		a.listeners.Range(func(k, _ any) bool {
			k.(*listener).listChanged(kinds)
			return true
		})
	}
}

// warmSearch makes the search index of the shared catalog now, off any
// request's path, before a query needs it. A session's own catalog
// finds the same index in the shared builder when first searched (its
// hashing of the documents is all it costs), so it is not made here for
// each of them.
func (a *Aggregator) warmSearch() {
	if a.parent == nil {
		a.Catalog().search.warm()
	}
}

// rebuild swaps in a new catalog and returns the kinds of list that
// changed.
func (a *Aggregator) rebuild() []Kind {
	a.rebuildMu.Lock()
	defer a.rebuildMu.Unlock()
	old := a.catalog.Load()
	full, seen := a.snapshot()
	c := full.View(a.profile())
	a.full.Store(full)
	a.catalog.Store(c)
	if !seen {
		a.report(c)
	}
	var kinds []Kind
	if !sameEntries(old.Tools, c.Tools) {
		kinds = append(kinds, KindTool)
	}
	if !sameEntries(old.Resources, c.Resources) || !sameEntries(old.ResourceTemplates, c.ResourceTemplates) {
		kinds = append(kinds, KindResource)
	}
	if !sameEntries(old.Prompts, c.Prompts) {
		kinds = append(kinds, KindPrompt)
	}
	return kinds
}

// snapshot is the catalog a shows a view of, as built from its sources,
// and whether it was seen through its parent's rather than built: a
// catalog with sources of its own (the per-session servers) settles
// names over the shared ones and its own, while a profile's view over
// the shared servers alone is the shared snapshot, seen through the
// profile.
func (a *Aggregator) snapshot() (c *Catalog, seen bool) {
	a.srvMu.RLock()
	members := a.members
	a.srvMu.RUnlock()
	if a.parent != nil {
		if len(members) == 0 {
			return a.parent.full.Load(), true
		}
		a.parent.srvMu.RLock()
		members = append(slices.Clone(a.parent.members), members...)
		a.parent.srvMu.RUnlock()
	}
	c = build(members, a.cfg.Separator, a.opts.Trust, a.search)
	c.run = !a.code.Disabled
	return c, false
}

// report logs collisions (see reportHidden) and each problem once, not
// at every rebuild. Servers a one-shot command did not start show only
// their remembered catalogs, which say nothing new about this command:
// their lines wait until they start.
func (a *Aggregator) report(c *Catalog) {
	idle := a.notStarted()
	a.reportHidden(c, idle)
	a.reportTrust(c, idle)
	for server, n := range c.Hidden {
		key := fmt.Sprintf("hidden text:%s:%d", server, n)
		if !a.reported[key] && !slices.Contains(idle, server) {
			a.reported[key] = true
			a.log.Warn("hidden text removed from what the server lists (Unicode tags, zero-width or bidi controls, private-use characters, terminal escapes)",
				"server", server, "characters", n)
		}
	}
	for _, p := range c.Problems {
		if !a.reported[p] && !slices.ContainsFunc(idle, func(s string) bool { return strings.HasPrefix(p, "server "+s+": ") }) {
			a.reported[p] = true
			a.log.Warn(a.opts.Redact(p))
		}
	}
}

// notStarted names the upstreams not started (see Options.Deferred).
func (a *Aggregator) notStarted() []string {
	a.srvMu.RLock()
	defer a.srvMu.RUnlock()
	var names []string
	for _, c := range a.upstreams {
		if c.Status().State == upstream.StateNotStarted {
			names = append(names, c.Name())
		}
	}
	return names
}

func sameEntries(a, b []*Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Server != b[i].Server || string(a[i].JSON) != string(b[i].JSON) {
			return false
		}
	}
	return true
}

// ErrUnknown is wrapped by errors for a name or URI no source offers.
var ErrUnknown = errors.New("unknown")

// CallTool calls a tool by exposed name with raw arguments (nil for none)
// and returns the raw CallToolResult.
// The proxy tool is always there, whatever the expose setting.
func (a *Aggregator) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params, err := json.Marshal(map[string]json.RawMessage{"name": json.RawMessage(quote(name)), "arguments": orEmpty(args)})
	if err != nil {
		return nil, err
	}
	if name == proxytool.Name {
		path := proxyCallPath(params)
		if err := a.awaitTool(ctx, path); err != nil {
			return toolError(a.opts.Redact(err.Error())), nil
		}
		a.refusedProxyCall(ctx, nil, params, path)
		return a.proxy.Call(ctx, params), nil
	}
	if err := a.awaitTool(ctx, name); err != nil {
		return nil, err
	}
	return a.callTool(ctx, nil, params, results.ViaRead)
}

// callTool forwards tools/call params (name exposed) to the owning
// source, for the served client l (nil: none), which reads a result cut
// by its cap back via (capResult).
func (a *Aggregator) callTool(ctx context.Context, l *listener, params json.RawMessage, via results.Via) (json.RawMessage, error) {
	return a.forwardNamed(ctx, l, "tools/call", params, KindTool, via)
}

// getPrompt forwards prompts/get params (name exposed), for the served
// client l (nil: none).
func (a *Aggregator) getPrompt(ctx context.Context, l *listener, params json.RawMessage) (json.RawMessage, error) {
	return a.forwardNamed(ctx, l, "prompts/get", params, KindPrompt, results.ViaRead)
}

// forwardNamed sends a request whose params name a tool or prompt by its
// exposed name to the owning source, under the source's own name; every
// other field passes unchanged. It is the waiting form of the one path a
// named call takes (sendTool is the other): resolveNamed, the request's
// call (do: the bookkeeping, then settle; see call.go). l is the served client that calls
// (nil: none), via how it reads back a result cut by its cap.
func (a *Aggregator) forwardNamed(ctx context.Context, l *listener, method string, params json.RawMessage, kind Kind, via results.Via) (json.RawMessage, error) {
	name, err := paramString(params, "name")
	if err != nil {
		return nil, err
	}
	e, params, err := a.resolveNamed(name, params, kind)
	if err != nil {
		return nil, a.notServed(ctx, l, method, name, params, kind, err)
	}
	return a.do(ctx, sourceCall{l: l, src: e.src, entry: e, method: method, params: params, via: via})
}

// errNotServed is resolveNamed's answer for a name the catalog does not
// serve; notServed says why.
var errNotServed = errors.New("not served")

// resolveNamed finds the entry a request naming a tool or prompt by its
// exposed name goes to, and its params with the upstream's own name in
// place of the exposed one; every other byte passes as the client wrote
// it. It has no effect: a name it does not find is errNotServed, which
// the waiting path explains (notServed) and the fast path declines.
func (a *Aggregator) resolveNamed(name string, params json.RawMessage, kind Kind) (*Entry, json.RawMessage, error) {
	c := a.Catalog()
	e, ok := c.prompts[name]
	if kind == KindTool {
		e, ok = c.tools[name]
	}
	if !ok {
		return nil, nil, errNotServed
	}
	params, _, err := rawjson.Replace(orEmpty(params), "name", e.quotedOriginal())
	if err != nil {
		return nil, nil, fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	return e, params, nil
}

// notServed is the error for a named request resolveNamed could not
// resolve (err): the config filter or pinning that keeps the name out
// (recorded as refused, for the client l), a login its server waits for,
// or no such name.
func (a *Aggregator) notServed(ctx context.Context, l *listener, method, name string, params json.RawMessage, kind Kind, err error) error {
	if !errors.Is(err, errNotServed) {
		return err
	}
	if f := a.Catalog().FilteredOut(kind, name); f != nil {
		a.refused(ctx, l, method, params, f)
		return f
	}
	if hint := a.loginHint(name); hint != "" {
		return fmt.Errorf("%w %s %q: %s", ErrUnknown, kind, name, hint)
	}
	return fmt.Errorf("%w %s %q", ErrUnknown, kind, name)
}

// readResource forwards resources/read params unchanged: URIs are never
// rewritten. l is the served client that reads (nil: none).
func (a *Aggregator) readResource(ctx context.Context, l *listener, params json.RawMessage) (json.RawMessage, error) {
	return a.forwardURI(ctx, l, "resources/read", params)
}

// forwardURI sends a request whose params name a resource by URI to the
// source that serves it (by exact URI, then by template), unchanged, for
// the served client l (nil: none).
func (a *Aggregator) forwardURI(ctx context.Context, l *listener, method string, params json.RawMessage) (json.RawMessage, error) {
	uri, err := paramString(params, "uri")
	if err != nil {
		return nil, err
	}
	e, ok := a.Catalog().Resource(uri)
	if !ok && method == "resources/read" && results.IsURI(uri) {
		return a.readKept(l, uri, 0)
	}
	if !ok {
		return nil, fmt.Errorf("%w resource %q", ErrUnknown, uri)
	}
	return a.do(ctx, sourceCall{l: l, src: e.src, method: method, params: params})
}

// ErrInvalidParams is wrapped by errors for request params that are not
// what the method needs.
var ErrInvalidParams = errors.New("invalid params")

// paramString reads the string member key of a params object in one
// scan, without decoding the rest.
func paramString(params json.RawMessage, key string) (string, error) {
	raw, err := rawjson.Get(orEmpty(params), key)
	if err != nil {
		return "", fmt.Errorf("%w: params must be an object", ErrInvalidParams)
	}
	v, ok := rawjson.String(raw)
	if !ok || v == "" {
		return "", fmt.Errorf("%w: %q must be a non-empty string", ErrInvalidParams, key)
	}
	return v, nil
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}

// quotedOriginal is the entry's Original as a JSON string.
func (e *Entry) quotedOriginal() []byte {
	if e.quoted != nil {
		return e.quoted
	}
	return []byte(quote(e.Original))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
