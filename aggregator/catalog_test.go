package aggregator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/trust"
)

// richTool carries everything a tool object may hold that a typed struct
// would drop or reshape: $defs, anyOf, x-* keys, annotations, _meta, a big
// integer, HTML characters, \u escapes and a null.
const richTool = `{"name":"echo","title":"Echo","description":"Echoes <b>&amp;</b> \u00e9",` +
	`"inputSchema":{"type":"object","$defs":{"msg":{"type":"string"}},` +
	`"properties":{"m":{"$ref":"#/$defs/msg"},"n":{"anyOf":[{"type":"integer"},{"type":"null"}],"default":12345678901234567890}},` +
	`"x-vendor":{"k":[1,2.50,"\u00e9"]}},` +
	`"outputSchema":{"type":"object","additionalProperties":false},` +
	`"annotations":{"readOnlyHint":true,"title":"E","x-hint":[]},` +
	`"_meta":{"io.example/k":{"v":1}},"x-extra":null}`

// twoSources returns the sources most catalog tests use: alpha (prefix
// "alpha") and beta (no prefix).
func twoSources(tb testing.TB) (alpha, beta *fakeSource) {
	alpha = &fakeSource{
		name:      "alpha",
		tools:     raws(tb, richTool, toolJSON("get-x")),
		prompts:   raws(tb, `{"name":"greet","description":"Say hi","arguments":[{"name":"who","required":true}],"_meta":{"a":1}}`),
		resources: raws(tb, `{"uri":"test://alpha/readme","name":"readme","mimeType":"text/plain","_meta":{"m":true}}`),
		templates: raws(tb, `{"uriTemplate":"test://items/{id}","name":"item","x-y":[1]}`),
	}
	beta = &fakeSource{
		name:      "beta",
		tools:     raws(tb, toolJSON("echo"), toolJSON("search")),
		prompts:   raws(tb, `{"name":"greet","arguments":[]}`),
		resources: raws(tb, `{"uri":"test://items/7","name":"seven"}`, `{"uri":"file:///tmp/a b.txt","name":"a.b"}`),
		templates: raws(tb, `{"uriTemplate":"beta://{+path}","name":"b"}`),
	}
	return alpha, beta
}

// labels renders entries as "name<-server/original" for compact compares.
func labels(entries []*Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Name + "<-" + e.Server + "/" + e.Original
	}
	return out
}

func TestBuildNames(t *testing.T) {
	alpha, beta := twoSources(t)
	c := build([]*member{mem(alpha, "alpha"), mem(beta, "")}, "_", nil, nil)

	tests := []struct {
		kind    Kind
		entries []*Entry
		want    []string
	}{
		{KindTool, c.Tools, []string{"alpha_echo<-alpha/echo", "alpha_get-x<-alpha/get-x", "echo<-beta/echo", "search<-beta/search"}},
		{KindPrompt, c.Prompts, []string{"alpha_greet<-alpha/greet", "greet<-beta/greet"}},
		// URIs and templates keep their text whatever the prefix.
		{KindResource, c.Resources, []string{
			"test://alpha/readme<-alpha/test://alpha/readme",
			"test://items/7<-beta/test://items/7",
			"file:///tmp/a b.txt<-beta/file:///tmp/a b.txt",
		}},
		{KindTemplate, c.ResourceTemplates, []string{"test://items/{id}<-alpha/test://items/{id}", "beta://{+path}<-beta/beta://{+path}"}},
	}
	for _, tt := range tests {
		if got := labels(tt.entries); !slices.Equal(got, tt.want) {
			t.Errorf("%s entries:\n got %q\nwant %q", tt.kind, got, tt.want)
		}
		for _, e := range tt.entries {
			if e.Kind != tt.kind {
				t.Errorf("%s is filed as a %s", e.Name, e.Kind)
			}
		}
	}
	if len(c.Collisions) != 0 || len(c.Problems) != 0 {
		t.Errorf("unexpected collisions %v / problems %q", c.Collisions, c.Problems)
	}
}

func TestBuildSeparator(t *testing.T) {
	alpha, _ := twoSources(t)
	for _, sep := range []string{"_", "-", "__", ""} {
		c := build([]*member{mem(alpha, "alpha")}, sep, nil, nil)
		if _, ok := c.Tool("alpha" + sep + "echo"); !ok {
			t.Errorf("separator %q: no tool %q in %q", sep, "alpha"+sep+"echo", labels(c.Tools))
		}
		if _, ok := c.Prompt("alpha" + sep + "greet"); !ok {
			t.Errorf("separator %q: no prompt %q in %q", sep, "alpha"+sep+"greet", labels(c.Prompts))
		}
	}
}

