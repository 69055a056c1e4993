package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/trust"
)

// reportTrust logs, once for each count, how many of a server's tools and
// prompts are withheld and the command that shows them; in mode warn,
// each change once. A session's own catalog leaves the shared servers to
// the shared catalog's log.
func (a *Aggregator) reportTrust(c *Catalog, idle []string) {
	for server, r := range c.Reviews {
		if slices.Contains(idle, server) || a.parent != nil && a.parent.Catalog().Reviews[server] != nil {
			continue
		}
		if n := r.WithheldCount(); n > 0 {
			key := fmt.Sprintf("withheld:%s:%d", server, n)
			if !a.reported[key] {
				a.reported[key] = true
				a.log.Warn(fmt.Sprintf("%d tools or prompts withheld: changed or added since approved; run `mcpx trust %s` to review them", n, server),
					"server", server, "withheld", n)
			}
			continue
		}
		if r.Mode != trust.ModeWarn {
			continue
		}
		for _, ch := range r.Changes {
			key := fmt.Sprintf("trust warn:%s:%s:%s:%s", server, ch.Kind, ch.Name, ch.New)
			if !a.reported[key] {
				a.reported[key] = true
				a.log.Warn(fmt.Sprintf("%s %q %s since approved; served because trust is warn (`mcpx trust %s` shows and approves it)", ch.Kind, ch.Name, ch.Status, server),
					"server", server)
			}
		}
	}
}

// refused records in the audit trail a call mcpx answered itself because
// a rule keeps the name from the client: "withheld" by pinning,
// "refused" by the config's filters or the session's profile. params are
// the client's; the line names the server's own tool or prompt, as the
// lines of calls that reach a server do.
// l is the client whose call it was (nil: none).
func (a *Aggregator) refused(ctx context.Context, l *listener, method string, params json.RawMessage, f *Filtered) {
	if a.opts.Audit == nil || f == nil {
		return
	}
	outcome := "refused"
	if f.Withheld != "" {
		outcome = "withheld"
	}
	if p, _, err := rawjson.Replace(orEmpty(params), "name", []byte(quote(f.Original))); err == nil {
		params = p
	}
	c := audit.Call{Start: time.Now(), Run: runOf(ctx), Principal: principal.Of(ctx), Server: f.Server, Method: method, Params: params, Outcome: outcome}
	if l != nil && l.client != nil {
		c.Client, c.Session = l.client.Name(), l.client.ID()
	}
	a.opts.Audit.Record(c)
}

// refusedProxyCall audits, as refused does, a call through the proxy tool
// of a tool a rule keeps out: the proxy answers it without a server, and
// the line shows the tool and its arguments, not the proxy's. path is
// the call's (proxyCallPath), read once by the caller.
func (a *Aggregator) refusedProxyCall(ctx context.Context, l *listener, params json.RawMessage, path string) {
	if a.opts.Audit == nil || path == "" {
		return
	}
	f := a.Catalog().FilteredOut(KindTool, path)
	if f == nil {
		return
	}
	var p struct {
		Arguments struct {
			Args json.RawMessage `json:"args"`
		} `json:"arguments"`
	}
	_ = json.Unmarshal(params, &p) // proxyCallPath read it
	call, err := json.Marshal(map[string]json.RawMessage{"name": json.RawMessage(quote(f.Original)), "arguments": p.Arguments.Args})
	if err != nil {
		return
	}
	a.refused(ctx, l, "tools/call", call, f)
}
