package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx/mcpx/aggregator/core"

	"github.com/mcpx/mcpx/upstream"
)

// fixture is two fake sources served over stdio: alpha with prefix
// "alpha", beta with none.
type fixture struct {
	alpha, beta *fakeSource
	c           *stdioClient
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	alpha, beta := twoSources(tb)
	f := &fixture{alpha: alpha, beta: beta}
	f.c = serve(tb, mem(alpha, "alpha"), mem(beta, ""))
	f.c.initialize()
	return f
}

// paramName returns the "name" member of tools/call or prompts/get params.
func paramName(tb testing.TB, params json.RawMessage) string {
	tb.Helper()
	var p struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		tb.Errorf("params %s: %v", params, err)
	}
	return p.Name
}

func TestServeInitialize(t *testing.T) {
	c := serve(t)
	r := c.initialize()
	if r.Error != nil {
		t.Fatalf("initialize failed: %s", r.line)
	}
	var res struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Capabilities map[string]struct {
			ListChanged bool `json:"listChanged"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("initialize result %s: %v", r.Result, err)
	}
	if res.ServerInfo.Name != "mcpx" {
		t.Errorf("serverInfo.name = %q, want mcpx", res.ServerInfo.Name)
	}
	for _, name := range []string{"tools", "resources", "prompts"} {
		if cc, ok := res.Capabilities[name]; !ok || !cc.ListChanged {
			t.Errorf("capabilities.%s = %+v (present %v), want listChanged true: %s", name, cc, ok, r.Result)
		}
	}

	// mcpx speaks the initialize handshake (it relays a stateful session),
	// so it declines server/discover even in the form a 2026-07-28 client
	// sends, which mcp-go alone would answer.
	modern := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
	}}
	errTests := []struct {
		method string
		params any
		code   int
	}{
		{"server/discover", map[string]any{}, -32601},
		{"server/discover", modern, -32601},
		{"no/such/method", map[string]any{}, -32601},
	}
	for i, tt := range errTests {
		r := c.call(100+i, tt.method, tt.params)
		if r.Error == nil || r.Error.Code != tt.code {
			t.Errorf("%s %v: got %s, want error %d", tt.method, tt.params, r.line, tt.code)
		}
	}
	if r := c.call("p", "ping", nil); r.Error != nil || string(r.Result) != "{}" {
		t.Errorf("ping: %s", r.line)
	}
}

func TestServeLists(t *testing.T) {
	f := newFixture(t)
	cat := f.c.a.Catalog()
	tests := []struct {
		method, field string
		entries       []*Entry
	}{
		{"tools/list", "tools", cat.Tools},
		{"resources/list", "resources", cat.Resources},
		{"resources/templates/list", "resourceTemplates", cat.ResourceTemplates},
		{"prompts/list", "prompts", cat.Prompts},
	}
	for i, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			if len(tt.entries) < 2 {
				t.Fatalf("fixture catalog has %d %s", len(tt.entries), tt.field)
			}
			r := f.c.call(i+1, tt.method, map[string]any{})
			if r.Error != nil {
				t.Fatalf("%s: %s", tt.method, r.line)
			}
			var res map[string][]json.RawMessage
			if err := json.Unmarshal(r.Result, &res); err != nil {
				t.Fatalf("%s result %s: %v", tt.method, r.Result, err)
			}
			items := res[tt.field]
			if len(items) != len(tt.entries) {
				t.Fatalf("%s returned %d items, catalog has %d: %s", tt.method, len(items), len(tt.entries), r.Result)
			}
			for j, e := range tt.entries {
				assertJSONEqual(t, fmt.Sprintf("%s item %d", tt.method, j), items[j], e.JSON)
			}
		})
	}
}

func TestServeToolsCallRouting(t *testing.T) {
	f := newFixture(t)
	// Answer with the source's name and fields no typed struct knows.
	answer := func(src string) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return func(_ context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"content":[{"type":"text","text":"from ` + src + `","x-extra":1}],` +
				`"structuredContent":{"big":12345678901234567890,"f":1.50},"x-unknown":{"a":[1,null]},"_meta":{"k":"v"},"isError":false}`), nil
		}
	}
	f.alpha.setRequest(answer("alpha"))
	f.beta.setRequest(answer("beta"))

	const args = `{"n":12345678901234567890,"s":"<b>&amp;</b>","f":1.50,"e":1e400,"u":"\u00e9","nested":{"a":[1,2,{"b":null}]},"empty":{}}`
	tests := []struct {
		exposed  string
		src      *fakeSource
		other    *fakeSource
		original string
	}{
		{"alpha_echo", f.alpha, f.beta, "echo"},
		{"echo", f.beta, f.alpha, "echo"},
		{"alpha_get-x", f.alpha, f.beta, "get-x"},
	}
	for i, tt := range tests {
		t.Run(tt.exposed, func(t *testing.T) {
			before, otherBefore := len(tt.src.received()), len(tt.other.received())
			line := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"` + tt.exposed +
				`","arguments":` + args + `,"_meta":{"progressToken":"p1","x-y":[1]}}}`
			f.c.send(line)
			r := f.c.await(i+1, 5*time.Second)
			if r.Error != nil {
				t.Fatalf("tools/call: %s", r.line)
			}
			want, _ := answer(tt.src.name)(context.Background(), "", nil)
			assertJSONEqual(t, "result", r.Result, want)

			calls := tt.src.received()[before:]
			if len(calls) != 1 {
				t.Fatalf("source %s got %d requests, want 1", tt.src.name, len(calls))
			}
			if n := len(tt.other.received()) - otherBefore; n != 0 {
				t.Errorf("source %s got %d requests too", tt.other.name, n)
			}
			if calls[0].Method != "tools/call" {
				t.Errorf("method = %q", calls[0].Method)
			}
			var p map[string]json.RawMessage
			if err := json.Unmarshal(calls[0].Params, &p); err != nil {
				t.Fatalf("params %s: %v", calls[0].Params, err)
			}
			if got := paramName(t, calls[0].Params); got != tt.original {
				t.Errorf("source got name %q, want %q", got, tt.original)
			}
			if string(p["arguments"]) != args {
				t.Errorf("arguments changed:\n got %s\nwant %s", p["arguments"], args)
			}
			assertJSONEqual(t, "_meta", p["_meta"], []byte(`{"progressToken":"p1","x-y":[1]}`))
			if len(p) != 3 {
				t.Errorf("params have keys %v, want name, arguments, _meta", p)
			}
		})
	}
}

