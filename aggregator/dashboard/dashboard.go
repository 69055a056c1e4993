package dashboard

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/mcpx/mcpx/aggregator"
	"github.com/mcpx/mcpx/internal/pagepolicy"
	"github.com/mcpx/mcpx/internal/principal"
	"github.com/mcpx/mcpx/telemetry"
	"github.com/mcpx/mcpx/trust"
	"github.com/mcpx/mcpx/upstream"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Catalog is what the dashboard reads of the catalog a request is shown:
// the whole one, or a profile's view. *aggregator.Aggregator satisfies
// it. Its methods are called concurrently.
type Catalog interface {
	// Servers are the statuses of the upstreams the catalog shows.
	Servers() []upstream.Status
	// Catalog is the catalog now.
	Catalog() *aggregator.Catalog
	// CallTool calls a tool by exposed name through the ordinary call
	// path, which gates, audits and traces it.
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
}

// Control makes the changes the CLI makes on a running serve: the
// composition root gives the same functions its commands call. Its
// methods are called concurrently.
type Control interface {
	// Restart closes one upstream and connects it again.
	Restart(server string) error
	// SetEnabled enables or disables a server in the config file, which
	// the running serve reloads (mcpx enable, mcpx disable).
	SetEnabled(server string, enabled bool) error
	// Approve approves what a review saw and shows it to clients (mcpx
	// trust).
	Approve(r *trust.Review) error
}

// Options configure [New].
type Options struct {
	// View returns the catalog shown to a request limited to profile
	// ("": the whole catalog), or nil when there is no such profile.
	// Required.
	View func(profile string) Catalog
	// Control makes the buttons' changes; nil shows no buttons.
	Control Control
	// AuditPath is the audit trail's file, for the activity page; ""
	// means there is none.
	AuditPath string
	// Numbers reads the call metrics /metrics exports; nil means there
	// are none.
	Numbers func(ctx context.Context) (telemetry.Numbers, error)
	// Redact removes secrets from an error shown on a page; nil keeps
	// the text.
	Redact func(string) string
	// Logger hears of each change made from the dashboard; nil discards.
	Logger *slog.Logger
}

// Dashboard is the handler of /ui and everything under it.
type Dashboard struct {
	o      Options
	pages  map[string]*template.Template
	static http.Handler
	secret [32]byte // the CSRF tokens' key (csrf.go)
}

// New returns the dashboard, its templates parsed.
func New(opts *Options) (*Dashboard, error) {
	if opts == nil || opts.View == nil {
		return nil, errors.New("dashboard: Options.View is required")
	}
	d := &Dashboard{o: *opts, pages: map[string]*template.Template{}}
	if d.o.Redact == nil {
		d.o.Redact = func(s string) string { return s }
	}
	if d.o.Logger == nil {
		d.o.Logger = slog.New(slog.DiscardHandler)
	}
	rand.Read(d.secret[:]) // never fails (crypto/rand)
	for _, name := range []string{"servers", "tools", "tool", "trust", "activity", "numbers"} {
		t, err := template.New("layout.tmpl").Funcs(funcs()).ParseFS(templateFS, "templates/layout.tmpl", "templates/"+name+".tmpl")
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		d.pages[name] = t
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("dashboard: static files: %w", err)
	}
	d.static = http.StripPrefix("/ui/static/", http.FileServerFS(sub))
	return d, nil
}

// ServeHTTP serves the pages, their live parts (?part=live), the
// buttons' POSTs and the static files.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pagepolicy.Set(w.Header())
	if strings.HasPrefix(r.URL.Path, "/ui/static/") {
		w.Header().Set("Cache-Control", "max-age=3600")
		d.static.ServeHTTP(w, r)
		return
	}
	profile := principal.ProfileOf(r.Context())
	cat := d.o.View(profile)
	if cat == nil {
		http.Error(w, "forbidden: profile "+profile+" is not in the config", http.StatusForbidden)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case "/ui", "/ui/", "/ui/servers":
		d.servers(w, r, cat)
	case "/ui/servers/restart", "/ui/servers/enable", "/ui/servers/disable":
		d.serverAction(w, r, cat)
	case "/ui/tools":
		d.tools(w, r, cat)
	case "/ui/tool":
		d.tool(w, r, cat)
	case "/ui/trust":
		d.trust(w, r, cat)
	case "/ui/trust/approve", "/ui/trust/reject":
		d.trustAction(w, r, cat)
	case "/ui/activity":
		d.activity(w, r, cat)
	case "/ui/numbers":
		d.numbers(w, r, cat)
	default:
		http.NotFound(w, r)
	}
}

// page is what the layout renders around a page's own data.
type page struct {
	Title, Nav string
	CSRF       string
	Principal  string
	Profile    string
	Controls   bool // the buttons are shown
	Flash      string
	Error      string
	// Live is the URL the script fetches the live part from; "" none.
	Live string
	Data any
}

// render writes a page, or with ?part=NAME the template NAME of it
// alone (the live part the script refreshes), compressed when the
// client takes gzip.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) {
	p.CSRF = d.csrfToken(r)
	p.Principal = principal.Of(r.Context())
	p.Profile = principal.ProfileOf(r.Context())
	p.Controls = d.o.Control != nil
	if p.Nav == "" {
		p.Nav = name
	}
	tmpl := "layout.tmpl"
	switch part := r.URL.Query().Get("part"); part {
	case "":
	case "live", "result":
		tmpl = part
	default:
		http.Error(w, "unknown part "+part, http.StatusBadRequest)
		return
	}
	var b bytes.Buffer
	if err := d.pages[name].ExecuteTemplate(&b, tmpl, p); err != nil {
		d.o.Logger.Error("dashboard: render", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Add("Vary", "Accept-Encoding")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") && b.Len() > 1024 {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(status)
		gz := gzip.NewWriter(w)
		gz.Write(b.Bytes())
		gz.Close()
		return
	}
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// shown reports whether the catalog shows server.
func shown(cat Catalog, server string) bool {
	for _, s := range cat.Servers() {
		if s.Name == server {
			return true
		}
	}
	return false
}
