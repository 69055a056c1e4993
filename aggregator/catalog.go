package aggregator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/hidden"
	"github.com/mcpx/mcpx/proxytool"
	"github.com/mcpx/mcpx/rawjson"
	"github.com/mcpx/mcpx/scan"
	"github.com/mcpx/mcpx/search"
	"github.com/mcpx/mcpx/trust"
)

// Kind is the kind of a catalog entry.
type Kind string

const (
	KindTool     Kind = "tool"
	KindResource Kind = "resource"
	KindTemplate Kind = "resource template"
	KindPrompt   Kind = "prompt"
)

// Entry is one capability as the catalog exposes it.
type Entry struct {
	Kind Kind
	// Name is the exposed name of a tool or prompt, the URI of a resource,
	// or the URI template of a template.
	Name string
	// Original is the name, URI or template the source uses.
	Original string
	// quoted is Original as a JSON string, made once (it replaces the
	// exposed name in every call's params); nil: quote it each time.
	quoted      []byte
	Server      string
	Title       string
	Description string
	// JSON is the capability object as exposed: the source's object with
	// only the name rewritten (and what an override in the config sets).
	JSON json.RawMessage
	// Overridden says a tools.override or prompts.override entry of the
	// config rewrote it; Own is then the source's object before that.
	Overridden bool
	Own        json.RawMessage

	src      Source
	template *uritemplate.Template // for KindTemplate
	direct   bool                  // a tool listed even with expose: proxy
}

// Collision records an exposed name or URI that two sources both claim.
// Kept is the server that has it; Dropped lost it.
type Collision struct {
	Kind    Kind
	Name    string
	Kept    string
	Dropped string
	// Original is the dropped capability's own name.
	Original string
}

func (c Collision) String() string {
	return fmt.Sprintf("%s %q of server %s is hidden: server %s already has that name", c.Kind, c.Name, c.Dropped, c.Kept)
}

// Catalog is an immutable snapshot of everything the sources offer.
type Catalog struct {
	Tools             []*Entry
	Resources         []*Entry
	ResourceTemplates []*Entry
	Prompts           []*Entry
	Collisions        []Collision
	// Problems are capability objects that could not be used, e.g. a tool
	// without a name; each names its server.
	Problems []string
	// Hidden counts, per server, the characters of hidden text (Unicode
	// tags, zero-width and bidi controls, terminal escapes) removed from
	// its capabilities' titles and descriptions; nil when there were none.
	Hidden map[string]int
	// Reviews are, per pinned server, its tools and prompts against those
	// approved (see Options.Trust); the withheld ones are not in the
	// catalog. Nil without pinning.
	Reviews map[string]*trust.Review

	tools     map[string]*Entry
	resources map[string]*Entry
	prompts   map[string]*Entry
	items     map[proxytool.Kind][]proxytool.Item
	search    *catalogSearch
	// servers are the upstream servers behind the proxy tool, in config
	// order; proxyEntry is the proxy tool as this catalog describes it,
	// made when first listed.
	servers []string
	// run says the proxy tool has the run action (code mode).
	run        bool
	proxyOnce  sync.Once
	proxyEntry *Entry
	namesOnce  sync.Once
	// listedOnce makes listedLen: the bytes of a tools/list of every tool.
	listedOnce sync.Once
	listedLen  int
	names      *scan.Names

	// filtered are the tools and prompts the config's filters keep out,
	// and in a view those its profile does.
	filtered []*Filtered

	// profile is the profile a view shows (nil: the catalog as built);
	// views are this catalog's, made when first asked for (View).
	profile *config.Profile
	viewsMu sync.Mutex
	views   map[string]*Catalog

	// provisional are the entries listed under a cleaned name while the
	// catalog is built, filed by settle at its end.
	provisional []provisional
}

// provisional is an entry whose name was made valid by cleaning alone,
// with the hashed name it takes if that is contested.
type provisional struct {
	e      *Entry
	hashed string
}

// Tool finds a tool by exposed name.
func (c *Catalog) Tool(name string) (*Entry, bool) { e, ok := c.tools[name]; return e, ok }

// Prompt finds a prompt by exposed name.
func (c *Catalog) Prompt(name string) (*Entry, bool) { e, ok := c.prompts[name]; return e, ok }

