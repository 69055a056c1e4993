package browsertest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"

	"github.com/coder/websocket"
)

// Dialect is how a scripted [Extension] answers: like one of the real
// extensions mcpx meets.
type Dialect int

const (
	// V15 answers like railsblueprint/chrome-mcp v1.5: currentTab merged
	// into every result, unknown methods (closeTab among them) a silent
	// success that does nothing, errors as {code, message}, and createTab
	// of an about:, chrome: or extension page refused ("Cannot automate
	// tab with URL: about:blank") after the tab is open and the
	// connection points at it with no debugger: CDP commands then fail
	// with "Debugger is not attached to the tab". (It skips v1.5's 2 s
	// sleep in createTab.)
	V15 Dialect = iota + 1
	// V19 answers like blueprint-mcp v1.9: "Unknown command: X" and
	// "Unsupported CDP method: X" errors as {message, stack} without a
	// code, closeTab that closes, an allow-list of CDP methods.
	V19
	// Legacy speaks the legacy proxy protocol (the Browser MCP Proxy
	// Protocol, the relay protocol's first version, before JSON-RPC): it
	// introduces itself with extension_handshake instead of answering
	// authenticate, keeps a tab per connectionId of the requests it gets,
	// answers {connectionId, result} or {connectionId, error: "message"}
	// without an id or "jsonrpc", and sends forwardCDPEvent {tabId, method,
	// params} for the relay to route ([Extension.ForwardCDPEvent]). Its
	// methods answer like v1.9's (closeTab closes, "Unknown command: X"),
	// its CDP fake like v1.5's. Requests it answers by itself are answered
	// in the order they came; those with a handler of [Extension.Handle]
	// run concurrently, as a real extension's awaiting handlers do, and may
	// answer out of order.
	Legacy
)

func (d Dialect) String() string {
	switch d {
	case V15:
		return "v1.5"
	case V19:
		return "v1.9"
	case Legacy:
		return "legacy"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// HandlerFunc answers one request. params are the request's params, or for
// a "forwardCDPCommand:<CDP method>" handler the CDP params. It returns a
// result to marshal (a json.RawMessage is sent as is) or an error: an
// [*Error] chooses the error's wire shape, any other error takes the
// dialect's shape, and [ErrNoResponse] sends nothing. ctx ends when the
// extension's socket closes.
type HandlerFunc func(ctx context.Context, params json.RawMessage) (any, error)

// ErrNoResponse, returned by a [HandlerFunc], makes the extension never
// answer the request.
var ErrNoResponse = errors.New("browsertest: no response")

// ErrorShape is one of the three ways real extensions send an error.
type ErrorShape int

const (
	// CodeMessage is {"code":-32000,"message":"..."}: the spec and v1.5.
	CodeMessage ErrorShape = iota
	// MessageStack is {"message":"...","stack":"..."} with no code: v1.9.
	MessageStack
	// BareString is the message as a bare JSON string: the Playwright
	// extension.
	BareString
)

// Errorf returns an [*Error] of this shape, for a [HandlerFunc] to return.
func (s ErrorShape) Errorf(format string, args ...any) *Error {
	return &Error{Shape: s, Message: fmt.Sprintf(format, args...)}
}

// Error is an error a scripted extension sends in a chosen shape.
type Error struct {
	Shape   ErrorShape
	Code    int    // for CodeMessage; zero means -32000
	Message string // the message
	Stack   string // for MessageStack; empty means a made-up JS stack
}

func (e *Error) Error() string { return e.Message }

// wire is the JSON-RPC "error" member.
func (e *Error) wire() any {
	switch e.Shape {
	case MessageStack:
		stack := e.Stack
		if stack == "" {
			stack = "Error: " + e.Message + "\n    at handleCommand (chrome-extension://test/background.js:1:1)"
		}
		return map[string]any{"message": e.Message, "stack": stack}
	case BareString:
		return e.Message
	}
	code := e.Code
	if code == 0 {
		code = codeServerError
	}
	return map[string]any{"code": code, "message": e.Message}
}

// Tab is a tab of a scripted extension's pretend browser.
type Tab struct {
	ID    int
	Title string
	URL   string
}

// Extension is a scripted browser extension: it dials a relay's
// /extension endpoint, authenticates, and answers forwarded requests from
// a pretend browser (a list of tabs and a tiny fake of a few CDP methods)
// the way a real extension of its [Dialect] would. [Extension.Handle]
// overrides or adds methods. It starts with one about:blank tab. Its
// methods are safe to call concurrently.
type Extension struct {
	dialect  Dialect
	name     string
	clientID string

	mu        sync.Mutex
	handlers  map[string]HandlerFunc
	tabs      []*Tab
	nextTab   int
	active    int            // id of the active tab
	attached  map[string]int // connection id ("" in direct mode) -> tab id
	bare      map[int]bool   // tabs a connection points at with no debugger (v1.5's refused createTab)
	pages     map[string]string
	received  []json.RawMessage
	notes     []json.RawMessage
	id        string // the relay's extension id
	sock      *extSocket
	closed    bool
	wg        sync.WaitGroup // readers and request handlers
	connectMu sync.Mutex     // one Connect or Disconnect at a time
}

// extSocket is one connection of an Extension to a relay.
type extSocket struct {
	rpcwire.Conn
	token  string
	authed chan struct{} // closed on the relay's "authenticated"
	done   chan struct{} // closed when the reader ends
	err    error         // why the reader ended; read after done
}

// NewExtension returns a scripted extension of the given dialect that
// calls itself name. Its client_id is fixed for its life, so the relay
// gives it the same extension id each time it connects.
func NewExtension(dialect Dialect, name string) *Extension {
	return &Extension{
		dialect:  dialect,
		name:     name,
		clientID: "chrome-" + newUUID(),
		handlers: map[string]HandlerFunc{},
		tabs:     []*Tab{{ID: 1, URL: "about:blank"}},
		nextTab:  2,
		active:   1,
		attached: map[string]int{},
		bare:     map[int]bool{},
		pages:    map[string]string{},
	}
}

// Name is the name the extension authenticates with.
func (e *Extension) Name() string { return e.name }

// Origin is the Origin its WebSocket upgrade carries, as a real
// extension's does: chrome-extension://<32 letters a-p>, derived from
// its client id.
func (e *Extension) Origin() string {
	sum := sha256.Sum256([]byte(e.clientID))
	id := make([]byte, 32)
	for i := range id {
		id[i] = 'a' + sum[i]%16
	}
	return "chrome-extension://" + string(id)
}

// ClientID is the client_id the extension authenticates with.
func (e *Extension) ClientID() string { return e.clientID }

// ID is the extension id the relay assigned at the last Connect. A
// [Legacy] extension is never told it: ask the relay (list_extensions, or
// [Relay.WaitExtension]).
func (e *Extension) ID() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.id
}

func (e *Extension) handles(method string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.handlers[method] != nil
}

// Connected reports whether the extension has a socket to a relay.
func (e *Extension) Connected() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sock != nil
}

