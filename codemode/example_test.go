package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpx/mcpx/codemode"
)

// A script calls the proxy's verbs and returns only what it needs; here
// the host is a proxy with one tool, add, that answers with
// structuredContent.
func ExampleEngine_Run() {
	host := codemode.Host{Proxy: func(_ context.Context, args json.RawMessage) json.RawMessage {
		var call struct {
			Action, Path string
			Args         struct{ X, Y int }
		}
		json.Unmarshal(args, &call)
		sum := call.Args.X + call.Args.Y
		return fmt.Appendf(nil, `{"content":[{"type":"text","text":"%d"}],"structuredContent":{"sum":%d}}`, sum, sum)
	}}
	e := codemode.NewEngine(codemode.Limits{})
	r := e.Run(context.Background(), `
		const parts = await proxy.callAll([["add", {x: 1, y: 2}], ["add", {x: 3, y: 4}]]);
		return parts.map((p) => p.sum).reduce((a, b) => a + b);`, host)
	fmt.Println(string(r.Value), r.Calls, r.Err)
	// Output: 10 2 <nil>
}

// A script that breaks a limit fails with the limit named.
func ExampleRun_limit() {
	r := codemode.Run(context.Background(), `return "x".repeat(1 << 28)`, codemode.Host{}, codemode.Limits{Memory: 8 << 20})
	fmt.Println(r.Err)
	// Output: the script ran out of memory: its limit is 8 MiB (code.memory)
}