// Resource finds the entry that serves uri: a resource with exactly that
// URI, else the first template that matches it.
func (c *Catalog) Resource(uri string) (*Entry, bool) {
	if e, ok := c.resources[uri]; ok {
		return e, true
	}
	for _, e := range c.ResourceTemplates {
		if e.template != nil && e.template.Match(uri) != nil {
			return e, true
		}
	}
	return nil, false
}

// mcpxServer is the server name of mcpx's own tools.
const mcpxServer = "mcpx"

// build makes a catalog from the members, in order: the first member to
// claim a name keeps it. The proxy tool's name is mcpx's own from the
// start, so an upstream tool exposed under it is reported, not served.
// With pins, the tools and prompts a pinned member changed or added
// since approved are withheld.
//
// The catalog's search indexes are made from ix, which remembers the
// analysis of capabilities seen before (nil: nothing remembered).
func build(members []*member, sep string, pins *trust.Store, ix *search.Builder) *Catalog {
	c := &Catalog{tools: map[string]*Entry{}, resources: map[string]*Entry{}, prompts: map[string]*Entry{}}
	reserved := &Entry{Kind: KindTool, Name: proxytool.Name, Server: mcpxServer}
	c.tools[proxytool.Name] = reserved
	templates := map[string]*Entry{}
	names := memberNames(members, sep)
	for _, m := range members {
		name := m.src.Name()
		tools, prompts := m.src.Tools(), m.src.Prompts()
		if pins != nil && m.trust != "" {
			r := pins.Review(name, m.trust, tools, prompts, names)
			if c.Reviews == nil {
				c.Reviews = map[string]*trust.Review{}
			}
			c.Reviews[name] = r
			tools = c.withhold(KindTool, m, r, tools, sep)
			prompts = c.withhold(KindPrompt, m, r, prompts, sep)
		}
		c.addNamed(KindTool, m, tools, sep, &m.tools, c.tools, &c.Tools)
		c.addNamed(KindPrompt, m, prompts, sep, &m.prompts, c.prompts, &c.Prompts)
		for _, raw := range m.src.Resources() {
			c.add(KindResource, m, raw, "uri", "", nil, c.resources, &c.Resources)
		}
		for _, raw := range m.src.ResourceTemplates() {
			e := c.add(KindTemplate, m, raw, "uriTemplate", "", nil, templates, &c.ResourceTemplates)
			if e == nil {
				continue
			}
			t, err := uritemplate.New(e.Original)
			if err != nil {
				c.Problems = append(c.Problems, fmt.Sprintf("server %s: resource template %q cannot be matched: %v", name, e.Original, err))
				continue
			}
			e.template = t
		}
	}
	c.settle()
	delete(c.tools, proxytool.Name)
	c.items = c.proxyItems()
	c.search = newCatalogSearch(ix, c, instructions(members))
	for _, m := range members {
		if !m.direct {
			c.servers = append(c.servers, m.src.Name())
		}
	}
	return c
}

// proxyTool is the proxy tool's entry as tools/list shows it over this
// catalog: its description names the catalog's servers and takes its
// examples from the catalog's tools (proxytool.ToolFor).
func (c *Catalog) proxyTool() *Entry {
	c.proxyOnce.Do(func() {
		tool := proxytool.ToolFor(c.servers, c)
		if c.run {
			tool = proxytool.WithRun(tool)
		}
		c.proxyEntry = &Entry{Kind: KindTool, Name: proxytool.Name, Original: proxytool.Name,
			Server: mcpxServer, JSON: tool}
	})
	return c.proxyEntry
}

// instructions are the members' instructions (what a server tells a
// client about itself in initialize), by server name.
func instructions(members []*member) map[string]string {
	out := map[string]string{}
	for _, m := range members {
		if s, ok := m.src.(instructed); ok {
			if text := s.Instructions(); text != "" {
				out[m.src.Name()] = text
			}
		}
	}
	return out
}

