package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream/auth"
)

// State is where a Client is in its life.
type State string

const (
	StateConnecting State = "starting"
	StateConnected  State = "ready"
	StateSleeping   State = "sleeping" // lazy or idle: starts on the next call
	StateFailed     State = "failed"
	StateDisabled   State = "disabled"
	StateStopped    State = "stopped"
	// StateNotStarted is a Client before [Client.Start]: a one-shot
	// command leaves the servers it does not need so.
	StateNotStarted State = "not started"
)

// ErrNotConnected is returned by [Client.Request] while the server has no
// live connection.
var ErrNotConnected = errors.New("not connected")

// Options configure the Clients of one mcpx process. A nil *Options means
// the defaults of each field.
type Options struct {
	// Logger receives connection events and each upstream stderr line,
	// with a "server" attribute naming the server. Nil discards.
	Logger *slog.Logger
	// Redact removes secrets from text that reaches a status or error.
	// Nil leaves text unchanged.
	Redact func(string) string
	// OnChange is called after a Client's state or catalog changed. It runs
	// on the Client's own goroutines and must not block.
	OnChange func(c *Client)
	// Reconnect makes a Client start again, with backoff, after a failed
	// connect or a lost connection. One-shot commands leave it off.
	Reconnect bool
	// MinBackoff and MaxBackoff bound the delay between attempts, which
	// doubles with each failure in a row (defaults 500ms and 5m).
	MinBackoff, MaxBackoff time.Duration
	// StopGrace is how long a child gets to exit after its stdin closes,
	// and TermGrace how long after SIGTERM before SIGKILL (defaults 1s, 2s).
	StopGrace, TermGrace time.Duration
	// Heartbeat is how often a remote server is pinged to notice that it
	// went away (default 30s; negative turns it off). Children are watched
	// through their exit instead.
	Heartbeat time.Duration
	// Supervisor is the executable that supervises child processes, which
	// must link package supervisor (any user of this package does). Empty
	// means this executable.
	Supervisor string
	// Version is mcpx's version, sent in clientInfo.
	Version string
	// Tokens keeps OAuth logins. With it, a remote server that answers 401
	// is "needs login" and uses the stored tokens once there are some; nil
	// means no OAuth (a 401 is an ordinary failure).
	Tokens auth.Store
	// OnServerRequest answers the server's sampling, elicitation and roots
	// requests. When set, those capabilities are declared to every server
	// whose transport can carry requests back; nil declares none.
	OnServerRequest ServerRequestFunc
	// OnNotification receives the notifications mcpx relays; nil drops them.
	OnNotification NotificationFunc
	// MaxMessageBytes bounds each message a server sends (stdout lines,
	// HTTP bodies, SSE events): a larger answer fails its request, anything
	// else larger is dropped. 0 means no limit.
	MaxMessageBytes int64
	// CacheDir is where each server's catalog is remembered after it
	// connects, and read back at start (see [Remembered]); "" remembers
	// nothing, and lazy servers then start to learn their catalog.
	CacheDir string
	// Offline never starts a server: each shows its remembered catalog
	// only (mcpx list --cached).
	Offline bool
	// OtherEraIdle is how long a server's second connection, made in the
	// modern era for modern clients of a server that speaks both eras
	// (see [CallOptions.PassInput]), is kept after its last request
	// (default 5m).
	OtherEraIdle time.Duration
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Redact == nil {
		out.Redact = func(s string) string { return s }
	}
	if out.OnChange == nil {
		out.OnChange = func(*Client) {}
	}
	if out.MinBackoff <= 0 {
		out.MinBackoff = 500 * time.Millisecond
	}
	if out.MaxBackoff < out.MinBackoff {
		out.MaxBackoff = max(5*time.Minute, out.MinBackoff)
	}
	if out.StopGrace <= 0 {
		out.StopGrace = time.Second
	}
	if out.TermGrace <= 0 {
		out.TermGrace = 2 * time.Second
	}
	if out.Heartbeat == 0 {
		out.Heartbeat = 30 * time.Second
	}
	if out.Supervisor == "" {
		if exe, err := os.Executable(); err == nil {
			out.Supervisor = exe
		}
	}
	if out.Version == "" {
		out.Version = "dev"
	}
	return out
}

