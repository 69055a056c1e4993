package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode"
)

// Parse parses, expands and validates the config in data. file names it in
// errors and warnings and picks the format by extension: .json, .yaml or
// .yml, .toml; JSON (with comments and trailing commas allowed, as in VS
// Code's mcp.json) when there is no extension or an unknown one. An empty
// data is a config with every default.
//
// Of opts only LookupEnv, Expose, Separator and Profile are used; nil opts means
// defaults. A problem is reported as an [*Error]; several problems (at most
// one per server) come back joined with [errors.Join].
func Parse(file string, data []byte, opts *LoadOptions) (*Config, error) {
	o := opts.withDefaults()
	tree, err := decode(file, data)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, lookup: o.LookupEnv, cfg: &Config{File: file}, order: serverOrder(file, data)}
	p.topLimits(tree)
	p.lifecycle(tree)
	p.servers(tree)
	p.browser(tree)
	p.http(tree)
	p.audit(tree)
	p.results(tree)
	p.code(tree)
	if p.cfg.Browser != nil {
		for _, s := range p.cfg.Servers {
			if s.Name == BrowserServerName {
				p.fail(s.Name, "", "the name \""+BrowserServerName+"\" belongs to the browser section; rename this server")
			}
		}
	}
	p.settings(tree, &o)
	p.trust(tree, &o)
	p.profiles(tree, &o)
	p.checkKeyProfiles()
	p.checkOAuthProfiles()
	p.warnUnknownTop(tree)
	switch len(p.errs) {
	case 0:
		return p.cfg, nil
	case 1:
		return nil, p.errs[0]
	}
	return nil, errors.Join(p.errs...)
}

// parser turns a decoded tree into a Config, collecting errors and warnings.
type parser struct {
	file   string
	lookup func(string) (string, bool)
	cfg    *Config
	errs   []error
	// order is the server names as the file writes them.
	order []string
}

func (p *parser) fail(server, field, msg string) {
	p.errs = append(p.errs, &Error{File: p.file, Server: server, Field: field, Msg: msg})
}

func (p *parser) warn(server, field, msg string) {
	w := &Error{File: p.file, Server: server, Field: field, Msg: msg}
	p.cfg.Warnings = append(p.cfg.Warnings, w.Error())
}

// servers reads "servers" and its alias "mcpServers" (Claude Desktop,
// Cursor, Claude Code), keeping the order the file gives them.
func (p *parser) servers(tree map[string]any) {
	raw := map[string]any{}
	from := map[string]string{}
	for _, section := range []string{"servers", "mcpServers"} {
		v, ok := tree[section]
		if !ok || v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			p.fail("", section, "want an object of servers, not "+kind(v))
			continue
		}
		for _, name := range orderNames(m, p.order) {
			switch {
			case name == "":
				p.fail("", section, "empty server name")
			case strings.ContainsFunc(name, unicode.IsControl):
				p.fail("", section, fmt.Sprintf("server name %q contains a control character", name))
			case from[name] != "":
				p.fail(name, "", fmt.Sprintf("defined in both %s and %s", from[name], section))
				delete(raw, name)
			default:
				from[name] = section
				raw[name] = m[name]
			}
		}
	}
	for _, name := range orderNames(raw, p.order) {
		if s, ok := p.server(name, raw[name]); ok {
			p.cfg.Servers = append(p.cfg.Servers, s)
		}
	}
}

var serverKeys = []string{
	"command", "args", "env", "cwd", "url", "headers", "auth", "prefix", "enabled",
	"disabled", "timeout", "tools", "prompts", "transport", "type", "transportType",
	"callTimeout", "maxCallTime", "maxConcurrent", "lazy", "idleTimeout", "perSession",
	"maxResultBytes", "trust", "protocol",
}