// TestBuildPassThrough checks that an exposed object is the source's object
// with only "name" rewritten, and the very same bytes when nothing was.
func TestBuildPassThrough(t *testing.T) {
	alpha, beta := twoSources(t)
	c := build([]*member{mem(alpha, "alpha"), mem(beta, "")}, "_", nil, nil)

	source := func(e *Entry) json.RawMessage {
		t.Helper()
		f := e.src.(*fakeSource)
		var list []json.RawMessage
		switch e.Kind {
		case KindTool:
			list = f.Tools()
		case KindPrompt:
			list = f.Prompts()
		case KindResource:
			list = f.Resources()
		case KindTemplate:
			list = f.ResourceTemplates()
		}
		key := map[Kind]string{KindTool: "name", KindPrompt: "name", KindResource: "uri", KindTemplate: "uriTemplate"}[e.Kind]
		for _, raw := range list {
			if object(t, raw)[key] == e.Original {
				return raw
			}
		}
		t.Fatalf("%s %s: no source object", e.Kind, e.Original)
		return nil
	}

	all := slices.Concat(c.Tools, c.Prompts, c.Resources, c.ResourceTemplates)
	if len(all) != 11 {
		t.Fatalf("catalog has %d entries, want 11", len(all))
	}
	for _, e := range all {
		src := source(e)
		got, want := object(t, e.JSON), object(t, src)
		if e.Name == e.Original {
			// Unprefixed names, URIs and templates: not one byte changes.
			if !bytes.Equal(e.JSON, src) {
				t.Errorf("%s %s changed:\n got %s\nwant %s", e.Kind, e.Name, e.JSON, src)
			}
			continue
		}
		if got["name"] != e.Name {
			t.Errorf("%s %s: exposed object has name %v", e.Kind, e.Name, got["name"])
		}
		delete(got, "name")
		delete(want, "name")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: exposed object differs in more than its name:\n got %s\nwant %s", e.Kind, e.Name, e.JSON, src)
		}
	}

	// The rich tool, spelled out: the parts a typed struct would lose.
	e, _ := c.Tool("alpha_echo")
	obj := object(t, e.JSON)
	schema := obj["inputSchema"].(map[string]any)
	for _, key := range []string{"$defs", "x-vendor"} {
		if _, ok := schema[key]; !ok {
			t.Errorf("inputSchema lost %q: %s", key, e.JSON)
		}
	}
	if n := schema["properties"].(map[string]any)["n"].(map[string]any)["default"]; n != json.Number("12345678901234567890") {
		t.Errorf("big integer became %v", n)
	}
	for _, key := range []string{"annotations", "_meta", "x-extra", "outputSchema", "title"} {
		if _, ok := obj[key]; !ok {
			t.Errorf("tool lost %q: %s", key, e.JSON)
		}
	}
	if !strings.Contains(string(e.JSON), "<b>&amp;</b>") {
		t.Errorf("HTML characters were escaped: %s", e.JSON)
	}
}