// addNamed adds a member's tools or prompts, then warns about overrides
// for names the member does not list.
func (c *Catalog) addNamed(kind Kind, m *member, raws []json.RawMessage, sep string,
	filter *config.Filter, index map[string]*Entry, list *[]*Entry) {
	for _, raw := range raws {
		c.add(kind, m, raw, "name", sep, filter, index, list)
	}
	if len(filter.Override) == 0 || len(raws) == 0 {
		// Nothing listed yet (a server starting) says nothing about
		// which names it has.
		return
	}
	seen := make([]string, 0, len(raws))
	for _, raw := range raws {
		if v, err := rawjson.Get(raw, "name"); err == nil {
			if name, ok := rawjson.String(v); ok {
				seen = append(seen, name)
			}
		}
	}
	c.checkOverrides(m.src.Name(), kind, *filter, seen)
}

// add reads one capability object and files it under its exposed name,
// unless it is filtered out, malformed, or its name is taken. It runs for
// every item of every server at each rebuild (each connect, each list
// change): it reads the few members it needs in one scan and splices the
// exposed name into the bytes, rather than decoding the whole object and
// encoding it again.
func (c *Catalog) add(kind Kind, m *member, raw json.RawMessage, key, sep string,
	filter *config.Filter, index map[string]*Entry, list *[]*Entry) *Entry {
	server := m.src.Name()
	// What a person cannot see never reaches a client or the model.
	raw, n := hidden.Capability(raw)
	if n > 0 {
		if c.Hidden == nil {
			c.Hidden = map[string]int{}
		}
		c.Hidden[server] += n
	}
	// Exact keys: encoding/json would also take "Name" or "NAME" for name,
	// and the upstream must get back exactly the name it listed. A
	// repeated key counts by its last value, as a decoder would.
	var original, title, description string
	var inputSchema, outputSchema []byte
	err := rawjson.Scan(raw, func(k rawjson.Key, v []byte) bool {
		switch {
		case k.Is(key):
			original, _ = rawjson.String(v)
		case k.Is("title"):
			title, _ = rawjson.String(v)
		case k.Is("description"):
			description, _ = rawjson.String(v)
		case k.Is("inputSchema"):
			inputSchema = v
		case k.Is("outputSchema"):
			outputSchema = v
		}
		return true
	})
	if err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("server %s: a %s is not a JSON object", server, kind))
		return nil
	}
	if original == "" {
		c.Problems = append(c.Problems, fmt.Sprintf("server %s: a %s has no %q", server, kind, key))
		return nil
	}
	if filter != nil {
		if l := filter.Excludes(original); l != "" {
			// Kept to say why the name is unknown, should it be asked for.
			name, _ := exposedName(m.prefix, sep, original)
			c.filtered = append(c.filtered, &Filtered{Kind: kind, Name: name, Original: original, Server: server, List: l})
			return nil
		}
	}
	e := &Entry{Kind: kind, Name: original, Original: original, quoted: []byte(quote(original)), Server: server,
		Title: title, Description: description, JSON: raw, src: m.src, direct: m.direct}
	var cleaned bool
	var override config.Override
	var overridden bool
	if filter != nil {
		override, overridden = filter.Override[original]
	}
	own := original // the name the exposed one is made of
	if override.Name != "" {
		own = override.Name
	}
	if key == "name" {
		e.Name, cleaned = exposedName(m.prefix, sep, own)
	}
	if overridden {
		e.Overridden, e.Own = true, raw
		e.JSON, e.Title, e.Description = applyOverride(raw, e.Name, override, title, description)
		raw = e.JSON
	}
	if kind == KindTool && (!isObjectSchema(inputSchema) || outputSchema != nil && string(outputSchema) != "null" && !isObjectSchema(outputSchema)) {
		// Rare: decode, repair, encode.
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) == nil {
			for _, p := range repairToolSchemas(fields) {
				c.Problems = append(c.Problems, fmt.Sprintf("server %s: tool %q: %s", server, original, p))
			}
			fields["name"] = json.RawMessage(quote(e.Name))
			e.JSON = marshalRaw(fields, raw)
		}
	} else if e.Name != original {
		if renamed, _, err := rawjson.Replace(raw, "name", []byte(quote(e.Name))); err == nil {
			e.JSON = renamed
		}
	}
	if cleaned {
		// Listed in place now, filed once every name is known.
		c.provisional = append(c.provisional, provisional{e, hashedName(m.prefix, sep, own)})
		*list = append(*list, e)
		return e
	}
	if override.Name != "" {
		if prev, taken := index[e.Name]; taken {
			// The collision is recorded by file; a rename the config asked
			// for deserves its own word.
			c.Problems = append(c.Problems, fmt.Sprintf("server %s: %ss.override.%s.name: %q is already %s %q of server %s, so this %s is hidden",
				server, kind, original, e.Name, prev.Kind, prev.Original, prev.Server, kind))
		}
	}
	if !c.file(e, index) {
		return nil
	}
	*list = append(*list, e)
	return e
}

