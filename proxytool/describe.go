package proxytool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpx/mcpx/rawjson"
)

// maxServersNamed bounds the servers the description names; past it, it
// says how many more there are.
const maxServersNamed = 12

// ToolFor returns the proxy tool's MCP Tool object as a client is shown
// it over a catalog: Tool's, with a description that names the servers
// behind it (servers, in order, with what each offers; nil: those the
// catalog has) and takes its examples from the catalog's tools, so that
// a model learns from its first read what is there and how to reach it.
func ToolFor(servers []string, f Finder) json.RawMessage {
	tool := Tool()
	out, _, err := rawjson.Replace(tool, "description", quote(describe(servers, f)))
	if err != nil {
		return tool
	}
	return out
}

// describe is the proxy tool's description over a catalog.
func describe(servers []string, f Finder) string {
	tools := f.Items(KindTool)
	counts := map[string]*[3]int{}
	for i, k := range []Kind{KindTool, KindResource, KindPrompt} {
		for _, it := range f.Items(k) {
			if it.Server == "" {
				continue
			}
			if counts[it.Server] == nil {
				counts[it.Server] = &[3]int{}
				if servers == nil || !slices.Contains(servers, it.Server) {
					servers = append(servers, it.Server)
				}
			}
			counts[it.Server][i]++
		}
	}
	var b strings.Builder
	b.WriteString("Reach the tools, resources and prompts of the MCP servers behind this one.")
	if len(servers) > 0 {
		b.WriteString(" Servers (tools): ")
		for i, s := range servers {
			if i == maxServersNamed {
				fmt.Fprintf(&b, ", and %d more", len(servers)-maxServersNamed)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(oneLine(s, 40))
			if c := counts[s]; c != nil {
				b.WriteString(" (" + offers(c) + ")")
			}
		}
		b.WriteString(".")
	}
	// Before the catalog is known (a cold start), the examples show the
	// shape only: no name that may not exist.
	ex := example(tools)
	query, path, args := "what you need", "NAME", `{}`
	if ex != nil {
		query, path, args = exampleQuery(ex), ex.Name, exampleArgs(ex)
	}
	fmt.Fprintf(&b, "\n1. list, best match first, 10 at a time (name, description, arguments): {\"action\":\"list\",\"type\":\"tool\",\"query\":%q}. Page with offset; filter_server keeps one server's; no query lists all.", query)
	fmt.Fprintf(&b, "\n2. info, one in full with its input schema: {\"action\":\"info\",\"type\":\"tool\",\"path\":%q}.", path)
	fmt.Fprintf(&b, "\n3. call: {\"action\":\"call\",\"type\":\"tool\",\"path\":%q,\"args\":%s}.", path, args)
	b.WriteString("\nType \"resource\": path is the URI, call reads it. Type \"prompt\": args are strings.")
	return b.String()
}

// offers says what a server offers: its tools, "14"; with resources or
// prompts too, "16, 7 resources, 4 prompts".
func offers(c *[3]int) string {
	parts := []string{fmt.Sprint(c[0])}
	for i, noun := range []string{"", "resource", "prompt"} {
		switch n := c[i]; {
		case i == 0:
		case n == 1:
			parts = append(parts, "1 "+noun)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", n, noun))
		}
	}
	return strings.Join(parts, ", ")
}

// example picks the tool the description shows: the first whose call is
// easy to show (one or two required arguments, each a string or a
// number) and that is not deprecated, else the first tool.
func example(tools []Item) *Item {
	for i := range tools {
		it := &tools[i]
		if strings.Contains(strings.ToLower(it.Description), "deprecated") || len(it.Name) > 40 {
			continue
		}
		req := requiredArgs(it)
		if len(req) >= 1 && len(req) <= 2 {
			return it
		}
	}
	if len(tools) > 0 {
		return &tools[0]
	}
	return nil
}

// requiredArgs returns a tool's required parameters that are strings or
// numbers, as name and type; nil when any required one is of another
// type.
func requiredArgs(it *Item) [][2]string {
	schema, _ := rawjson.Get(it.JSON, "inputSchema")
	var required []string
	if r, _ := rawjson.Get(schema, "required"); r != nil {
		_ = rawjson.Elements(r, func(e []byte) bool {
			if s, ok := rawjson.String(e); ok {
				required = append(required, s)
			}
			return true
		})
	}
	props, _ := rawjson.Get(schema, "properties")
	var out [][2]string
	for _, name := range required {
		p, _ := rawjson.Get(props, name)
		t := typeOf(p, 0)
		if t != "string" && t != "number" && t != "integer" {
			return nil
		}
		out = append(out, [2]string{name, t})
	}
	return out
}

// exampleQuery is what a person might search to find the example tool:
// the words of its original name.
func exampleQuery(it *Item) string {
	name := it.Original
	if name == "" {
		name = it.Name
	}
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == '/' }), " ")
}

// exampleArgs are the example tool's required arguments with stand-in
// values.
func exampleArgs(it *Item) string {
	args := map[string]any{}
	for _, a := range requiredArgs(it) {
		if a[1] == "string" {
			args[a[0]] = "..."
		} else {
			args[a[0]] = 1
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}
