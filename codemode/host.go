package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpx/mcpx/rawjson"
)

// Pending is an inner tool call that waits for the user's approval.
type Pending struct {
	// Tool is the name the script gave; Args its arguments ({} when it
	// gave none).
	Tool string
	Args json.RawMessage
}

// ArgsText is the arguments as text for a person to read, cut on a rune
// boundary to at most max bytes and an ellipsis.
func (p Pending) ArgsText(max int) string {
	if len(p.Args) <= max {
		return string(p.Args)
	}
	return cutUTF8(string(p.Args), max) + "…"
}

// Host is what a script reaches: the proxy's verbs, and the user.
type Host struct {
	// Proxy answers one call of the proxy tool given its arguments
	// ({"action":"list"|"info"|"call", ...}), as the proxy answers a
	// client. It is called from any goroutine, up to Limits.Parallel at
	// once.
	Proxy func(ctx context.Context, args json.RawMessage) json.RawMessage
	// Approve is asked before each tool call of the script and returns
	// nil to let it go ahead; an error is thrown in the script instead of
	// the call. Nil approves every call. It is never called for two calls
	// at once, and the time it takes is not counted against
	// Limits.Timeout: it may wait for a person.
	Approve func(ctx context.Context, call Pending) error
}

// host serves one run's calls from its script: the ops of prelude.js.
type host struct {
	h     Host
	lim   Limits
	clock *clock

	mu      sync.Mutex
	calls   int
	log     strings.Builder
	logCut  int // lines dropped past the log's share of MaxOutput
	approve sync.Mutex
}

// serve answers one op of the script with the JSON of its value, or an
// error the script throws.
func (h *host) serve(ctx context.Context, op string, arg []byte) ([]byte, error) {
	switch op {
	case "list":
		return h.list(ctx, arg)
	case "info":
		return h.info(ctx, arg)
	case "call":
		var c callArg
		if err := json.Unmarshal(arg, &c); err != nil {
			return nil, fmt.Errorf("proxy.call: %v", err)
		}
		return h.call(ctx, "proxy.call", c)
	case "callAll":
		return h.callAll(ctx, arg)
	case "log":
		h.addLog(arg)
		return []byte("null"), nil
	}
	return nil, fmt.Errorf("no such operation %q", op)
}

// listArg is proxy.list's options.
type listArg struct {
	Query  *string `json:"query"`
	Type   string  `json:"type"`
	Limit  *int    `json:"limit"`
	Offset *int    `json:"offset"`
	Server string  `json:"server"`
	Detail string  `json:"detail"`
}

func (h *host) list(ctx context.Context, arg []byte) ([]byte, error) {
	var a listArg
	if err := json.Unmarshal(arg, &a); err != nil {
		return nil, fmt.Errorf("proxy.list: %v", err)
	}
	args := map[string]any{"action": "list", "type": orTool(a.Type)}
	if a.Query != nil {
		args["query"] = *a.Query
	}
	if a.Limit != nil {
		args["limit"] = *a.Limit
	}
	if a.Offset != nil {
		args["offset"] = *a.Offset
	}
	if a.Server != "" {
		args["filter_server"] = a.Server
	}
	if a.Detail != "" {
		args["detail"] = a.Detail
	}
	v, err := embeddedJSON(h.proxy(ctx, args))
	return v, prefixed("proxy.list", err)
}

// infoArg is proxy.info's arguments.
type infoArg struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func (h *host) info(ctx context.Context, arg []byte) ([]byte, error) {
	var a infoArg
	if err := json.Unmarshal(arg, &a); err != nil {
		return nil, fmt.Errorf("proxy.info: %v", err)
	}
	v, err := embeddedJSON(h.proxy(ctx, map[string]any{"action": "info", "type": orTool(a.Type), "path": a.Name}))
	return v, prefixed("proxy.info", err)
}

// callArg is one call of proxy.call or proxy.callAll.
type callArg struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
	Type string          `json:"type"`
	// Raw asks for the answer as the proxy gave it (a CallToolResult,
	// isError and all) rather than its value.
	Raw bool `json:"raw"`
}

