package relay

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"

	"log/slog"

	"github.com/coder/websocket"
)

// Sides of a connection, as [Options.Observe] names them.
const (
	SideMCP       = "mcp"
	SideExtension = "extension"
)

// LocalUser is the user every peer belongs to when [Options.Authenticate]
// is nil.
const LocalUser = "local"

// Options configure a [Server]. A nil *Options means the defaults.
type Options struct {
	// Authenticate checks the token an extension (in its authenticate
	// answer) or an MCP client (in mcp_handshake) presents and returns
	// the user it belongs to; each user sees only their own extensions.
	// Nil means local mode: no token is asked for and everyone is
	// [LocalUser].
	Authenticate func(token string) (userID string, err error)

	// Secret, when set, must come with every /mcp upgrade as
	// "Authorization: Bearer <secret>"; a request without it gets 401.
	Secret string

	// ExtensionIDs limits /extension to these extension ids (the host of
	// the chrome-extension:// Origin). Empty allows any extension.
	ExtensionIDs []string

	// StatusInterval is how often every authenticated socket on both
	// sides gets status {connected, peer_count, timestamp}: the MV3
	// service worker's keep-alive. Zero means 10s; negative means never.
	StatusInterval time.Duration

	// ReadLimit is the largest frame accepted from either side (default
	// 64 MiB: screenshots and page trees run to megabytes). A larger one
	// closes that socket with 1009.
	ReadLimit int64

	// Logger receives connection events; nil discards them.
	Logger *slog.Logger

	// Observe, Delay and DropResponse are for fault injection in tests;
	// leave them nil.
	//
	// Observe sees every frame the relay reads, with the socket's label
	// ("mcp#N" or "extension#N"). Delay is asked for each request an MCP
	// client sends to be forwarded, keyed by its method or
	// "forwardCDPCommand:<CDP method>"; the relay holds it that long (later
	// requests may overtake it). DropResponse, asked with the same key for
	// each answer of an extension, makes the relay swallow it.
	Observe      func(side, label string, data []byte)
	Delay        func(key string) time.Duration
	DropResponse func(key string) bool
}

// ExtensionInfo describes an authenticated extension.
type ExtensionInfo struct {
	ID       string // "ext-<uuid>", stable per ClientID
	Name     string
	UserID   string
	ClientID string
	Dialect  string // "1.0", or "legacy" for an extension_handshake peer
}

// Stats counts what is connected, for status displays.
type Stats struct {
	Extensions []ExtensionInfo // oldest first
	Clients    int             // MCP clients that completed mcp_handshake
	Connected  int             // of those, connected to an extension
}

// Server is a browser relay. Its methods are safe for concurrent use.
type Server struct {
	opts   Options
	logger *slog.Logger

	ctx        context.Context // the server's life; parent of every socket
	cancel     context.CancelFunc
	wg         sync.WaitGroup // handlers and their helpers
	statusDone chan struct{}
	closeOnce  sync.Once

	mu      sync.Mutex
	closed  bool
	sockets map[*socket]struct{}
	exts    map[string]*extPeer // authenticated, by extension id
	mcps    map[*mcpPeer]struct{}
	conns   map[string]*connection // by connection id
	extIDs  map[string]string      // client_id -> extension id
	seq     int
	changed chan struct{} // closed and replaced on every change of exts
}

// New returns a Server; it serves once it is given a listener ([Server.Serve])
// or mounted as a handler.
func New(opts *Options) *Server {
	s := &Server{
		sockets: map[*socket]struct{}{},
		exts:    map[string]*extPeer{},
		mcps:    map[*mcpPeer]struct{}{},
		conns:   map[string]*connection{},
		extIDs:  map[string]string{},
		changed: make(chan struct{}),
	}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.StatusInterval == 0 {
		s.opts.StatusInterval = 10 * time.Second
	}
	if s.opts.ReadLimit <= 0 {
		s.opts.ReadLimit = 64 << 20
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.statusDone = make(chan struct{})
	go s.statusLoop()
	return s
}

// Serve accepts on ln until ln fails or the Server is closed, which closes
// ln. It may be called for several listeners.
func (s *Server) Serve(ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(s.ctx, func() { _ = srv.Close() })
	defer stop()
	err := srv.Serve(ln)
	if s.ctx.Err() != nil {
		return nil
	}
	return err
}

// Close drops every socket, stops the status loop and waits for every
// handler. It is idempotent and safe to call concurrently.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		s.CloseClientConnections()
		s.wg.Wait()
		<-s.statusDone
	})
	return nil
}