// Status is a snapshot of a Client for display.
type Status struct {
	Name      string
	Transport config.Transport
	State     State
	// Err is why the server is failed (redacted); empty otherwise.
	Err string
	// ConnectTime is how long the last successful connect took, from
	// start to catalog synced.
	ConnectTime time.Duration
	// Attempts counts connect attempts; Restarts the times a live
	// connection was lost and started again.
	Attempts, Restarts int
	// ServerInfo and ProtocolVersion are what the server said in initialize.
	ServerInfo                                   mcp.Implementation
	ProtocolVersion                              string
	Tools, Resources, ResourceTemplates, Prompts int
	// Step is what a starting server waits for: StepSpawn, StepConnect,
	// StepInitialize or StepList; empty in any other state. StepSince is
	// when that step began.
	Step      string
	StepSince time.Time
	// LastLine is the last line the server printed on stderr, or on stdout
	// that was not JSON-RPC (LastStream says which), redacted: what a
	// server that hangs or fails most often says about why.
	LastLine, LastStream string
}

// The steps of a connect attempt, as [Status.Step] names them.
const (
	StepSpawn      = "spawn"      // starting the child process
	StepConnect    = "connect"    // reaching a remote server
	StepInitialize = "initialize" // waiting for the answer to initialize
	StepList       = "list"       // listing tools, resources and prompts
)

// Catalog holds a server's capabilities exactly as it listed them, one raw
// JSON object per tool, resource, resource template or prompt.
type Catalog struct {
	Tools             []json.RawMessage
	Resources         []json.RawMessage
	ResourceTemplates []json.RawMessage
	Prompts           []json.RawMessage
}

// Client is one upstream MCP server. Its methods are safe for concurrent
// use.
type Client struct {
	cfg  config.Server
	opts Options
	log  *slog.Logger
	auth *auth.Authenticator // nil without OAuth

	mu        sync.Mutex
	status    Status
	catalog   Catalog
	conn      *conn         // nil while not connected
	ready     chan struct{} // closed after the first connect attempt
	readyOnce sync.Once
	tail      stderrTail
	logLevel  string      // asked for by the client; applied on every connect
	era       Era         // the era the server last spoke (or was remembered with); "" unknown
	slots     *fifo       // maxConcurrent; nil for no limit
	limits    *callLimits // callTimeout and maxCallTime; nil for none
	proc      *process    // the child of the attempt or connection under way, for Kill
	watch     *lineWatch  // its stdout, for the last line that was not JSON-RPC

	// retrying says the attempt under way follows one that could not
	// connect: its stderr lines are logged at debug (see stderrLevel).
	retrying bool

	// instructions go with catalog: the live connection's, the
	// remembered ones, or "" when the catalog is emptied.
	instructions string

	remembered   bool          // the catalog shown came from the cache (or was stored there)
	rememberOnce sync.Once     // the cache is read once, by Remember or Start
	known        chan struct{} // closed once a catalog is known: remembered, or the first attempt over
	knownOnce    sync.Once
	life         lifecycle
	// saved is the cache file as last read or written, for store to
	// leave an unchanged catalog alone; zero when unknown. storeMu has
	// one store run at a time, so that the last to run writes the newest
	// catalog.
	saved   fileMark
	storeMu sync.Mutex
	// bothEras says the server speaks the modern era too, though c is
	// connected in the legacy one: its modern clients' requests then go
	// over other (otherera.go). It is read without mu on every modern
	// call, which for a server of one era then takes no lock. closing
	// says c is closing, and opens no other; it and other are guarded by
	// mu.
	bothEras atomic.Bool
	other    *otherEra
	closing  bool
	// legacyAsks holds the tools found to ask their client the legacy
	// way, which modern clients reach over the first connection too
	// (otherera.go); guarded by mu.
	legacyAsks map[string]bool

	// subscribed holds the params of each resource subscription, by
	// URI, that every new connection is asked for again; guarded by mu.
	subscribed map[string]json.RawMessage

	lifeMu  sync.Mutex // guards started and cancel
	started bool
	cancel  context.CancelFunc
	done    chan struct{} // closed when nothing of the Client runs any more
}

// timeout is how long the server gets to connect, and a call to wait for
// it: its config's timeout, config.DefaultTimeout when it has none.
func (c *Client) timeout() time.Duration {
	if c.cfg.Timeout > 0 {
		return c.cfg.Timeout
	}
	return config.DefaultTimeout
}

