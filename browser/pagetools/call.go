package pagetools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Request answers tools/call with a page tool's listed name. Problems a
// model can act on (the tab went, the page threw, it did not answer) are
// results with isError, as the browser tools give them.
func (h *Hub) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != "tools/call" {
		return nil, fmt.Errorf("page tools have no %s", method)
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("tools/call params: %w", err)
	}
	h.mu.Lock()
	r, ok := h.routes[p.Name]
	h.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no page tool %q (the page may have removed it)", p.Name)
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	// Until the config's per-server callTimeout reaches here, the Hub's
	// own bound holds; the caller's context may be shorter.
	ctx, cancel := context.WithTimeout(ctx, h.opts.CallTimeout)
	defer cancel()
	defer h.holdLooker()()
	res, err := h.call(ctx, r, args)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the page on %s did not answer %s within %s", r.host, r.tool, h.opts.CallTimeout)
		}
		return errorResult(err.Error()), nil
	}
	return res, nil
}

// call finds the tab for r (reopening the page when it went) and runs the
// tool there.
func (h *Hub) call(ctx context.Context, r route, args json.RawMessage) (json.RawMessage, error) {
	tab, url := h.pick(r)
	if tab == "" {
		if url == "" {
			return nil, fmt.Errorf("no open tab of %s offers %s any more", r.host, r.tool)
		}
		var err error
		if tab, err = h.reopen(ctx, url, r); err != nil {
			return nil, err
		}
	}
	h.opts.Logger.Debug("page tool call", "host", r.host, "tool", r.tool, "tab", tab)
	return h.run(ctx, tab, r, args)
}

// pick chooses the tab for r: the one named, else among the tabs of the
// domain that offer the tool the active one, else the most recent. With
// none it returns the URL of the page that registered the tool, to open
// again ("" when none is cached).
func (h *Hub) pick(r route) (tab, url string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st, ok := h.tabs[r.tab]; ok && r.tab != "" && offers(st, r.tool) {
		return st.id, ""
	}
	var best *tabState
	for _, st := range h.tabs {
		if st.host != r.host || !offers(st, r.tool) {
			continue
		}
		switch {
		case best == nil,
			st.active && !best.active,
			st.active == best.active && st.recent.After(best.recent):
			best = st
		}
	}
	if best != nil {
		return best.id, ""
	}
	if c := h.cache[toolKey{r.host, r.tool}]; c != nil {
		return "", c.url
	}
	return "", ""
}

func offers(st *tabState, tool string) bool {
	for _, t := range st.tools {
		if t.name == tool {
			return true
		}
	}
	return false
}

// reopen opens url in a new background tab and waits until its page
// registers r's tool.
func (h *Hub) reopen(ctx context.Context, url string, r route) (string, error) {
	if h.opts.Looker == nil {
		return "", fmt.Errorf("the tab of %s is closed and page tools have no relay connection to open it again", r.host)
	}
	h.lookMu.Lock()
	t, err := h.opts.Looker.CreateTab(ctx, url, false)
	h.lookMu.Unlock()
	if err != nil {
		return "", fmt.Errorf("open %s again: %w", url, err)
	}
	id := string(t.ID)
	h.mu.Lock()
	h.driven[id] = true
	h.mu.Unlock()
	h.opts.Logger.Info("page tools: opened the page again for a call", "url", url, "tool", r.tool)
	wctx, cancel := context.WithTimeout(ctx, h.opts.OpenTimeout)
	defer cancel()
	for {
		l, err := h.listTab(wctx, id, h.opts.Driver.AttachedTab())
		if err == nil {
			for _, t := range l.Tools {
				if t.Name == r.tool {
					return id, nil
				}
			}
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("opened %s again, but within %s the page did not register %s", url, h.opts.OpenTimeout, r.tool)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// outcome is the script's answer to "start" and "poll".
type outcome struct {
	Started bool            `json:"started"`
	Missing bool            `json:"missing"`
	Pending bool            `json:"pending"`
	Lost    bool            `json:"lost"`
	OK      bool            `json:"ok"`
	Result  json.RawMessage `json:"result"` // JSON text of the tool's answer, as a JSON string
	Error   string          `json:"error"`
}

// run starts the tool in the tab and polls for its answer, so that no
// single evaluation waits on the page: a page that never answers costs
// polls until the deadline, not a stuck connection.
func (h *Hub) run(ctx context.Context, tab string, r route, args json.RawMessage) (json.RawMessage, error) {
	id := fmt.Sprintf("mcpx-%d-%d", time.Now().UnixNano(), atomic.AddInt64(&h.calls, 1))
	ask := func(req map[string]any) (outcome, error) {
		var o outcome
		raw, err := h.eval(ctx, tab, h.opts.Driver.AttachedTab(), req)
		if err != nil {
			return o, err
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return o, fmt.Errorf("the page answered what mcpx did not ask for: %.200s", raw)
		}
		return o, nil
	}
	o, err := ask(map[string]any{"op": "start", "id": id, "name": r.tool, "args": string(args), "wait": startWait.Milliseconds()})
	if err != nil {
		return nil, fmt.Errorf("call %s on %s: %w", r.tool, r.host, err)
	}
	if o.Missing || !o.Started {
		return nil, fmt.Errorf("the page on %s no longer offers %s", r.host, r.tool)
	}
	if !o.Pending {
		return answer(o)
	}
	wait := 20 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			// Tell the page to drop the answer when it comes; best effort.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_, _ = h.eval(fctx, tab, h.opts.Driver.AttachedTab(), map[string]any{"op": "forget", "id": id})
			cancel()
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, 250*time.Millisecond)
		o, err := ask(map[string]any{"op": "poll", "id": id})
		switch {
		case err != nil:
			return nil, fmt.Errorf("call %s on %s: %w", r.tool, r.host, err)
		case o.Lost:
			return nil, fmt.Errorf("the page on %s went away (navigated or reloaded) before %s answered", r.host, r.tool)
		case o.Pending:
			continue
		}
		return answer(o)
	}
}

// startWait is how long the start of a call waits in the page for the
// answer before mcpx polls for it.
const startWait = 100 * time.Millisecond

// answer is the CallToolResult for a call's outcome: an error as the
// page said it, or the page's answer.
func answer(o outcome) (json.RawMessage, error) {
	if !o.OK {
		return errorResult(o.Error), nil
	}
	return toolResult(o.Result)
}

// toolResult turns the page's answer into a CallToolResult: a result
// object (content, isError, ...) passes as the page gave it; any other
// value becomes its JSON text, and structuredContent when an object.
func toolResult(text json.RawMessage) (json.RawMessage, error) {
	var s string
	if err := json.Unmarshal(text, &s); err != nil {
		return nil, fmt.Errorf("the page's answer is not readable: %.200s", text)
	}
	if len(s) > maxResultBytes {
		return nil, fmt.Errorf("the page's answer is %d bytes, more than the %d allowed", len(s), maxResultBytes)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		var content []json.RawMessage
		if json.Unmarshal(obj["content"], &content) == nil && content != nil {
			return json.RawMessage(s), nil
		}
	}
	out := map[string]any{"content": []map[string]any{{"type": "text", "text": s}}}
	if obj != nil {
		out["structuredContent"] = json.RawMessage(s)
	}
	return json.Marshal(out)
}

func errorResult(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]any{{"type": "text", "text": msg}},
		"isError": true,
	})
	return b
}