func TestServeToolsCallErrors(t *testing.T) {
	f := newFixture(t)
	f.alpha.setRequest(func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		switch name := paramName(t, params); name {
		case "echo":
			return nil, errors.New("disk on fire")
		case "get-x":
			return nil, fmt.Errorf("alpha: %w", &upstream.RPCError{Code: -32050, Message: "x", Data: json.RawMessage(`{"why":"because","n":12345678901234567890,"list":[1,"a"]}`)})
		default:
			return nil, fmt.Errorf("unexpected tool %q", name)
		}
	})
	tests := []struct {
		desc   string
		params string // raw JSON, "" for none
		// Either an error code with a text the message must contain ...
		code int
		text string
		// ... or a result with isError and this text.
		toolError string
		// ... or an upstream error passed through.
		data string
	}{
		// A name mcpx does not serve is a tool result the model can read,
		// with the served names it may have meant; malformed params stay
		// -32602.
		{desc: "unknown tool", params: `{"name":"nope","arguments":{}}`, toolError: `unknown tool "nope"`},
		{desc: "unknown prefixed tool", params: `{"name":"alpha_echoo"}`, toolError: `unknown tool "alpha_echoo"; did you mean "alpha_echo"`},
		{desc: "original name of a prefixed tool", params: `{"name":"get-x"}`, toolError: `unknown tool "get-x"; did you mean "alpha_get-x"`},
		{desc: "params an array", params: `[1,2]`, code: -32602},
		{desc: "params a string", params: `"alpha_echo"`, code: -32602},
		{desc: "params a number", params: `42`, code: -32602},
		{desc: "no params", params: ``, code: -32602},
		{desc: "name not a string", params: `{"name":7}`, code: -32602},
		{desc: "empty name", params: `{"name":""}`, code: -32602},
		{desc: "generic error", params: `{"name":"alpha_echo","arguments":{}}`, toolError: "disk on fire"},
		{desc: "upstream error", params: `{"name":"alpha_get-x","arguments":{}}`, code: -32050, text: "x",
			data: `{"why":"because","n":12345678901234567890,"list":[1,"a"]}`},
	}
	for i, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			line := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call"`
			if tt.params != "" {
				line += `,"params":` + tt.params
			}
			f.c.send(line + "}")
			r := f.c.await(i+1, 5*time.Second)
			if tt.toolError != "" {
				var res struct {
					Content []struct {
						Type, Text string
					} `json:"content"`
					IsError bool `json:"isError"`
				}
				if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || !res.IsError ||
					len(res.Content) != 1 || res.Content[0].Type != "text" || !strings.Contains(res.Content[0].Text, tt.toolError) {
					t.Errorf("got %s, want a result with isError and %q", r.line, tt.toolError)
				}
				return
			}
			if r.Error == nil || r.Error.Code != tt.code || !strings.Contains(r.Error.Message, tt.text) {
				t.Fatalf("got %s, want error %d mentioning %q", r.line, tt.code, tt.text)
			}
			if tt.data != "" {
				if r.Error.Message != tt.text {
					t.Errorf("message = %q, want %q", r.Error.Message, tt.text)
				}
				assertJSONEqual(t, "error data", r.Error.Data, []byte(tt.data))
			}
		})
	}
}

