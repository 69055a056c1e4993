package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"

	"github.com/coder/websocket"
)

// LegacyRelay is a relay of the legacy proxy protocol (the Browser MCP
// Proxy Protocol, the first version of the relay protocol, before 1.0) as
// an MCP client meets it: plain JSON without JSON-RPC ids, routed by
// connectionId. It is scripted for testing mcpx's relay client against such
// a relay, and plays the browser extension itself, in process: a [Legacy]
// [Extension] ([LegacyRelay.Extension]) with a few tabs.
//
// On /mcp it speaks exactly the legacy protocol:
//
//   - mcp_handshake {projectName, ...} gets no answer;
//   - list_extensions gets {"extensions":[{"id","name","connected":true}]};
//   - connect {extensionId (or extension_id), tabId?} gets
//     {"success":true,"connectionId":"conn-..."}, the connection holding
//     that tab, or without tabId a new about:blank one; or
//     {"success":false,"error":"..."};
//   - every other message must carry the connectionId of a connection
//     made on the same socket (else {"success":false,"error":"missing
//     connectionId"} or {"connectionId","error":"Connection not found:
//     ..."}); the extension answers it {"connectionId","result"} or
//     {"connectionId","error":"message"}.
//
// Nothing it sends carries an id or "jsonrpc". Each socket's messages are
// answered one at a time, in order: a client that cannot match answers to
// requests by id may match them by order. A request the extension holds
// (a handler of [Extension.Handle] that waits on its ctx) holds that
// socket's later messages until it returns or [LegacyRelay.DropExtension]
// ends its connection.
type LegacyRelay struct {
	addr  string
	srv   *http.Server
	ext   *Extension
	extID string

	ctx    context.Context // the relay's life
	cancel context.CancelFunc
	wg     sync.WaitGroup // the server and its handlers

	mu        sync.Mutex
	frames    []Frame
	clients   map[*legacyClient]struct{}
	conns     map[string]*legacyConn
	seq       int
	available bool
	closed    bool
}

// legacyClient is one MCP client socket of a LegacyRelay.
type legacyClient struct {
	rpcwire.Conn
	label      string
	handshaken bool // guarded by LegacyRelay.mu
}

// legacyConn is one connection of an MCP client to the extension; ctx ends
// when the connection does.
type legacyConn struct {
	id     string
	client *legacyClient
	ctx    context.Context
	cancel context.CancelFunc
}

// NewLegacyRelay starts a legacy relay on a free port of 127.0.0.1, its
// extension "Chrome 141" in place with three tabs: about:blank, "Example
// Domain" at http://example.test/ and "Docs" at http://docs.test/. It
// panics if it cannot listen, as httptest.NewServer does.
func NewLegacyRelay() *LegacyRelay {
	ext := NewExtension(Legacy, "Chrome 141")
	ext.AddPage("http://example.test/", "Example Domain")
	ext.AddPage("http://docs.test/", "Docs")
	ext.tabs = append(ext.tabs,
		&Tab{ID: 2, Title: "Example Domain", URL: "http://example.test/"},
		&Tab{ID: 3, Title: "Docs", URL: "http://docs.test/"})
	ext.nextTab = 4
	r := &LegacyRelay{
		ext:       ext,
		extID:     "ext-" + newUUID(),
		clients:   map[*legacyClient]struct{}{},
		conns:     map[string]*legacyConn{},
		available: true,
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("browsertest: listen: %v", err))
	}
	r.addr = ln.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = r.srv.Serve(ln)
	}()
	return r
}

// MCPURL is the WebSocket URL MCP clients dial: ws://127.0.0.1:PORT/mcp.
func (r *LegacyRelay) MCPURL() string { return "ws://" + r.addr + "/mcp" }

// Extension is the extension the relay plays: change its pages, tabs and
// handlers with its methods, but do not Connect it anywhere.
func (r *LegacyRelay) Extension() *Extension { return r.ext }

// ExtensionID is the id list_extensions gives the extension.
func (r *LegacyRelay) ExtensionID() string { return r.extID }

