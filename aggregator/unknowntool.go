package aggregator

import (
	"encoding/json"
	"fmt"
	"slices"
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
// served: it names the tool, why when a server's state explains it (a
// login), and the closest served names.
func (a *Aggregator) unknownTool(name string) json.RawMessage {
	text := fmt.Sprintf("unknown tool %q", name)
	if hint := a.loginHint(name); hint != "" {
		text += ": " + hint
	} else if _, ok := a.Catalog().Tool(name); ok && a.exposeProxy() {
		// expose proxy: the catalog has it, the client calls it through
		// the proxy tool.
		return toolError(a.opts.Redact(fmt.Sprintf(`tool %q is served through the %q tool: call it with {"action":"call","type":"tool","path":%q}`,
			name, proxytool.Name, name)))
	}
	if near := closestNames(name, a.servedToolNames(), maxSuggestions); len(near) > 0 {
		quoted := make([]string, len(near))
		for i, n := range near {
			quoted[i] = fmt.Sprintf("%q", n)
		}
		text += "; did you mean " + strings.Join(quoted, ", ") + "?"
	}
	return toolError(a.opts.Redact(text))
}

// servedToolNames are the tool names the client is shown by tools/list.
func (a *Aggregator) servedToolNames() []string {
	var names []string
	if a.exposeProxy() {
		names = append(names, proxytool.Name)
	}
	for _, e := range a.Catalog().Tools {
		if a.exposeDirect() || e.direct {
			names = append(names, e.Name)
		}
	}
	return names
}

// maxCompared bounds the length of a name compared for suggestions: a
// client may send any string, and the edit distance costs the product of
// the two lengths.
const maxCompared = 256

// closestNames returns up to n of names that look like a mistyped name,
// the closest first: those within a third of its length in edits (at
// least two), those it ends (the original name of a prefixed tool), and
// those it contains or that contain it.
func closestNames(name string, names []string, n int) []string {
	if name == "" || len(name) > maxCompared {
		return nil
	}
	type scored struct {
		name string
		d    int
	}
	var near []scored
	lower := strings.ToLower(name)
	limit := max(2, len(name)/3)
	for _, c := range names {
		if len(c) > maxCompared {
			continue
		}
		lc := strings.ToLower(c)
		d := editDistance(lower, lc)
		switch {
		case d <= limit:
		case strings.Contains(lc, lower) || strings.Contains(lower, lc):
			// Related, but ranked after every near miss.
			d += maxCompared
		default:
			continue
		}
		near = append(near, scored{c, d})
	}
	slices.SortStableFunc(near, func(x, y scored) int { return x.d - y.d })
	out := make([]string, 0, min(n, len(near)))
	for _, s := range near[:min(n, len(near))] {
		out = append(out, s.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by byte.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