// New returns a Client for one configured server. It does nothing until
// [Client.Start].
func New(cfg config.Server, opts *Options) *Client {
	o := opts.withDefaults()
	c := &Client{
		cfg:    cfg,
		opts:   o,
		log:    o.Logger.With("server", cfg.Name),
		ready:  make(chan struct{}),
		known:  make(chan struct{}),
		done:   make(chan struct{}),
		slots:  newFIFO(cfg.MaxConcurrent),
		limits: newCallLimits(cfg.Name, cfg.Limits),
		life:   newLifecycle(),
	}
	c.status = Status{Name: cfg.Name, Transport: cfg.Transport, State: StateNotStarted}
	switch {
	case !cfg.Enabled:
		c.status.State = StateDisabled
	case cfg.Problem != "":
		c.status.State, c.status.Err = StateFailed, cfg.Problem
	}
	c.auth = newAuthenticator(cfg, o.Tokens)
	return c
}

// transportLogger is the server's logger for its HTTP transport, which
// logs at debug level only.
func (c *Client) transportLogger() *slog.Logger { return c.log }

// Name is the server's name in the config.
func (c *Client) Name() string { return c.cfg.Name }

// Config is the config entry the Client runs.
func (c *Client) Config() config.Server { return c.cfg }

// Start connects in the background and returns at once. Use [Client.Ready]
// to wait for the first attempt. A disabled server never connects, nor
// does one whose config has a Problem: it stays failed, with the problem
// as its error. Start after Close, or a second Start, does nothing.
func (c *Client) Start(ctx context.Context) {
	if run := c.start(ctx); run != nil {
		go run()
	}
}

// start is Start, but returns the connect loop to run (nil: none) for
// the caller to begin.
func (c *Client) start(ctx context.Context) (run func()) {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
	if c.started {
		return nil
	}
	c.started = true
	ctx, c.cancel = context.WithCancel(ctx)
	if !c.cfg.Enabled || c.cfg.Problem != "" {
		if c.cfg.Enabled {
			c.logNotStarted()
		}
		c.markReady()
		close(c.done)
		return nil
	}
	if c.opts.Offline {
		c.Remember()
		c.offline()
		close(c.done)
		return nil
	}
	// Starting from here on, not from when run first gets scheduled: a
	// caller that looks right after Start must not see "not started".
	c.update(func(s *Status) { s.State = StateConnecting })
	return func() { c.run(ctx) }
}

// Remember shows the server's remembered catalog, if any, without
// starting it, so that a command can tell from it which servers it needs.
// Start does it too, on the server's own goroutine (a start of a thousand
// servers reads their files side by side, and returns at once: [Client.Known]
// says when the catalog is there); the cache is read once.
func (c *Client) Remember() { c.rememberOnce.Do(c.remember) }

// Ready is closed once the first connect attempt has succeeded or failed.
func (c *Client) Ready() <-chan struct{} { return c.ready }

// Done is closed when nothing of the Client runs any more: after Close,
// and, without Reconnect, once a connect attempt failed or the connection
// ended.
func (c *Client) Done() <-chan struct{} { return c.done }

func (c *Client) markReady() {
	c.readyOnce.Do(func() { close(c.ready) })
	c.markKnown()
}

// Known is closed once the server has a catalog to show: a remembered one,
// or whatever its first connect attempt found. serve answers lists after
// it, not after Ready.
func (c *Client) Known() <-chan struct{} { return c.known }

func (c *Client) markKnown() { c.knownOnce.Do(func() { close(c.known) }) }

// Status returns a snapshot of the server's state.
func (c *Client) Status() Status {
	c.mu.Lock()
	st := c.status
	watch := c.watch
	c.mu.Unlock()
	if st.State != StateConnecting {
		st.Step, st.StepSince = "", time.Time{}
	}
	if line := c.lastStderr(); line != "" {
		st.LastLine, st.LastStream = line, "stderr"
	} else if watch != nil {
		if junk := watch.lastJunk(); junk != "" {
			st.LastLine, st.LastStream = c.opts.Redact(junk), "stdout"
		}
	}
	return st
}

// step records what the connect attempt under way waits for now. It
// tells no one: a status reader sees it at its next look.
func (c *Client) step(name string) {
	c.mu.Lock()
	c.status.Step, c.status.StepSince = name, time.Now()
	c.mu.Unlock()
}

