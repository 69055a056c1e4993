package browsertest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// readLimit is the largest message the relay (and the scripted extension)
// accepts: screenshots and accessibility trees run to megabytes.
const readLimit = 64 << 20

// writeTimeout bounds one write to one socket.
const writeTimeout = 10 * time.Second

// Sides of a [Frame].
const (
	SideMCP       = "mcp"
	SideExtension = "extension"
)

// RelayOptions configures [NewRelay]. A nil *RelayOptions means defaults.
type RelayOptions struct {
	// Secret is the HS256 key the relay signs and checks tokens with.
	// Nil means a random one.
	Secret []byte

	// StatusInterval is how often the relay sends the notification
	// status {connected, peer_count, timestamp} to every authenticated
	// socket on both sides (the MV3 service worker's keep-alive). An
	// extension hears connected: true and the number of MCP clients
	// connected to it; an MCP client hears whether it is connected to an
	// extension, and peer_count 1 or 0. Zero means 10s; negative means
	// never.
	StatusInterval time.Duration

	// Delay, if set, is asked for each request an MCP client sends to be
	// forwarded; the relay holds the request that long before passing it
	// to the extension. Delayed requests do not hold up others, so later
	// requests may overtake them. The key is the method, or
	// "forwardCDPCommand:<CDP method>" for forwardCDPCommand. Zero means no
	// delay.
	Delay func(key string) time.Duration

	// DropResponse, if set, is asked for each response an extension sends
	// to a forwarded request (keyed as for Delay); when it returns true
	// the relay swallows the response, and the MCP client never gets an
	// answer.
	DropResponse func(key string) bool
}

// Frame is one message the relay received.
type Frame struct {
	Side string // SideMCP or SideExtension
	// Conn names the socket it came in on: "mcp#N" or "extension#N",
	// numbered in order of arrival over the relay's life.
	Conn string
	Data json.RawMessage
}

// ExtensionInfo describes an authenticated extension on the relay.
type ExtensionInfo struct {
	ID       string // "ext-<uuid>", stable per ClientID
	Name     string
	UserID   string
	ClientID string
}

// Relay is an in-process browser relay speaking the MCP Proxy Protocol 1.0
// on 127.0.0.1, like an [net/http/httptest.Server]: MCP clients dial
// [Relay.MCPURL], extensions dial [Relay.ExtensionURL].
type Relay struct {
	URL string // http://127.0.0.1:PORT

	opts   RelayOptions
	secret []byte
	addr   string // 127.0.0.1:PORT

	life   sync.Mutex // serialises Close and Restart
	srv    *http.Server
	closed bool

	ctx        context.Context // the relay's life; parent of every socket
	cancel     context.CancelFunc
	wg         sync.WaitGroup // handlers and their helpers
	statusDone chan struct{}

	mu        sync.Mutex
	accepting bool
	sockets   map[*socket]struct{}
	exts      map[string]*extPeer // authenticated, by extension id
	mcps      map[*mcpPeer]struct{}
	conns     map[string]*connection // by connection id
	extIDs    map[string]string      // client_id -> extension id
	frames    []Frame
	seq       int
	changed   chan struct{} // closed and replaced on every change of exts
}

// NewRelay starts a relay on a free port of 127.0.0.1. It panics if it
// cannot listen, as httptest.NewServer does.
func NewRelay(opts *RelayOptions) *Relay {
	r := &Relay{
		sockets: map[*socket]struct{}{},
		exts:    map[string]*extPeer{},
		mcps:    map[*mcpPeer]struct{}{},
		conns:   map[string]*connection{},
		extIDs:  map[string]string{},
		changed: make(chan struct{}),
	}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.StatusInterval == 0 {
		r.opts.StatusInterval = 10 * time.Second
	}
	r.secret = r.opts.Secret
	if r.secret == nil {
		r.secret = make([]byte, 32)
		if _, err := rand.Read(r.secret); err != nil {
			panic("browsertest: crypto/rand: " + err.Error())
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("browsertest: listen: %v", err))
	}
	r.addr = ln.Addr().String()
	r.URL = "http://" + r.addr
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.serve(ln)
	r.statusDone = make(chan struct{})
	go r.statusLoop()
	return r
}

// MCPURL is the WebSocket URL MCP clients dial: ws://127.0.0.1:PORT/mcp.
func (r *Relay) MCPURL() string { return "ws://" + r.addr + "/mcp" }

// ExtensionURL is the WebSocket URL extensions dial:
// ws://127.0.0.1:PORT/extension.
func (r *Relay) ExtensionURL() string { return "ws://" + r.addr + "/extension" }

// serve starts accepting on ln.
func (r *Relay) serve(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /mcp", r.handle(SideMCP))
	mux.HandleFunc("GET /extension", r.handle(SideExtension))
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	r.mu.Lock()
	r.accepting = true
	r.mu.Unlock()
	srv := r.srv
	go func() { _ = srv.Serve(ln) }()
}

// stop stops listening, drops every socket and waits for their handlers.
func (r *Relay) stop() {
	r.mu.Lock()
	r.accepting = false
	r.mu.Unlock()
	_ = r.srv.Close()
	r.CloseClientConnections()
	r.wg.Wait()
}

// Close stops the relay and waits for everything it started. It is
// idempotent and safe to call concurrently.
func (r *Relay) Close() {
	r.life.Lock()
	defer r.life.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	r.stop()
	r.cancel()
	<-r.statusDone
}

// Restart simulates a relay restart mid-session: it stops listening,
// drops every socket, and listens again on the same port. Tokens stay
// valid and an extension keeps its id (per client_id); MCP clients must
// handshake and connect again.
func (r *Relay) Restart() {
	r.life.Lock()
	defer r.life.Unlock()
	if r.closed {
		return
	}
	r.stop()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port is ours; retry a moment if the kernel is slow to free it
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		panic(fmt.Sprintf("browsertest: relisten on %s: %v", r.addr, err))
	}
	r.serve(ln)
}

