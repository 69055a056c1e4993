package pagetools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on what a page may put into mcpx's catalog: page tools are
// content from the web, written by whoever runs the site.
const (
	maxTools       = 64          // tools per tab
	maxNameLen     = 64          // bytes of a tool's own name
	maxTitleLen    = 128         // runes of a title
	maxDescLen     = 1024        // runes of a description
	maxSchemaBytes = 32 << 10    // an input schema's JSON
	maxMetaBytes   = 4 << 10     // annotations' JSON
	maxPageTitle   = 80          // runes of the tab's title quoted in descriptions
	maxResultBytes = 4 << 20     // a call's answer
	hashLen        = 6           // hex digits of the hash that keeps shortened names apart
	domainNameCap  = 40          // bytes of the domain part of an exposed name
	metaKey        = "mcpx/page" // the _meta key that says where a tool comes from
)

// pageTool is one tool a page offers, checked and cleaned.
type pageTool struct {
	name        string // the page's own name, to call it by
	listed      string // the name part mcpx lists (cleaned, capped)
	title       string
	description string
	inputSchema json.RawMessage
	annotations json.RawMessage
}

// route is where a listed name leads.
type route struct {
	host string
	tool string // the page's own name
	tab  string // a tab id when the name carries a tab number; "" for any tab of host
}

// sanitize checks and cleans the tools a page listed. h.mu is held.
func (h *Hub) sanitize(host string, raw []rawTool) []pageTool {
	var out []pageTool
	seen := map[string]bool{}
	for _, t := range raw {
		if len(out) == maxTools {
			h.warnOnce("too many:"+host, "page tools: a page lists too many tools; the rest are left out", "host", host, "max", maxTools)
			break
		}
		if t.Name == "" || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		schema := t.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if len(schema) > maxSchemaBytes {
			h.warnOnce("schema:"+host+"\x00"+t.Name, "page tools: a tool's input schema is too large; the tool is left out", "host", host, "tool", clean(t.Name, maxNameLen, false))
			continue
		}
		ann := t.Annotations
		if len(ann) > maxMetaBytes || (len(ann) > 0 && ann[0] != '{') {
			ann = nil
		}
		out = append(out, pageTool{
			name: t.Name, listed: listedName(t.Name),
			title:       clean(t.Title, maxTitleLen, false),
			description: clean(t.Description, maxDescLen, true),
			inputSchema: schema, annotations: ann,
		})
	}
	slices.SortFunc(out, func(a, b pageTool) int { return strings.Compare(a.listed, b.listed) })
	return out
}

// clean strips control and format characters (newlines and tabs are
// kept where multiline) and caps s at n runes.
func clean(s string, n int, multiline bool) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case multiline && (r == '\n' || r == '\t'):
			return r
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// listedName is the tool's name part in mcpx's list: control characters
// out, and at most maxNameLen bytes, a shortened name ending in a hash of
// the page's own so that two long names stay apart.
func listedName(name string) string {
	c := clean(name, maxNameLen*4, false)
	if len(c) <= maxNameLen && c == name {
		return c
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "_" + hex.EncodeToString(sum[:])[:hashLen]
	cut := min(len(c), maxNameLen-len(suffix))
	for cut > 0 && cut < len(c) && !utf8.RuneStart(c[cut]) {
		cut--
	}
	return c[:cut] + suffix
}

// domainKey is a host as it appears in exposed names: "www." dropped and
// every character but letters and digits made '_'
// (shop.example.com -> shop_example_com).
func domainKey(host string) string {
	host = strings.TrimPrefix(host, "www.")
	b := []byte(host)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) > domainNameCap {
		sum := sha256.Sum256([]byte(host))
		b = append(b[:domainNameCap-hashLen-1], "_"+hex.EncodeToString(sum[:])[:hashLen]...)
	}
	return string(b)
}

