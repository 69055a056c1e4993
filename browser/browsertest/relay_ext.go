package browsertest

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// extPeer is an authenticated extension. Its fields do not change.
type extPeer struct {
	sock     *socket
	id       string
	name     string
	userID   string
	clientID string
	seq      int
}

// serveExtension runs the extension side of one socket: ask for
// credentials, then route what the extension sends.
func (r *Relay) serveExtension(s *socket) {
	auth := map[string]any{"jsonrpc": "2.0", "id": "proxy:1", "method": "authenticate", "params": map[string]any{}}
	if err := s.send(auth); err != nil {
		return
	}
	var me *extPeer
	defer func() {
		if me != nil {
			r.extensionGone(me)
		}
	}()
	for {
		m, data, err := r.read(s)
		if errors.Is(err, errBadJSON) {
			continue
		}
		if err != nil {
			return
		}
		if me != nil {
			r.fromExtension(me, m, data)
			continue
		}
		// Until it has authenticated, only the answer to proxy:1 counts.
		if m.Method != "" || idString(m.ID) != "proxy:1" {
			continue
		}
		var reason string
		if me, reason = r.authenticateExtension(s, m); me == nil {
			_ = s.c.Close(websocket.StatusPolicyViolation, reason)
			return
		}
	}
}

// authenticateExtension checks the answer to authenticate and registers
// the extension, or says why not.
func (r *Relay) authenticateExtension(s *socket, m message) (*extPeer, string) {
	if len(m.Error) > 0 || len(m.Result) == 0 {
		return nil, "Authentication failed: no credentials"
	}
	var res struct {
		Name         string `json:"name"`
		AccessToken  string `json:"access_token"`
		AccessToken2 string `json:"accessToken"`
		ClientID     string `json:"client_id"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.Name == "" {
		return nil, "Authentication failed: name and access_token required"
	}
	tok := res.AccessToken
	if tok == "" {
		tok = res.AccessToken2
	}
	userID, err := verifyHS256(r.secret, tok, time.Now())
	if err != nil {
		return nil, "Authentication failed: " + err.Error()
	}

	r.mu.Lock()
	id := ""
	if res.ClientID != "" {
		id = r.extIDs[res.ClientID]
	}
	if id == "" {
		id = "ext-" + newUUID()
		if res.ClientID != "" {
			r.extIDs[res.ClientID] = id
		}
	}
	old := r.exts[id]
	r.seq++
	me := &extPeer{sock: s, id: id, name: res.Name, userID: userID, clientID: res.ClientID, seq: r.seq}
	r.exts[id] = me
	r.changedLocked()
	r.mu.Unlock()
	if old != nil { // the same browser again: the new socket replaces the old
		_ = old.sock.c.CloseNow()
	}

	params := map[string]any{"user_id": userID, "extension_id": id}
	if res.ClientID != "" {
		params["client_id"] = res.ClientID
	}
	_ = s.send(notification("authenticated", params))
	return me, ""
}

// fromExtension routes one message from an authenticated extension.
func (r *Relay) fromExtension(me *extPeer, m message, data json.RawMessage) {
	switch {
	case m.Method != "" && !m.hasID(): // a notification: to its MCP clients
		r.mu.Lock()
		var to []*socket
		for _, c := range r.conns {
			if c.ext == me {
				to = append(to, c.mcp.sock)
			}
		}
		r.mu.Unlock()
		for _, s := range to {
			_ = s.send(data)
		}
	case m.Method != "": // extensions do not ask the relay anything
		_ = me.sock.send(errorResponse(m.ID, -32601, "Method not found: "+m.Method))
	case m.hasID():
		r.routeResponse(me, m, data)
	}
}

// routeResponse sends a response to the MCP client whose request it
// answers, with that request's own id. Responses to proxy: requests are
// the relay's; the rest (unknown connection, unknown id) are dropped.
func (r *Relay) routeResponse(me *extPeer, m message, data json.RawMessage) {
	id := idString(m.ID)
	connID, _, ok := strings.Cut(id, ":")
	if !ok || strings.HasPrefix(id, "proxy:") {
		return
	}
	r.mu.Lock()
	c := r.conns[connID]
	if c == nil || c.ext != me {
		r.mu.Unlock()
		return
	}
	p, ok := c.pending[id]
	delete(c.pending, id)
	to := c.mcp.sock
	r.mu.Unlock()
	if !ok || (r.opts.DropResponse != nil && r.opts.DropResponse(p.key)) {
		return
	}
	out, err := withID(data, p.raw)
	if err != nil {
		return
	}
	_ = to.send(out)
}

// extensionGone forgets an extension whose socket closed and tells each
// MCP client connected to it. Their pending requests get no answer.
func (r *Relay) extensionGone(me *extPeer) {
	r.mu.Lock()
	if r.exts[me.id] == me {
		delete(r.exts, me.id)
		r.changedLocked()
	}
	var gone []*connection
	for id, c := range r.conns {
		if c.ext == me {
			gone = append(gone, c)
			delete(r.conns, id)
			if c.mcp.conn == c {
				c.mcp.conn = nil
			}
		}
	}
	r.mu.Unlock()
	for _, c := range gone {
		_ = c.mcp.sock.send(notification("disconnected", map[string]any{
			"connection_id": c.id,
			"reason":        "Extension closed",
		}))
	}
}
