package httpserve

import (
	"bytes"
	"net/http"

	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/jsonrpc"
)

// The legacy HTTP+SSE transport (protocol 2024-11-05), for older clients:
// GET /sse opens a session and its one stream, whose first event names
// the endpoint to POST messages to; POST /messages?sessionId=... carries
// them and is answered 202, every reply riding the stream. The session
// ends with the stream.

func (h *httpHandler) sseStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed: GET /sse opens a session")
		return
	}
	s := h.startSession(true, profileOf(r), principal.Of(r.Context()))
	if s == nil {
		httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "mcpx is shutting down")
		return
	}
	defer s.end()
	// The session's id rides a header too, as on /mcp: a load balancer
	// stores it from the response and sends /messages?sessionId= back to
	// this replica (docs/serve-http.md, "Behind a load balancer").
	w.Header().Set(headerSession, s.id)
	// Relative, so that it resolves under whatever path a reverse proxy
	// mounts /sse at.
	endpoint := "event: endpoint\ndata: messages?sessionId=" + s.id + "\n\n"
	s.serveSSE(w, r, s.standalone, -1, endpoint)
}

func (h *httpHandler) sseMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed")
		return
	}
	s := h.lookup(r.URL.Query().Get("sessionId"))
	if s == nil || !s.legacy || s.principal != principal.Of(r.Context()) {
		httpError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "session not found: open GET /sse first")
		return
	}
	data, hd := bodyOf(r) // read whole within the limits by the body gate (body.go)
	msgs, ok := h.readMessages(w, bytes.TrimSpace(data))
	if !ok {
		return
	}
	if h.c.Tracing() {
		traceHeader(msgs, r.Header)
	}
	s.touch()
	// The calls run after this answers 202: the session holds the body
	// until each is answered.
	s.mu.Lock()
	for _, p := range msgs {
		if p.isRequest() {
			s.holdBody(p.m.ID, hd)
		}
	}
	s.mu.Unlock()
	if s.send(msgs) != nil {
		httpError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "session not found: it ended")
		return
	}
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte("Accepted"))
}
