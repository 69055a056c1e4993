package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"
	"github.com/mcpx/mcpx/jsonrpc"

	"github.com/coder/websocket"
)

// mcpPeer is one MCP client socket. Its fields are guarded by Server.mu.
type mcpPeer struct {
	sock     *socket
	authed   bool
	userID   string
	clientID string
	conn     *connection
}

// connection joins one MCP client to one extension. Guarded by Server.mu.
type connection struct {
	id      string // "conn-<uuid>"
	mcp     *mcpPeer
	ext     *extPeer
	pending map[string]pending // by mapped id "<conn>:<id>"
	order   []string           // mapped ids, oldest first (legacy answers carry none)
	tabs    map[string]bool    // the tab this client works in (legacy events go there)
	// queue holds requests for a legacy extension while one is open:
	// its answers carry no id, so only one may be open at a time or
	// answers given out of order would cross.
	queue []json.RawMessage
}

// maxQueued bounds the requests one client may have waiting for a
// legacy extension, which answers one at a time.
const maxQueued = 256

// pending is a forwarded request awaiting the extension's answer.
type pending struct {
	raw json.RawMessage // the id as the MCP client sent it
	key string          // method, or forwardCDPCommand:<CDP method>
}

func (c *connection) add(mapped string, p pending) {
	c.pending[mapped] = p
	c.order = append(c.order, mapped)
}

func (c *connection) take(mapped string) (pending, bool) {
	p, ok := c.pending[mapped]
	if ok {
		delete(c.pending, mapped)
		for i, id := range c.order {
			if id == mapped {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
	return p, ok
}

func (c *connection) takeOldest() (pending, bool) {
	if len(c.order) == 0 {
		return pending{}, false
	}
	return c.take(c.order[0])
}

// learnTabLocked notes the tab a createTab or selectTab answer names as
// c's, and no longer anyone else's on that extension, so that a legacy
// extension's events for it reach c alone.
func (s *Server) learnTabLocked(c *connection, key string, data json.RawMessage) {
	if key != "createTab" && key != "selectTab" {
		return
	}
	var r struct {
		Result struct {
			TabID json.RawMessage `json:"tabId"`
			Tab   struct {
				ID json.RawMessage `json:"id"`
			} `json:"tab"`
		} `json:"result"`
	}
	if json.Unmarshal(data, &r) != nil {
		return
	}
	id := r.Result.Tab.ID
	if len(id) == 0 {
		id = r.Result.TabID
	}
	if len(id) == 0 {
		return
	}
	for _, o := range s.conns {
		if o.ext == c.ext {
			delete(o.tabs, string(id))
		}
	}
	c.tabs = map[string]bool{string(id): true}
}

// serveMCP runs the MCP side of one socket.
func (s *Server) serveMCP(k *socket) {
	me := &mcpPeer{sock: k}
	s.mu.Lock()
	s.mcps[me] = struct{}{}
	s.mu.Unlock()
	defer s.mcpGone(me)
	for {
		m, data, err := s.read(k)
		if errors.Is(err, errBadJSON) {
			_ = k.Send(rpcwire.ErrorResponse(nil, codeParseError, "Parse error"))
			continue
		}
		if err != nil {
			return
		}
		if m.Method == "" || !m.HasID() {
			continue // MCP clients only ask; their notifications mean nothing here
		}
		s.mu.Lock()
		authed := me.authed
		s.mu.Unlock()
		switch {
		case m.Method == "mcp_handshake":
			if !s.handshake(me, m) {
				_ = k.WS.Close(websocket.StatusPolicyViolation, "Authentication failed")
				return
			}
		case !authed:
			_ = k.Send(rpcwire.ErrorResponse(m.ID, codeServerError, "Not authenticated: send mcp_handshake first"))
		case m.Method == "list_extensions":
			s.mu.Lock()
			list := []map[string]any{}
			for _, e := range s.extensionsLocked(me.userID) {
				list = append(list, map[string]any{"id": e.ID, "name": e.Name, "connected": true})
			}
			s.mu.Unlock()
			_ = k.Send(rpcwire.Response(m.ID, map[string]any{"extensions": list}))
		case m.Method == "connect":
			s.connect(me, m)
		case m.Method == "disconnect":
			s.disconnect(me, "MCP client disconnected")
			_ = k.Send(rpcwire.Response(m.ID, map[string]any{"disconnected": true}))
		default:
			s.forward(me, m, data)
		}
	}
}

// handshake answers mcp_handshake and reports whether the client may go
// on. In local mode no token is needed.
func (s *Server) handshake(me *mcpPeer, m message) bool {
	var p credentials
	_ = json.Unmarshal(m.Params, &p)
	userID := LocalUser
	if s.opts.Authenticate != nil {
		var err error
		if userID, err = s.opts.Authenticate(p.token()); err != nil {
			msg := "Authentication failed: Invalid token"
			if strings.Contains(err.Error(), "expired") {
				msg = "Authentication failed: Invalid token (token expired)"
			}
			_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeServerError, msg))
			return false
		}
	}
	if p.ClientID == "" {
		p.ClientID = newUUID()
	}
	s.mu.Lock()
	me.authed, me.userID, me.clientID = true, userID, p.ClientID
	s.mu.Unlock()
	_ = me.sock.Send(rpcwire.Response(m.ID, map[string]any{
		"authenticated": true,
		"user_id":       userID,
		"mcp_client_id": "mcp-" + p.ClientID,
	}))
	// At once, not at the next tick: a one-shot client wants to know now
	// how many MCP clients share the relay.
	_ = me.sock.Send(rpcwire.Notification("status", s.clientStatus(me, time.Now())))
	return true
}

// connect joins me to the extension the request names.
func (s *Server) connect(me *mcpPeer, m message) {
	var p struct {
		ExtensionID  string `json:"extension_id"`
		ExtensionID2 string `json:"extensionId"` // the spec's first spelling
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.ExtensionID == "" {
		p.ExtensionID = p.ExtensionID2
	}
	s.mu.Lock()
	if me.conn != nil {
		s.mu.Unlock()
		_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeAlreadyConnected, "MCP client already connected to an extension"))
		return
	}
	e := s.exts[p.ExtensionID]
	if e == nil || e.userID != me.userID {
		s.mu.Unlock()
		_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeServerError, "Extension not found or not accessible"))
		return
	}
	c := &connection{id: "conn-" + newUUID(), mcp: me, ext: e, pending: map[string]pending{}, tabs: map[string]bool{}}
	s.conns[c.id] = c
	me.conn = c
	s.mu.Unlock()
	_ = me.sock.Send(rpcwire.Response(m.ID, map[string]any{
		"connection_id":  c.id,
		"extension_id":   e.id,
		"extension_name": e.name,
	}))
}