// call makes one inner call: counted, approved when it is a tool's, then
// sent as the proxy's call action.
func (h *host) call(ctx context.Context, verb string, c callArg) ([]byte, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("%s: give the name of a tool (or a resource URI, or a prompt) as its first argument", verb)
	}
	if len(c.Args) == 0 || string(c.Args) == "null" {
		c.Args = json.RawMessage(`{}`)
	}
	kind := orTool(c.Type)
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.mu.Unlock()
	if n > h.lim.MaxCalls {
		return nil, fmt.Errorf("%s(%q): the run's limit of %d calls is reached (code.maxCalls)", verb, c.Name, h.lim.MaxCalls)
	}
	if kind == "tool" && h.h.Approve != nil {
		if err := h.approved(ctx, Pending{Tool: c.Name, Args: c.Args}); err != nil {
			return nil, fmt.Errorf("%s(%q): %w", verb, c.Name, err)
		}
	}
	// The call action's arguments, written directly: c.Args is JSON
	// the engine made.
	args := make([]byte, 0, 64+len(c.Name)+len(c.Args))
	args = rawjson.AppendString(append(args, `{"action":"call","type":`...), kind)
	args = rawjson.AppendString(append(args, `,"path":`...), c.Name)
	if kind != "resource" {
		args = append(append(args, `,"args":`...), c.Args...)
	}
	raw := h.h.Proxy(ctx, append(args, '}'))
	var v json.RawMessage
	var err error
	switch {
	case c.Raw:
		if v = raw; !json.Valid(raw) {
			v, err = nil, errors.New("the proxy's answer is not JSON")
		}
	case kind == "resource":
		v, err = resourceValue(raw)
	case kind == "prompt":
		v, err = embeddedJSON(raw)
	default:
		v, err = toolValue(raw)
	}
	return v, prefixed(fmt.Sprintf("%s(%q)", verb, c.Name), err)
}

// approved asks Approve, one call at a time, with the run's clock
// stopped.
func (h *host) approved(ctx context.Context, p Pending) error {
	h.approve.Lock()
	defer h.approve.Unlock()
	h.clock.pause()
	defer h.clock.resume()
	return h.h.Approve(ctx, p)
}

// callAllArg is proxy.callAll's arguments.
type callAllArg struct {
	Calls  []callArg `json:"calls"`
	Settle bool      `json:"settle"`
}

// settled is one outcome of proxy.callAll with settle.
type settled struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
}

// callAll makes the calls Parallel at a time and answers their values in
// order: the first error by position throws, unless settle asks for
// every outcome.
func (h *host) callAll(ctx context.Context, arg []byte) ([]byte, error) {
	var a callAllArg
	if err := json.Unmarshal(arg, &a); err != nil {
		return nil, fmt.Errorf("proxy.callAll: %v", err)
	}
	out := make([]settled, len(a.Calls))
	sem := make(chan struct{}, h.lim.Parallel)
	var wg sync.WaitGroup
	for i, c := range a.Calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := h.call(ctx, "proxy.callAll", c)
			if err != nil {
				out[i] = settled{Error: err.Error()}
				return
			}
			out[i] = settled{OK: true, Value: v}
		}()
	}
	wg.Wait()
	if a.Settle {
		return json.Marshal(out)
	}
	vals := make([]json.RawMessage, len(out))
	for i, o := range out {
		if !o.OK {
			return nil, fmt.Errorf("call %d of %d: %s", i+1, len(out), o.Error)
		}
		vals[i] = o.Value
	}
	return json.Marshal(vals)
}

// proxy sends one verb with args as the proxy's arguments.
func (h *host) proxy(ctx context.Context, args map[string]any) json.RawMessage {
	b, err := json.Marshal(args)
	if err != nil {
		return errorResult("the arguments cannot be sent: " + err.Error())
	}
	return h.h.Proxy(ctx, b)
}

// logShare is the part of MaxOutput the script's log may take.
const logShare = 4

// addLog keeps one console line, within its share of the output; past
// it lines are counted and dropped.
func (h *host) addLog(arg []byte) {
	var parts []string
	if err := json.Unmarshal(arg, &parts); err != nil {
		return
	}
	line := strings.Join(parts, " ")
	h.mu.Lock()
	defer h.mu.Unlock()
	room := h.lim.MaxOutput/logShare - h.log.Len()
	if h.logCut > 0 || len(line)+1 > room {
		if h.logCut == 0 && room > 0 {
			h.log.WriteString(cutUTF8(line, room-1) + "\n")
		}
		h.logCut++
		return
	}
	h.log.WriteString(line + "\n")
}

// cutUTF8 is s cut to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func orTool(kind string) string {
	if kind == "" {
		return "tool"
	}
	return kind
}

// prefixed names the verb in an error; a failed call's text follows as
// the tool said it.
func prefixed(verb string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", verb, err)
}

// errorResult is a CallToolResult reporting a failure as text.
func errorResult(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	})
	return b
}
