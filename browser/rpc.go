package browser

import (
	"errors"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"
	"github.com/mcpx/mcpx/jsonrpc"
)

// RemoteError is an error answered by the relay or the extension. Real
// peers send three shapes: {code, message}, {message, stack} without a
// code, and a bare string; all decode to this, Code 0 when the peer sent
// none (see [jsonrpc.DecodeError]).
type RemoteError = jsonrpc.Error

// Codes the relay uses (MCP Proxy Protocol 1.0).
const (
	codeRelayError       = rpcwire.CodeServerError
	codeAlreadyConnected = rpcwire.CodeAlreadyConnected
)

func isCode(err error, code int) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Code == code
}

// frame is any JSON-RPC message on the relay socket.
type frame = rpcwire.Message

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
