package aggregator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpx/mcpx/proxytool"
)

// A tools/call naming a tool mcpx does not serve is answered with a tool
// result whose isError is set, not a JSON-RPC error: the model that
// picked the name reads a result and can retry with a served one, which
// the text suggests; a JSON-RPC error mostly reaches the user, not the
// model. The reference server (the TypeScript SDK) answers the same way,
// and the MCP conformance suite expects it. Malformed params (no name, a
// name that is not a string, params not an object) stay -32602.

// maxSuggestions is how many served names an unknown tool's answer offers.
const maxSuggestions = 3

// unknownTool is the tools/call result for a name the client is not
// served: it names the tool, why when the config (a filter) or a server's
// state (a login) explains it, and the closest served names.
func (a *Aggregator) unknownTool(name string) json.RawMessage {
	if f := a.Catalog().FilteredOut(KindTool, name); f != nil {
		return toolError(a.opts.Redact(f.Error()))
	}
	text := fmt.Sprintf("unknown tool %q", name)
	if hint := a.loginHint(name); hint != "" {
		text += ": " + hint
	} else if _, ok := a.Catalog().Tool(name); ok && a.exposeProxy() {
		// expose proxy: the catalog has it, the client calls it through
		// the proxy tool.
		return toolError(a.opts.Redact(fmt.Sprintf(`tool %q is served through the %q tool: call it with {"action":"call","type":"tool","path":%q}`,
			name, proxytool.Name, name)))
	}
	if near := proxytool.Closest(a.servedTools(), name, maxSuggestions); len(near) > 0 {
		quoted := make([]string, len(near))
		for i, it := range near {
			quoted[i] = fmt.Sprintf("%q", it.Name)
		}
		text += "; did you mean " + strings.Join(quoted, ", ") + "?"
	}
	return toolError(a.opts.Redact(text))
}

// servedTools are the tools the client is shown by tools/list.
func (a *Aggregator) servedTools() []proxytool.Item {
	var items []proxytool.Item
	if a.exposeProxy() {
		items = append(items, proxytool.Item{Kind: proxytool.KindTool, Name: proxytool.Name})
	}
	for _, e := range a.Catalog().Tools {
		if a.exposeDirect() || e.direct {
			items = append(items, e.item())
		}
	}
	return items
}
