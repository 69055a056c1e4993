package httpserve

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpx/mcpx/aggregator/core"
	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/telemetry"
)

// This file is the HTTP transport of revision 2026-07-28: one POST, one
// request, answered by the server core (core.Server) as JSON or as an
// event stream.

// HTTP headers of revision 2026-07-28's streamable HTTP transport.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
)

// isModernHTTP reports whether a POST belongs to the modern era: its
// MCP-Protocol-Version header names no legacy revision, or its body's
// _meta carries a protocol version. A legacy client sends a legacy
// version, or no header and no such _meta.
func isModernHTTP(header http.Header, params json.RawMessage) bool {
	if v := header.Get(headerProtocolVersion); v != "" {
		return !core.IsLegacyVersion(v)
	}
	return core.HasModernMeta(params)
}

// serveModern answers one modern POST whose body was the single request
// (id, method, params) and already decoded, from s: the headers are
// checked against the body, then the answer is written as JSON, or as an
// event stream when notifications come ahead of it (progress, log
// messages, subscriptions/listen) and the client accepts one.
func serveModern(s *core.Server, w http.ResponseWriter, r *http.Request, id json.RawMessage, method string, params json.RawMessage) {
	if len(id) == 0 || string(id) == "null" {
		// A notification or an answer: the modern era has nothing a
		// client needs to tell a server outside a request (a request is
		// cancelled by closing its stream).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if e := checkHeaders(s, r.Header, method, params); e != nil {
		writeError(w, id, e)
		return
	}
	req, e := core.Decode(id, method, params)
	if e != nil {
		writeError(w, id, e)
		return
	}
	sw := &streamWriter{w: w, sse: acceptsSSE(r.Header)}
	if method == "subscriptions/listen" {
		sw.start() // the stream is the answer
	}
	// What comes ahead of the answer is written by this goroutine, not
	// by the upstream's reader that relays it: a client slow to read
	// holds up its own request only. Past notesQueue waiting, the rest
	// is dropped.
	notes := make(chan []byte, notesQueue)
	type answer struct {
		res json.RawMessage
		e   *core.Error
	}
	done := make(chan answer, 1)
	// The request's server span and duration, as a legacy session
	// records them: ended with the answer, or cancelled without one.
	ctx, span := s.Telemetry().StartRequest(r.Context(), method, params, "", id)
	answered := false
	defer func() {
		if !answered {
			span.End(telemetry.OutcomeCancelled, 0, "")
		}
	}()
	s.Serve(ctx, req, func(b []byte) {
		select {
		case notes <- b:
		default:
			s.Logger().Debug("a modern client is not reading its stream: notification dropped", "method", method)
		}
	}, func(res json.RawMessage, e *core.Error, _ bool) { done <- answer{res, e} })
	for {
		select {
		case b := <-notes:
			sw.notify(b)
		case a := <-done:
			for len(notes) > 0 {
				sw.notify(<-notes)
			}
			if a.res == nil && a.e == nil {
				return // subscriptions/listen ended: the client went away
			}
			answered = true
			if a.e != nil {
				span.End(telemetry.OutcomeError, a.e.Code, a.e.Message)
			} else {
				span.End(telemetry.ResultOutcome(method, a.res), 0, "")
			}
			sw.finish(id, a.res, a.e)
			return
		}
	}
}

// notesQueue is how many notifications of one request wait for a slow
// client before more are dropped.
const notesQueue = 256

// checkHeaders compares the headers a modern POST must carry with its
// body: HeaderMismatch (-32020) names what disagrees.
func checkHeaders(s *core.Server, h http.Header, method string, params json.RawMessage) *core.Error {
	version := h.Get(headerProtocolVersion)
	if version == "" {
		return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: the %s header is required with a request of revision %s", headerProtocolVersion, core.Modern)
	}
	if metaVersion := core.MetaVersion(params); metaVersion != "" && metaVersion != version {
		return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s %q does not match _meta %s %q", headerProtocolVersion, version, core.MetaVersionKey, metaVersion)
	}
	got := h.Get(headerMethod)
	if got == "" {
		return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: the %s header is required", headerMethod)
	}
	if got != method {
		return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s %q does not match the body's method %q", headerMethod, got, method)
	}
	var field string
	switch method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	default:
		return nil
	}
	raw, _ := rawjson.Get(params, field)
	body, _ := rawjson.String(raw)
	name := h.Get(headerName)
	if name == "" {
		return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: the %s header is required with %s", headerName, method)
	}
	if name != body {
		return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s %q does not match the body's %s %q", headerName, name, field, body)
	}
	if method == "tools/call" {
		if tool, ok := s.Tool(body); ok {
			return checkParamHeaders(h, tool, params)
		}
	}
	return nil
}

