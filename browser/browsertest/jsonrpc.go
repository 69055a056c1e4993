package browsertest

import (
	"errors"

	"github.com/mcpx/mcpx/browser/internal/rpcwire"
)

var errBadJSON = errors.New("not a JSON-RPC message")

// message is the part of a JSON-RPC message the scripted peers look at.
type message = rpcwire.Message
