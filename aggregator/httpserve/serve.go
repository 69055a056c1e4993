package httpserve

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"

	"log/slog"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/aggregator/httpserve/accesstoken"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/waitfor"
)

// Catalog is what the transport needs of the catalog it serves; the
// aggregator satisfies it.
type Catalog interface {
	// ServeSession serves one legacy session, whose connection is conn,
	// through the session core, shown profile view ("": the whole
	// catalog), until conn's input ends (io.EOF) or ctx is done.
	ServeSession(ctx context.Context, view string, conn core.Conn, o core.SessionOptions) error
	// Modern returns the session core that answers the whole catalog's
	// modern requests.
	Modern() (*core.Server, error)
	// StartView starts a catalog shown through profile view, over the
	// shared servers, that lives until ctx ends, and returns the getter of
	// its modern core.
	StartView(ctx context.Context, view string) func() (*core.Server, error)
	// HasProfile reports whether the config defines profile name, and
	// otherwise says so, naming the profiles there are.
	HasProfile(name string) (bool, string)
	// Tracing reports whether calls are traced: then the trace context of
	// a request's traceparent header goes into its _meta.
	Tracing() bool
}

// Options configure [ListenAndServe].
type Options struct {
	// Token is the bearer token every request but /healthz must carry; ""
	// means none, which ServeHTTP refuses on a non-loopback address
	// unless Keys gives keys.
	Token string
	// Keys, when set, returns the named API keys in force (the config's,
	// following its reloads): a request may carry one of them instead of
	// the token, and is then that key's principal, limited to its
	// profile (credentials.go). Called at each request.
	Keys func() []config.APIKey
	// OAuth, when set, returns the OAuth resource server in force (the
	// config's http.oauth, following its reloads; nil when it has none):
	// a request may carry an access token it accepts, and is then the
	// token's principal, limited to its profile; the resource's metadata
	// is served at /.well-known/oauth-protected-resource. Called at each
	// request.
	OAuth func() *accesstoken.Checker
	// AllowedHosts and AllowedOrigins extend the Host and Origin headers
	// accepted (see config.HTTP).
	AllowedHosts, AllowedOrigins []string
	// SessionTimeout ends a session idle that long; zero means
	// config.DefaultHTTPSessionTimeout.
	SessionTimeout time.Duration
	// ShutdownTimeout bounds the drain when ctx is done; zero means
	// config.DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// OnListen, if set, is called with the address bound (the port chosen
	// when ADDR asked for 0).
	OnListen func(net.Addr)
	// Metrics, if set, is served at /metrics (telemetry.Providers'
	// MetricsHandler), behind the same Host, Origin and token checks as
	// /mcp.
	Metrics http.Handler
	// API, if set, is served under /mcpx/v1/ (the terminal API, package
	// termapi), behind the same checks as /mcp.
	API http.Handler
	// UI, if set, is served at /ui and under /ui/ (the dashboard), behind
	// the same checks as /mcp, where a login's cookie (uisession.go) also
	// admits; nil means no dashboard (404).
	UI http.Handler
	// Logger gets the transport's own lines; nil means none.
	Logger *slog.Logger
	// MaxMessageBytes bounds a request body: one over it is refused with
	// 413 (body.go); zero means config.DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// MaxBodyMemory bounds the memory that the bodies of all the requests
	// being read or handled share: past it a request is refused with 503
	// and Retry-After. Zero means
	// config.DefaultHTTPBodyMemory(MaxMessageBytes); less than
	// MaxMessageBytes is an error.
	MaxBodyMemory int64
	// Drain bounds how long an ended session's core may take to answer
	// what is in flight before it is stopped outright (twice Drain); zero
	// means a second.
	Drain time.Duration
}

// ErrTokenRequired is returned for a non-loopback address without a token.
var ErrTokenRequired = errors.New("a bearer token is required to listen on a non-loopback address")