// CloseClientConnections drops every socket on both sides without a close
// handshake, as a network failure would; the Server goes on accepting.
func (s *Server) CloseClientConnections() {
	s.closeSockets(func(*socket) bool { return true })
}

// CloseExtensions drops every extension socket; MCP clients connected to
// one are told "disconnected".
func (s *Server) CloseExtensions() {
	s.closeSockets(func(k *socket) bool { return k.side == SideExtension })
}

func (s *Server) closeSockets(which func(*socket) bool) {
	s.mu.Lock()
	var list []*socket
	for k := range s.sockets {
		if which(k) {
			list = append(list, k)
		}
	}
	s.mu.Unlock()
	for _, k := range list {
		_ = k.WS.CloseNow()
	}
}

// Stats reports what is connected now.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Extensions: s.extensionsLocked("")}
	for m := range s.mcps {
		if m.authed {
			st.Clients++
			if m.conn != nil {
				st.Connected++
			}
		}
	}
	return st
}

// WaitExtension waits until an extension named name (any, if name is
// empty) is authenticated, and returns it.
func (s *Server) WaitExtension(ctx context.Context, name string) (ExtensionInfo, error) {
	for {
		s.mu.Lock()
		for _, e := range s.extensionsLocked("") {
			if name == "" || e.Name == name {
				s.mu.Unlock()
				return e, nil
			}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ExtensionInfo{}, fmt.Errorf("wait for extension %q: %w", name, ctx.Err())
		}
	}
}

// NotifyMCP sends a notification to every MCP client that has completed
// its handshake.
func (s *Server) NotifyMCP(method string, params any) {
	s.mu.Lock()
	var to []*socket
	for m := range s.mcps {
		if m.authed {
			to = append(to, m.sock)
		}
	}
	s.mu.Unlock()
	for _, k := range to {
		_ = k.Send(rpcwire.Notification(method, params))
	}
}

func (s *Server) extensionsLocked(userID string) []ExtensionInfo {
	peers := make([]*extPeer, 0, len(s.exts))
	for _, e := range s.exts {
		if userID == "" || e.userID == userID {
			peers = append(peers, e)
		}
	}
	sort.Slice(peers, func(i, j int) bool { return peers[i].seq < peers[j].seq })
	out := make([]ExtensionInfo, len(peers))
	for i, e := range peers {
		out[i] = ExtensionInfo{ID: e.id, Name: e.name, UserID: e.userID, ClientID: e.clientID, Dialect: e.dialect}
	}
	return out
}