func (p *parser) server(name string, v any) (Server, bool) {
	s := Server{Name: name, Prefix: name, Enabled: true, Timeout: DefaultTimeout, Limits: p.cfg.Limits,
		Lazy: p.cfg.Lazy, IdleTimeout: p.cfg.IdleTimeout}
	m, ok := v.(map[string]any)
	if !ok {
		p.fail(name, "", "want an object, not "+kind(v))
		return s, false
	}
	r := &reader{p: p, server: name, m: m, unset: &unsetVars{}}
	if b, ok := r.boolean("enabled"); ok {
		s.Enabled = b
	}
	if b, ok := r.boolean("disabled"); ok && b {
		s.Enabled = false
	}

	transport, transportKey := r.transport()
	command, hasCommand := r.str("command")
	s.Command = command
	s.Args = r.list("args", true)
	s.Env = r.stringMap("env")
	s.Cwd, _, _ = r.expanded("cwd")
	rawURL, hasURL, urlMissing := r.expanded("url")
	s.Headers = r.stringMap("headers")
	s.Auth = r.auth("auth")
	if prefix, ok := r.label("prefix"); ok {
		s.Prefix = prefix
	}
	if d, ok := r.duration("timeout", false); ok {
		s.Timeout = d
	}
	s.Tools = r.filter("tools")
	s.Prompts = r.filter("prompts")
	s.Limits = r.limits(s.Limits)
	r.serverLifecycle(&s)
	s.Trust = r.serverTrust()
	if v, ok := r.protocol(); ok {
		s.Protocol = v
	}
	r.warnUnknown(serverKeys...)

	switch {
	case r.err != nil:
	case hasCommand && hasURL:
		r.fail("", "both command and url are set (want one)")
	case !hasCommand && !hasURL:
		r.fail("", "neither command nor url is set")
	case hasCommand:
		if transport != "" && transport != TransportStdio {
			r.fail(transportKey, "transport %s needs url, not command", transport)
		} else if command == "" {
			r.fail("command", "empty")
		}
		s.Transport = TransportStdio
		if _, ok := m["headers"]; ok {
			p.warn(name, "headers", "used only with url, ignored")
		}
		if _, ok := m["auth"]; ok {
			p.warn(name, "auth", "used only with url, ignored")
		}
	default:
		s.URL = rawURL
		s.Transport = transport
		if transport == TransportStdio {
			r.fail(transportKey, "transport stdio needs command, not url")
			break
		}
		u, err := url.Parse(rawURL)
		switch {
		case urlMissing:
			// A variable is unset: nothing to check yet (see Problem).
		case err != nil:
			r.fail("url", "not a valid URL") // err would quote the URL
		case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
			r.fail("url", "want an http:// or https:// URL")
		}
		if s.Transport == "" {
			s.Transport = TransportHTTP
			if err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
				s.Transport = TransportSSE
			}
		}
		for _, k := range []string{"args", "env", "cwd"} {
			if _, ok := m[k]; ok {
				p.warn(name, k, "used only with command, ignored")
			}
		}
	}
	if s.Transport == TransportSSE && s.Protocol == ProtocolModern {
		r.fail("protocol", "protocol %q needs http or stdio: the sse transport is of the legacy era", s.Protocol)
	}
	if r.err != nil {
		p.errs = append(p.errs, r.err)
		return s, false
	}
	if s.Enabled {
		// Not an error: one server's missing variable (often a shell's,
		// absent where a GUI client starts mcpx) must not stop the others.
		// A disabled server will not run: its variables do not matter.
		s.Problem = r.unset.String()
	}
	return s, true
}

// protocol reads the protocol key: auto, legacy or modern, any case.
func (r *reader) protocol() (Protocol, bool) {
	v, ok := r.str("protocol")
	if !ok {
		return "", false
	}
	switch p := Protocol(strings.ToLower(v)); p {
	case ProtocolAuto, ProtocolLegacy, ProtocolModern:
		return p, true
	}
	r.fail("protocol", "unknown protocol %q (want auto, legacy or modern)", v)
	return "", false
}