// ListenAndServe listens on addr and serves c there over
// MCP streamable HTTP at /mcp and the legacy HTTP+SSE transport at /sse
// and /messages, with /healthz for liveness, until ctx is done; then it ends every session and drains
// within ShutdownTimeout. Each HTTP session gets the same session core
// as stdio (initialize state, ids, progress, cancellation, requests to
// the client), fed from its POSTs and written to its streams.
func ListenAndServe(ctx context.Context, addr string, c Catalog, opts *Options) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve --http %s: %w", addr, err)
	}
	o, err := options(opts, addr, host)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve --http: %w", err)
	}
	if o.OnListen != nil {
		o.OnListen(ln.Addr())
	}
	h := newHandler(ctx, c, o, host, isLoopback(host))
	// net/http's own complaints (a bad TLS probe, a broken connection) go
	// to mcpx's log at debug level, not raw to stderr.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:    slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	go h.expireLoop()
	select {
	case err := <-served:
		h.closeAll()
		return fmt.Errorf("serve --http: %w", err)
	case <-ctx.Done():
	}
	// Stop taking connections, end every session (its calls are
	// cancelled, what is queued is written), then wait for the handlers.
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	go h.closeAll()
	if err := srv.Shutdown(sctx); err != nil {
		o.Logger.Warn("HTTP clients still connected at the shutdown deadline: closing them")
		srv.Close()
	}
	h.wait(o.ShutdownTimeout)
	return nil
}

// options is opts with its defaults, checked for serving at addr, whose
// host is host.
func options(opts *Options, addr, host string) (Options, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Drain <= 0 {
		o.Drain = time.Second
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = config.DefaultHTTPSessionTimeout
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = config.DefaultShutdownTimeout
	}
	bodyDefaults(&o)
	if o.MaxBodyMemory < o.MaxMessageBytes {
		return o, fmt.Errorf("serve --http: MaxBodyMemory (%d bytes) is less than MaxMessageBytes (%d): a body at that limit could never be read", o.MaxBodyMemory, o.MaxMessageBytes)
	}
	if !isLoopback(host) && o.Token == "" && (o.Keys == nil || len(o.Keys()) == 0) && (o.OAuth == nil || o.OAuth() == nil) {
		return o, fmt.Errorf("serve --http %s: %w: set one with --token-file, MCPX_HTTP_TOKEN or http.token, make API keys with mcpx keys add, or set http.oauth", addr, ErrTokenRequired)
	}
	return o, nil
}

// A Handler serves what ListenAndServe serves, as an [http.Handler] for
// a server of the caller's own: one over a listener it made, or
// [net/http/httptest]. Its Host and Origin checks, and whether a
// credential is required, follow from the host it is told it is bound
// to, as ListenAndServe's follow from its address.
type Handler struct {
	h    *httpHandler
	stop context.CancelFunc // ends the handler's context, and its expiry loop
}

// NewHandler returns a Handler serving c as if bound to host (an IP
// address or a name, without a port), which lives until ctx ends or
// Close. It fails as ListenAndServe does for options it cannot serve
// with, and for a host that is not loopback without a credential.
func NewHandler(ctx context.Context, host string, c Catalog, opts *Options) (*Handler, error) {
	o, err := options(opts, net.JoinHostPort(host, "0"), host)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	h := newHandler(ctx, c, o, host, isLoopback(host))
	go h.expireLoop()
	return &Handler{h: h, stop: stop}, nil
}

// ServeHTTP serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// Close ends every session (their calls are cancelled, what is queued is
// written) and waits for them, at most ShutdownTimeout; the handler
// refuses new sessions after it. Requests still in the caller's server
// are the caller's to end, as http.Server.Shutdown does.
func (h *Handler) Close() {
	h.h.closeAll()
	h.h.wait(h.h.o.ShutdownTimeout)
	h.stop()
}