func TestBuildFilters(t *testing.T) {
	src := &fakeSource{
		name:    "s",
		tools:   raws(t, toolJSON("get-x"), toolJSON("get-secret"), toolJSON("echo"), toolJSON("s_echo")),
		prompts: raws(t, `{"name":"get-x"}`, `{"name":"echo"}`),
	}
	tests := []struct {
		desc           string
		tools, prompts config.Filter
		wantTools      []string
		wantPrompts    []string
	}{
		{"no filter", config.Filter{}, config.Filter{},
			[]string{"s_get-x", "s_get-secret", "s_echo", "s_s_echo"}, []string{"s_get-x", "s_echo"}},
		{"allow glob on original names", config.Filter{Allow: []string{"get-*"}}, config.Filter{},
			[]string{"s_get-x", "s_get-secret"}, []string{"s_get-x", "s_echo"}},
		{"deny wins over allow", config.Filter{Allow: []string{"get-*"}, Deny: []string{"get-secret"}}, config.Filter{},
			[]string{"s_get-x"}, []string{"s_get-x", "s_echo"}},
		{"deny only", config.Filter{Deny: []string{"echo"}}, config.Filter{},
			[]string{"s_get-x", "s_get-secret", "s_s_echo"}, []string{"s_get-x", "s_echo"}},
		// Patterns are matched against original names, so one written
		// for the exposed name matches nothing else.
		{"exposed-name pattern", config.Filter{Allow: []string{"s_*"}}, config.Filter{},
			[]string{"s_s_echo"}, []string{"s_get-x", "s_echo"}},
		{"exposed-name deny", config.Filter{Deny: []string{"s_get-x"}}, config.Filter{},
			[]string{"s_get-x", "s_get-secret", "s_echo", "s_s_echo"}, []string{"s_get-x", "s_echo"}},
		{"prompt filter leaves tools alone", config.Filter{}, config.Filter{Allow: []string{"echo"}},
			[]string{"s_get-x", "s_get-secret", "s_echo", "s_s_echo"}, []string{"s_echo"}},
		{"allow nothing that exists", config.Filter{Allow: []string{"nope"}}, config.Filter{Deny: []string{"*"}},
			nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			c := build([]*member{memFiltered(src, "s", tt.tools, tt.prompts)}, "_", nil, nil)
			if got := names(c.Tools); !slices.Equal(got, tt.wantTools) {
				t.Errorf("tools = %q, want %q", got, tt.wantTools)
			}
			if got := names(c.Prompts); !slices.Equal(got, tt.wantPrompts) {
				t.Errorf("prompts = %q, want %q", got, tt.wantPrompts)
			}
			for _, e := range c.Tools {
				if !tt.tools.Allows(e.Original) {
					t.Errorf("tool %s passed the filter", e.Original)
				}
			}
			if len(c.Collisions)+len(c.Problems) != 0 {
				t.Errorf("filtering reported %v %q", c.Collisions, c.Problems)
			}
		})
	}
}