// Handle sets the handler for a method, replacing the built-in one. For
// forwardCDPCommand, key it "forwardCDPCommand:<CDP method>" (it gets the
// CDP params, and runs only once a tab is attached, as the real ones do),
// or "forwardCDPCommand" for every CDP method without its own handler.
// An "authenticate" handler replaces the credentials the extension sends
// the relay (by default {name, access_token: <Connect's token>,
// client_id}). A nil fn restores the built-in behaviour.
func (e *Extension) Handle(method string, fn func(ctx context.Context, params json.RawMessage) (any, error)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if fn == nil {
		delete(e.handlers, method)
		return
	}
	e.handlers[method] = fn
}

// AddPage gives the pretend page at url a title: createTab and
// Page.navigate to url then show it, and Runtime.evaluate of
// document.title returns it.
func (e *Extension) AddPage(url, title string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pages[url] = title
}

// Tabs returns the pretend browser's tabs, in order.
func (e *Extension) Tabs() []Tab {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Tab, len(e.tabs))
	for i, t := range e.tabs {
		out[i] = *t
	}
	return out
}

// Received returns the requests the extension got from the relay (with
// the relay's mapped ids), authenticate included, in order.
func (e *Extension) Received() []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]json.RawMessage(nil), e.received...)
}

// Notifications returns the notifications the extension got (status,
// authenticated, disconnected, ...), in order.
func (e *Extension) Notifications() []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]json.RawMessage(nil), e.notes...)
}

