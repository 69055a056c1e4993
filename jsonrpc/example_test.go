package jsonrpc_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/jsonrpc"
)

// Answers are appended to a buffer, the id and the result as the bytes
// they came as.
func ExampleAppendResult() {
	b := jsonrpc.AppendResult(nil, json.RawMessage(`7`), json.RawMessage(`{"tools":[]}`))
	fmt.Println(string(b))
	// Output: {"jsonrpc":"2.0","id":7,"result":{"tools":[]}}
}

// An Error is a Go error that is answered as it is.
func ExampleErrorf() {
	err := jsonrpc.Errorf(-32602, "unknown tool %q", "nope")
	fmt.Println(string(jsonrpc.AppendError(nil, json.RawMessage(`"a"`), err)))
	// Output: {"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"unknown tool \"nope\""}}
}