func names(entries []*Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func TestBuildCollisions(t *testing.T) {
	tests := []struct {
		desc    string
		members func(tb testing.TB) []*member
		want    []Collision
	}{
		{
			desc: "same tool, both unprefixed",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("echo"), toolJSON("a-only"))}, ""),
					mem(&fakeSource{name: "b", tools: raws(tb, toolJSON("echo"), toolJSON("b-only"))}, ""),
				}
			},
			want: []Collision{{Kind: KindTool, Name: "echo", Kept: "a", Dropped: "b", Original: "echo"}},
		},
		{
			desc: "prefix and name split differently",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("y_z"))}, "x"),
					mem(&fakeSource{name: "b", tools: raws(tb, toolJSON("z"))}, "x_y"),
				}
			},
			want: []Collision{{Kind: KindTool, Name: "x_y_z", Kept: "a", Dropped: "b", Original: "z"}},
		},
		{
			desc: "prefixed name equals another's plain name",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("a_echo"))}, ""),
					mem(&fakeSource{name: "b", tools: raws(tb, toolJSON("echo"))}, "a"),
				}
			},
			want: []Collision{{Kind: KindTool, Name: "a_echo", Kept: "a", Dropped: "b", Original: "echo"}},
		},
		{
			desc: "same invalid name in two sources",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("do.it"))}, ""),
					mem(&fakeSource{name: "b", tools: raws(tb, toolJSON("do.it"), toolJSON("do/it"))}, ""),
				}
			},
			want: []Collision{{Kind: KindTool, Name: hashedName("", "_", "do.it"), Kept: "a", Dropped: "b", Original: "do.it"}},
		},
		{
			desc: "same name twice in one source",
			members: func(tb testing.TB) []*member {
				return []*member{mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("echo"), `{"name":"echo","description":"again","inputSchema":{"type":"object"}}`)}, "p")}
			},
			want: []Collision{{Kind: KindTool, Name: "p_echo", Kept: "a", Dropped: "a", Original: "echo"}},
		},
		{
			desc: "same prompt",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", prompts: raws(tb, `{"name":"greet"}`)}, ""),
					mem(&fakeSource{name: "b", prompts: raws(tb, `{"name":"greet"}`)}, ""),
				}
			},
			want: []Collision{{Kind: KindPrompt, Name: "greet", Kept: "a", Dropped: "b", Original: "greet"}},
		},
		{
			desc: "same URI, even with different prefixes",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", resources: raws(tb, `{"uri":"file:///x","name":"x"}`)}, "a"),
					mem(&fakeSource{name: "b", resources: raws(tb, `{"uri":"file:///x","name":"other"}`, `{"uri":"file:///y","name":"y"}`)}, "b"),
				}
			},
			want: []Collision{{Kind: KindResource, Name: "file:///x", Kept: "a", Dropped: "b", Original: "file:///x"}},
		},
		{
			desc: "same URI template",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", templates: raws(tb, `{"uriTemplate":"t://{id}","name":"t"}`)}, "a"),
					mem(&fakeSource{name: "b", templates: raws(tb, `{"uriTemplate":"t://{id}","name":"t"}`)}, "b"),
				}
			},
			want: []Collision{{Kind: KindTemplate, Name: "t://{id}", Kept: "a", Dropped: "b", Original: "t://{id}"}},
		},
		{
			desc: "a tool and a prompt may share a name",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("x"))}, ""),
					mem(&fakeSource{name: "b", prompts: raws(tb, `{"name":"x"}`)}, ""),
				}
			},
			want: nil,
		},
		{
			desc: "three sources, one name",
			members: func(tb testing.TB) []*member {
				return []*member{
					mem(&fakeSource{name: "a", tools: raws(tb, toolJSON("t"))}, ""),
					mem(&fakeSource{name: "b", tools: raws(tb, toolJSON("t"))}, ""),
					mem(&fakeSource{name: "c", tools: raws(tb, toolJSON("t"))}, ""),
				}
			},
			want: []Collision{
				{Kind: KindTool, Name: "t", Kept: "a", Dropped: "b", Original: "t"},
				{Kind: KindTool, Name: "t", Kept: "a", Dropped: "c", Original: "t"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			members := tt.members(t)
			c := build(members, "_", nil, nil)
			if !reflect.DeepEqual(c.Collisions, tt.want) {
				t.Errorf("collisions:\n got %+v\nwant %+v", c.Collisions, tt.want)
			}
			for _, col := range c.Collisions {
				s := col.String()
				for _, part := range []string{col.Name, col.Kept, col.Dropped, string(col.Kind)} {
					if !strings.Contains(s, part) {
						t.Errorf("%q does not mention %q", s, part)
					}
				}
				// The kept entry really is the kept server's.
				var e *Entry
				var ok bool
				switch col.Kind {
				case KindTool:
					e, ok = c.Tool(col.Name)
				case KindPrompt:
					e, ok = c.Prompt(col.Name)
				case KindResource:
					e, ok = c.resources[col.Name]
				case KindTemplate:
					for _, te := range c.ResourceTemplates {
						if te.Name == col.Name {
							e, ok = te, true
						}
					}
				}
				if !ok || e.Server != col.Kept {
					t.Errorf("collision %v: the catalog's entry is %+v", col, e)
				}
			}
			if len(c.Problems) != 0 {
				t.Errorf("problems: %q", c.Problems)
			}
			assertAccounted(t, members, c)
		})
	}
}

// assertAccounted checks that every item the members offer is in the
// catalog or reported as a collision (exactly once), and that the catalog
// holds nothing else. Malformed items are counted against Problems.
func assertAccounted(tb testing.TB, members []*member, c *Catalog) {
	tb.Helper()
	type key struct {
		kind             Kind
		server, original string
	}
	count := map[key]int{}
	for _, list := range [][]*Entry{c.Tools, c.Prompts, c.Resources, c.ResourceTemplates} {
		for _, e := range list {
			count[key{e.Kind, e.Server, e.Original}]++
		}
	}
	for _, col := range c.Collisions {
		count[key{col.Kind, col.Dropped, col.Original}]++
	}
	malformed := 0
	for _, m := range members {
		lists := []struct {
			kind  Kind
			field string
			items []json.RawMessage
			allow func(string) bool
		}{
			{KindTool, "name", m.src.Tools(), m.tools.Allows},
			{KindPrompt, "name", m.src.Prompts(), m.prompts.Allows},
			{KindResource, "uri", m.src.Resources(), nil},
			{KindTemplate, "uriTemplate", m.src.ResourceTemplates(), nil},
		}
		for _, l := range lists {
			for _, raw := range l.items {
				var obj map[string]any
				if json.Unmarshal(raw, &obj) != nil {
					malformed++
					continue
				}
				original, _ := obj[l.field].(string)
				if original == "" {
					malformed++
					continue
				}
				if l.allow != nil && !l.allow(original) {
					continue
				}
				count[key{l.kind, m.src.Name(), original}]--
			}
		}
	}
	for k, n := range count {
		switch {
		case n < 0:
			tb.Errorf("%s %q of server %s disappeared silently", k.kind, k.original, k.server)
		case n > 0:
			tb.Errorf("%s %q of server %s is in the catalog or collisions %d time(s) too many", k.kind, k.original, k.server, n)
		}
	}
	if len(c.Problems) < malformed {
		tb.Errorf("%d malformed items but %d problems: %q", malformed, len(c.Problems), c.Problems)
	}
}

