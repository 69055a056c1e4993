package httpserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/telemetry"
)

// Headers of the streamable HTTP transport.
const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
)

// protocolVersions are the MCP-Protocol-Version values accepted; a request
// without the header is taken as 2025-03-26, as the spec says.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// streamable serves /mcp: POST carries client messages, GET opens (or
// resumes) the standalone stream, DELETE ends the session.
func (h *httpHandler) streamable(w http.ResponseWriter, r *http.Request) {
	// A POST of another version is the modern era's (post), which
	// answers a version it does not serve itself.
	if v := r.Header.Get(headerProtocol); v != "" && !slices.Contains(protocolVersions, v) && r.Method != http.MethodPost {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "unsupported MCP-Protocol-Version "+quote(v)+" (supported: "+strings.Join(protocolVersions, ", ")+")")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		s := h.session(w, r)
		if s == nil {
			return
		}
		s.end()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, http.StatusMethodNotAllowed, jsonrpc.CodeInvalidRequest, "method not allowed")
	}
}

// session finds the request's session, answering 400 or 404 when there
// is none.
func (h *httpHandler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get(headerSession)
	if id == "" {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "bad request: no "+headerSession+" header (begin with initialize)")
		return nil
	}
	s := h.lookup(id)
	if s == nil || s.legacy || s.view != profileOf(r) || s.principal != principal.Of(r.Context()) {
		httpError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "session not found: it ended or expired; initialize a new one")
		return nil
	}
	return s
}

// httpError answers with a JSON-RPC error body, as the SDKs expect.
func httpError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	w.Write(b)
}

// posted is one message of a POST body, decoded once (core.ParseMessage),
// with the error that decoding found, which the session core answers.
type posted struct {
	m   core.Message
	err error
}

// isRequest reports whether p is a request: a method and an id.
func (p posted) isRequest() bool {
	return p.err == nil && p.m.Method != "" && len(p.m.ID) > 0 && string(p.m.ID) != "null"
}

// readMessages decodes a POST body of at most maxMessageBytes: one
// JSON-RPC message, or a batch (an array) of them. A body that is not
// JSON, or a member that is not an object, is answered 400 here. The
// messages alias data: a batch is split in place, not copied.
func (h *httpHandler) readMessages(w http.ResponseWriter, data []byte) ([]posted, bool) {
	var batch [][]byte
	if len(data) > 0 && data[0] == '[' {
		err := rawjson.Elements(data, func(v []byte) bool { batch = append(batch, v); return true })
		if err != nil || len(batch) == 0 {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: a batch must be a non-empty JSON array of messages")
			return nil, false
		}
	} else {
		batch = [][]byte{data}
	}
	out := make([]posted, 0, len(batch))
	for _, raw := range batch {
		// Not compacted: what passes on to an upstream over stdio is
		// made one line there (jsonrpc.OneLine).
		raw = bytes.TrimSpace(raw)
		m, err := core.ParseMessage(raw)
		var syntax *json.SyntaxError
		if len(raw) == 0 || raw[0] != '{' || errors.As(err, &syntax) {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "parse error: the body must be a JSON-RPC message object")
			return nil, false
		}
		out = append(out, posted{m, err})
	}
	return out, true
}

func (h *httpHandler) post(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		httpError(w, http.StatusUnsupportedMediaType, jsonrpc.CodeInvalidRequest, "Content-Type must be application/json")
		return
	}
	accept := strings.ToLower(strings.Join(r.Header.Values("Accept"), ","))
	sse := strings.Contains(accept, "text/event-stream")
	if !sse && !strings.Contains(accept, "application/json") && !strings.Contains(accept, "*/*") && accept != "" {
		httpError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest, "Accept must include application/json and text/event-stream")
		return
	}
	data, hd := bodyOf(r) // read whole within the limits by the body gate (body.go)
	data = bytes.TrimSpace(data)
	if h.modernBatch(w, r, data) {
		return
	}
	msgs, ok := h.readMessages(w, data)
	if !ok {
		return
	}
	if len(msgs) == 1 && h.servedModern(w, r, msgs[0]) {
		return
	}
	if h.c.Tracing() {
		traceHeader(msgs, r.Header)
	}
	var requests, initialize int
	for _, p := range msgs {
		if p.isRequest() {
			requests++
			if p.m.Method == "initialize" {
				initialize++
			}
		}
	}
	var s *httpSession
	if r.Header.Get(headerSession) == "" && initialize > 0 {
		if len(msgs) > 1 {
			httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "initialize must be sent alone")
			return
		}
		if s = h.startSession(false, profileOf(r), principal.Of(r.Context())); s == nil {
			httpError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "mcpx is shutting down")
			return
		}
		w.Header().Set(headerSession, s.id)
	} else if s = h.session(w, r); s == nil {
		return
	}
	s.touch()
	if requests == 0 {
		// Notifications and answers: nothing comes back on this request.
		if s.send(msgs) != nil {
			httpError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "session not found: it ended")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.mu.Lock()
	st := s.newStream(!sse)
	for _, p := range msgs {
		if !p.isRequest() {
			continue
		}
		st.pending++
		s.byID[string(p.m.ID)] = st
		s.holdBody(p.m.ID, hd)
	}
	if sse {
		s.posts = append(s.posts, st)
	}
	s.mu.Unlock()
	if s.send(msgs) != nil {
		httpError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "session not found: it ended")
		return
	}
	if sse {
		s.serveSSE(w, r, st, -1, "")
	} else {
		s.serveJSON(w, r, st)
	}
	if st.isFinished() && st.drained() {
		s.mu.Lock()
		delete(s.streams, st.id)
		s.mu.Unlock()
	}
}

