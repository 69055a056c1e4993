package jsonrpc

import "context"

// RequestHandler answers a request a peer sent. A nil answer means the
// method is not served ([CodeMethodNotFound]); a non-nil error is
// answered as an internal error.
type RequestHandler func(ctx context.Context, req Message) (*Message, error)