func TestBuildMalformed(t *testing.T) {
	broken := &fakeSource{
		name: "broken",
		tools: []json.RawMessage{
			json.RawMessage(`42`),
			json.RawMessage(`"a string"`),
			json.RawMessage(`["name","x"]`),
			json.RawMessage(`{}`),
			json.RawMessage(`{"name":""}`),
			json.RawMessage(`null`),
			json.RawMessage(`{"name":5}`),
			json.RawMessage(`{"name":"trunc`),
			json.RawMessage(toolJSON("ok")),
		},
		prompts:   []json.RawMessage{json.RawMessage(`{"description":"no name"}`)},
		resources: []json.RawMessage{json.RawMessage(`{"name":"no uri"}`), json.RawMessage(`true`)},
		templates: []json.RawMessage{json.RawMessage(`{"name":"no template"}`)},
	}
	fine := &fakeSource{name: "fine", tools: raws(t, toolJSON("echo")), prompts: raws(t, `{"name":"p"}`),
		resources: raws(t, `{"uri":"x://1"}`), templates: raws(t, `{"uriTemplate":"x://{n}"}`)}
	members := []*member{mem(broken, "b"), mem(fine, "f")}
	c := build(members, "_", nil, nil)

	if got, want := labels(c.Tools), []string{"b_ok<-broken/ok", "f_echo<-fine/echo"}; !slices.Equal(got, want) {
		t.Errorf("tools = %q, want %q", got, want)
	}
	if len(c.Prompts) != 1 || len(c.Resources) != 1 || len(c.ResourceTemplates) != 1 {
		t.Errorf("the well-formed source lost capabilities: %q %q %q", labels(c.Prompts), labels(c.Resources), labels(c.ResourceTemplates))
	}
	if want := 8 + 1 + 2 + 1; len(c.Problems) != want {
		t.Errorf("%d problems, want %d: %q", len(c.Problems), want, c.Problems)
	}
	for _, p := range c.Problems {
		if !strings.Contains(p, "server broken") {
			t.Errorf("problem %q does not name the server", p)
		}
	}
	assertAccounted(t, members, c)
}

// TestBuildBadTemplate checks that a template the matcher cannot parse is
// reported, and that reads do not route to it.
func TestBuildBadTemplate(t *testing.T) {
	src := &fakeSource{name: "s", templates: raws(t, `{"uriTemplate":"test://{bad"}`, `{"uriTemplate":"test://ok/{id}"}`)}
	c := build([]*member{mem(src, "")}, "_", nil, nil)
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0], "server s") || !strings.Contains(c.Problems[0], "test://{bad") {
		t.Errorf("problems = %q, want one naming server s and the template", c.Problems)
	}
	if _, ok := c.Resource("test://{bad"); ok {
		t.Errorf("a read routed to the unparsable template")
	}
	if e, ok := c.Resource("test://ok/1"); !ok || e.Original != "test://ok/{id}" {
		t.Errorf("Resource(test://ok/1) = %+v, %v", e, ok)
	}
}

