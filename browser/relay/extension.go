package relay

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"
	"github.com/mcpx/mcpx/jsonrpc"

	"github.com/coder/websocket"
)

// Dialects an extension may speak.
const (
	dialect10     = "1.0"    // MCP Proxy Protocol 1.0: passive, answers authenticate, JSON-RPC ids
	dialectLegacy = "legacy" // before 1.0: opens with extension_handshake, routes by connectionId
)

// extPeer is an authenticated extension. Its fields do not change.
type extPeer struct {
	sock     *socket
	id       string
	name     string
	userID   string
	clientID string
	dialect  string
	seq      int
}

// serveExtension runs the extension side of one socket: ask for
// credentials (a legacy extension introduces itself instead), then route
// what the extension sends.
func (s *Server) serveExtension(k *socket) {
	auth := jsonrpc.AppendRequest(nil, json.RawMessage(`"proxy:1"`), "authenticate", json.RawMessage(`{}`))
	if err := k.Send(json.RawMessage(auth)); err != nil {
		return
	}
	var me *extPeer
	defer func() {
		if me != nil {
			s.extensionGone(me)
		}
	}()
	for {
		m, data, err := s.read(k)
		if errors.Is(err, errBadJSON) {
			continue
		}
		if err != nil {
			return
		}
		if me != nil {
			s.fromExtension(me, m, data)
			continue
		}
		var reason string
		switch {
		case m.Method == "extension_handshake":
			me, reason = s.handshakeLegacy(k, m)
		case m.Method == "" && jsonrpc.IDKey(m.ID) == "proxy:1":
			me, reason = s.authenticateExtension(k, m)
		default:
			continue // until it has authenticated, nothing else counts
		}
		if me == nil {
			s.logger.Warn("browser extension refused", "why", reason)
			_ = k.WS.Close(websocket.StatusPolicyViolation, reason)
			return
		}
	}
}

// credentials are what an extension presents: its name, its stable
// client id, and a token when the relay asks for one.
type credentials struct {
	Name         string `json:"name"`
	AccessToken  string `json:"access_token"`
	AccessToken2 string `json:"accessToken"`
	ClientID     string `json:"client_id"`
}

func (c credentials) token() string {
	if c.AccessToken != "" {
		return c.AccessToken
	}
	return c.AccessToken2
}

// authenticateExtension checks the answer to authenticate and registers
// the extension, or says why not.
func (s *Server) authenticateExtension(k *socket, m message) (*extPeer, string) {
	if len(m.Error) > 0 || len(m.Result) == 0 {
		return nil, "Authentication failed: no credentials"
	}
	var cr credentials
	if err := json.Unmarshal(m.Result, &cr); err != nil || cr.Name == "" {
		return nil, "Authentication failed: name required"
	}
	userID, why := s.user(cr.token())
	if why != "" {
		return nil, why
	}
	me := s.register(k, cr, userID, dialect10)
	params := map[string]any{"user_id": userID, "extension_id": me.id}
	if cr.ClientID != "" {
		params["client_id"] = cr.ClientID
	}
	_ = k.Send(rpcwire.Notification("authenticated", params))
	return me, ""
}

// handshakeLegacy registers a legacy extension, which introduces
// itself with extension_handshake {name} and wants no answer.
func (s *Server) handshakeLegacy(k *socket, m message) (*extPeer, string) {
	var cr credentials
	_ = json.Unmarshal(m.Params, &cr)
	if cr.Name == "" {
		cr.Name = "Browser"
	}
	userID, why := s.user(cr.token())
	if why != "" {
		return nil, why
	}
	return s.register(k, cr, userID, dialectLegacy), ""
}

// user checks a token: anyone is LocalUser in local mode.
func (s *Server) user(token string) (string, string) {
	if s.opts.Authenticate == nil {
		return LocalUser, ""
	}
	userID, err := s.opts.Authenticate(token)
	if err != nil {
		return "", "Authentication failed: " + err.Error()
	}
	return userID, ""
}

