package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// entry is one kind of request a client sends mcpx, as it reaches an
// upstream: its method, the params after the client's _meta is added, and
// what the audit trail and the spans should call it.
type entry struct {
	name   string // for the test's messages
	method string
	params string // a JSON object without its closing brace: _meta follows
	span   string // the request span's name
	audit  string // the audit line's tool, uri or prompt; "" for a method not audited
}

// entries are the requests TestEveryEntryKeepsTheBooks sends in each era:
// every method mcpx forwards to a source, directly and through the proxy.
var entries = []entry{
	{"tools/call", "tools/call", `{"name":"fx_echo","arguments":{"message":"m"}`, "tools/call fx_echo", "echo"},
	{"tools/call via proxy", "tools/call", `{"name":"proxy","arguments":{"action":"call","type":"tool","path":"fx_echo","args":{"message":"m"}}`, "tools/call proxy", "echo"},
	{"prompts/get", "prompts/get", `{"name":"fx_greet","arguments":{"name":"Ada"}`, "prompts/get fx_greet", "greet"},
	{"resources/read", "resources/read", `{"uri":"fixture://readme"`, "resources/read", "fixture://readme"},
	{"completion/complete", "completion/complete", `{"ref":{"type":"ref/prompt","name":"fx_greet"},"argument":{"name":"style","value":"f"}`, "completion/complete", ""},
}

// traceOf is a trace id of its own for request i of era e, so that each
// request's spans are found among all the others.
func traceOf(era, i int) string { return fmt.Sprintf("%016x%016x", 0xb00c+era, i+1) }