// Catalog returns the server's current capabilities; empty while it is not
// connected. The slices must not be modified.
func (c *Client) Catalog() Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.catalog
}

// Instructions returns what the server said about how to use it: the
// instructions of its initialize or server/discover result, without
// hidden text (package hidden) and cut to 64 KiB at a rune boundary; ""
// when it said nothing. Like [Client.Catalog], they are the live
// connection's, or, before the server is up again (starting, sleeping,
// offline), the remembered ones; "" while it is failed. They are the
// server's text, to index and show, never to log.
func (c *Client) Instructions() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.instructions
}

// Close stops the server and waits for its process to exit. It is
// idempotent and safe to call concurrently.
func (c *Client) Close() error {
	c.closeOther()
	c.lifeMu.Lock()
	if !c.started { // never started: nothing runs, and nothing will
		c.started = true
		c.markReady()
		close(c.done)
	} else if c.cancel != nil {
		c.cancel()
	}
	c.lifeMu.Unlock()
	<-c.done
	return nil
}

// Kill sends SIGKILL to the server's process group at once, without the
// steps of Close, for a shutdown that has run out of time. Close must
// still be called. Remote servers have nothing to kill.
func (c *Client) Kill() {
	c.killOther()
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p != nil {
		p.kill(true)
	}
}

// run connects, waits for the connection to end, and, with Reconnect,
// starts again with backoff until ctx ends.
//
// A connected server's goroutine spends its life in awake, called from
// here: run's own frame is kept small (the attempt's steps, with their
// logging, are functions of their own) so that its stack, which grew
// while connecting, shrinks to 4 KB at the next collection. With the
// steps inlined the frame was 1.4 KB and the stack stayed at 8 KB: 4 MB
// at 1,000 servers.
func (c *Client) run(ctx context.Context) {
	defer close(c.done)
	defer c.markReady()
	l := c.newLoop()
	if !l.begin(ctx) {
		return
	}
	for attempt := 1; ; attempt++ {
		cn, delay, err := l.connect(ctx, attempt)
		if err == nil {
			var again bool
			if delay, again = l.ended(ctx, cn, c.awake(ctx, cn, l.learning)); again {
				continue
			}
		}
		if delay < 0 || !c.opts.Reconnect || !l.pause(ctx, delay) {
			return
		}
	}
}

// loop is the state run keeps from one connect attempt to the next.
type loop struct {
	c        *Client
	retry    *backoff
	lastFail string // why the attempt before failed; "" when it did not
	retrying bool   // the attempt before could not connect
	learning bool   // lazy, connected only to learn its catalog
	start    time.Time
}

func (c *Client) newLoop() *loop {
	return &loop{c: c, retry: newBackoff(c.opts.MinBackoff, c.opts.MaxBackoff)}
}

// begin reads the remembered catalog and, for a lazy server that has
// one, sleeps until a call; false: ctx ended first.
func (l *loop) begin(ctx context.Context) bool {
	c := l.c
	c.Remember()
	l.learning = c.cfg.Lazy && !c.hasRemembered()
	return !c.cfg.Lazy || l.learning || c.sleep(ctx)
}

// connect makes one attempt. Connected, it shows the connection;
// failed, it returns the delay before the next attempt, negative when
// ctx ended.
func (l *loop) connect(ctx context.Context, attempt int) (*conn, time.Duration, error) {
	c := l.c
	c.mu.Lock()
	c.retrying = l.retrying
	c.mu.Unlock()
	c.update(func(s *Status) { s.Attempts = attempt; s.State = StateConnecting })
	l.start = time.Now()
	cn, err := c.connect(ctx)
	l.retrying = err != nil
	if err == nil {
		elapsed := time.Since(l.start)
		c.log.Info("connected", "tools", len(cn.catalog.Tools), "resources", len(cn.catalog.Resources),
			"prompts", len(cn.catalog.Prompts), "in", elapsed.Round(time.Millisecond))
		c.setConnected(cn, elapsed)
		c.resubscribe(ctx, cn)
		c.markReady()
		return cn, 0, nil
	}
	if ctx.Err() != nil {
		c.update(func(s *Status) { s.State = StateStopped })
		return nil, -1, err
	}
	delay := l.retry.wait()
	if lr, ok := needsLogin(err); ok {
		if c.Status().State != StateNeedsLogin {
			c.log.Warn("needs login", "run", "mcpx auth login "+c.cfg.Name)
		}
		c.failed(err)
		c.update(func(s *Status) { s.State = StateNeedsLogin; s.Err = c.opts.Redact(lr.Error()) })
	} else {
		l.lastFail = c.logFailed(err, l.lastFail, delay)
		c.failed(err)
	}
	c.markReady()
	return nil, delay, err
}

