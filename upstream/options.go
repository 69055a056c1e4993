package upstream

import "encoding/json"

// CallOptions are what one request carries beside its params, passed to
// [Client.RequestWith] or [Client.Send] as a value of its own rather than
// in the context: each context value was an allocation per call and a
// lookup chain every later Value walked. A nil *CallOptions, like the
// zero value, asks for none of it.
type CallOptions struct {
	// Progress, when not nil, relays the progress of a request that
	// carries _meta.progressToken: the server sees a token of mcpx's own,
	// unique per request, so two calls can never mix, and each
	// notifications/progress it sends for that token reaches Progress
	// with the caller's token put back. Progress runs on the connection's
	// reader, before the response of the same request is delivered, so
	// progress keeps its place ahead of the result; it must not call the
	// server. Nil: the server's progress is dropped (it still restarts
	// the request's callTimeout).
	Progress func(params json.RawMessage)

	// PassInput returns a modern server's input_required result as it
	// came, for a caller that speaks the modern era itself and answers
	// it by retrying. False: mcpx asks the questions through
	// Options.OnServerRequest and retries for the caller (input.go).
	PassInput bool

	// Batch, for [Client.Send] only, leaves the request in the batch
	// instead of writing it, for the batch's Flush to write with others
	// (see [Batch]). It is used only while Send sends: a request that
	// waits its turn under maxConcurrent is written by whichever call
	// frees the slot, on its own. Nil: the request is written at once.
	Batch *Batch

	// Flusher, for [Client.Send] only, is flushed after Send's done
	// function, which may then hold its output rather than write it (see
	// [Flusher]). Nil: done writes what it has itself.
	Flusher Flusher
}

// optionsOf is *o, or the zero value for nil.
func optionsOf(o *CallOptions) CallOptions {
	if o == nil {
		return CallOptions{}
	}
	return *o
}
