package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mcpx/mcpx/aggregator"
)

// toolsShown is how many tools the tools page lists at most: the first
// page stays small with thousands of tools; the search narrows them.
const toolsShown = 100

type toolsData struct {
	Query string
	Tools []*aggregator.Entry
	More  int // matches not listed
}

// tools lists the catalog's tools, or those matching the query ranked as
// the proxy tool's list ranks them (Catalog.Rank: the same search).
func (d *Dashboard) tools(w http.ResponseWriter, r *http.Request, cat Catalog) {
	c := cat.Catalog()
	q := r.URL.Query().Get("q")
	all := c.Tools
	if q != "" {
		all = c.Rank(aggregator.KindTool, q)
	}
	t := toolsData{Query: q, Tools: all}
	if len(all) > toolsShown {
		t.Tools, t.More = all[:toolsShown], len(all)-toolsShown
	}
	d.render(w, r, http.StatusOK, "tools", &page{Title: "Tools", Data: t})
}

type toolData struct {
	Tool   *aggregator.Entry
	Schema string  // the inputSchema, indented
	Fields []field // the form built from it
	Raw    string  // the raw arguments sent, when given
	// Result is the call's result, indented; Error why there is none.
	Result, Error string
	IsError       bool
	Called        bool
}

// tool shows one tool with its schema and a form to try it; its POST
// calls the tool with the form's arguments and shows the result.
func (d *Dashboard) tool(w http.ResponseWriter, r *http.Request, cat Catalog) {
	name := r.URL.Query().Get("name")
	e, ok := cat.Catalog().Tool(name)
	if !ok {
		http.Error(w, "no tool "+quoteName(name)+" here", http.StatusNotFound)
		return
	}
	var def struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	json.Unmarshal(e.JSON, &def)
	t := toolData{Tool: e, Schema: indent(def.InputSchema), Fields: formFields(def.InputSchema)}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		d.render(w, r, http.StatusOK, "tool", &page{Title: e.Name, Nav: "tools", Data: t})
		return
	}
	if !d.checkPost(w, r) {
		return
	}
	t.Called = true
	t.Raw = r.PostForm.Get("raw")
	for i := range t.Fields {
		t.Fields[i].Value = r.PostForm.Get(t.Fields[i].Input())
	}
	args, err := arguments(t.Fields, t.Raw)
	if err != nil {
		t.Error = err.Error()
		d.render(w, r, http.StatusOK, "tool", &page{Title: e.Name, Nav: "tools", Data: t})
		return
	}
	res, err := cat.CallTool(r.Context(), e.Name, args)
	switch {
	case err != nil:
		t.Error = d.o.Redact(err.Error())
	default:
		t.Result = indent(res)
		var is struct {
			IsError bool `json:"isError"`
		}
		json.Unmarshal(res, &is)
		t.IsError = is.IsError
	}
	d.render(w, r, http.StatusOK, "tool", &page{Title: e.Name, Nav: "tools", Data: t})
}

// indent is raw JSON indented for a person; raw itself when it is not
// JSON, "" for none.
func indent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
