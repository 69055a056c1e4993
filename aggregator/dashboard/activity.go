package dashboard

import (
	"net/http"
	"slices"

	"github.com/mcpx/mcpx/audit"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/telemetry"
)

// activityLines is how many of the trail's lines the activity page shows.
const activityLines = 200

type activityData struct {
	Server, Tool, Principal string
	Servers                 []string // the servers to filter by
	Lines                   []audit.Line
	Off                     bool   // no trail is kept
	Error                   string // the trail could not be read
	Query                   string // the filter, as the live part's query
}

func (d *Dashboard) activity(w http.ResponseWriter, r *http.Request, cat Catalog) {
	q := r.URL.Query()
	a := activityData{Server: q.Get("server"), Tool: q.Get("tool"), Principal: q.Get("principal"), Off: d.o.AuditPath == ""}
	allowed := map[string]bool{}
	for _, s := range cat.Servers() {
		allowed[s.Name] = true
		a.Servers = append(a.Servers, s.Name)
	}
	profile := principal.ProfileOf(r.Context()) != ""
	// A line names the tool as its server does; the filter takes that
	// name or the exposed one.
	tool := func(l audit.Line) bool { return l.Tool == a.Tool || l.Prompt == a.Tool || l.URI == a.Tool }
	if e, ok := cat.Catalog().Tool(a.Tool); ok {
		tool = func(l audit.Line) bool { return l.Tool == a.Tool || l.Server == e.Server && l.Tool == e.Original }
	}
	if !a.Off {
		lines, err := audit.Last(d.o.AuditPath, activityLines, func(l audit.Line) bool {
			// A profile's view shows the calls to its own servers only.
			return (!profile || allowed[l.Server]) &&
				(a.Server == "" || l.Server == a.Server) &&
				(a.Tool == "" || tool(l)) &&
				(a.Principal == "" || l.Principal == a.Principal)
		})
		if err != nil {
			a.Error = d.o.Redact(err.Error())
		}
		slices.Reverse(lines) // newest first
		a.Lines = lines
	}
	live := r.URL.Query()
	live.Set("part", "live")
	d.render(w, r, http.StatusOK, "activity", &page{Title: "Activity", Live: "/ui/activity?" + live.Encode(), Data: a})
}

type numbersData struct {
	telemetry.Numbers
	Off       bool
	Error     string
	Withheld  int
	States    map[string]int
	Upstreams int
}

func (d *Dashboard) numbers(w http.ResponseWriter, r *http.Request, cat Catalog) {
	n := numbersData{Off: d.o.Numbers == nil, States: map[string]int{}}
	allowed := map[string]bool{}
	for _, s := range cat.Servers() {
		allowed[s.Name] = true
		n.States[string(s.State)]++
		n.Upstreams++
	}
	for server, count := range cat.Catalog().Withheld() {
		if allowed[server] {
			n.Withheld += count
		}
	}
	if !n.Off {
		got, err := d.o.Numbers(r.Context())
		if err != nil {
			n.Error = d.o.Redact(err.Error())
		}
		if principal.ProfileOf(r.Context()) != "" {
			// A profile's view: its servers' numbers alone.
			got = onlyServers(got, allowed)
		}
		n.Numbers = got
	}
	d.render(w, r, http.StatusOK, "numbers", &page{Title: "Numbers", Live: "/ui/numbers?part=live", Data: n})
}

// onlyServers keeps the numbers of the allowed servers, totalled again.
func onlyServers(n telemetry.Numbers, allowed map[string]bool) telemetry.Numbers {
	var out telemetry.Numbers
	for _, s := range n.Servers {
		if allowed[s.Server] {
			out.Servers = append(out.Servers, s)
			out.Total.Calls += s.Calls
			out.Total.Errors += s.Errors
			out.Total.Seconds += s.Seconds
		}
	}
	return out
}
