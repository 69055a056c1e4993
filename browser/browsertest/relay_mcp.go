package browsertest

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// mcpPeer is one MCP client socket. Its fields are guarded by Relay.mu.
type mcpPeer struct {
	sock     *socket
	authed   bool
	userID   string
	clientID string
	conn     *connection
}

// connection joins one MCP client to one extension.
type connection struct {
	id      string // "conn-<uuid>"
	mcp     *mcpPeer
	ext     *extPeer
	pending map[string]pending // by mapped id "<conn>:<id>"
}

// pending is a forwarded request awaiting the extension's answer.
type pending struct {
	raw json.RawMessage // the id as the MCP client sent it
	key string          // method, or forwardCDPCommand:<CDP method>
}

// Error codes of the protocol.
const (
	codeServerError      = -32000
	codeAlreadyConnected = -32001
	codeParseError       = -32700
	codeInvalidRequest   = -32600
)

// serveMCP runs the MCP side of one socket.
func (r *Relay) serveMCP(s *socket) {
	me := &mcpPeer{sock: s}
	r.mu.Lock()
	r.mcps[me] = struct{}{}
	r.mu.Unlock()
	defer r.mcpGone(me)
	for {
		m, data, err := r.read(s)
		if errors.Is(err, errBadJSON) {
			_ = s.send(errorResponse(nil, codeParseError, "Parse error"))
			continue
		}
		if err != nil {
			return
		}
		if m.Method == "" || !m.hasID() {
			continue // MCP clients only ask; their notifications mean nothing here
		}
		r.mu.Lock()
		authed := me.authed
		r.mu.Unlock()
		switch {
		case m.Method == "mcp_handshake":
			if !r.handshake(me, m) {
				_ = s.c.Close(websocket.StatusPolicyViolation, "Authentication failed")
				return
			}
		case !authed:
			_ = s.send(errorResponse(m.ID, codeServerError, "Not authenticated: send mcp_handshake first"))
		case m.Method == "list_extensions":
			r.mu.Lock()
			list := []map[string]any{}
			for _, e := range r.extensionsLocked(me.userID) {
				list = append(list, map[string]any{"id": e.ID, "name": e.Name, "connected": true})
			}
			r.mu.Unlock()
			_ = s.send(response(m.ID, map[string]any{"extensions": list}))
		case m.Method == "connect":
			r.connect(me, m)
		case m.Method == "disconnect":
			r.disconnect(me, "MCP client disconnected")
			_ = s.send(response(m.ID, map[string]any{"disconnected": true}))
		default:
			r.forward(me, m, data)
		}
	}
}

// handshake answers mcp_handshake and reports whether the token was good.
func (r *Relay) handshake(me *mcpPeer, m message) bool {
	var p struct {
		AccessToken  string `json:"access_token"`
		AccessToken2 string `json:"accessToken"`
		ClientID     string `json:"client_id"`
	}
	_ = json.Unmarshal(m.Params, &p)
	tok := p.AccessToken
	if tok == "" {
		tok = p.AccessToken2
	}
	userID, err := verifyHS256(r.secret, tok, time.Now())
	if err != nil {
		msg := "Authentication failed: Invalid token"
		if errors.Is(err, errTokenExpired) {
			msg = "Authentication failed: Invalid token (token expired)"
		}
		_ = me.sock.send(errorResponse(m.ID, codeServerError, msg))
		return false
	}
	if p.ClientID == "" {
		p.ClientID = newUUID()
	}
	r.mu.Lock()
	me.authed, me.userID, me.clientID = true, userID, p.ClientID
	r.mu.Unlock()
	_ = me.sock.send(response(m.ID, map[string]any{
		"authenticated": true,
		"user_id":       userID,
		"mcp_client_id": "mcp-" + p.ClientID,
	}))
	return true
}

// connect joins me to the extension the request names.
func (r *Relay) connect(me *mcpPeer, m message) {
	var p struct {
		ExtensionID  string `json:"extension_id"`
		ExtensionID2 string `json:"extensionId"` // the spec's first spelling
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.ExtensionID == "" {
		p.ExtensionID = p.ExtensionID2
	}
	r.mu.Lock()
	if me.conn != nil {
		r.mu.Unlock()
		_ = me.sock.send(errorResponse(m.ID, codeAlreadyConnected, "MCP client already connected to an extension"))
		return
	}
	e := r.exts[p.ExtensionID]
	if e == nil || e.userID != me.userID {
		r.mu.Unlock()
		_ = me.sock.send(errorResponse(m.ID, codeServerError, "Extension not found or not accessible"))
		return
	}
	c := &connection{id: "conn-" + newUUID(), mcp: me, ext: e, pending: map[string]pending{}}
	r.conns[c.id] = c
	me.conn = c
	r.mu.Unlock()
	_ = me.sock.send(response(m.ID, map[string]any{
		"connection_id":  c.id,
		"extension_id":   e.id,
		"extension_name": e.name,
	}))
}

// disconnect ends me's connection, if any, and tells the extension.
func (r *Relay) disconnect(me *mcpPeer, reason string) {
	r.mu.Lock()
	c := me.conn
	if c != nil {
		delete(r.conns, c.id)
		me.conn = nil
	}
	r.mu.Unlock()
	if c != nil {
		_ = c.ext.sock.send(notification("disconnected", map[string]any{
			"connection_id": c.id,
			"reason":        reason,
		}))
	}
}

// mcpGone forgets an MCP client whose socket closed.
func (r *Relay) mcpGone(me *mcpPeer) {
	r.disconnect(me, "MCP client disconnected")
	r.mu.Lock()
	delete(r.mcps, me)
	r.mu.Unlock()
}

// forward passes a request to me's extension under a mapped id.
func (r *Relay) forward(me *mcpPeer, m message, data json.RawMessage) {
	id := idString(m.ID)
	if strings.HasPrefix(id, "proxy:") || strings.HasPrefix(id, "ext:") {
		_ = me.sock.send(errorResponse(m.ID, codeInvalidRequest, "Invalid Request: ids starting with proxy: or ext: are reserved"))
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
	if r.opts.Delay != nil {
		delay = r.opts.Delay(key)
	}
	r.mu.Lock()
	c := me.conn
	if c == nil {
		r.mu.Unlock()
		_ = me.sock.send(errorResponse(m.ID, codeServerError, "Not connected to an extension"))
		return
	}
	mapped := c.id + ":" + id
	c.pending[mapped] = pending{raw: m.ID, key: key}
	to := c.ext.sock
	if delay > 0 {
		r.wg.Add(1) // this handler holds the count above zero
	}
	r.mu.Unlock()

	mappedID, _ := json.Marshal(mapped)
	out, err := withID(data, mappedID)
	if err != nil {
		return
	}
	if delay <= 0 {
		_ = to.send(out)
		return
	}
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
			_ = to.send(out)
		case <-me.sock.ctx.Done():
		}
	}()
}