// changedLocked wakes WaitExtension.
func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP serves GET /mcp and GET /extension, checking the request
// before upgrading it.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var side string
	switch req.URL.Path {
	case "/mcp":
		side = SideMCP
	case "/extension":
		side = SideExtension
	default:
		http.NotFound(w, req)
		return
	}
	if req.Method != http.MethodGet {
		http.Error(w, "use GET with a WebSocket upgrade", http.StatusMethodNotAllowed)
		return
	}
	if status, why := s.admit(side, req); status != 0 {
		s.logger.Warn("browser relay refused a connection", "endpoint", req.URL.Path, "why", why)
		http.Error(w, why, status)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "relay is closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	// admit has checked the Origin already; the library's own same-origin
	// rule would refuse every extension.
	c, err := websocket.Accept(w, req, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(s.opts.ReadLimit)

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.seq++
	k := &socket{Conn: rpcwire.Conn{WS: c}, side: side, label: fmt.Sprintf("%s#%d", side, s.seq)}
	k.Ctx, k.Cancel = context.WithCancel(s.ctx)
	s.sockets[k] = struct{}{}
	s.mu.Unlock()
	defer func() {
		k.Cancel()
		s.mu.Lock()
		delete(s.sockets, k)
		s.mu.Unlock()
	}()

	if side == SideMCP {
		s.serveMCP(k)
	} else {
		s.serveExtension(k)
	}
}

// admit decides whether an upgrade request may in: 0 when it may, else
// the HTTP status and why not.
func (s *Server) admit(side string, req *http.Request) (int, string) {
	if !loopbackHost(req.Host) {
		return http.StatusForbidden, fmt.Sprintf("host %q is not a loopback address", req.Host)
	}
	origin := req.Header.Get("Origin")
	if side == SideExtension {
		u, err := url.Parse(origin)
		if origin == "" || err != nil || (u.Scheme != "chrome-extension" && u.Scheme != "moz-extension") {
			return http.StatusForbidden, "only a browser extension may connect here (Origin chrome-extension://...)"
		}
		if len(s.opts.ExtensionIDs) > 0 && !slices.Contains(s.opts.ExtensionIDs, u.Host) {
			return http.StatusForbidden, fmt.Sprintf("extension %q is not in browser.extensionIds", u.Host)
		}
		return 0, ""
	}
	if origin != "" {
		return http.StatusForbidden, "requests from web pages (with an Origin header) are refused"
	}
	if s.opts.Secret != "" {
		got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Secret)) != 1 {
			return http.StatusUnauthorized, "missing or wrong relay secret"
		}
	}
	return 0, ""
}

// loopbackHost reports whether a Host header names this machine's
// loopback interface: localhost, 127.0.0.0/8 or ::1, with any port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// read returns the next message on k, passing the frame to Observe.
func (s *Server) read(k *socket) (message, json.RawMessage, error) {
	_, data, err := k.WS.Read(k.Ctx)
	if err != nil {
		return message{}, nil, err
	}
	if s.opts.Observe != nil {
		s.opts.Observe(k.side, k.label, data)
	}
	m, _, err := decode(data)
	if err != nil {
		return message{}, data, errBadJSON
	}
	return m, data, nil
}

// statusLoop sends status to every authenticated socket on both sides.
func (s *Server) statusLoop() {
	defer close(s.statusDone)
	if s.opts.StatusInterval < 0 {
		<-s.ctx.Done()
		return
	}
	t := time.NewTicker(s.opts.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		type out struct {
			k      *socket
			params map[string]any
		}
		var outs []out
		at := time.Now()
		now := stamp(at)
		s.mu.Lock()
		for _, e := range s.exts {
			n := 0
			for _, c := range s.conns {
				if c.ext == e {
					n++
				}
			}
			outs = append(outs, out{e.sock, map[string]any{"connected": true, "peer_count": n, "timestamp": now}})
		}
		var mcps []*mcpPeer
		for m := range s.mcps {
			if m.authed {
				mcps = append(mcps, m)
			}
		}
		s.mu.Unlock()
		for _, m := range mcps {
			outs = append(outs, out{m.sock, s.clientStatus(m, at)})
		}
		for _, o := range outs {
			_ = o.k.Send(rpcwire.Notification("status", o.params))
		}
	}
}

func stamp(t time.Time) string { return t.Format("2006-01-02T15:04:05.000-0700") }

// clientStatus is the status notification's params for an MCP client:
// whether it is connected to an extension (peer_count 1 or 0), and, an
// mcpx addition, how many MCP clients share the relay.
func (s *Server) clientStatus(m *mcpPeer, at time.Time) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	clients := 0
	for o := range s.mcps {
		if o.authed {
			clients++
		}
	}
	n := 0
	if m.conn != nil {
		n = 1
	}
	return map[string]any{"connected": m.conn != nil, "peer_count": n, "timestamp": stamp(at), "clients": clients}
}