func TestServeResourcesRead(t *testing.T) {
	f := newFixture(t)
	answer := func(src string) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"contents":[{"uri":"x","text":"from ` + src + `","_meta":{"z":1}}],"x-u":true}`), nil
		}
	}
	f.alpha.setRequest(answer("alpha"))
	f.beta.setRequest(answer("beta"))
	tests := []struct {
		params string
		src    *fakeSource // nil: unknown
	}{
		{`{"uri":"test://alpha/readme"}`, f.alpha},
		{`{"uri":"test://items/42","_meta":{"progressToken":12345678901234567890}}`, f.alpha}, // by template
		{`{"uri":"test://items/7"}`, f.beta},                                                  // exact beats template
		{`{"uri":"beta://some/deep/path"}`, f.beta},
		{`{"uri":"file:///tmp/a b.txt"}`, f.beta},
		{`{"uri":"test://nope"}`, nil},
		{`{"uri":"alpha_readme"}`, nil},
	}
	for i, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			alphaN, betaN := len(f.alpha.received()), len(f.beta.received())
			f.c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"resources/read","params":` + tt.params + `}`)
			r := f.c.await(i+1, 5*time.Second)
			got := map[*fakeSource][]fakeCall{f.alpha: f.alpha.received()[alphaN:], f.beta: f.beta.received()[betaN:]}
			if tt.src == nil {
				if r.Error == nil || r.Error.Code != -32002 {
					t.Errorf("got %s, want error -32002", r.line)
				}
				if len(got[f.alpha])+len(got[f.beta]) != 0 {
					t.Errorf("an unknown URI reached a source: %v", got)
				}
				return
			}
			if r.Error != nil {
				t.Fatalf("resources/read: %s", r.line)
			}
			want, _ := answer(tt.src.name)(context.Background(), "", nil)
			assertJSONEqual(t, "result", r.Result, want)
			calls := got[tt.src]
			if len(calls) != 1 || calls[0].Method != "resources/read" || string(calls[0].Params) != tt.params {
				t.Errorf("source %s got %+v, want one resources/read with %s", tt.src.name, calls, tt.params)
			}
			for s, calls := range got {
				if s != tt.src && len(calls) > 0 {
					t.Errorf("source %s got %+v too", s.name, calls)
				}
			}
		})
	}
	r := f.c.call(99, "resources/read", []int{1})
	if r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("params not an object: got %s, want -32602", r.line)
	}
}

