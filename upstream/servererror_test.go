package upstream

import (
	"encoding/json"
	"testing"

	"github.com/mcpx/mcpx/jsonrpc"
)

// TestServerError: the error member of a server's answer, in the shapes
// servers send, as mcpx passes it on: a bare string or unreadable bytes
// are an internal error, data is kept and put on one line.
func TestServerError(t *testing.T) {
	for raw, want := range map[string]RPCError{
		`{"code":-32602,"message":"bad","data":{"a":` + "\n" + `1}}`: {Code: -32602, Message: "bad", Data: json.RawMessage(`{"a":1}`)},
		`"cursor_invalid"`:              {Code: jsonrpc.CodeInternalError, Message: "cursor_invalid"},
		`{"code":-32000,"message":tru}`: {Code: jsonrpc.CodeInternalError, Message: `malformed error: {"code":-32000,"message":tru}`},
	} {
		got := serverError(json.RawMessage(raw))
		if got.Code != want.Code || got.Message != want.Message || string(got.Data) != string(want.Data) {
			t.Errorf("serverError(%s) = %+v, want %+v", raw, *got, want)
		}
	}
}
