package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/upstream"
)

// awaitTool is for a tool name the catalog does not have (yet). When the
// name carries the prefix of a server that is not connected, the honest
// answer is about that server, not "unknown tool": a server still
// connecting is waited for (up to its connect timeout), and then, or at
// once for a server that failed, the error says "server X is not
// connected: <its last error>". It returns nil when the name can be
// looked up again (the server connected and the catalog was rebuilt) or
// belongs to no such server.
func (a *Aggregator) awaitTool(ctx context.Context, name string) error {
	if _, ok := a.Catalog().Tool(name); ok {
		return nil
	}
	c, cfg := a.pendingOwner(name)
	if c == nil {
		if a.parent != nil {
			// A session's own catalog also serves the shared servers,
			// which are the shared catalog's to wait for (and whose
			// connect rebuilds this one).
			return a.parent.awaitTool(ctx, name)
		}
		return nil
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = config.DefaultTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st := a.waitSettled(wctx, c)
	switch {
	case st.State == upstream.StateConnected:
		a.Rebuild()
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	why := st.Err
	if why == "" {
		why = fmt.Sprintf("still connecting after %s", timeout)
	}
	return fmt.Errorf("server %s is %w: %s", c.Name(), upstream.ErrNotConnected, why)
}

// pendingOwner finds the server that would own an exposed tool name and
// is not connected (not started yet, connecting or failed): the enabled
// upstream whose prefix (plus separator) starts the name, the longest
// prefix winning; a server with no prefix may own any name.
func (a *Aggregator) pendingOwner(name string) (*upstream.Client, config.Server) {
	var best *upstream.Client
	var bestCfg config.Server
	bestLen := -1
	for _, m := range a.members {
		c, ok := m.src.(*upstream.Client)
		if !ok {
			continue
		}
		switch c.Status().State {
		case upstream.StateNotStarted, upstream.StateConnecting, upstream.StateFailed:
		default:
			continue
		}
		p := namePrefix(m.prefix, a.cfg.Separator)
		if !strings.HasPrefix(name, p) || len(p) <= bestLen {
			continue
		}
		for _, s := range a.cfg.Servers {
			if s.Name == c.Name() {
				best, bestCfg, bestLen = c, s, len(p)
			}
		}
	}
	return best, bestCfg
}

// waitSettled waits until c is not connecting (connected, failed, stopped)
// or ctx ends, and returns its status then.
func (a *Aggregator) waitSettled(ctx context.Context, c *upstream.Client) upstream.Status {
	for {
		// Take the channel before reading the state, so that a change in
		// between is not missed.
		a.statusMu.Lock()
		ch := a.statusCh
		a.statusMu.Unlock()
		st := c.Status()
		if st.State != upstream.StateConnecting {
			return st
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return c.Status()
		}
	}
}

// statusChanged wakes every waitSettled; it runs on each upstream change.
func (a *Aggregator) statusChanged() {
	a.statusMu.Lock()
	close(a.statusCh)
	a.statusCh = make(chan struct{})
	a.statusMu.Unlock()
}

// proxyCallPath returns the path of a proxy tool call of a tool
// ({"action":"call","type":"tool","path":...}), or "". It reads the
// three members in place, as the proxy tool reads its arguments (exact
// keys, the last of a repeated one): the arguments of a run hold the
// whole script, which decoding them would copy for nothing.
func proxyCallPath(params json.RawMessage) string {
	args, err := rawjson.Get(params, "arguments")
	if err != nil || len(args) == 0 {
		return ""
	}
	var v [3][]byte // action, type, path
	if rawjson.GetEach(args, []string{"action", "type", "path"}, v[:]) != nil {
		return ""
	}
	a, _ := rawjson.String(v[0])
	t, _ := rawjson.String(v[1])
	if a != "call" || t != "tool" {
		return ""
	}
	path, _ := rawjson.String(v[2])
	return path
}
