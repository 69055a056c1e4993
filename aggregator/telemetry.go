package aggregator

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/upstream"
)

// This file hooks the telemetry (Options.TracerProvider, MeterProvider)
// where a call starts and ends: request (route.go) and sendTool
// (sendtool.go) for the call to an upstream; the session core records a
// client's request (core.SessionOptions.Telemetry). With neither provider a.tel is nil and every hook
// is a nil check.

// startTelemetry builds a's recorder over the providers in its options;
// a failure is logged and leaves telemetry off.
func (a *Aggregator) startTelemetry() {
	tel, err := telemetry.New(a.opts.TracerProvider, a.opts.MeterProvider, telemetry.Gauges{
		States: a.upstreamStates, Restarts: a.upstreamRestarts, Withheld: a.withheldCounts})
	if err != nil {
		a.log.Warn("telemetry is off", "err", err)
		return
	}
	a.tel = tel
}

// upstreamStates counts the upstreams in each state, every state listed
// so that a series drops to 0 rather than vanishing.
func (a *Aggregator) upstreamStates() map[string]int {
	out := map[string]int{}
	for _, s := range []upstream.State{upstream.StateConnecting, upstream.StateConnected, upstream.StateSleeping,
		upstream.StateFailed, upstream.StateDisabled, upstream.StateStopped, upstream.StateNotStarted, upstream.StateNeedsLogin} {
		out[string(s)] = 0
	}
	for _, st := range a.Upstreams() {
		out[string(st.State)]++
	}
	return out
}

// upstreamRestarts is each upstream's restart count.
func (a *Aggregator) upstreamRestarts() map[string]int {
	out := map[string]int{}
	for _, st := range a.Upstreams() {
		out[st.Name] = st.Restarts
	}
	return out
}

// withheldCounts is, per upstream, how many of its tools and prompts are
// withheld from clients until the user approves them (docs/trust.md).
func (a *Aggregator) withheldCounts() map[string]int {
	out := map[string]int{}
	for _, st := range a.Upstreams() {
		out[st.Name] = 0
	}
	for server, n := range a.Catalog().Withheld() {
		out[server] = n
	}
	return out
}

// startCall begins recording a call to src: params as they go to it,
// with the call's trace context in their _meta when tracing.
func (a *Aggregator) startCall(ctx context.Context, src Source, method string, params json.RawMessage) (context.Context, json.RawMessage, telemetry.Call) {
	ctx, call := a.tel.StartCall(ctx, src.Name(), method, params)
	return ctx, call.Inject(params), call
}

// endCall records the answer to a call.
func endCall(call telemetry.Call, res json.RawMessage, err error) {
	code := 0
	var rpc *upstream.RPCError
	if errors.As(err, &rpc) {
		code = rpc.Code
	}
	call.End(res, err, code)
}

// Tracing reports whether the catalog's calls are traced.
func (a *Aggregator) Tracing() bool { return a.tel.Tracing() }
