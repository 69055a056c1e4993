package rawjson_test

import (
	"fmt"

	"github.com/mcpx/mcpx/rawjson"
)

// Replace swaps one member's value and keeps every other byte of the
// message as it came: spacing, key order, numbers as written.
func ExampleReplace() {
	msg := []byte(`{"jsonrpc":"2.0", "id":7, "result":{"n":1.50}}`)
	out, found, err := rawjson.Replace(msg, "id", []byte(`"mcpx-1"`))
	fmt.Println(string(out), found, err)
	// Output: {"jsonrpc":"2.0", "id":"mcpx-1", "result":{"n":1.50}} true <nil>
}

// Get reads one top-level member without decoding the rest.
func ExampleGet() {
	v, err := rawjson.Get([]byte(`{"method":"tools/call","params":{"name":"echo"}}`), "params")
	fmt.Println(string(v), err)
	// Output: {"name":"echo"} <nil>
}