// file indexes e under its name, unless another entry has it: then the
// collision is recorded and file reports false.
func (c *Catalog) file(e *Entry, index map[string]*Entry) bool {
	if prev, taken := index[e.Name]; taken {
		c.Collisions = append(c.Collisions, Collision{Kind: e.Kind, Name: e.Name, Kept: prev.Server, Dropped: e.Server, Original: e.Original})
		return false
	}
	index[e.Name] = e
	return true
}

// settle files the provisional entries. A cleaned name is kept only when
// no other tool (or prompt) has it or cleans up to it too; otherwise the
// entry takes its hashed name, whichever server comes first, so that
// "a.b" and "a/b" never pass for each other or for a real "a_b". An
// entry whose hashed name is taken too is dropped as a collision.
func (c *Catalog) settle() {
	if len(c.provisional) == 0 {
		return
	}
	type key struct {
		kind Kind
		name string
	}
	claims := map[key]int{}
	for _, p := range c.provisional {
		claims[key{p.e.Kind, p.e.Name}]++
	}
	dropped := map[*Entry]bool{}
	for _, p := range c.provisional {
		index := c.tools
		if p.e.Kind == KindPrompt {
			index = c.prompts
		}
		if _, taken := index[p.e.Name]; taken || claims[key{p.e.Kind, p.e.Name}] > 1 {
			p.e.rename(p.hashed)
		}
		if !c.file(p.e, index) {
			dropped[p.e] = true
		}
	}
	if len(dropped) > 0 {
		gone := func(e *Entry) bool { return dropped[e] }
		c.Tools = slices.DeleteFunc(c.Tools, gone)
		c.Prompts = slices.DeleteFunc(c.Prompts, gone)
	}
	c.provisional = nil
}

// rename gives e another exposed name, in its JSON too.
func (e *Entry) rename(name string) {
	e.Name = name
	if renamed, _, err := rawjson.Replace(e.JSON, "name", []byte(quote(name))); err == nil {
		e.JSON = renamed
	}
}

// repairToolSchemas fixes, in place, what would make MCP clients reject
// the whole tools/list (the TypeScript SDK does, for one bad tool): an
// inputSchema that is missing or not an object schema becomes {"type":
// "object"}; an outputSchema that is not an object schema is dropped. It
// returns what it fixed, for the log; a sound tool is left untouched.
func repairToolSchemas(fields map[string]json.RawMessage) []string {
	var fixed []string
	if !isObjectSchema(fields["inputSchema"]) {
		fixed = append(fixed, "its inputSchema is not an object schema; it is served as {\"type\":\"object\"} so clients keep the other tools")
		fields["inputSchema"] = json.RawMessage(`{"type":"object"}`)
	}
	if out, ok := fields["outputSchema"]; ok && string(out) != "null" && !isObjectSchema(out) {
		fixed = append(fixed, "its outputSchema is not an object schema; it is left out so clients keep the other tools")
		delete(fields, "outputSchema")
	}
	return fixed
}

// isObjectSchema reports whether raw is a JSON schema object whose type is
// "object", as MCP requires of tool schemas.
func isObjectSchema(raw json.RawMessage) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	t, err := rawjson.Get(raw, "type")
	return err == nil && string(t) == `"object"`
}

// marshalRaw encodes v without escaping <, > and & (which the upstream may
// have written plainly), falling back to fallback on failure.
func marshalRaw(v any, fallback json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fallback
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// listResult renders a list result such as {"tools":[...]}.
func listResult(field string, entries []*Entry) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"`)
	b.WriteString(field)
	b.WriteString(`":[`)
	for i, e := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e.JSON)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