func TestServePromptsGet(t *testing.T) {
	f := newFixture(t)
	answer := func(src string) func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"description":"` + src + `","messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"x-p":[]}`), nil
		}
	}
	f.alpha.setRequest(answer("alpha"))
	f.beta.setRequest(answer("beta"))
	tests := []struct {
		exposed  string
		src      *fakeSource
		original string
	}{
		{"alpha_greet", f.alpha, "greet"},
		{"greet", f.beta, "greet"},
		{"nope", nil, ""},
		{"alpha_echo", nil, ""}, // a tool, not a prompt
	}
	for i, tt := range tests {
		t.Run(tt.exposed, func(t *testing.T) {
			var before int
			if tt.src != nil {
				before = len(tt.src.received())
			}
			r := f.c.call(i+1, "prompts/get", map[string]any{"name": tt.exposed, "arguments": map[string]string{"who": "bob <&>"}})
			if tt.src == nil {
				if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, tt.exposed) {
					t.Errorf("got %s, want error -32602 naming %q", r.line, tt.exposed)
				}
				return
			}
			if r.Error != nil {
				t.Fatalf("prompts/get: %s", r.line)
			}
			want, _ := answer(tt.src.name)(context.Background(), "", nil)
			assertJSONEqual(t, "result", r.Result, want)
			calls := tt.src.received()[before:]
			if len(calls) != 1 || calls[0].Method != "prompts/get" {
				t.Fatalf("source %s got %+v", tt.src.name, calls)
			}
			assertJSONEqual(t, "params", calls[0].Params, mustJSON(t, map[string]any{"name": tt.original, "arguments": map[string]string{"who": "bob <&>"}}))
		})
	}
}

func TestServeParseError(t *testing.T) {
	c := serve(t)
	c.initialize()
	garbage := []string{
		`this is not json`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"`,
		`{]`,
		"\x00\x01",
	}
	for i, g := range garbage {
		c.send(g)
		r := c.awaitNth(nil, i, 5*time.Second)
		if r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
			t.Errorf("%q: got %s, want error -32700 with id null", g, r.line)
		}
		// The server keeps serving after each.
		if r := c.call(i+1, "ping", nil); r.Error != nil {
			t.Fatalf("ping after %q: %s", g, r.line)
		}
	}
	if n := len(c.responsesFor(nil)); n != len(garbage) {
		t.Errorf("%d parse errors for %d garbage lines", n, len(garbage))
	}
}

func TestServeCancel(t *testing.T) {
	for _, id := range []any{7, "req-7"} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			f := newFixture(t)
			started := make(chan struct{})
			cancelled := make(chan struct{})
			release := make(chan struct{}) // lets the bystander call finish
			f.alpha.setRequest(func(ctx context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
				if paramName(t, params) == "get-x" {
					select {
					case <-release:
						return json.RawMessage(`{"content":[]}`), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				close(started)
				<-ctx.Done()
				close(cancelled)
				return nil, ctx.Err()
			})
			// A bystander call in flight at the same time must survive.
			f.c.request("bystander", "tools/call", map[string]any{"name": "alpha_get-x"})
			f.c.request(id, "tools/call", map[string]any{"name": "alpha_echo", "arguments": map[string]any{}})
			select {
			case <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool was never called")
			}
			f.c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "user"})
			select {
			case <-cancelled:
			case <-time.After(time.Second):
				t.Fatal("the tool's context was not cancelled within 1s")
			}
			// The cancelled call's handler has finished once its id is
			// free again: probe with pings under that id until one is
			// served rather than refused as in flight.
			for probe := 0; ; probe++ {
				n := len(f.c.responsesFor(id))
				f.c.request(id, "ping", nil)
				r := f.c.awaitNth(id, n, 5*time.Second)
				if r.Error == nil {
					break
				}
				if !strings.Contains(r.Error.Message, "in flight") {
					t.Fatalf("a cancelled request was answered: %s", r.line)
				}
				if probe == 10000 {
					t.Fatal("the cancelled call never freed its id")
				}
			}
			f.c.sync()
			for _, r := range f.c.responsesFor(id) {
				probe := r.Error == nil && string(r.Result) == `{}` || r.Error != nil && strings.Contains(r.Error.Message, "in flight")
				if !probe {
					t.Errorf("a cancelled request was answered: %s", r.line)
				}
			}
			close(release)
			if r := f.c.await("bystander", 5*time.Second); r.Error != nil || string(r.Result) != `{"content":[]}` {
				t.Errorf("the bystander call got %s", r.line)
			}
		})
	}
}