// ended takes cn down after awake returned why: stopped (a negative
// delay), idle (again, once a call wakes the server), or lost (the delay
// before the next attempt).
func (l *loop) ended(ctx context.Context, cn *conn, why end) (delay time.Duration, again bool) {
	c := l.c
	switch why {
	case endStopped:
		c.disconnect(cn, StateStopped, nil)
		return -1, false
	case endIdle:
		if l.learning {
			c.log.Info("stopped while idle: catalog learned, sleeping until a call")
		} else {
			c.log.Info("stopped while idle", "idleTimeout", c.cfg.IdleTimeout)
		}
		c.disconnect(cn, StateSleeping, nil)
		l.learning = false
		l.retry.reset()
		l.lastFail = ""
		if !c.sleep(ctx) {
			return -1, false
		}
		return 0, true
	}
	err := cn.lostErr()
	if time.Since(l.start) > time.Minute {
		// It lasted: a crash now and then is no broken server.
		l.retry.reset()
	}
	delay = l.retry.wait()
	what := "connection lost"
	if cn.proc != nil && cn.proc.exitError() != nil {
		what = "exited"
	}
	l.lastFail = c.opts.Redact(err.Error())
	c.log.Warn(what, append([]any{"err", l.lastFail}, c.restart(delay)...)...)
	if lr, ok := needsLogin(err); ok {
		c.disconnect(cn, StateNeedsLogin, lr)
	} else {
		c.disconnect(cn, StateFailed, err)
	}
	return delay, false
}

// pause waits delay before the next attempt, less when a login just
// finished here; false: ctx ended.
func (l *loop) pause(ctx context.Context, delay time.Duration) bool {
	c := l.c
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		c.update(func(s *Status) { s.State = StateStopped })
		return false
	case <-t.C:
	case <-c.authChanged():
		// A login just finished here: connect now.
		l.retry.reset()
	}
	return true
}

// logNotStarted says once why a server with a config problem is not
// started: as an error in serve, where the log is all there is; at info
// in a one-shot command, which says itself which servers failed and why.
func (c *Client) logNotStarted() {
	if c.opts.Reconnect {
		c.log.Error("not started", "err", c.cfg.Problem)
	} else {
		c.log.Info("not started", "err", c.cfg.Problem)
	}
}

// restart is the log fields that say when the server is started again
// after it ended: none in a one-shot command, which never restarts it.
func (c *Client) restart(backoff time.Duration) []any {
	if !c.opts.Reconnect {
		return nil
	}
	return []any{"restart", "in " + backoff.String()}
}

// logFailed logs a failed connect attempt at the level failLevel gives
// (last is why the attempt before failed, "" when it did not), and
// returns why this one failed, redacted.
func (c *Client) logFailed(err error, last string, delay time.Duration) string {
	msg := c.opts.Redact(err.Error())
	kv := append([]any{"err", msg}, c.restart(delay)...)
	c.log.Log(context.Background(), failLevel(c.opts.Reconnect, last, msg), "connect failed", kv...)
	return msg
}

func (c *Client) update(f func(*Status)) {
	c.mu.Lock()
	f(&c.status)
	c.mu.Unlock()
	c.changed()
}

// changed wakes the calls waiting for a connection and tells the owner.
func (c *Client) changed() {
	c.broadcast()
	c.opts.OnChange(c)
}

func (c *Client) setConnected(cn *conn, elapsed time.Duration) {
	c.mu.Lock()
	c.conn = cn
	c.catalog = cn.catalog
	c.instructions = cn.instructions
	c.retrying = false
	c.status.State = StateConnected
	c.status.Err = ""
	c.status.ConnectTime = elapsed
	c.status.ServerInfo = cn.serverInfo
	c.status.ProtocolVersion = cn.protocol
	c.era = EraOf(cn.protocol)
	c.countLocked()
	c.mu.Unlock()
	c.changed() // before the disk write: the catalog is the client's at once
	c.store(cn)
}

