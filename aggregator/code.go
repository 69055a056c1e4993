package aggregator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpx/mcpx/codemode"
	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/rawjson"
)

// This file is code mode as the aggregator serves it: the proxy tool's
// run action, whose scripts (package codemode) call the proxy's verbs.
// Each inner call is the proxy's own call for the same client, so it
// passes every gate a direct one does (profiles, filters, pinning,
// overrides, the result cap, the limits) and is counted, audited and
// traced as one; what this file adds is the run's own line on the trail,
// the run id that links the two, and the user's consent before a write.

// codeCatalog is proxyCatalog with the run action.
type codeCatalog struct{ proxyCatalog }

var _ proxytool.Runner = codeCatalog{}

// newProxy is the proxy tool over pc: with the run action unless the
// config turns code mode off.
func (a *Aggregator) newProxy(pc proxyCatalog) *proxytool.Proxy {
	if a.code.Disabled {
		return proxytool.New(pc)
	}
	return proxytool.New(codeCatalog{pc})
}

// runKey is the context key of the id of the run an inner call belongs
// to.
type runKey struct{}

// runOf is the id of the run ctx's call belongs to; "" outside a script.
func runOf(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}

// newRunID names a run on the audit trail: unique enough to join a
// run's lines, and nothing more.
func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "run-" + hex.EncodeToString(b)
}

// Run runs a script of the client's (the proxy's run action) and answers
// with its value, or why it failed.
func (c codeCatalog) Run(ctx context.Context, code string, verb func(context.Context, json.RawMessage) json.RawMessage) json.RawMessage {
	a, l := c.a, c.l
	id := newRunID()
	ctx = context.WithValue(ctx, runKey{}, id)
	start := time.Now()
	inner := func(ctx context.Context, args json.RawMessage) json.RawMessage {
		params := append(append([]byte(`{"name":"proxy","arguments":`), args...), '}')
		// As serveCall does for a direct call: wait for a tool that is
		// still coming, and put a refused one on the trail.
		if path := proxyCallPath(params); path != "" {
			if err := a.awaitTool(ctx, path); err != nil && a.loginHint(path) == "" {
				return toolError(a.opts.Redact(err.Error()))
			}
			a.refusedProxyCall(ctx, l, params, path)
		}
		return verb(ctx, args)
	}
	res := a.engine.Run(ctx, code, codemode.Host{Proxy: inner, Approve: c.approver()})
	out := res.ToolResult()
	if a.opts.Audit != nil {
		params, _ := json.Marshal(map[string]any{"name": proxytool.Name, "arguments": map[string]string{"action": "run", "code": code}})
		a.audit(l, start, id, principal.Of(ctx), mcpxServer, "tools/call", params, out, nil)
	}
	a.log.Debug("ran a script", "run", id, "calls", res.Calls, "failed", res.Err != nil)
	return out
}

// codeLimits are a run's limits from the config: its answer is bound by
// code.maxOutput, else by the result cap a tool's answer has.
func codeLimits(cfg *config.Config) codemode.Limits {
	c := cfg.Code.WithDefaults()
	out := c.MaxOutput
	if out <= 0 {
		out = cfg.Limits.MaxResultBytes
	}
	if out <= 0 {
		out = config.DefaultMaxResultBytes
	}
	return codemode.Limits{Timeout: c.Timeout, Memory: c.Memory, MaxCalls: c.MaxCalls, Parallel: c.Parallel, MaxOutput: int(out)}
}

// approver is the consent of one run: each tool call code.approve names
// waits for the user's yes, unless the user said yes to that tool for
// the rest of the run. codemode asks it one call at a time.
func (c codeCatalog) approver() func(context.Context, codemode.Pending) error {
	allowed := map[string]bool{}
	return func(ctx context.Context, p codemode.Pending) error {
		e, err := c.a.Catalog().Find(proxytool.KindTool, p.Tool)
		if err != nil {
			return nil // not served: the call itself says why, and nothing runs
		}
		if !needsApproval(c.a.code.Approve, e.JSON) || allowed[e.Name] {
			return nil
		}
		always, err := c.a.askApproval(ctx, c.l, e, p)
		if err == nil && always {
			allowed[e.Name] = true
		}
		return err
	}
}