// Frames returns a copy of every frame MCP clients sent, in order of
// arrival; Conn names the socket ("mcp#N").
func (r *LegacyRelay) Frames() []Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Frame(nil), r.frames...)
}

// Connections returns the ids of the connections open now.
func (r *LegacyRelay) Connections() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.conns))
	for id := range r.conns {
		out = append(out, id)
	}
	return out
}

// DropExtension is the extension's socket dropping and coming back (a
// service worker that restarts): every connection ends, its client told
// {"connectionId","error":"Extension disconnected"} (which, without ids,
// is also what a request in flight gets), and the extension lets go of
// their tabs. The extension is listed again at once, under the same id;
// clients must connect again.
func (r *LegacyRelay) DropExtension() {
	r.mu.Lock()
	gone := make([]*legacyConn, 0, len(r.conns))
	for id, c := range r.conns {
		gone = append(gone, c)
		delete(r.conns, id)
	}
	r.mu.Unlock()
	r.ext.mu.Lock()
	for _, c := range gone {
		delete(r.ext.attached, c.id)
	}
	r.ext.mu.Unlock()
	for _, c := range gone {
		c.cancel()
		_ = c.client.Send(map[string]any{"connectionId": c.id, "error": "Extension disconnected"})
	}
}

// SetExtensionAvailable takes the extension away (false: as
// DropExtension, and then list_extensions is empty and connect fails) or
// brings it back.
func (r *LegacyRelay) SetExtensionAvailable(ok bool) {
	r.mu.Lock()
	r.available = ok
	r.mu.Unlock()
	if !ok {
		r.DropExtension()
	}
}

// ForwardCDPEvent sends a CDP event of a tab, as the relay passes the
// extension's on: {"method":"forwardCDPEvent","connectionId",
// "params":{"tabId","method","params"}} to each connection holding the
// tab, or to every connection when none does.
func (r *LegacyRelay) ForwardCDPEvent(tabID int, method string, params any) {
	if params == nil {
		params = map[string]any{}
	}
	r.mu.Lock()
	r.ext.mu.Lock()
	var all, holding []*legacyConn
	for _, c := range r.conns {
		all = append(all, c)
		if id, ok := r.ext.attached[c.id]; ok && id == tabID {
			holding = append(holding, c)
		}
	}
	r.ext.mu.Unlock()
	r.mu.Unlock()
	if len(holding) > 0 {
		all = holding
	}
	for _, c := range all {
		_ = c.client.Send(map[string]any{"method": "forwardCDPEvent", "connectionId": c.id,
			"params": map[string]any{"tabId": tabID, "method": method, "params": params}})
	}
}

// Close stops the relay, drops every socket and waits for its handlers.
// It is idempotent.
func (r *LegacyRelay) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	_ = r.srv.Close() // hijacked WebSockets end with r.ctx
	r.wg.Wait()
	r.ext.Close()
}

func (r *LegacyRelay) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/mcp" {
		http.NotFound(w, req)
		return
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		http.Error(w, "relay is closed", http.StatusServiceUnavailable)
		return
	}
	r.wg.Add(1)
	r.seq++
	label := fmt.Sprintf("mcp#%d", r.seq)
	r.mu.Unlock()
	defer r.wg.Done()
	c, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(readLimit)
	k := &legacyClient{Conn: rpcwire.Conn{WS: c}, label: label}
	k.Ctx, k.Cancel = context.WithCancel(r.ctx)
	defer k.Cancel()
	r.mu.Lock()
	r.clients[k] = struct{}{}
	r.mu.Unlock()
	defer r.clientGone(k)
	for {
		_, data, err := c.Read(k.Ctx)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.frames = append(r.frames, Frame{Side: SideMCP, Conn: label, Data: append(json.RawMessage(nil), data...)})
		r.mu.Unlock()
		r.handle(k, data)
	}
}

// clientGone ends the connections of a client whose socket closed.
func (r *LegacyRelay) clientGone(k *legacyClient) {
	r.mu.Lock()
	delete(r.clients, k)
	var gone []*legacyConn
	for id, c := range r.conns {
		if c.client == k {
			gone = append(gone, c)
			delete(r.conns, id)
		}
	}
	r.mu.Unlock()
	r.ext.mu.Lock()
	for _, c := range gone {
		delete(r.ext.attached, c.id)
	}
	r.ext.mu.Unlock()
	for _, c := range gone {
		c.cancel()
	}
}