// headerBinding is a tool argument its schema marks with x-mcp-header:
// the client copies its value into the Mcp-Param-NAME header.
type headerBinding struct {
	path   []string
	header string
}

type schemaProperty struct {
	XMCPHeader string                    `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
}

// paramBindings lists a tool's x-mcp-header arguments.
func paramBindings(tool json.RawMessage) []headerBinding {
	var t struct {
		InputSchema schemaProperty `json:"inputSchema"`
	}
	if !strings.Contains(string(tool), "x-mcp-header") || json.Unmarshal(tool, &t) != nil {
		return nil
	}
	var out []headerBinding
	var walk func(props map[string]schemaProperty, prefix []string)
	walk = func(props map[string]schemaProperty, prefix []string) {
		for name, p := range props {
			path := append(append([]string(nil), prefix...), name)
			if p.XMCPHeader != "" {
				out = append(out, headerBinding{path, p.XMCPHeader})
			}
			walk(p.Properties, path)
		}
	}
	walk(t.InputSchema.Properties, nil)
	return out
}

// checkParamHeaders checks each Mcp-Param-* header of a tool's
// x-mcp-header arguments against the argument's value in the body.
func checkParamHeaders(h http.Header, tool, params json.RawMessage) *core.Error {
	bindings := paramBindings(tool)
	if len(bindings) == 0 {
		return nil
	}
	args, _ := rawjson.Get(params, "arguments")
	for _, b := range bindings {
		header := headerParamPrefix + b.header
		got := h.Get(header)
		value := lookup(args, b.path)
		if value == nil || string(value) == "null" {
			if got != "" {
				return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s is set but argument %s is absent", header, strings.Join(b.path, "."))
			}
			continue
		}
		want, ok := primitive(value)
		if !ok {
			return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: argument %s of %s must be a string, integer or boolean", strings.Join(b.path, "."), header)
		}
		if got == "" {
			return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s is required: argument %s is set", header, strings.Join(b.path, "."))
		}
		decoded, ok := decodeHeader(got)
		if !ok {
			return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s is not valid base64", header)
		}
		if !sameValue(decoded, want, value) {
			return jsonrpc.Errorf(core.CodeHeaderMismatch, "header mismatch: %s does not match argument %s", header, strings.Join(b.path, "."))
		}
	}
	return nil
}

// lookup returns the raw value at path in the object args, or nil.
func lookup(args json.RawMessage, path []string) json.RawMessage {
	cur := args
	for _, k := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil
		}
		cur, _ = rawjson.Get(cur, k)
	}
	return cur
}

// primitive renders a string, boolean or integer argument as its header
// value would be written.
func primitive(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// sameValue compares a decoded header with an argument: numbers by value.
func sameValue(header, want string, raw json.RawMessage) bool {
	if raw[0] != '"' && raw[0] != 't' && raw[0] != 'f' {
		f, err := strconv.ParseFloat(header, 64)
		return err == nil && strconv.FormatInt(int64(f), 10) == want && f == math.Trunc(f)
	}
	return header == want
}

// decodeHeader undoes the =?base64?...?= wrapping of a header value that
// is not plain visible ASCII.
func decodeHeader(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	return string(b), err == nil
}

// httpStatus is the status a modern error is answered with over HTTP, as
// the streamable HTTP transport of 2026-07-28 asks; 200 for the others,
// which ride in the body like any answer.
func httpStatus(e *core.Error) int {
	switch e.Code {
	case core.CodeMethodNotFound:
		return http.StatusNotFound
	case core.CodeInvalidParams, core.CodeUnsupportedProtocolVersion, core.CodeMissingClientCapability, core.CodeHeaderMismatch,
		core.CodeInvalidRequest, core.CodeParseError:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// response renders a JSON-RPC response carrying result or e.
func response(id json.RawMessage, result json.RawMessage, e *core.Error) []byte {
	if e != nil {
		return jsonrpc.AppendError(make([]byte, 0, len(id)+len(e.Message)+len(e.Data)+64), id, e)
	}
	return jsonrpc.AppendResult(make([]byte, 0, jsonrpc.ResultSize(id, result)), id, result)
}

func acceptsSSE(h http.Header) bool {
	return strings.Contains(strings.ToLower(strings.Join(h.Values("Accept"), ",")), "text/event-stream")
}

// writeError answers a request with e alone, with the status the
// transport gives its code.
func writeError(w http.ResponseWriter, id json.RawMessage, e *core.Error) {
	msg := response(id, nil, e)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(httpStatus(e))
	w.Write(msg)
}

// streamWriter writes one request's answer: plain JSON when nothing
// comes ahead of it, else an event stream (when the client takes one;
// otherwise what comes ahead is dropped).
type streamWriter struct {
	w   http.ResponseWriter
	sse bool

	mu      sync.Mutex
	started bool
	closed  bool
}

// start begins the event stream.
func (sw *streamWriter) start() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.startLocked()
}

func (sw *streamWriter) startLocked() {
	if sw.started || !sw.sse {
		return
	}
	sw.started = true
	h := sw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	sw.w.WriteHeader(http.StatusOK)
	flush(sw.w)
}

func (sw *streamWriter) event(msg []byte) {
	sw.w.Write([]byte("event: message\ndata: "))
	sw.w.Write(msg)
	sw.w.Write([]byte("\n\n"))
	flush(sw.w)
}

// writeAnswer writes the answer to id with res, a result: a big one (see
// core.BigAnswer) in parts, written from where the result is rather than
// copied into a message of its own.
func writeAnswer(w io.Writer, id, res json.RawMessage) {
	if len(res) < core.BigAnswer {
		w.Write(response(id, res, nil))
		return
	}
	// The answer with no result is its head and its closing brace.
	head := jsonrpc.AppendResult(make([]byte, 0, jsonrpc.ResultSize(id, nil)), id, nil)
	w.Write(head[:len(head)-1])
	w.Write(res)
	w.Write(head[len(head)-1:])
}

// notify writes a notification ahead of the answer.
func (sw *streamWriter) notify(msg []byte) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.closed || !sw.sse {
		return
	}
	sw.startLocked()
	sw.event(msg)
}

// finish writes the answer; nothing is written after it.
func (sw *streamWriter) finish(id, res json.RawMessage, e *core.Error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.closed = true
	if sw.started && e != nil {
		sw.event(response(id, nil, e))
		return
	}
	if sw.started {
		sw.w.Write([]byte("event: message\ndata: "))
		writeAnswer(sw.w, id, res)
		sw.w.Write([]byte("\n\n"))
		flush(sw.w)
		return
	}
	if e != nil {
		writeError(sw.w, id, e)
		return
	}
	sw.w.Header().Set("Content-Type", "application/json")
	writeWhole(sw.w, id, res)
}

// writeWhole writes the answer as plain JSON with its Content-Length, in
// as few writes as the answer allows: a replica killed while it answers
// then leaves the balancer an answer not begun (which it retries) rather
// than one cut after its headers, which net/http sends early for a
// chunked body. An answer small enough goes out in one write when the
// handler returns.
func writeWhole(w http.ResponseWriter, id, res json.RawMessage) {
	if len(res) < core.BigAnswer {
		msg := response(id, res, nil)
		w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
		w.Write(msg)
		return
	}
	head := jsonrpc.AppendResult(make([]byte, 0, jsonrpc.ResultSize(id, nil)), id, nil)
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(res)))
	writeAnswer(w, id, res)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