// modernBatch answers a batch POSTed under a modern protocol version:
// revision 2026-07-28 has no batches. It reports false, having written
// nothing, for any other body.
func (h *httpHandler) modernBatch(w http.ResponseWriter, r *http.Request, data []byte) bool {
	if len(data) == 0 || data[0] != '[' || r.Header.Get(headerSession) != "" && !isModernHTTP(r.Header, nil) {
		return false
	}
	if v := r.Header.Get(headerProtocol); v != "" && !core.IsLegacyVersion(v) {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not part of revision "+v)
		return true
	}
	return false
}

// servedModern answers a POST of the modern era (revision 2026-07-28)
// through the session core, statelessly: no session, no Mcp-Session-Id,
// and the message as readMessages decoded it. It reports false, having
// written nothing, for a legacy POST.
func (h *httpHandler) servedModern(w http.ResponseWriter, r *http.Request, p posted) bool {
	if r.Header.Get(headerSession) != "" && !isModernHTTP(r.Header, nil) {
		return false // a legacy session's
	}
	m := p.m
	if p.err != nil || !isModernHTTP(r.Header, m.Params) {
		return false // the legacy path answers what does not parse
	}
	srv, err := h.modernCore(profileOf(r))
	if err != nil {
		httpError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, err.Error())
		return true
	}
	if m.JSONRPC != "2.0" {
		httpError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "invalid request: jsonrpc must be \"2.0\"")
		return true
	}
	serveModern(srv, w, r, m.ID, m.Method, m.Params)
	return true
}

// serveJSON answers a POST with plain JSON once every request in it is
// answered: one object, or an array for a batch.
func (s *httpSession) serveJSON(w http.ResponseWriter, r *http.Request, st *stream) {
	gen := st.attach(-1)
	defer st.detach(gen)
	var out [][]byte
	for {
		_, msg, wait, ok := st.next(gen)
		if !ok {
			break
		}
		if wait == nil {
			out = append(out, msg)
			continue
		}
		select {
		case <-wait:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	switch len(out) {
	case 0:
		httpError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, "the session ended before answering")
	case 1:
		w.Write(out[0])
	default:
		w.Write(append(append([]byte("["), bytes.Join(out, []byte(","))...), ']'))
	}
}

// get opens the standalone stream, or resumes any stream of the session
// after the event named by Last-Event-ID.
func (h *httpHandler) get(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(strings.ToLower(r.Header.Get("Accept")), "text/event-stream") {
		httpError(w, http.StatusNotAcceptable, jsonrpc.CodeInvalidRequest, "Accept must include text/event-stream")
		return
	}
	s := h.session(w, r)
	if s == nil {
		return
	}
	s.touch()
	st, last := s.standalone, -1
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		sid, seq, _ := strings.Cut(id, "-")
		s.mu.Lock()
		found := s.streams[sid]
		s.mu.Unlock()
		if n, err := strconv.Atoi(seq); err == nil && found != nil && !found.jsonOnly {
			st, last = found, n
		}
	}
	s.serveSSE(w, r, st, last, "")
}

// traceHeader puts the trace context of an HTTP request's traceparent
// (and tracestate) header into the _meta of each request in msgs that
// carries none of its own, so that the session core, which reads only
// the messages, continues the client's trace.
func traceHeader(msgs []posted, h http.Header) {
	tp := h.Get("Traceparent")
	if tp == "" {
		return
	}
	ts := h.Get("Tracestate")
	for i, p := range msgs {
		if !p.isRequest() || telemetry.HasMeta(p.m.Params) {
			continue // a notification or an answer: nothing to trace
		}
		msgs[i].m.Params = telemetry.SetMeta(p.m.Params, tp, ts)
	}
}