// transport reads "transport", "type" (Claude Code, VS Code) and
// "transportType" (Cline), which must agree when more than one is set.
func (r *reader) transport() (t Transport, key string) {
	for _, k := range []string{"transport", "type", "transportType"} {
		v, ok := r.str(k)
		if !ok {
			continue
		}
		var kt Transport
		switch strings.ToLower(v) {
		case "stdio":
			kt = TransportStdio
		case "http", "streamable-http", "streamablehttp":
			kt = TransportHTTP
		case "sse":
			kt = TransportSSE
		default:
			r.fail(k, "unknown transport %q (want stdio, http or sse)", v)
			return "", k
		}
		if t != "" && kt != t {
			r.fail(k, "%s %q contradicts %s %q", k, v, key, t)
			return "", k
		}
		t, key = kt, k
	}
	return t, key
}

// browser reads the optional browser section. Its url is not required: it
// may come from the token.
func (p *parser) browser(tree map[string]any) {
	v, ok := tree["browser"]
	if !ok || v == nil {
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		p.fail("", "browser", "want an object, not "+kind(v))
		return
	}
	r := &reader{p: p, prefix: "browser.", m: m, unset: &unsetVars{}}
	b := &Browser{Prefix: DefaultBrowserPrefix}
	b.URL, _, _ = r.expanded("url")
	b.Token, _, _ = r.expanded("token")
	b.Extension, _ = r.str("extension")
	if prefix, ok := r.label("prefix"); ok {
		b.Prefix = prefix
	}
	b.CDP, _ = r.boolean("cdp")
	b.Listen, _ = r.str("listen")
	b.ExtensionIDs = r.list("extensionIds", false)
	b.PageTools = r.pageTools()
	b.MaxImageBytes, _ = r.size("maxImageBytes", MinBrowserImageBytes)
	b.MaxSnapshotChars, _ = r.count("maxSnapshotChars", MinBrowserSnapshotChars)
	if d, ok := r.duration("extensionWait", false); ok {
		if d > MaxBrowserExtensionWait {
			r.fail("extensionWait", "%s is too long (at most %s: a call waits that long for a browser to connect)", d, MaxBrowserExtensionWait)
		}
		b.ExtensionWait = d
	}
	r.warnUnknown("url", "token", "extension", "prefix", "cdp", "listen", "extensionIds", "pageTools",
		"maxImageBytes", "maxSnapshotChars", "extensionWait")
	if r.err == nil && len(r.unset.names) > 0 {
		// As for a server: the browser tools are off, everything else works.
		p.warn("", "browser", r.unset.String()+": the browser tools are off until it is set")
		return
	}
	if r.err == nil {
		checkBrowser(r, b)
	}
	if r.err != nil {
		p.errs = append(p.errs, r.err)
		return
	}
	p.cfg.Browser = b
}

// checkBrowser refuses a browser section that would leak: a relay that
// listens beyond this machine, or a token sent in clear to another one.
func checkBrowser(r *reader, b *Browser) {
	if b.URL != "" {
		u, err := url.Parse(b.URL)
		switch {
		case err != nil || u.Host == "":
			r.fail("url", "want a ws:// or wss:// URL")
		case u.Scheme != "ws" && u.Scheme != "wss":
			r.fail("url", "mcpx dials the relay over WebSocket: want ws:// or wss://, not %s://", u.Scheme)
		case u.Scheme == "ws" && b.Token != "" && !isLoopback(u.Hostname()):
			r.fail("url", "the token would cross the network unencrypted over ws:// to %s: use wss://", u.Hostname())
		}
	}
	if !b.Local() {
		if b.Listen != "" {
			r.p.warn("", "browser.listen", "only used in local mode (no token and no url), ignored")
		}
		return
	}
	if b.Listen == "" {
		b.Listen = DefaultBrowserListen
		return
	}
	host, port, err := net.SplitHostPort(b.Listen)
	switch {
	case err != nil || port == "":
		r.fail("listen", "want host:port, such as %s", DefaultBrowserListen)
	case !isLoopback(host):
		r.fail("listen", "%q is not a loopback address: the relay is a door into your logged-in browser, so it listens on 127.0.0.1, ::1 or localhost only", host)
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