// TestEveryEntryKeepsTheBooks walks every entry point (a legacy client
// over stdio and over HTTP, a 2026-07-28 client over HTTP; each method
// mcpx forwards, directly and through the proxy tool) and checks that
// each passes every link of the bookkeeping: a server span for the
// client's request continuing its trace, an upstream call span under it
// naming the server, and, for the calls the trail keeps, an audit line
// that names the client (and its session, in an era that has one).
func TestEveryEntryKeepsTheBooks(t *testing.T) {
	cfg := writeConfig(t, map[string]any{"expose": "both", "servers": map[string]any{"fx": fx()}})
	type era struct {
		name    string
		client  string // the clientInfo name the audit line should carry
		session bool   // whether its audit lines carry a session
		send    func(t *testing.T, e entry, meta string) []byte
		stop    func(t *testing.T)
	}
	withMeta := func(e entry, meta string) string { return e.params + `,"_meta":` + meta + `}` }

	// A legacy client over stdio.
	stdioRcv, stdioState := newOTLPReceiver(t), t.TempDir()
	cmd := mcpxCommand("serve", "--stdio", "--config", cfg)
	cmd.Env = append(cmd.Env, stdioRcv.env()...)
	cmd.Env = append(cmd.Env, "XDG_STATE_HOME="+stdioState)
	sc := stdioConn(t, cmd)
	id := 100
	stdio := era{name: "legacy stdio", client: "bench", session: true,
		send: func(t *testing.T, e entry, meta string) []byte {
			id++
			sc.send(t, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, e.method, withMeta(e, meta)))
			_, line := sc.next(t)
			return line
		},
		stop: func(*testing.T) { sc.close() }}

	// A legacy client over HTTP, in a session, and a modern one.
	httpRcv, httpState := newOTLPReceiver(t), t.TempDir()
	srv := startHTTP(t, cfg, append(httpRcv.env(), "XDG_STATE_HOME="+httpState))
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	code, h, body := do(t, "POST", srv.url+"/mcp", hdr, initBody)
	if code != 200 {
		t.Fatalf("initialize: %d %s", code, body)
	}
	hdr["Mcp-Session-Id"], hdr["MCP-Protocol-Version"] = h.Get("Mcp-Session-Id"), "2025-11-25"
	do(t, "POST", srv.url+"/mcp", hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	legacyHTTP := era{name: "legacy HTTP", client: "raw", session: true,
		send: func(t *testing.T, e entry, meta string) []byte {
			id++
			_, _, body := do(t, "POST", srv.url+"/mcp", hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, e.method, withMeta(e, meta)))
			return []byte(body)
		}}
	modernHTTP := era{name: "modern HTTP", client: "modern-books",
		send: func(t *testing.T, e entry, meta string) []byte {
			meta = strings.TrimSuffix(meta, "}") + `,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
				`"io.modelcontextprotocol/clientInfo":{"name":"modern-books","version":"1"}}`
			name := ""
			if e.method != "completion/complete" {
				var p struct{ Name, URI string }
				_ = json.Unmarshal([]byte(e.params+"}"), &p)
				name = p.Name + p.URI
			}
			r := post(t, srv.url+"/mcp", e.method, name, withMeta(e, meta), nil)
			b, _ := json.Marshal(map[string]any{"result": r.Result, "error": r.Error})
			return b
		}}

	type sent struct {
		era   *era
		entry entry
		trace string
		rcv   *otlpReceiver
	}
	var all []sent
	for ei, er := range []*era{&stdio, &legacyHTTP, &modernHTTP} {
		rcv := httpRcv
		if er == &stdio {
			rcv = stdioRcv
		}
		for i, e := range entries {
			trace := traceOf(ei, i)
			meta := `{"traceparent":"00-` + trace + `-00f067aa0ba902b7-01"}`
			if line := er.send(t, e, meta); !bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"error":{`)) {
				t.Fatalf("%s %s: %s", er.name, e.name, line)
			}
			all = append(all, sent{er, e, trace, rcv})
		}
	}
	stdio.stop(t)
	stopServe(t, srv)

	for _, s := range all {
		what := s.era.name + " " + s.entry.name
		var req, call *tracepb.Span
		s.rcv.mu.Lock()
		for _, sp := range s.rcv.spans {
			if hex.EncodeToString(sp.TraceId) != s.trace {
				continue
			}
			switch sp.Kind {
			case tracepb.Span_SPAN_KIND_SERVER:
				req = sp
			case tracepb.Span_SPAN_KIND_CLIENT:
				call = sp
			}
		}
		s.rcv.mu.Unlock()
		switch {
		case req == nil:
			t.Errorf("%s: no server span in its trace", what)
		case req.Name != s.entry.span:
			t.Errorf("%s: server span %q, want %q", what, req.Name, s.entry.span)
		case call == nil:
			t.Errorf("%s: no upstream call span under its server span", what)
		case !bytes.Equal(call.ParentSpanId, req.SpanId):
			t.Errorf("%s: the upstream call span is not the request span's child", what)
		case spanAttr(call, "mcpx.server") != "fx":
			t.Errorf("%s: upstream span's mcpx.server %q, want fx", what, spanAttr(call, "mcpx.server"))
		}
	}
	for _, rcv := range []*otlpReceiver{stdioRcv, httpRcv} {
		rcv.mu.Lock()
		for _, m := range []string{"mcp.server.operation.duration", "mcp.client.operation.duration", "mcpx.calls"} {
			if !rcv.metrics[m] {
				t.Errorf("metric %s not exported (got %v)", m, rcv.metrics)
			}
		}
		rcv.mu.Unlock()
	}

	// The audit trail: one line per audited request, in order, each
	// naming the client.
	check := func(state string, eras ...*era) {
		t.Helper()
		lines := auditLines(t, trailOf(state))
		i := 0
		for _, er := range eras {
			for _, e := range entries {
				if e.audit == "" {
					continue
				}
				what := er.name + " " + e.name
				if i >= len(lines) {
					t.Errorf("%s: no audit line", what)
					continue
				}
				l := lines[i]
				i++
				if got := l.Tool + l.URI + l.Prompt; got != e.audit {
					t.Errorf("%s: audit line for %q, want %q", what, got, e.audit)
				}
				if l.Client != er.client || (l.Session != "") != er.session {
					t.Errorf("%s: audit line client %q session %q, want client %q and a session: %v", what, l.Client, l.Session, er.client, er.session)
				}
			}
		}
		if i != len(lines) {
			t.Errorf("%d audit lines, want %d: %+v", len(lines), i, lines)
		}
	}
	check(stdioState, &stdio)
	check(httpState, &legacyHTTP, &modernHTTP)
}