// httpHandler routes the HTTP endpoints and guards them.
type httpHandler struct {
	ctx      context.Context
	c        Catalog
	o        Options
	host     string // the bound host
	loopback bool
	token    [32]byte // sha256 of the token, compared in constant time
	mux      *http.ServeMux

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool
	wg       sync.WaitGroup // session cores
	views    profileViews   // the catalogs of modern requests on /mcp/NAME
	bodies   *bodyBudget    // what request bodies may hold (body.go)
	uiLogins uiSessions     // the dashboard's logins (uisession.go)
}

// bodyDefaults fills the body limits o leaves zero.
func bodyDefaults(o *Options) {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = config.DefaultMaxMessageBytes
	}
	if o.MaxBodyMemory <= 0 {
		o.MaxBodyMemory = config.DefaultHTTPBodyMemory(o.MaxMessageBytes)
	}
}

func newHandler(ctx context.Context, c Catalog, o Options, host string, loopback bool) *httpHandler {
	bodyDefaults(&o)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &httpHandler{ctx: ctx, c: c, o: o, host: host, loopback: loopback, sessions: map[string]*httpSession{},
		bodies: newBodyBudget(o.MaxBodyMemory, runtime.GC)}
	if o.Token != "" {
		h.token = sha256.Sum256([]byte(o.Token))
	}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	h.mux.Handle("/mcp", h.guard(http.HandlerFunc(h.streamable)))
	h.mux.Handle("/sse", h.guard(http.HandlerFunc(h.sseStream)))
	h.mux.Handle("/mcp/", h.guard(h.profiled(http.HandlerFunc(h.streamable))))
	// /sse/NAME's endpoint event points to /sse/messages (it is relative).
	h.mux.Handle("/sse/messages", h.guard(http.HandlerFunc(h.sseMessage)))
	h.mux.Handle("/sse/", h.guard(h.profiled(http.HandlerFunc(h.sseStream))))
	h.mux.Handle("/messages", h.guard(http.HandlerFunc(h.sseMessage)))
	h.mux.Handle(accesstoken.MetadataPath, h.hostChecked(http.HandlerFunc(h.resourceMetadata)))
	h.mux.Handle(accesstoken.MetadataPath+"/", h.hostChecked(http.HandlerFunc(h.resourceMetadata)))
	if o.API != nil {
		h.mux.Handle("/mcpx/v1/", h.guard(o.API))
	}
	if o.UI != nil {
		ui := h.guardUI(o.UI)
		h.mux.Handle("/ui", ui)
		h.mux.Handle("/ui/", ui)
	}
	if o.Metrics != nil {
		h.mux.Handle("/metrics", h.guard(o.Metrics))
	}
	return h
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// add registers a new session; false when shutting down.
func (h *httpHandler) add(s *httpSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.sessions[s.id] = s
	h.wg.Add(1)
	return true
}

func (h *httpHandler) lookup(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

func (h *httpHandler) remove(s *httpSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
}

// closeAll ends every session and refuses new ones.
func (h *httpHandler) closeAll() {
	h.mu.Lock()
	h.closed = true
	all := make([]*httpSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.end()
	}
}

// wait waits for the session cores to end, at most d.
func (h *httpHandler) wait(d time.Duration) {
	if !waitfor.Group(&h.wg, d) {
		h.o.Logger.Warn("HTTP sessions still ending at the shutdown deadline")
	}
}

// expireLoop ends sessions idle for longer than SessionTimeout.
func (h *httpHandler) expireLoop() {
	every := min(h.o.SessionTimeout/4, time.Minute)
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			var idle []*httpSession
			for _, s := range h.sessions {
				if s.idleSince(now) > h.o.SessionTimeout {
					idle = append(idle, s)
				}
			}
			h.mu.Unlock()
			for _, s := range idle {
				// Ended first: once the line is logged, the session
				// answers no request.
				s.end()
				h.o.Logger.Info("HTTP session expired", "session", s.id[:8], "idle", h.o.SessionTimeout)
			}
		}
	}
}

// quote is s as a JSON string, for an error message that names it.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