// needsApproval says whether policy asks before a script calls the tool
// whose Tool object (as the client is shown it, overrides applied) is
// tool. Absent hints are MCP's defaults: not read-only, destructive.
func needsApproval(policy config.Approve, tool json.RawMessage) bool {
	// Read in place: decoding the whole definition, schema and all, for
	// two booleans was a tenth of a one-call run's own work.
	var hint [2][]byte // readOnlyHint, destructiveHint
	if ann, err := rawjson.Get(tool, "annotations"); err == nil && len(ann) > 0 {
		_ = rawjson.GetEach(ann, []string{"readOnlyHint", "destructiveHint"}, hint[:])
	}
	readOnlyHint, destructiveHint := hint[0], hint[1]
	readOnly := string(readOnlyHint) == "true"
	marked := string(destructiveHint) == "true"
	unmarked := string(destructiveHint) != "false" && !marked
	switch policy {
	case config.ApproveNone:
		return false
	case config.ApproveAll:
		return true
	case config.ApproveDestructive:
		return marked || !readOnly && unmarked
	}
	return !readOnly || marked
}

// approvalArgsShown bounds the arguments an approval shows.
const approvalArgsShown = 2000

// errNoApprover is the refusal of a write no one can be asked about.
var errNoApprover = errors.New("no one can be asked")

// askApproval asks the user of l whether a script may call e with args:
// an elicitation, which reaches a legacy client as elicitation/create
// and a 2026-07-28 one as input_required. always is the user's "for the
// rest of this run". With no client (the terminal's run) Options.Approve
// decides; a client that cannot be asked gets a refusal that says so.
func (a *Aggregator) askApproval(ctx context.Context, l *listener, e *Entry, p codemode.Pending) (always bool, err error) {
	reason := fmt.Sprintf("may change something (it is not marked readOnlyHint; code.approve is %q)", a.code.Approve)
	why := "the tool " + reason
	if l == nil {
		if a.opts.Approve != nil {
			return false, a.opts.Approve(ctx, e.Server, e.Name, p.Args)
		}
		return false, fmt.Errorf("not called: %s and %w to approve it here", why, errNoApprover)
	}
	msg := fmt.Sprintf("A script the model runs through mcpx wants to call %s (server %s) with:\n%s\nAllow this call? It %s.",
		e.Name, e.Server, p.ArgsText(approvalArgsShown), reason)
	params, _ := json.Marshal(map[string]any{
		"mode":    "form",
		"message": msg,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"always": map[string]any{"type": "boolean", "title": "Allow " + e.Name + " for the rest of this script", "default": false},
			},
		},
	})
	if !l.can("elicitation/create", params) {
		return false, fmt.Errorf("not called: %s and the client did not declare elicitation, so %w to approve it; "+
			"set code.approve to \"none\", or mark the tool readOnlyHint with an override, to let scripts call it", why, errNoApprover)
	}
	res, err := l.request(ctx, "elicitation/create", params)
	if err != nil {
		return false, fmt.Errorf("not called: asking the user to approve it failed: %w", err)
	}
	var answer struct {
		Action  string `json:"action"`
		Content struct {
			Always bool `json:"always"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &answer); err != nil {
		return false, fmt.Errorf("not called: the client's answer to the approval is not an elicitation result: %v", err)
	}
	switch answer.Action {
	case "accept":
		return answer.Content.Always, nil
	case "decline":
		return false, errors.New("not called: the user declined it")
	}
	return false, fmt.Errorf("not called: the user dismissed the approval (%q)", answer.Action)
}