// register records an authenticated extension. The same browser (by
// client_id) keeps its id, and its new socket replaces the old one.
func (s *Server) register(k *socket, cr credentials, userID, dialect string) *extPeer {
	s.mu.Lock()
	id := ""
	if cr.ClientID != "" {
		id = s.extIDs[cr.ClientID]
	}
	if id == "" {
		id = "ext-" + newUUID()
		if cr.ClientID != "" {
			s.extIDs[cr.ClientID] = id
		}
	}
	old := s.exts[id]
	s.seq++
	me := &extPeer{sock: k, id: id, name: cr.Name, userID: userID, clientID: cr.ClientID, dialect: dialect, seq: s.seq}
	s.exts[id] = me
	s.changedLocked()
	// The same browser on a new socket (the real extension sometimes
	// opens one while its old one is still up): its MCP clients keep
	// their connections, and so their tabs, on the new socket. Only the
	// requests sent on the old one are lost, and they fail now rather
	// than never.
	type lost struct {
		to  *socket
		raw json.RawMessage
	}
	var failed []lost
	if old != nil {
		for _, c := range s.conns {
			if c.ext != old {
				continue
			}
			c.ext = me
			for _, mapped := range c.order {
				failed = append(failed, lost{c.mcp.sock, c.pending[mapped].raw})
			}
			c.pending, c.order = map[string]pending{}, nil
		}
	}
	s.mu.Unlock()
	for _, f := range failed {
		_ = f.to.Send(rpcwire.ErrorResponse(f.raw, codeServerError, "the browser extension reconnected and lost this request; send it again"))
	}
	if old != nil {
		_ = old.sock.WS.CloseNow()
	}
	s.logger.Info("browser extension connected", "name", cr.Name, "dialect", dialect)
	return me
}

// fromExtension routes one message from an authenticated extension.
func (s *Server) fromExtension(me *extPeer, m message, data json.RawMessage) {
	if me.dialect == dialectLegacy {
		s.fromLegacy(me, m, data)
		return
	}
	switch {
	case m.Method != "" && !m.HasID(): // a notification: to its MCP clients
		for _, to := range s.clientsOf(me, "") {
			_ = to.Send(data)
		}
	case m.Method != "": // extensions do not ask the relay anything
		_ = me.sock.Send(rpcwire.ErrorResponse(m.ID, codeMethodNotFound, "Method not found: "+m.Method))
	case m.HasID():
		id := jsonrpc.IDKey(m.ID)
		connID, _, ok := strings.Cut(id, ":")
		if !ok || strings.HasPrefix(id, "proxy:") {
			return
		}
		s.mu.Lock()
		c := s.conns[connID]
		var p pending
		if c != nil && c.ext == me {
			p, ok = c.take(id)
		}
		s.mu.Unlock()
		if c == nil || !ok {
			return // an unknown connection, or an answer nobody waits for
		}
		s.answer(c, p, data)
	}
}

// answer sends an extension's answer to the request it answers, with that
// request's own id.
func (s *Server) answer(c *connection, p pending, data json.RawMessage) {
	if s.opts.DropResponse != nil && s.opts.DropResponse(p.key) {
		return
	}
	s.mu.Lock()
	s.learnTabLocked(c, p.key, data)
	s.mu.Unlock()
	out, err := rewrite(data, map[string]json.RawMessage{"id": p.raw}, "connectionId")
	if err != nil {
		return
	}
	_ = c.mcp.sock.Send(out)
}

