package proxytool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mcpx/mcpx/rawjson"
)

// Runner is an optional ability of a [Catalog]: running the scripts of
// the run action (code mode). Only a catalog with it has the action; the
// proxy's schema shows it when the Tool object went through [WithRun].
type Runner interface {
	// Run runs code and answers the run action with a CallToolResult,
	// never failing: a script that throws or breaks a limit is a result
	// with isError set. verb answers one call of the proxy tool given
	// its arguments (list, info or call, never run), as a client's call
	// would be answered, with the run's _meta; Run may call it from any
	// goroutine, many at once.
	Run(ctx context.Context, code string, verb func(ctx context.Context, args json.RawMessage) json.RawMessage) json.RawMessage
}

// canRun says whether this proxy has the run action.
func (p *Proxy) canRun() bool {
	_, ok := p.c.(Runner)
	return ok
}

// run answers the run action: the catalog's Runner runs the script, whose
// every inner call is an ordinary call of this proxy.
func (p *Proxy) run(ctx context.Context, req request, meta json.RawMessage) json.RawMessage {
	r := p.c.(Runner) // decodeCall allows run only then
	verb := func(ctx context.Context, args json.RawMessage) json.RawMessage {
		// Decoded as a client's call without run: a script cannot nest one.
		inner, err := decodeArgs(args)
		if err != nil {
			return errorResult(err.Error())
		}
		switch {
		case inner.action == actionList:
			return p.list(ctx, inner)
		case inner.action == actionInfo:
			return p.info(inner)
		case inner.kind == KindTool:
			return p.callTool(ctx, inner, meta)
		case inner.kind == KindResource:
			return p.readResource(ctx, inner, meta)
		}
		return p.getPrompt(ctx, inner, meta)
	}
	return r.Run(ctx, req.code, verb)
}

// WithRun returns the proxy's Tool object (from [Tool] or [ToolFor])
// with the run action: in the action enum, the code parameter, type no
// longer required (a script names its own), and the description's lines
// that teach it. A client is shown it when the catalog is a [Runner].
func WithRun(tool json.RawMessage) json.RawMessage {
	schema, _ := rawjson.Get(tool, "inputSchema")
	props, _ := rawjson.Get(schema, "properties")
	descJSON, _ := rawjson.Get(tool, "description")
	desc, ok := rawjson.String(descJSON)
	if !ok || len(props) < 2 || props[len(props)-1] != '}' {
		return tool
	}
	props, _, _ = rawjson.Replace(props, "action", []byte(`{"type":"string","enum":["list","info","call","run"]}`))
	props = append(props[:len(props)-1:len(props)-1],
		`,"code":{"type":"string","description":"For run: a JavaScript async function body; its return value is the answer."}}`...)
	schema, found1, err1 := rawjson.Replace(schema, "properties", props)
	schema, found2, err2 := rawjson.Replace(schema, "required", []byte(`["action"]`))
	t, found3, err3 := rawjson.Replace(tool, "inputSchema", schema)
	t, found4, err4 := rawjson.Replace(t, "description", quote(desc+runLines))
	if !(found1 && found2 && found3 && found4) || errors.Join(err1, err2, err3, err4) != nil {
		return tool
	}
	return t
}

// runLines teach the run action in the proxy's description.
const runLines = "\n4. run a script that makes many calls and returns only what you need, to save round trips and tokens: " +
	`{"action":"run","code":"const r = await proxy.callAll(files.map(f => ['NAME', {path: f}])); return r.filter(x => x.ok).length"}. ` +
	"In it: proxy.list(query), proxy.info(name), proxy.call(name, args, {type:'resource'|'prompt', raw:true for the whole result}), proxy.callAll([[name, args], ...]) in parallel. " +
	"A call gives the tool's structured result (\"returns\" in list), else its text, parsed when JSON; a failed call throws. console.log lines come back too. " +
	"Calls of tools that may change something ask the user first."
