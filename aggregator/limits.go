package aggregator

import (
	"errors"

	"github.com/mcpx/mcpx/upstream"
)

// The limits as the catalog enforces them: calls that ran out of time,
// and a bounded end.

// codeRequestTimeout is the JSON-RPC error code of a call that ran out
// of time, as the MCP SDKs use it.
const codeRequestTimeout = -32001

// isTimeout reports a call that ran out of callTimeout or maxCallTime.
func isTimeout(err error) bool {
	var te *upstream.TimeoutError
	return errors.As(err, &te)
}