// signature identifies a tab's tool set: tabs with equal signatures offer
// the same tools and share names.
func signature(tools []pageTool) string {
	h := sha256.New()
	for _, t := range tools {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", t.name, t.description, t.inputSchema, t.annotations)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// allowed reports whether the tools of host may be listed. h.mu is held.
func (h *Hub) allowed(host string) bool {
	if matchAny(h.opts.Deny, host) {
		return false
	}
	if len(h.opts.Allow) == 0 {
		return h.opened[host]
	}
	return matchAny(h.opts.Allow, host)
}

func matchAny(globs []string, host string) bool {
	for _, g := range globs {
		if ok, err := path.Match(strings.ToLower(g), host); err == nil && ok {
			return true
		}
	}
	return false
}

// rebuild computes the listed tools and their routes from what was seen,
// and reports whether the list changed.
func (h *Hub) rebuild() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	byHost := map[string][]*tabState{}
	for _, st := range h.tabs {
		byHost[st.host] = append(byHost[st.host], st)
	}
	type item struct {
		name string
		json json.RawMessage
	}
	var items []item
	routes := map[string]route{}
	sep := h.opts.Separator
	add := func(prefix string, t pageTool, r route, where string, meta map[string]any) {
		name := prefix + sep + t.listed
		desc := where
		if t.description != "" {
			desc = where + "\n\n" + t.description
		}
		obj := map[string]any{"name": name, "description": desc, "inputSchema": t.inputSchema,
			"_meta": map[string]any{metaKey: meta}}
		if t.title != "" {
			obj["title"] = t.title
		}
		if len(t.annotations) > 0 {
			obj["annotations"] = t.annotations
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(obj) != nil {
			return
		}
		if _, dup := routes[name]; dup {
			return // two hosts with one domain key: the first keeps the name
		}
		routes[name] = r
		items = append(items, item{name, bytes.TrimRight(b.Bytes(), "\n")})
	}
	seen := map[string]bool{}
	for host := range byHost {
		seen[host] = true
	}
	for k := range h.cache {
		seen[k.host] = true
	}
	for _, host := range slices.Sorted(maps.Keys(seen)) {
		if !h.allowed(host) {
			continue
		}
		key := domainKey(host)
		tabs := byHost[host]
		live := map[string]bool{}
		for _, st := range tabs {
			for _, t := range st.tools {
				live[t.name] = true
			}
		}
		slices.SortFunc(tabs, func(a, b *tabState) int { return h.ordinal[a.id] - h.ordinal[b.id] })
		sigs := map[string]bool{}
		for _, st := range tabs {
			if len(st.tools) > 0 {
				sigs[st.sig] = true
			}
		}
		for _, st := range tabs {
			if len(st.tools) == 0 {
				continue
			}
			n := h.ordinal[st.id]
			where := fmt.Sprintf("Page tool of %s, tab %d %q (%s). %s", host, n, clean(st.title, maxPageTitle, false), shownURL(st.url), sessionNote(host))
			meta := map[string]any{"domain": host, "url": shownURL(st.url), "tab": n}
			if len(sigs) == 1 {
				// One tool set for the domain: one name per tool, any tab.
				var nums []int
				for _, o := range tabs {
					if len(o.tools) > 0 {
						nums = append(nums, h.ordinal[o.id])
					}
				}
				if len(nums) > 1 {
					where = fmt.Sprintf("Page tool of %s, open in tabs %s (%s). %s", host, joinInts(nums), shownURL(st.url), sessionNote(host))
					meta["tabs"], meta["tab"] = nums, nil
					delete(meta, "tab")
				}
				for _, t := range st.tools {
					add(key, t, route{host: host, tool: t.name}, where, meta)
				}
				break
			}
			for _, t := range st.tools {
				add(fmt.Sprintf("%s%stab%d", key, sep, n), t, route{host: host, tool: t.name, tab: st.id}, where, meta)
			}
		}
		// The tools no open page offers now, each from the page that
		// registered it: a call opens that page again.
		for _, c := range h.cachedOf(host, live) {
			where := fmt.Sprintf("Page tool of %s (%s); that page is no longer open: a call opens it again in a new tab. %s", host, shownURL(c.url), sessionNote(host))
			add(key, c.tool, route{host: host, tool: c.tool.name}, where, map[string]any{"domain": host, "url": shownURL(c.url), "cached": true})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.name, b.name) })
	list := make([]json.RawMessage, len(items))
	for i, it := range items {
		list[i] = it.json
	}
	changed := len(list) != len(h.list)
	for i := 0; !changed && i < len(list); i++ {
		changed = !bytes.Equal(list[i], h.list[i])
	}
	h.list, h.routes = list, routes
	return changed
}

func sessionNote(host string) string {
	return fmt.Sprintf("The site %s registered this tool itself (WebMCP); it runs in the user's browser with the user's session (cookies, logins) on %s. Its output is content from that site.", host, host)
}

// Name is the source's name.
func (h *Hub) Name() string { return h.opts.Name }

// Tools returns the listed tools, sorted by name.
func (h *Hub) Tools() []json.RawMessage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.list)
}

// Resources, ResourceTemplates and Prompts are empty: pages offer tools.
func (h *Hub) Resources() []json.RawMessage         { return nil }
func (h *Hub) ResourceTemplates() []json.RawMessage { return nil }
func (h *Hub) Prompts() []json.RawMessage           { return nil }

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// shownURL is a page's URL as descriptions show it: without user info,
// query or fragment, which may carry session tokens.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return clean(u.String(), maxDescLen/4, false)
}

// warnOnce logs a warning the first time key is seen: pages are checked
// every second, and the log must not repeat itself. h.mu is held.
func (h *Hub) warnOnce(key, msg string, kv ...any) {
	if h.warned[key] || len(h.warned) > 1000 {
		return
	}
	h.warned[key] = true
	h.opts.Logger.Warn(msg, kv...)
}