// disconnect publishes the end of a live connection in one step: state,
// error, the restart count (when it was lost rather than stopped) and the
// emptied catalog.
func (c *Client) disconnect(cn *conn, state State, err error) {
	c.mu.Lock()
	if c.conn == cn {
		c.conn = nil
		if state != StateSleeping { // a sleeping server still lists what it had
			c.catalog = Catalog{}
			c.instructions = ""
		}
		c.countLocked()
	}
	c.life.subs = map[string]bool{}
	c.status.State = state
	if err != nil {
		c.status.Err = c.opts.Redact(err.Error())
		c.status.Restarts++
	}
	c.mu.Unlock()
	c.changed()
	cn.close()
}

func (c *Client) countLocked() {
	c.status.Tools = len(c.catalog.Tools)
	c.status.Resources = len(c.catalog.Resources)
	c.status.ResourceTemplates = len(c.catalog.ResourceTemplates)
	c.status.Prompts = len(c.catalog.Prompts)
}

// Request sends one request to the server and returns its raw result.
// params are sent as they are. A JSON-RPC error from the server is an
// [*RPCError]. It is [Client.RequestWith] with no options.
//
// The server's limits apply: beyond maxConcurrent calls in flight it waits
// its turn; a call that runs out of callTimeout (restarted by each
// progress notification for it) or maxCallTime, waiting included, returns
// a [*TimeoutError] and the server is sent notifications/cancelled.
func (c *Client) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.RequestWith(ctx, method, params, nil)
}

// RequestWith is [Client.Request] with what the request carries beside
// its params: where its progress goes and whether an input_required
// result passes as it came. Batch and Flusher are for Send and ignored
// here. A nil opts is Request.
func (c *Client) RequestWith(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	o := optionsOf(opts)
	if other, done := c.forModern(o, method, params); other != nil {
		res, err := other.RequestWith(ctx, method, params, opts)
		done()
		switch {
		case refusedQuestion(method, res, err):
			c.askedLegacy(method, params)
		case errors.Is(err, ErrNotConnected):
			c.otherFailed(other, err)
		default:
			return res, err
		}
	}
	ctx, lc, stop := c.limitCall(ctx, method, params)
	defer stop()
	if err := c.slots.acquire(ctx); err != nil {
		if te := timeoutCause(ctx); te != nil {
			return nil, te
		}
		return nil, err
	}
	defer c.slots.release()
	res, err := c.request(ctx, lc, o, method, params)
	if err != nil {
		if te := timeoutCause(ctx); te != nil {
			return nil, te
		}
	}
	return res, err
}

// request sends one request and waits for its answer, answering a modern
// server's input_required unless o passes it. touch is the request's
// limits, which progress for it keeps alive; nil when it has none.
func (c *Client) request(ctx context.Context, touch *limitedCall, o CallOptions, method string, params json.RawMessage) (json.RawMessage, error) {
	cn, err := c.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.release()
	if isSubscription(method) && cn.modern() {
		return c.subscribeModern(cn, method, params)
	}
	res, err := cn.call(ctx, touch, o.Progress, method, params)
	res, err = c.settle(ctx, cn, method, params, res, err)
	if err == nil && answersInput(cn, o.PassInput, res) {
		return c.resolveInput(ctx, touch, o, method, params, res)
	}
	return res, err
}

// settle is what a request on cn returns to the caller: the server's
// result, redacted where it reports a failure, or its error, redacted,
// with a dead remote connection noticed.
func (c *Client) settle(ctx context.Context, cn *conn, method string, params, res json.RawMessage, err error) (json.RawMessage, error) {
	if err != nil {
		var rpc *RPCError
		if !errors.As(err, &rpc) && ctx.Err() == nil {
			cn.checkAlive()
		}
		c.eraFailed(cn, err)
		return nil, c.redactErr(err)
	}
	c.track(method, params)
	return c.redactResult(res), nil
}

// Tools returns the server's tools as it listed them.
func (c *Client) Tools() []json.RawMessage { return c.Catalog().Tools }

// Resources returns the server's resources as it listed them.
func (c *Client) Resources() []json.RawMessage { return c.Catalog().Resources }

// ResourceTemplates returns the server's resource templates as it listed them.
func (c *Client) ResourceTemplates() []json.RawMessage { return c.Catalog().ResourceTemplates }

// Prompts returns the server's prompts as it listed them.
func (c *Client) Prompts() []json.RawMessage { return c.Catalog().Prompts }
