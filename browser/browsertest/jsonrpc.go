package browsertest

import (
	"github.com/mcpx/mcpx/browser/internal/rpcwire"
)

// message is the part of a JSON-RPC message the scripted peers look at.
type message = rpcwire.Message
