package dashboard

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpx/mcpx/hidden"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/upstream"
)

// funcs are the templates' helpers.
func funcs() template.FuncMap {
	return template.FuncMap{
		"visible": hidden.Visible,
		"era":     func(s upstream.Status) upstream.Era { return upstream.EraOf(s.ProtocolVersion) },
		"clip": func(n int, s string) string {
			if len(s) <= n {
				return s
			}
			cut := n
			for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a character
				cut--
			}
			return s[:cut] + "…"
		},
		"clock": func(t time.Time) string { return t.Local().Format("15:04:05") },
		"ms":    func(v float64) string { return fmt.Sprintf("%.1f ms", v) },
		"pct": func(part, whole int64) string {
			if whole == 0 {
				return "0%"
			}
			return fmt.Sprintf("%.1f%%", float64(part)*100/float64(whole))
		},
	}
}

// serverRow is one upstream on the servers page.
type serverRow struct {
	upstream.Status
	Disabled bool
	Problem  string // the last error, or the last line it printed when failed
}

func (d *Dashboard) servers(w http.ResponseWriter, r *http.Request, cat Catalog) {
	var rows []serverRow
	for _, s := range cat.Servers() {
		row := serverRow{Status: s, Disabled: s.State == upstream.StateDisabled, Problem: s.Err}
		if row.Problem == "" && s.State == upstream.StateFailed && s.LastLine != "" {
			row.Problem = s.LastLine
		}
		rows = append(rows, row)
	}
	d.render(w, r, http.StatusOK, "servers", &page{Title: "Servers", Live: "/ui/servers?part=live",
		Flash: flash(r), Data: rows})
}

// flash is the sentence a page shows after a change it redirected from:
// made of known words and a server's name, never of text from the query
// as such.
func flash(r *http.Request) string {
	q := r.URL.Query()
	server := q.Get("server")
	switch q.Get("done") {
	case "restart":
		return "Restarting " + server + "."
	case "enable":
		return "Enabled " + server + " in the config file; the running serve reloads it."
	case "disable":
		return "Disabled " + server + " in the config file; the running serve reloads it."
	case "approve":
		return "Approved the changes of " + server + "; clients are told with list_changed."
	case "reject":
		return "Rejected the changes of " + server + ": the server is disabled, what it changed stays withheld."
	}
	return ""
}

// serverAction serves the servers page's buttons.
func (d *Dashboard) serverAction(w http.ResponseWriter, r *http.Request, cat Catalog) {
	if !d.checkPost(w, r) {
		return
	}
	verb := strings.TrimPrefix(r.URL.Path, "/ui/servers/")
	server := r.PostForm.Get("server")
	if d.o.Control == nil {
		http.Error(w, "forbidden: this dashboard makes no changes", http.StatusForbidden)
		return
	}
	if !shown(cat, server) {
		http.Error(w, "no server "+quoteName(server)+" here", http.StatusNotFound)
		return
	}
	var err error
	switch verb {
	case "restart":
		err = d.o.Control.Restart(server)
	case "enable", "disable":
		err = d.o.Control.SetEnabled(server, verb == "enable")
	}
	d.done(w, r, "/ui/servers", verb, server, err)
}

// done ends a change: the error on a page of its own, or a redirect to
// the page it was made from (so that a reload does not make it again).
func (d *Dashboard) done(w http.ResponseWriter, r *http.Request, back, verb, server string, err error) {
	who := principal.Of(r.Context())
	if err != nil {
		d.o.Logger.Warn("dashboard: "+verb+" failed", "server", server, "principal", who, "err", d.o.Redact(err.Error()))
		status := http.StatusInternalServerError
		if errors.Is(err, errConflict) {
			status = http.StatusConflict
		}
		http.Error(w, verb+" "+server+": "+d.o.Redact(err.Error()), status)
		return
	}
	d.o.Logger.Info("dashboard: "+verb, "server", server, "principal", who)
	http.Redirect(w, r, back+"?"+url.Values{"done": {verb}, "server": {server}}.Encode(), http.StatusSeeOther)
}

// quoteName is a name as an error names it.
func quoteName(s string) string { return fmt.Sprintf("%q", s) }