// disconnect ends me's connection, if any, and tells the extension, which
// then lets go of that client's tab.
func (s *Server) disconnect(me *mcpPeer, reason string) {
	s.mu.Lock()
	c := me.conn
	if c != nil {
		delete(s.conns, c.id)
		me.conn = nil
	}
	s.mu.Unlock()
	if c == nil {
		return
	}
	params, _ := json.Marshal(map[string]string{"connection_id": c.id, "reason": reason})
	msg := rpcwire.Message{Message: jsonrpc.Message{JSONRPC: jsonrpc.Version, Method: "disconnected", Params: params}}
	if c.ext.dialect == dialectLegacy {
		msg.ConnectionID = c.id
	}
	_ = c.ext.sock.Send(msg)
}

// mcpGone forgets an MCP client whose socket closed.
func (s *Server) mcpGone(me *mcpPeer) {
	s.disconnect(me, "MCP client disconnected")
	s.mu.Lock()
	delete(s.mcps, me)
	s.mu.Unlock()
}

// forward passes a request to me's extension under a mapped id (and, for
// a legacy extension, its connectionId).
func (s *Server) forward(me *mcpPeer, m message, data json.RawMessage) {
	id := jsonrpc.IDKey(m.ID)
	if strings.HasPrefix(id, "proxy:") || strings.HasPrefix(id, "ext:") {
		_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeInvalidRequest, "Invalid Request: ids starting with proxy: or ext: are reserved"))
		return
	}
	key := m.Method
	if m.Method == "forwardCDPCommand" {
		var p struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(m.Params, &p)
		key += ":" + p.Method
	}
	var delay time.Duration
	if s.opts.Delay != nil {
		delay = s.opts.Delay(key)
	}
	s.mu.Lock()
	c := me.conn
	if c == nil {
		s.mu.Unlock()
		_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeServerError, "Not connected to an extension"))
		return
	}
	mapped := c.id + ":" + id
	set := map[string]json.RawMessage{}
	set["id"], _ = json.Marshal(mapped)
	var drop []string
	legacy := c.ext.dialect == dialectLegacy
	if legacy {
		set["connectionId"], _ = json.Marshal(c.id)
	} else {
		drop = append(drop, "connectionId")
	}
	out, err := rewrite(data, set, drop...)
	if err != nil {
		s.mu.Unlock()
		return
	}
	if legacy && len(c.queue) >= maxQueued {
		s.mu.Unlock()
		_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeServerError, fmt.Sprintf("%d requests already wait for the browser (this browser extension answers one at a time): try again later", maxQueued)))
		return
	}
	c.add(mapped, pending{raw: m.ID, key: key})
	if legacy && len(c.order) > 1 {
		c.queue = append(c.queue, out) // sent when the open one is answered
		s.mu.Unlock()
		return
	}
	to := c.ext.sock
	if delay > 0 {
		s.wg.Add(1) // this handler holds the count above zero
	}
	s.mu.Unlock()

	if delay <= 0 {
		_ = to.Send(out)
		return
	}
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			_ = to.Send(out)
		case <-me.sock.Ctx.Done():
		}
	}()
}
