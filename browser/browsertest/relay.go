package browsertest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpx/mcpx/browser/relay"
)

// readLimit is the largest message the scripted extension and the raw
// test client accept: screenshots and accessibility trees run to
// megabytes.
const readLimit = 64 << 20

// Sides of a [Frame].
const (
	SideMCP       = relay.SideMCP
	SideExtension = relay.SideExtension
)

// Error codes of the protocol that the scripted extension uses.
const codeServerError = -32000

// RelayOptions configures [NewRelay]. A nil *RelayOptions means defaults.
type RelayOptions struct {
	// Secret is the HS256 key the relay signs and checks tokens with.
	// Nil means a random one.
	Secret []byte

	// Local makes the relay ask for no token, as mcpx's own local relay
	// does: every peer is one user, [relay.LocalUser].
	Local bool

	// StatusInterval is how often the relay sends the notification
	// status {connected, peer_count, timestamp} to every authenticated
	// socket on both sides (the MV3 service worker's keep-alive). Zero
	// means 10s; negative means never.
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
type ExtensionInfo = relay.ExtensionInfo

// Relay is mcpx's relay server ([relay.Server]) on 127.0.0.1 with the
// hosted relay's token check, like an [net/http/httptest.Server]: MCP
// clients dial [Relay.MCPURL], extensions dial [Relay.ExtensionURL]. It
// records every frame and can drop or restart.
type Relay struct {
	URL string // http://127.0.0.1:PORT

	*relay.Server
	secret []byte
	addr   string // 127.0.0.1:PORT

	life   sync.Mutex // serialises Close and Restart
	srv    *http.Server
	served chan struct{}
	closed bool

	mu     sync.Mutex
	frames []Frame
}

// NewRelay starts a relay on a free port of 127.0.0.1. It panics if it
// cannot listen, as httptest.NewServer does.
func NewRelay(opts *RelayOptions) *Relay {
	var o RelayOptions
	if opts != nil {
		o = *opts
	}
	r := &Relay{secret: o.Secret}
	if r.secret == nil {
		r.secret = make([]byte, 32)
		if _, err := rand.Read(r.secret); err != nil {
			panic("browsertest: crypto/rand: " + err.Error())
		}
	}
	ro := &relay.Options{
		StatusInterval: o.StatusInterval,
		Delay:          o.Delay,
		DropResponse:   o.DropResponse,
		Observe: func(side, label string, data []byte) {
			r.mu.Lock()
			r.frames = append(r.frames, Frame{Side: side, Conn: label, Data: append(json.RawMessage(nil), data...)})
			r.mu.Unlock()
		},
	}
	if !o.Local {
		ro.Authenticate = func(tok string) (string, error) { return verifyHS256(r.secret, tok, time.Now()) }
	}
	r.Server = relay.New(ro)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("browsertest: listen: %v", err))
	}
	r.addr = ln.Addr().String()
	r.URL = "http://" + r.addr
	r.serve(ln)
	return r
}

// MCPURL is the WebSocket URL MCP clients dial: ws://127.0.0.1:PORT/mcp.
func (r *Relay) MCPURL() string { return "ws://" + r.addr + "/mcp" }

// ExtensionURL is the WebSocket URL extensions dial:
// ws://127.0.0.1:PORT/extension.
func (r *Relay) ExtensionURL() string { return "ws://" + r.addr + "/extension" }

func (r *Relay) serve(ln net.Listener) {
	r.srv = &http.Server{Handler: r.Server, ReadHeaderTimeout: 10 * time.Second}
	r.served = make(chan struct{})
	srv, done := r.srv, r.served
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
}

// stop stops listening and drops every socket.
func (r *Relay) stop() {
	_ = r.srv.Close()
	<-r.served
	r.CloseClientConnections()
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
	_ = r.Server.Close()
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

// Frames returns a copy of every frame received so far from MCP clients
// and extensions, in order of arrival.
func (r *Relay) Frames() []Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Frame(nil), r.frames...)
}

// Extensions lists the authenticated extensions of every user, oldest
// first.
func (r *Relay) Extensions() []ExtensionInfo { return r.Stats().Extensions }

// WaitExtension waits until an extension named name (any, if name is
// empty) is authenticated on the relay, and returns it.
func (r *Relay) WaitExtension(ctx context.Context, name string) (ExtensionInfo, error) {
	return r.Server.WaitExtension(ctx, name)
}