// legacyMsg is a message of an MCP client of the legacy protocol.
type legacyMsg struct {
	Method       string          `json:"method"`
	Params       json.RawMessage `json:"params"`
	ConnectionID string          `json:"connectionId"`
}

func failure(why string) map[string]any { return map[string]any{"success": false, "error": why} }

// handle answers one message of k.
func (r *LegacyRelay) handle(k *legacyClient, data []byte) {
	var m legacyMsg
	if json.Unmarshal(data, &m) != nil || m.Method == "" {
		_ = k.Send(failure("expected a JSON object with a method"))
		return
	}
	r.mu.Lock()
	handshaken, available := k.handshaken, r.available
	if m.Method == "mcp_handshake" {
		k.handshaken = true
	}
	r.mu.Unlock()
	switch {
	case m.Method == "mcp_handshake": // the legacy protocol: no answer
	case !handshaken:
		_ = k.Send(failure("send mcp_handshake first"))
	case m.Method == "list_extensions":
		list := []map[string]any{}
		if available {
			list = append(list, map[string]any{"id": r.extID, "name": r.ext.Name(), "connected": true})
		}
		_ = k.Send(map[string]any{"extensions": list})
	case m.Method == "connect":
		_ = k.Send(r.connect(k, m.Params, available))
	case m.ConnectionID == "":
		_ = k.Send(failure("missing connectionId"))
	default:
		r.forward(k, m)
	}
}

// connect makes a connection for k to the extension, on the tab asked
// for or on a new one.
func (r *LegacyRelay) connect(k *legacyClient, params json.RawMessage, available bool) map[string]any {
	var p struct {
		ExtensionID  string `json:"extensionId"`
		ExtensionID2 string `json:"extension_id"`
		TabID        *int   `json:"tabId"`
	}
	_ = json.Unmarshal(params, &p)
	if p.ExtensionID == "" {
		p.ExtensionID = p.ExtensionID2
	}
	if !available || p.ExtensionID != r.extID {
		return failure("Extension not found")
	}
	c := &legacyConn{id: "conn-" + newUUID(), client: k}
	r.ext.mu.Lock()
	if p.TabID != nil {
		if r.ext.indexLocked(*p.TabID) < 0 {
			r.ext.mu.Unlock()
			return failure(fmt.Sprintf("Tab %d not found", *p.TabID))
		}
		for conn, id := range r.ext.attached {
			if id == *p.TabID && conn != c.id {
				r.ext.mu.Unlock()
				return failure(fmt.Sprintf("Tab %d is already connected", *p.TabID))
			}
		}
		r.ext.attached[c.id] = *p.TabID
	} else {
		r.ext.createTabLocked(c.id, json.RawMessage(`{"activate":false}`))
	}
	r.ext.mu.Unlock()
	c.ctx, c.cancel = context.WithCancel(k.Ctx)
	r.mu.Lock()
	r.conns[c.id] = c
	r.mu.Unlock()
	return map[string]any{"success": true, "connectionId": c.id}
}

// forward has the extension answer m on its connection.
func (r *LegacyRelay) forward(k *legacyClient, m legacyMsg) {
	r.mu.Lock()
	c := r.conns[m.ConnectionID]
	r.mu.Unlock()
	if c == nil || c.client != k {
		_ = k.Send(map[string]any{"connectionId": m.ConnectionID, "error": "Connection not found: " + m.ConnectionID})
		return
	}
	res, err := r.ext.call(c.ctx, c.id, m.Method, m.Params)
	if errors.Is(err, ErrNoResponse) || c.ctx.Err() != nil {
		return // no answer, or the connection ended and its client was told
	}
	if err != nil {
		_ = k.Send(map[string]any{"connectionId": c.id, "error": r.ext.wireError(err)})
		return
	}
	if res == nil {
		res = map[string]any{}
	}
	_ = k.Send(map[string]any{"connectionId": c.id, "result": res})
}