// Connect dials extensionURL and answers the relay's authenticate with
// {name, access_token: token, client_id}. It returns once the relay has
// confirmed ("authenticated"), or an error if the relay closed the socket
// (a bad token: close status 1008) or ctx ended first. A socket it already
// has is closed first, so Connect after a relay restart just works.
//
// A [Legacy] extension instead sends extension_handshake {name, client_id}
// (and access_token, when token is not empty) as soon as the socket is
// open, and returns once that is written: the legacy protocol has the relay
// confirm nothing, so the relay lists the extension a moment later
// ([Relay.WaitExtension] waits for that) and a refusal shows as the socket
// closing.
func (e *Extension) Connect(ctx context.Context, extensionURL, token string) error {
	e.connectMu.Lock()
	defer e.connectMu.Unlock()
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return errors.New("browsertest: extension is closed")
	}
	e.disconnectLocked() // a socket the relay dropped may not have noticed yet

	c, _, err := websocket.Dial(ctx, extensionURL, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {e.Origin()}},
	})
	if err != nil {
		return fmt.Errorf("dial %s: %w", extensionURL, err)
	}
	c.SetReadLimit(readLimit)
	s := &extSocket{Conn: rpcwire.Conn{WS: c}, token: token, authed: make(chan struct{}), done: make(chan struct{})}
	s.Ctx, s.Cancel = context.WithCancel(context.Background())
	e.mu.Lock()
	e.sock = s
	e.wg.Add(1)
	e.mu.Unlock()
	go e.readLoop(s)

	if e.dialect == Legacy {
		params := map[string]any{"name": e.name, "client_id": e.clientID}
		if token != "" {
			params["access_token"] = token
		}
		if err := s.Send(map[string]any{"method": "extension_handshake", "params": params}); err != nil {
			_ = c.CloseNow()
			<-s.done
			return fmt.Errorf("extension_handshake: %w", err)
		}
		return nil
	}
	select {
	case <-s.authed:
		return nil
	case <-s.done:
		return fmt.Errorf("relay closed the socket before authenticating: %w", s.err)
	case <-ctx.Done():
		_ = c.CloseNow()
		<-s.done
		return fmt.Errorf("connect: %w", ctx.Err())
	}
}

// Disconnect closes the extension's socket, as a browser that quits or a
// service worker that stops; the relay then tells connected MCP clients
// "disconnected". Connect may be called again.
func (e *Extension) Disconnect() {
	e.connectMu.Lock()
	defer e.connectMu.Unlock()
	e.disconnectLocked()
}

// disconnectLocked closes the socket, if any; connectMu is held.
func (e *Extension) disconnectLocked() {
	e.mu.Lock()
	s := e.sock
	e.mu.Unlock()
	if s == nil {
		return
	}
	_ = s.WS.Close(websocket.StatusGoingAway, "extension disconnected")
	<-s.done
}

// Close disconnects and waits for every request handler to return. It is
// idempotent.
func (e *Extension) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.Disconnect()
	e.wg.Wait()
}

// readLoop is the socket's one reader.
func (e *Extension) readLoop(s *extSocket) {
	defer e.wg.Done()
	defer close(s.done)
	defer func() {
		s.Cancel()
		_ = s.WS.CloseNow()
		e.mu.Lock()
		if e.sock == s {
			e.sock = nil
			e.attached = map[string]int{} // the relay's connections died with the socket
		}
		e.mu.Unlock()
	}()
	for {
		_, data, err := s.WS.Read(s.Ctx)
		if err != nil {
			s.err = err
			return
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if e.dialect == Legacy {
			e.readLegacy(s, m, data)
			continue
		}
		switch {
		case m.Method == "" || !m.HasID():
			if m.Method != "" {
				e.notify(s, m, data)
			}
		case m.Method == "authenticate" && !e.handles("authenticate"):
			e.record(data)
			_ = s.Send(rpcwire.Response(m.ID, e.credentials(s.token)))
		default:
			e.record(data)
			e.wg.Add(1) // this reader holds the count above zero
			go e.serve(s, m)
		}
	}
}

// Notify sends a notification from the extension (say
// notifications/tab_info_update); the relay passes it to every MCP client
// connected to the extension.
func (e *Extension) Notify(method string, params any) error {
	e.mu.Lock()
	s := e.sock
	e.mu.Unlock()
	if s == nil {
		return errors.New("browsertest: extension is not connected")
	}
	return s.Send(rpcwire.Notification(method, params))
}

// ForwardCDPEvent sends a CDP event of a tab: {"method":"forwardCDPEvent",
// "params":{"tabId", "method", "params"}}, with no connectionId, so that
// the relay has to find the MCP client that holds the tab. A [Legacy]
// extension sends it bare, the others as a JSON-RPC notification.
func (e *Extension) ForwardCDPEvent(tabID int, method string, params any) error {
	if params == nil {
		params = map[string]any{}
	}
	p := map[string]any{"tabId": tabID, "method": method, "params": params}
	if e.dialect == Legacy {
		return e.Send(map[string]any{"method": "forwardCDPEvent", "params": p})
	}
	return e.Send(rpcwire.Notification("forwardCDPEvent", p))
}

// Send sends v as one frame as it is (a string or []byte unchanged, else
// marshalled): for frames no built-in behaviour sends, such as a legacy
// answer in another shape to a request whose handler returned
// [ErrNoResponse].
func (e *Extension) Send(v any) error {
	e.mu.Lock()
	s := e.sock
	e.mu.Unlock()
	if s == nil {
		return errors.New("browsertest: extension is not connected")
	}
	switch b := v.(type) {
	case string:
		v = json.RawMessage(b)
	case []byte:
		v = json.RawMessage(b)
	}
	return s.Send(v)
}
