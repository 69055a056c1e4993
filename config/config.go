package config

import (
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

// Transport is how mcpx talks to an upstream server.
type Transport string

// The transports an upstream server can use.
const (
	TransportStdio Transport = "stdio" // a child process speaking JSON-RPC on stdin/stdout
	TransportHTTP  Transport = "http"  // streamable HTTP
	TransportSSE   Transport = "sse"   // the older HTTP+SSE transport
)

// Expose says how upstream capabilities are shown to an MCP client.
type Expose string

// The values of the top-level expose setting.
const (
	ExposeProxy  Expose = "proxy"  // upstreams only through the proxy tool (the default)
	ExposeDirect Expose = "direct" // prefixed upstream tools, prompts and resources, no proxy tool
	ExposeBoth   Expose = "both"   // both of the above
)

// Defaults applied by [Load] and [Parse].
const (
	DefaultSeparator     = "_"
	DefaultTimeout       = 30 * time.Second
	DefaultBrowserPrefix = "browser"
)

// BrowserServerName is the name under which the browser's tools are listed
// and reported, next to the configured servers.
const BrowserServerName = "browser"

// Config is a loaded, validated and expanded configuration.
type Config struct {
	// File is the file loaded; "" when none was found (not an error).
	File string
	// Servers are the upstream servers in the order the file gives them:
	// of two that offer the same exposed name, the first keeps it.
	Servers []Server
	// Browser is nil when the file has no browser section.
	Browser *Browser
	// Expose defaults to ExposeProxy.
	Expose Expose
	// Separator goes between a prefix and an original name; default "_".
	Separator string
	// Limits are the top-level callTimeout, maxCallTime and maxConcurrent:
	// the defaults of every server's own.
	Limits Limits
	// MaxMessageBytes bounds every JSON-RPC message in and out (client
	// stdin and stdout, upstream stdio, HTTP and SSE); default 64 MiB.
	MaxMessageBytes int64
	// ShutdownTimeout bounds how long mcpx takes to exit after stdin
	// closes or a signal, whatever its peers do; default 5s.
	ShutdownTimeout time.Duration
	// ReadyTimeout bounds how long serve's first list waits for servers
	// still starting; later ones are announced with list_changed.
	// Default 2s.
	ReadyTimeout time.Duration
	// Lazy and IdleTimeout are the top-level defaults of the servers' own
	// lazy and idleTimeout keys (false and 0, off).
	Lazy        bool
	IdleTimeout time.Duration
	// HTTP guards `serve --http` (the http section).
	HTTP HTTP
	// Audit is the audit trail's settings; on unless the file says
	// "audit": false.
	Audit Audit
	// Results bounds the store of results cut by maxResultBytes.
	Results Results
	// Code is the proxy tool's code mode (the run action).
	Code Code
	// Trust is the top-level trust (or MCPX_TRUST), the default of every
	// server's own; "" when unset: see [Config.TrustOf].
	Trust Trust
	// Profiles are the top-level profiles by name; nil when none.
	Profiles map[string]*Profile
	// Profile is the one --profile or MCPX_PROFILE chose; nil shows the
	// whole catalog.
	Profile *Profile
	// Warnings are non-fatal findings (unknown keys, ...), each naming the
	// file, the server and the field. They never contain a value.
	Warnings []string

	// substituted holds every value a ${VAR} expanded to, for Secrets.
	substituted []string
}

// Server is one upstream MCP server.
type Server struct {
	Name      string
	Transport Transport
	Command   string            // stdio only
	Args      []string          // stdio only; ${VAR} expanded
	Env       map[string]string // stdio only; values ${VAR} expanded
	Cwd       string            // stdio only; ${VAR} expanded
	URL       string            // http and sse only; ${VAR} expanded
	Headers   map[string]string // http and sse only; values ${VAR} expanded
	// Auth is the server's OAuth settings (http and sse only); nil means
	// the defaults.
	Auth *Auth
	// Prefix defaults to Name; an explicit "" means no prefix.
	Prefix string
	// Enabled defaults to true; "enabled": false or "disabled": true
	// (Cline/Claude style) turns the server off.
	Enabled bool
	// Timeout bounds connect and initialize; default 30s.
	Timeout time.Duration
	Tools   Filter
	Prompts Filter
	// Limits bound the calls to this server; the top-level keys of the
	// same names give the defaults.
	Limits
	// Lazy starts the server on its first call rather than at mcpx start;
	// default false (or the top-level lazy).
	Lazy bool
	// IdleTimeout stops the server after that long with no call in flight
	// and no resource subscription; the next call starts it again. Zero
	// (the default, or the top-level idleTimeout) never stops it.
	IdleTimeout time.Duration
	// Problem says why the server cannot start although the file loaded:
	// a ${VAR} it uses is not set, e.g. "GITHUB_TOKEN is not set (env
	// GITHUB_TOKEN)". Such a server is kept, to be reported as failed,
	// and never started. Empty for a server that can start (and for a
	// disabled one, which never starts).
	Problem string
	// PerSession starts one instance of the server per served session
	// (for stateful servers: a browser, a memory store), stopped when the
	// session ends; default false, one instance shared by every session.
	PerSession bool
	// Trust is the server's own trust key, "" when unset: see
	// [Config.TrustOf].
	Trust Trust
	// Protocol is the protocol era mcpx speaks to the server:
	// ProtocolAuto (or "", the default) probes, and speaks the legacy era
	// to a server that speaks both; ProtocolLegacy and ProtocolModern
	// insist on one.
	Protocol Protocol
}

// Protocol is a server's protocol key: which era mcpx speaks to it.
type Protocol string

const (
	// ProtocolAuto asks server/discover and falls back to initialize when
	// the server is not modern, or is legacy too: only the legacy era
	// carries what a legacy tool asks the client in the middle of a call.
	ProtocolAuto Protocol = "auto"
	// ProtocolLegacy always starts with initialize (MCP 2025-11-25 and
	// before), never probing.
	ProtocolLegacy Protocol = "legacy"
	// ProtocolModern speaks only MCP 2026-07-28, also to a server that
	// speaks both: one that does not is a failed connect, not a fallback.
	ProtocolModern Protocol = "modern"
)

// Filter selects capabilities by name with shell-style globs (path.Match).
// An empty Allow allows everything; Deny wins over Allow.
type Filter struct {
	Allow []string
	Deny  []string
	// Override rewrites what clients see of a capability, keyed by the
	// server's own name; the allow and deny globs match that own name.
	Override map[string]Override
}

// Allows reports whether the filter lets name through.
func (f Filter) Allows(name string) bool {
	if matchAny(f.Deny, name) {
		return false
	}
	return len(f.Allow) == 0 || matchAny(f.Allow, name)
}

// Excludes names the list that keeps name out: "deny" when a deny pattern
// matches it, "allow" when allow is set and no pattern there matches it,
// "" when the filter lets it through.
func (f Filter) Excludes(name string) string {
	switch {
	case matchAny(f.Deny, name):
		return "deny"
	case len(f.Allow) > 0 && !matchAny(f.Allow, name):
		return "allow"
	}
	return ""
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		// Patterns were checked when the config was parsed; a bad one
		// built by hand matches nothing.
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// DefaultBrowserListen is where mcpx hosts the relay in local mode: where
// the Blueprint extension looks when it has no token.
const DefaultBrowserListen = "127.0.0.1:5555"

// Browser is the optional browser relay section. With neither URL nor
// Token it is in local mode: mcpx hosts the relay on Listen, or joins the
// mcpx that does.
type Browser struct {
	URL          string // may be "" (it can come from the token); ${VAR} expanded
	Token        string // ${VAR} expanded
	Extension    string
	Prefix       string // default "browser"; an explicit "" means no prefix
	CDP          bool
	Listen       string   // local mode: a loopback host:port; default DefaultBrowserListen
	ExtensionIDs []string // local mode: the extension ids /extension admits; empty admits any
	PageTools    PageTools
	// MaxImageBytes bounds a screenshot's decoded size; 0 means the
	// browser tools' default (1 MiB). At least MinBrowserImageBytes.
	MaxImageBytes int64
	// MaxSnapshotChars bounds the text of a snapshot, of the console
	// messages and of an evaluate result; 0 means the default (50,000).
	// At least MinBrowserSnapshotChars.
	MaxSnapshotChars int
	// ExtensionWait is how long, after mcpx reaches the relay, a browser
	// call that finds no browser connected waits for one; 0 means the
	// browser client's default (5s). At most MaxBrowserExtensionWait.
	ExtensionWait time.Duration
}

// MaxBrowserExtensionWait bounds browser.extensionWait: a call waits no
// longer than this for a browser to connect.
const MaxBrowserExtensionWait = time.Minute

// Local reports whether the section asks mcpx to host (or join) a relay
// of its own rather than dial a remote one.
func (b *Browser) Local() bool { return b.URL == "" && b.Token == "" }

// Secrets returns every value that must never reach a log line: env values,
// header values, the browser token, the user name, password and query
// values of every URL (where API keys often ride: ?api_key=..., or
// https://user:token@host), and every value a ${VAR} expanded to anywhere
// in the file. Each is non-empty; the list is sorted and has no duplicates.
func (c *Config) Secrets() []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, s := range c.Servers {
		for _, v := range s.Env {
			add(v)
		}
		for _, v := range s.Headers {
			add(v)
		}
		urlSecrets(s.URL, add)
		if s.Auth != nil {
			add(s.Auth.ClientSecret)
		}
	}
	if c.Browser != nil {
		add(c.Browser.Token)
		urlSecrets(c.Browser.URL, add)
	}
	add(c.HTTP.Token)
	for _, v := range c.substituted {
		add(v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// urlSecrets passes the parts of a URL that carry credentials to add: the
// user name and password, and each query value both as written and
// decoded (an error may quote either form).
func urlSecrets(raw string, add func(string)) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.User != nil {
		add(u.User.Username())
		pw, _ := u.User.Password()
		add(pw)
		// Also as the URL's own text spells them, percent-encoded.
		user, pw, _ := strings.Cut(u.User.String(), ":")
		add(user)
		add(pw)
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		add(v)
		if dec, err := url.QueryUnescape(v); err == nil {
			add(dec)
		}
	}
}

// Error is the error for every config problem. Its text names the file, the
// server and the field, and never contains an env value, header value or
// token.
type Error struct {
	File   string // the config file; "" for flags and environment variables
	Server string // the server's name; "" outside the servers section
	Field  string // e.g. "transport", "env.API_KEY", "args[2]", "browser.token", "expose"
	Msg    string
	// Err is a sentinel callers test with errors.Is ([ErrExists],
	// [ErrNoServer], [ErrWrite]); nil for most errors. Msg says it.
	Err error
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// Error returns e.g.
//
//	config mcpx.json: servers.remote.transport: unknown transport "ftp" (want stdio, http or sse)
func (e *Error) Error() string {
	s := "config"
	if e.File != "" {
		s += " " + e.File
	}
	where := e.Field
	if e.Server != "" {
		where = "servers." + e.Server
		if e.Field != "" {
			where += "." + e.Field
		}
	}
	if where != "" {
		s += ": " + where
	}
	return s + ": " + e.Msg
}