// CloseClientConnections drops every socket on both sides without a close
// handshake (as a network failure would), and keeps listening.
func (r *Relay) CloseClientConnections() {
	r.closeSockets(func(*socket) bool { return true })
}

// CloseExtensions drops every extension socket, keeping MCP clients: the
// relay then tells connected MCP clients "disconnected".
func (r *Relay) CloseExtensions() {
	r.closeSockets(func(s *socket) bool { return s.side == SideExtension })
}

func (r *Relay) closeSockets(which func(*socket) bool) {
	r.mu.Lock()
	var list []*socket
	for s := range r.sockets {
		if which(s) {
			list = append(list, s)
		}
	}
	r.mu.Unlock()
	for _, s := range list {
		_ = s.c.CloseNow()
	}
}

// NotifyMCP sends a notification to every MCP client that has completed
// its handshake, as a relay announcing something would (an unknown
// method, a "disconnected" that is not true, ...).
func (r *Relay) NotifyMCP(method string, params any) {
	r.mu.Lock()
	var to []*socket
	for m := range r.mcps {
		if m.authed {
			to = append(to, m.sock)
		}
	}
	r.mu.Unlock()
	for _, s := range to {
		_ = s.send(notification(method, params))
	}
}

// Frames returns a copy of every frame received so far from MCP clients
// and extensions, in order of arrival.
func (r *Relay) Frames() []Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Frame(nil), r.frames...)
}

// Extensions lists the authenticated extensions of every user, oldest
// first.
func (r *Relay) Extensions() []ExtensionInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.extensionsLocked("")
}

func (r *Relay) extensionsLocked(userID string) []ExtensionInfo {
	peers := make([]*extPeer, 0, len(r.exts))
	for _, e := range r.exts {
		if userID == "" || e.userID == userID {
			peers = append(peers, e)
		}
	}
	sort.Slice(peers, func(i, j int) bool { return peers[i].seq < peers[j].seq })
	out := make([]ExtensionInfo, len(peers))
	for i, e := range peers {
		out[i] = ExtensionInfo{ID: e.id, Name: e.name, UserID: e.userID, ClientID: e.clientID}
	}
	return out
}

// WaitExtension waits until an extension named name (any, if name is
// empty) is authenticated on the relay, and returns it.
func (r *Relay) WaitExtension(ctx context.Context, name string) (ExtensionInfo, error) {
	for {
		r.mu.Lock()
		for _, e := range r.extensionsLocked("") {
			if name == "" || e.Name == name {
				r.mu.Unlock()
				return e, nil
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ExtensionInfo{}, fmt.Errorf("wait for extension %q: %w", name, ctx.Err())
		}
	}
}

// changedLocked wakes WaitExtension.
func (r *Relay) changedLocked() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// handle serves one WebSocket endpoint.
func (r *Relay) handle(side string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		if !r.accepting {
			r.mu.Unlock()
			http.Error(w, "relay is closed", http.StatusServiceUnavailable)
			return
		}
		r.wg.Add(1)
		r.mu.Unlock()
		defer r.wg.Done()

		c, err := websocket.Accept(w, req, &websocket.AcceptOptions{
			OriginPatterns: []string{"chrome-extension://*", "moz-extension://*"},
		})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(readLimit)

		r.mu.Lock()
		if !r.accepting {
			r.mu.Unlock()
			return
		}
		r.seq++
		s := &socket{wsConn: wsConn{c: c}, side: side, label: fmt.Sprintf("%s#%d", side, r.seq)}
		s.ctx, s.cancel = context.WithCancel(r.ctx)
		r.sockets[s] = struct{}{}
		r.mu.Unlock()
		defer func() {
			s.cancel()
			r.mu.Lock()
			delete(r.sockets, s)
			r.mu.Unlock()
		}()

		if side == SideMCP {
			r.serveMCP(s)
		} else {
			r.serveExtension(s)
		}
	}
}

// read returns the next message on s, recording it as a frame.
func (r *Relay) read(s *socket) (message, json.RawMessage, error) {
	_, data, err := s.c.Read(s.ctx)
	if err != nil {
		return message{}, nil, err
	}
	r.mu.Lock()
	r.frames = append(r.frames, Frame{Side: s.side, Conn: s.label, Data: data})
	r.mu.Unlock()
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		return message{}, data, errBadJSON
	}
	return m, data, nil
}

// statusLoop sends status to every authenticated socket on both sides.
func (r *Relay) statusLoop() {
	defer close(r.statusDone)
	if r.opts.StatusInterval < 0 {
		<-r.ctx.Done()
		return
	}
	t := time.NewTicker(r.opts.StatusInterval)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		type out struct {
			s      *socket
			params map[string]any
		}
		var outs []out
		now := time.Now().Format("2006-01-02T15:04:05.000-0700")
		r.mu.Lock()
		for _, e := range r.exts {
			n := 0
			for _, c := range r.conns {
				if c.ext == e {
					n++
				}
			}
			outs = append(outs, out{e.sock, map[string]any{"connected": true, "peer_count": n, "timestamp": now}})
		}
		for m := range r.mcps {
			if !m.authed {
				continue
			}
			n := 0
			if m.conn != nil {
				n = 1
			}
			outs = append(outs, out{m.sock, map[string]any{"connected": m.conn != nil, "peer_count": n, "timestamp": now}})
		}
		r.mu.Unlock()
		for _, o := range outs {
			_ = o.s.send(notification("status", o.params))
		}
	}
}