func TestCatalogResource(t *testing.T) {
	alpha, beta := twoSources(t)
	c := build([]*member{mem(alpha, "alpha"), mem(beta, "")}, "_", nil, nil)
	tests := []struct {
		uri      string
		ok       bool
		server   string
		kind     Kind
		original string
	}{
		{"test://alpha/readme", true, "alpha", KindResource, "test://alpha/readme"},
		{"test://items/42", true, "alpha", KindTemplate, "test://items/{id}"},
		// An exact URI wins over an earlier source's template that matches.
		{"test://items/7", true, "beta", KindResource, "test://items/7"},
		{"file:///tmp/a b.txt", true, "beta", KindResource, "file:///tmp/a b.txt"},
		{"beta://deep/path/x", true, "beta", KindTemplate, "beta://{+path}"},
		{"test://items/42/more", false, "", "", ""},
		{"test://alpha/readme2", false, "", "", ""},
		{"alpha_readme", false, "", "", ""},
		{"", false, "", "", ""},
	}
	for _, tt := range tests {
		e, ok := c.Resource(tt.uri)
		if ok != tt.ok {
			t.Errorf("Resource(%q) found = %v, want %v", tt.uri, ok, tt.ok)
			continue
		}
		if !ok {
			if e != nil {
				t.Errorf("Resource(%q) = %+v with false", tt.uri, e)
			}
			continue
		}
		if e.Server != tt.server || e.Kind != tt.kind || e.Original != tt.original {
			t.Errorf("Resource(%q) = %s %s of %s, want %s %s of %s", tt.uri, e.Kind, e.Original, e.Server, tt.kind, tt.original, tt.server)
		}
	}
}

func TestCatalogLookups(t *testing.T) {
	alpha, beta := twoSources(t)
	c := build([]*member{mem(alpha, "alpha"), mem(beta, "")}, "_", nil, nil)
	tests := []struct {
		lookup   func(string) (*Entry, bool)
		kind     Kind
		name     string
		ok       bool
		server   string
		original string
	}{
		{c.Tool, KindTool, "alpha_echo", true, "alpha", "echo"},
		{c.Tool, KindTool, "echo", true, "beta", "echo"},
		{c.Tool, KindTool, "alpha_get-x", true, "alpha", "get-x"},
		{c.Tool, KindTool, "get-x", false, "", ""}, // the original of a prefixed tool
		{c.Tool, KindTool, "alpha_greet", false, "", ""},
		{c.Tool, KindTool, "", false, "", ""},
		{c.Prompt, KindPrompt, "alpha_greet", true, "alpha", "greet"},
		{c.Prompt, KindPrompt, "greet", true, "beta", "greet"},
		{c.Prompt, KindPrompt, "alpha_echo", false, "", ""},
	}
	for _, tt := range tests {
		e, ok := tt.lookup(tt.name)
		if ok != tt.ok {
			t.Errorf("%s %q: found = %v, want %v", tt.kind, tt.name, ok, tt.ok)
			continue
		}
		if ok && (e.Kind != tt.kind || e.Server != tt.server || e.Original != tt.original || e.Name != tt.name) {
			t.Errorf("%s %q = %+v, want %s of %s", tt.kind, tt.name, e, tt.original, tt.server)
		}
	}
	if e, _ := c.Tool("alpha_echo"); e.Title != "Echo" || !strings.HasPrefix(e.Description, "Echoes <b>") || e.src != alpha {
		t.Errorf("alpha_echo: title %q description %q src %v", e.Title, e.Description, e.src)
	}
	if e, _ := c.Prompt("alpha_greet"); e.Description != "Say hi" {
		t.Errorf("alpha_greet description %q", e.Description)
	}
}

func TestListResult(t *testing.T) {
	alpha, beta := twoSources(t)
	c := build([]*member{mem(alpha, "alpha"), mem(beta, "")}, "_", nil, nil)
	for _, tt := range []struct {
		field   string
		entries []*Entry
	}{
		{"tools", c.Tools}, {"prompts", c.Prompts}, {"resources", c.Resources}, {"resourceTemplates", c.ResourceTemplates}, {"tools", nil},
	} {
		var got map[string][]json.RawMessage
		if err := json.Unmarshal(listResult(tt.field, tt.entries), &got); err != nil {
			t.Fatalf("listResult(%s): %v", tt.field, err)
		}
		items, ok := got[tt.field]
		if !ok || items == nil || len(items) != len(tt.entries) || len(got) != 1 {
			t.Fatalf("listResult(%s) = %v", tt.field, got)
		}
		for i, e := range tt.entries {
			if !bytes.Equal(items[i], e.JSON) {
				t.Errorf("listResult(%s)[%d] = %s, want %s", tt.field, i, items[i], e.JSON)
			}
		}
	}
}

