package core

import (
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpx/mcpx/jsonrpc"
	"github.com/mcpx/mcpx/telemetry"
)

// This file records a client's request where it starts (startRequest)
// and ends (answer), when the session has telemetry; without it every
// hook is a nil check.

// startRequestSpan begins recording a client's request: the returned
// contexts are ctx and sendCtx carrying its span (the same ones when
// tracing is off).
func (s *Session) startRequestSpan(ctx context.Context, m Message) (context.Context, context.Context, telemetry.Request) {
	sendCtx := s.sendCtx
	tel := s.tel
	if tel == nil {
		return ctx, sendCtx, telemetry.Request{}
	}
	sendCtx, req := tel.StartRequest(sendCtx, m.Method, m.Params, s.hs.id, m.ID)
	if tel.Tracing() {
		ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(sendCtx))
	}
	return ctx, sendCtx, req
}

// endRequestSpan records how a client's request ended.
func (s *Session) endRequestSpan(r *running, m Message, result json.RawMessage, rpcErr *jsonrpc.Error) {
	switch {
	case rpcErr != nil:
		r.span.End(telemetry.OutcomeError, rpcErr.Code, rpcErr.Message)
	case r.isCancelled() || s.ended():
		r.span.End(telemetry.OutcomeCancelled, 0, "")
	default:
		r.span.End(telemetry.ResultOutcome(m.Method, result), 0, "")
	}
}