func TestServeConcurrentCalls(t *testing.T) {
	const n = 100
	f := newFixture(t)
	f.alpha.setRequest(func(ctx context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		var p struct {
			Arguments struct {
				I int `json:"i"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(rand.IntN(20)) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"%d"}]}`, p.Arguments.I)), nil
	})
	var wg sync.WaitGroup
	id := func(i int) string { return fmt.Sprintf("call-%d", i) }
	for i := range n {
		wg.Go(func() {
			f.c.request(id(i), "tools/call", map[string]any{"name": "alpha_echo", "arguments": map[string]int{"i": i}})
		})
	}
	wg.Wait()
	for i := range n {
		f.c.await(id(i), 10*time.Second)
	}
	f.c.sync()
	for i := range n {
		rs := f.c.responsesFor(id(i))
		if len(rs) != 1 {
			t.Errorf("id %d: %d responses", i, len(rs))
			continue
		}
		want := fmt.Sprintf(`{"content":[{"type":"text","text":"%d"}]}`, i)
		if rs[0].Error != nil || string(rs[0].Result) != want {
			t.Errorf("id %d: got %s, want result %s", i, rs[0].line, want)
		}
	}
	if got := len(f.alpha.received()); got != n {
		t.Errorf("the source got %d calls, want %d", got, n)
	}
}

func TestServeListChanged(t *testing.T) {
	tests := []struct {
		list   string // the fake's list to change
		method string // the list request that shows it
		note   string
	}{
		{"tools", "tools/list", "notifications/tools/list_changed"},
		{"prompts", "prompts/list", "notifications/prompts/list_changed"},
		{"resources", "resources/list", "notifications/resources/list_changed"},
		{"templates", "resources/templates/list", "notifications/resources/list_changed"},
	}
	items := map[string]func(int) string{
		"tools":     func(i int) string { return toolJSON(fmt.Sprintf("new-%d", i)) },
		"prompts":   func(i int) string { return fmt.Sprintf(`{"name":"new-%d"}`, i) },
		"resources": func(i int) string { return fmt.Sprintf(`{"uri":"new://%d","name":"n"}`, i) },
		"templates": func(i int) string { return fmt.Sprintf(`{"uriTemplate":"new%d://{x}","name":"n"}`, i) },
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			f := newFixture(t)
			c := f.c
			id := 0
			listAll := func() {
				for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
					id++
					if r := c.call(id, m, nil); r.Error != nil {
						t.Fatalf("%s: %s", m, r.line)
					}
				}
			}
			added := 0
			change := func() {
				added++
				var list []json.RawMessage
				switch tt.list {
				case "tools":
					list = f.alpha.Tools()
				case "prompts":
					list = f.alpha.Prompts()
				case "resources":
					list = f.alpha.Resources()
				case "templates":
					list = f.alpha.ResourceTemplates()
				}
				f.alpha.set(tt.list, append(append([]json.RawMessage(nil), list...), json.RawMessage(items[tt.list](added))))
			}
			// step rebuilds, lets the output settle, and checks the
			// notifications that came out.
			step := func(desc string, want ...string) {
				t.Helper()
				n := c.noteCount()
				c.a.Rebuild()
				c.sync()
				var got []string
				for _, m := range c.notesSince(n) {
					got = append(got, m.Method)
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s: notifications %q, want %q", desc, got, want)
				}
			}

			listAll()
			change()
			step("first change after listing", tt.note)
			step("rebuild without a change")
			change()
			step("change before the client listed again")
			id++
			if r := c.call(id, tt.method, nil); r.Error != nil {
				t.Fatalf("%s: %s", tt.method, r.line)
			}
			change()
			step("change after listing again", tt.note)
			// The other lists were fetched once and never changed.
			listAll()
			step("rebuild after listing everything")
		})
	}
}