func BenchmarkBuild10k(b *testing.B) {
	tools := make([]json.RawMessage, 10000)
	for i := range tools {
		tools[i] = json.RawMessage(fmt.Sprintf(`{"name":"tool-%d","description":"Tool number %d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]},"annotations":{"readOnlyHint":true}}`, i, i))
	}
	members := []*member{mem(&fakeSource{name: "bench", tools: tools}, "bench")}
	b.ReportAllocs()
	for b.Loop() {
		c := build(members, "_", nil, nil)
		if len(c.Tools) != len(tools) {
			b.Fatalf("%d tools", len(c.Tools))
		}
	}
}

// TestBuildRepairsToolSchemas: a tool whose schemas would make a client
// reject the whole tools/list is served repaired and reported; sound tools
// keep their exact bytes.
func TestBuildRepairsToolSchemas(t *testing.T) {
	src := &fakeSource{name: "s", tools: raws(t,
		`{"name":"none"}`,
		`{"name":"stringy","inputSchema":{"type":"string"}}`,
		`{"name":"badout","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}},"outputSchema":{"type":"array"}}`,
		`{"name":"fine","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{}}}`,
	)}
	c := build([]*member{mem(src, "")}, "_", nil, nil)
	if len(c.Tools) != 4 {
		t.Fatalf("got %d tools, want all 4 served", len(c.Tools))
	}
	got := map[string]map[string]any{}
	for _, e := range c.Tools {
		var m map[string]any
		json.Unmarshal(e.JSON, &m)
		got[e.Name] = m
	}
	for _, name := range []string{"none", "stringy"} {
		if s, _ := got[name]["inputSchema"].(map[string]any); s["type"] != "object" {
			t.Errorf("%s: inputSchema %v, want an object schema", name, got[name]["inputSchema"])
		}
	}
	if _, ok := got["badout"]["outputSchema"]; ok {
		t.Errorf("badout kept an outputSchema clients reject")
	}
	if props, _ := got["badout"]["inputSchema"].(map[string]any)["properties"].(map[string]any); props["a"] == nil {
		t.Errorf("badout lost its sound inputSchema")
	}
	if string(c.Tools[3].JSON) != `{"name":"fine","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{}}}` {
		t.Errorf("a sound tool was rewritten: %s", c.Tools[3].JSON)
	}
	if len(c.Problems) != 3 {
		t.Errorf("problems = %q, want one per repair", c.Problems)
	}
}

// BenchmarkBuild10kPinned measures what pinning costs a rebuild: each
// iteration builds the same 10k-tool catalog without and with a trust
// store (pinned before the loop, as at every rebuild after the first:
// the server's lists unchanged, another source changed), and reports the
// pinned build's time as a multiple of the unpinned one's.
func BenchmarkBuild10kPinned(b *testing.B) {
	tools := make([]json.RawMessage, 10000)
	for i := range tools {
		tools[i] = json.RawMessage(fmt.Sprintf(`{"name":"tool-%d","description":"Tool number %d","inputSchema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]},"annotations":{"readOnlyHint":true}}`, i, i))
	}
	pins, err := trust.Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	plain := []*member{mem(&fakeSource{name: "bench", tools: tools}, "bench")}
	pinned := []*member{mem(&fakeSource{name: "bench", tools: tools}, "bench")}
	pinned[0].trust = trust.ModePin
	build(pinned, "_", pins, nil) // the first use, recorded
	var without, with time.Duration
	timed := func(members []*member, pins *trust.Store, sum *time.Duration) {
		t0 := time.Now()
		c := build(members, "_", pins, nil)
		*sum += time.Since(t0)
		if len(c.Tools) != len(tools) {
			b.Fatalf("%d tools", len(c.Tools))
		}
	}
	// relisted's server lists the same tools anew at each build (a new
	// snapshot, as after its list_changed): the review runs whole.
	relistedSrc := &fakeSource{name: "bench", tools: tools}
	relisted := []*member{mem(relistedSrc, "bench")}
	relisted[0].trust = trust.ModePin
	var fresh time.Duration
	odd := false
	for b.Loop() {
		relistedSrc.tools = slices.Clone(tools)
		// In turns, so that neither always pays for the other's garbage.
		if odd = !odd; odd {
			timed(plain, nil, &without)
			timed(pinned, pins, &with)
			timed(relisted, pins, &fresh)
		} else {
			timed(relisted, pins, &fresh)
			timed(pinned, pins, &with)
			timed(plain, nil, &without)
		}
	}
	b.ReportMetric(float64(with)/float64(without), "pinned/unpinned")
	b.ReportMetric(float64(fresh)/float64(without), "relisted/unpinned")
}