// fromLegacy routes a message of a legacy extension: events by
// connectionId or tabId, answers (no JSON-RPC id needed) to the one
// request open on their connection, which then lets the next one go.
func (s *Server) fromLegacy(me *extPeer, m message, data json.RawMessage) {
	if m.Method != "" {
		var p struct {
			TabID json.RawMessage `json:"tabId"`
		}
		_ = json.Unmarshal(m.Params, &p)
		out, err := rewrite(data, map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`)}, "connectionId", "id")
		if err != nil {
			return
		}
		for _, to := range s.clientsOf(me, m.ConnectionID, string(p.TabID)) {
			_ = to.Send(out)
		}
		return
	}
	s.mu.Lock()
	c := s.conns[m.ConnectionID]
	if m.ConnectionID == "" { // an echoed mapped id names it
		connID, _, _ := strings.Cut(jsonrpc.IDKey(m.ID), ":")
		c = s.conns[connID]
	}
	if c == nil && m.ConnectionID == "" { // the only connection with a request open
		for _, cand := range s.conns {
			if cand.ext == me && len(cand.order) > 0 {
				if c != nil {
					c = nil
					break
				}
				c = cand
			}
		}
	}
	var p pending
	var next json.RawMessage
	ok := false
	if c != nil && c.ext == me {
		p, ok = c.take(jsonrpc.IDKey(m.ID))
		if !ok {
			p, ok = c.takeOldest()
		}
		if ok && len(c.queue) > 0 {
			next, c.queue = c.queue[0], c.queue[1:]
		}
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	s.answer(c, p, replyLegacy(m, data))
	if next != nil {
		_ = me.sock.Send(next)
	}
}

// replyLegacy turns a legacy answer into a JSON-RPC response body: its
// result or error as they are (a bare error string becomes {code,
// message}), or else the whole object as the result.
func replyLegacy(m message, data json.RawMessage) json.RawMessage {
	// The id is null here: answer puts the request's in its place.
	reply := jsonrpc.Message{JSONRPC: jsonrpc.Version, ID: json.RawMessage("null")}
	switch {
	case m.HasError():
		reply.Error = m.Error
		var msg string
		if json.Unmarshal(m.Error, &msg) == nil {
			reply.Error, _ = json.Marshal(&jsonrpc.Error{Code: codeServerError, Message: msg})
		}
	case len(m.Result) > 0:
		reply.Result = m.Result
	default:
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(data, &obj)
		delete(obj, "connectionId")
		delete(obj, "id")
		reply.Result, _ = json.Marshal(obj)
	}
	out, _ := json.Marshal(reply)
	return out
}

// clientsOf returns the MCP client sockets connected to me: the one of
// connID when given, else those holding tabID when given, else all.
func (s *Server) clientsOf(me *extPeer, connID string, tabID ...string) []*socket {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all, byTab []*socket
	for id, c := range s.conns {
		if c.ext != me {
			continue
		}
		if connID != "" {
			if id == connID {
				return []*socket{c.mcp.sock}
			}
			continue
		}
		all = append(all, c.mcp.sock)
		if len(tabID) > 0 && tabID[0] != "" && c.tabs[tabID[0]] {
			byTab = append(byTab, c.mcp.sock)
		}
	}
	if len(byTab) > 0 {
		return byTab
	}
	return all
}

// extensionGone forgets an extension whose socket closed and tells each
// MCP client connected to it. Their pending requests get no answer: the
// client fails them on "disconnected".
func (s *Server) extensionGone(me *extPeer) {
	s.mu.Lock()
	if s.exts[me.id] == me {
		delete(s.exts, me.id)
		s.changedLocked()
	}
	var gone []*connection
	for id, c := range s.conns {
		if c.ext == me {
			gone = append(gone, c)
			delete(s.conns, id)
			if c.mcp.conn == c {
				c.mcp.conn = nil
			}
		}
	}
	s.mu.Unlock()
	s.logger.Info("browser extension disconnected", "name", me.name)
	for _, c := range gone {
		_ = c.mcp.sock.Send(rpcwire.Notification("disconnected", map[string]any{
			"connection_id": c.id,
			"reason":        "Extension closed",
		}))
	}
}