// TestServeListChangedNeedsInitialized checks that a client which has not
// sent notifications/initialized is told nothing.
func TestServeListChangedNeedsInitialized(t *testing.T) {
	alpha, beta := twoSources(t)
	c := serve(t, mem(alpha, "alpha"), mem(beta, ""))
	if r := c.call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}}); r.Error != nil {
		t.Fatalf("initialize: %s", r.line)
	}
	c.call(2, "tools/list", nil)
	alpha.set("tools", raws(t, toolJSON("only")))
	c.a.Rebuild()
	c.sync()
	if notes := c.notesSince(0); len(notes) != 0 {
		t.Errorf("notified before initialized: %s", notes[0].line)
	}
	// Once initialized, the list fetched before still counts as held.
	c.notify("notifications/initialized", nil)
	c.sync()
	alpha.set("tools", raws(t, toolJSON("other")))
	c.a.Rebuild()
	c.sync()
	if notes := c.notesSince(0); len(notes) != 1 || notes[0].Method != "notifications/tools/list_changed" {
		t.Errorf("notifications after initialized: %v", notes)
	}
}

// TestServeEOF: when the client closes its input, ServeStdio answers
// the requests it read, the last line without its newline included (a
// client may pipe its requests and close, as a smoke test does), and
// returns; a call still running after Drain and Linger is cancelled,
// unanswered. alpha_echo answers once the input is closed; alpha_get-x
// answers only its cancellation; echo (beta's) asks the client first,
// and answers as soon as the ask fails: the client can no longer answer.
func TestServeEOF(t *testing.T) {
	call := func(id any, name string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q}}`, mustJSON(t, id), name)
	}
	tests := []struct {
		desc string
		// lines are written before the input is closed; the last is
		// written without its newline when noNewline is set.
		lines     []string
		noNewline bool
		answered  []any // ids of the calls that must be answered
		stuck     []any // ids of the calls that must be cancelled, unanswered
		opts      *Options
	}{
		{desc: "idle"},
		{desc: "call in flight", lines: []string{call(9, "alpha_echo")}, answered: []any{9}},
		{desc: "last line without newline", lines: []string{call("w", "alpha_echo"), call("x", "alpha_echo")},
			noNewline: true, answered: []any{"w", "x"}},
		{desc: "several in flight", lines: []string{call(1, "alpha_echo"), call(2, "alpha_echo"), call(3, "alpha_echo"),
			`{"jsonrpc":"2.0","id":4,"method":"ping"}`, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`},
			answered: []any{1, 2, 3, 4, 5}},
		{desc: "call asking the client", lines: []string{call(7, "echo")}, answered: []any{7}},
		{desc: "stuck call", lines: []string{call(1, "alpha_echo"), call(2, "alpha_get-x")},
			answered: []any{1}, stuck: []any{2}, opts: &Options{Drain: 100 * time.Millisecond, Linger: 100 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			if opts == nil {
				// Long enough never to be reached: every call answers.
				opts = &Options{Linger: time.Minute}
			}
			alpha, beta := twoSources(t)
			c := serveWith(t, opts, mem(alpha, "alpha"), mem(beta, ""))
			c.initialize()
			var mu sync.Mutex
			cancelled := 0
			closed := make(chan struct{})
			alpha.setRequest(func(ctx context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
				if paramName(t, params) == "echo" {
					<-closed
					return json.RawMessage(`{"content":[{"type":"text","text":"late"}]}`), nil
				}
				<-ctx.Done()
				mu.Lock()
				cancelled++
				mu.Unlock()
				return nil, ctx.Err()
			})
			beta.setRequest(func(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, error) {
				// The client whose call this is, as a request from beta
				// would find it.
				l := c.a.clientFor(beta.name, "ping", nil)
				if _, err := l.request(ctx, "ping", nil); !errors.Is(err, core.ErrInputEnded) {
					return nil, fmt.Errorf("asked the client: %v", err)
				}
				return json.RawMessage(`{"content":[{"type":"text","text":"asked"}]}`), nil
			})
			for i, l := range tt.lines {
				if tt.noNewline && i == len(tt.lines)-1 {
					c.writeMu.Lock()
					io.WriteString(c.in, l)
					c.writeMu.Unlock()
					continue
				}
				c.send(l)
			}
			c.in.Close()
			close(closed)
			select {
			case err := <-c.done:
				if err != nil {
					t.Errorf("ServeStdio returned %v, want nil", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("ServeStdio did not return within 30s of EOF")
			}
			// Every line it wrote has been read once the output ends.
			c.waitFor(10*time.Second, func() (rpcMsg, bool) { return rpcMsg{}, c.eof })
			for _, id := range tt.answered {
				if rs := c.responsesFor(id); len(rs) != 1 || rs[0].Error != nil {
					t.Errorf("call %v: answers %v, want one result", id, rs)
				}
			}
			for _, id := range tt.stuck {
				if rs := c.responsesFor(id); len(rs) != 0 {
					t.Errorf("stuck call %v was answered: %s", id, rs[0].line)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if cancelled != len(tt.stuck) {
				t.Errorf("%d calls were cancelled, want %d", cancelled, len(tt.stuck))
			}
		})
	}
}

// TestServeCompactsNewlines checks that a pretty-printed result or error
// from a source leaves as one line.
func TestServeCompactsNewlines(t *testing.T) {
	const pretty = "{\n  \"content\": [\n    {\n      \"type\": \"text\",\n      \"text\": \"line1\\nline2\"\n    }\n  ],\r\n\t\"isError\": false\n}\n"
	const prettyData = "{\n  \"a\": [\n    1,\n    2\n  ]\n}"
	f := newFixture(t)
	f.alpha.setRequest(func(_ context.Context, _ string, params json.RawMessage) (json.RawMessage, error) {
		if paramName(t, params) == "get-x" {
			return nil, &upstream.RPCError{Code: -32001, Message: "pretty", Data: json.RawMessage(prettyData)}
		}
		return json.RawMessage(pretty), nil
	})
	f.c.mu.Lock()
	before := f.c.lines
	f.c.mu.Unlock()
	r := f.c.call(1, "tools/call", map[string]any{"name": "alpha_echo"})
	if r.Error != nil {
		t.Fatalf("tools/call: %s", r.line)
	}
	assertJSONEqual(t, "result", r.Result, []byte(pretty))
	if bytes.ContainsAny(r.line, "\r\n") {
		t.Errorf("response line holds a line break: %q", r.line)
	}
	r = f.c.call(2, "tools/call", map[string]any{"name": "alpha_get-x"})
	if r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("got %s, want error -32001", r.line)
	}
	assertJSONEqual(t, "error data", r.Error.Data, []byte(prettyData))
	f.c.mu.Lock()
	lines, bad := f.c.lines-before, len(f.c.bad)
	f.c.mu.Unlock()
	if lines != 2 || bad != 0 {
		t.Errorf("%d lines for 2 responses, %d not JSON-RPC", lines, bad)
	}
}

// TestServeRedactsSourceErrors checks that a source's failure reaches the
// client only through Options.Redact, whichever method failed: transport
// errors can carry a URL or header with a secret in it.
func TestServeRedactsSourceErrors(t *testing.T) {
	const secret = "s3cr3t-token"
	alpha, beta := twoSources(t)
	alpha.setRequest(func(context.Context, string, json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New(`post "http://127.0.0.1:1/mcp?token=` + secret + `": connection refused`)
	})
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	c := serveWith(t, &Options{Redact: redact}, mem(alpha, "alpha"), mem(beta, ""))
	c.initialize()
	tests := []struct {
		method string
		params any
	}{
		{"tools/call", map[string]any{"name": "alpha_echo"}},
		{"resources/read", map[string]any{"uri": "test://alpha/readme"}},
		{"resources/read", map[string]any{"uri": "test://items/1"}},
		{"prompts/get", map[string]any{"name": "alpha_greet"}},
	}
	for i, tt := range tests {
		r := c.call(i+1, tt.method, tt.params)
		if strings.Contains(string(r.line), secret) {
			t.Errorf("%s: the secret reached the client: %s", tt.method, r.line)
		}
		if !strings.Contains(string(r.line), "connection refused") {
			t.Errorf("%s: the reason was lost: %s", tt.method, r.line)
		}
	}
}
