package proxytool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeCatalog is a Catalog holding a few realistic servers: "everything"
// (prefix everything, like @modelcontextprotocol/server-everything),
// "github" (prefix gh), "files" (prefix fs) and "notes" (resources only).
// It answers calls with canned results and records every call it gets.
type fakeCatalog struct {
	items map[Kind][]Item

	mu    sync.Mutex
	calls []recordedCall
}

// recordedCall is one Catalog.Call the fake received.
type recordedCall struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func newFake(tb testing.TB) *fakeCatalog {
	tb.Helper()
	f := &fakeCatalog{items: map[Kind][]Item{}}
	for _, c := range fakeCapabilities() {
		f.items[c.kind] = append(f.items[c.kind], c.item(tb))
	}
	return f
}

func (f *fakeCatalog) Items(kind Kind) []Item { return f.items[kind] }

func (f *fakeCatalog) Lookup(kind Kind, name string) (Item, bool) {
	for _, it := range f.items[kind] {
		if !it.Template && it.Name == name {
			return it, true
		}
	}
	if kind == KindResource {
		for _, it := range f.items[kind] {
			if it.Template && templateRegexp(it.Name).MatchString(name) {
				return it, true
			}
		}
	}
	return Item{}, false
}

// templateRegexp matches the URIs a simple URI template ({var} only) expands to.
func templateRegexp(tmpl string) *regexp.Regexp {
	parts := regexp.MustCompile(`\{[^}]*\}`).Split(tmpl, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "[^/]+") + "$")
}

func (f *fakeCatalog) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, recordedCall{Method: method, Params: append(json.RawMessage(nil), params...)})
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var p struct {
		Name      string                     `json:"name"`
		URI       string                     `json:"uri"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("fake: bad params: %v", err)
	}
	switch method {
	case "tools/call":
		return toolResult(p.Name, p.Arguments)
	case "resources/read":
		return readResult(p.URI)
	case "prompts/get":
		return promptResult(p.Name, p.Arguments)
	}
	return nil, fmt.Errorf("fake: unknown method %s", method)
}

// fakeKeptURI names the one result the fake keeps, fakeKept, which it
// reads back in slices of at most fakeKeptSlice bytes, as mcpx's store
// would under a tiny cap.
const (
	fakeKeptURI   = "mcpx://results/0123456789abcdef0123456789abcdef"
	fakeKept      = "line one\nline two\nline three\n"
	fakeKeptSlice = 16
)

var _ Keeper = (*fakeCatalog)(nil)

func (f *fakeCatalog) Kept(uri string) bool { return strings.HasPrefix(uri, "mcpx://results/") }

// ReadKept records the read as a call of method "readKept" and answers a
// slice of fakeKept as Keeper says.
func (f *fakeCatalog) ReadKept(ctx context.Context, uri string, reserve int) (json.RawMessage, error) {
	params := marshalPlain(map[string]any{"uri": uri, "reserve": reserve})
	f.mu.Lock()
	f.calls = append(f.calls, recordedCall{Method: "readKept", Params: params})
	f.mu.Unlock()
	base, query, _ := strings.Cut(uri, "?")
	if base != fakeKeptURI {
		return nil, errors.New("unknown resource: " + uri + ": result not found (unknown, expired, or not yours)")
	}
	q, _ := url.ParseQuery(query)
	offset, _ := strconv.Atoi(q.Get("offset"))
	length, _ := strconv.Atoi(q.Get("length"))
	page := fakeKeptSlice
	if length > 0 {
		page = min(page, length)
	}
	offset = min(offset, len(fakeKept))
	end := min(offset+page, len(fakeKept))
	meta := map[string]any{"mcpx/offset": offset, "mcpx/length": end - offset, "mcpx/total": len(fakeKept)}
	if end < len(fakeKept) {
		meta["mcpx/next"] = fmt.Sprintf("%s?offset=%d&length=%d", base, end, page)
	}
	return marshalPlain(map[string]any{
		"contents": []map[string]string{{"uri": uri, "mimeType": "text/plain", "text": fakeKept[offset:end]}},
		"_meta":    meta,
	}), nil
}

// marshalPlain is json.Marshal without escaping '<', '>' and '&', as mcpx
// writes JSON.
func marshalPlain(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// reset forgets the calls received so far.
func (f *fakeCatalog) reset() {
	f.mu.Lock()
	f.calls = nil
	f.mu.Unlock()
}

// recorded returns the calls received so far as a JSON array.
func (f *fakeCatalog) recorded() json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return nil
	}
	b, err := json.Marshal(f.calls)
	if err != nil {
		panic(err)
	}
	return b
}

func toolResult(name string, args map[string]json.RawMessage) (json.RawMessage, error) {
	switch name {
	case "everything_echo":
		var msg string
		_ = json.Unmarshal(args["message"], &msg)
		return jsonf(`{"content":[{"type":"text","text":%q}]}`, "Echo: "+msg), nil
	case "everything_add":
		return json.RawMessage(`{"content":[{"type":"text","text":"The sum of 2 and 3 is 5."}]}`), nil
	case "everything_annotatedMessage":
		return json.RawMessage(`{"content":[
			{"type":"text","text":"Error: Operation failed","annotations":{"priority":1.0,"audience":["user","assistant"],"x-vendor":{"kept":true}}},
			{"type":"text","text":"<b>no annotations here</b>"},
			{"type":"text","text":"annotations were null","annotations":null}]}`), nil
	case "everything_getTinyImage":
		return json.RawMessage(`{"content":[
			{"type":"text","text":"This is a tiny image:"},
			{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==","mimeType":"image/png","annotations":{"audience":["user"]}},
			{"type":"audio","data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=","mimeType":"audio/wav"},
			{"type":"resource_link","uri":"test://static/resource/1","name":"Resource 1","mimeType":"text/plain","_meta":{"origin":"everything"}},
			{"type":"resource","resource":{"uri":"test://static/resource/1","mimeType":"text/plain","text":"Resource 1: This is a plaintext resource"}}]}`), nil
	case "everything_structuredContent":
		return json.RawMessage(`{"content":[{"type":"text","text":"{\"temperature\":22.5,\"conditions\":\"Partly cloudy\"}"}],
			"structuredContent":{"temperature":22.5,"conditions":"Partly cloudy"},
			"_meta":{"io.example/trace":"7f3a"},
			"x-unknown-field":[1,2,3]}`), nil
	case "everything_fail":
		return json.RawMessage(`{"content":[{"type":"text","text":"Division by zero"}],"isError":true}`), nil
	case "everything_broken":
		return nil, errors.New("MCP error -32603: upstream exploded: stack overflow in handler")
	case "everything_garbage":
		return json.RawMessage(`["not","a","result"]`), nil
	case "everything_longRunningOperation":
		return json.RawMessage(`{"content":[{"type":"text","text":"Long running operation completed. Duration: 10 seconds, Steps: 5."}]}`), nil
	}
	return jsonf(`{"content":[{"type":"text","text":%q}]}`, "ran "+name), nil
}

func readResult(uri string) (json.RawMessage, error) {
	switch uri {
	case "test://static/resource/1":
		return json.RawMessage(`{"contents":[{"uri":"test://static/resource/1","mimeType":"text/plain","text":"Resource 1: This is a plaintext resource"}]}`), nil
	case "test://static/resource/2":
		return json.RawMessage(`{"contents":[{"uri":"test://static/resource/2","mimeType":"image/png","blob":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==","_meta":{"size":68}}]}`), nil
	case "file:///data/config.txt":
		return json.RawMessage(`{"contents":[{"uri":"file:///data/config.txt","mimeType":"text/plain","text":"{\n  \"key\": \"value\",\n  \"ports\": [8080, 8443],\n  \"html\": \"<b>&</b>\"\n}\n","_meta":{"etag":"abc"}}]}`), nil
	case "file:///data/report.json":
		return json.RawMessage(`{"contents":[{"uri":"file:///data/report.json","mimeType":"application/json","text":"{\n  \"ok\": true\n}"}]}`), nil
	case "file:///docs/README.md":
		return json.RawMessage(`{"contents":[{"uri":"file:///docs/README.md","mimeType":"text/markdown","text":"# Files\n\nServes the files under /data."}]}`), nil
	case "file:///data/raw":
		return json.RawMessage(`{"contents":[{"uri":"file:///data/raw","text":"[1, 2, 3]"}],"_meta":{"cached":true}}`), nil
	case "notes://readme":
		return json.RawMessage(`{"contents":[{"uri":"notes://readme","mimeType":"text/plain","text":"Take notes."}]}`), nil
	}
	if date, ok := strings.CutPrefix(uri, "file:///logs/"); ok {
		return jsonf(`{"contents":[
			{"uri":%q,"mimeType":"text/plain","text":"09:00 started\n09:01 ready"},
			{"uri":%q,"mimeType":"application/x-ndjson","text":"{\"level\":\"info\"}"}]}`, uri, uri+"#"+date), nil
	}
	return nil, fmt.Errorf("MCP error -32002: Resource not found: %s", uri)
}

func promptResult(name string, args map[string]json.RawMessage) (json.RawMessage, error) {
	switch name {
	case "everything_simple_prompt":
		return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt without arguments."}}]}`), nil
	case "everything_complex_prompt":
		var temp, style string
		_ = json.Unmarshal(args["temperature"], &temp)
		_ = json.Unmarshal(args["style"], &style)
		return jsonf(`{"description":"A prompt with arguments","messages":[
			{"role":"user","content":{"type":"text","text":%q}},
			{"role":"assistant","content":{"type":"text","text":"I understand. You've provided a complex prompt."}}],"_meta":{"kept":true}}`,
			fmt.Sprintf("This is a complex prompt with arguments: temperature=%s, style=%s", temp, style)), nil
	}
	return nil, fmt.Errorf("MCP error -32602: Unknown prompt: %s", name)
}

func jsonf(format string, a ...any) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(format, a...))
}

// capability is one entry of the fake catalog as its server lists it.
type capability struct {
	kind     Kind
	server   string
	prefix   string
	template bool
	json     string
}

// item turns a capability into the catalog's Item: tools and prompts get
// prefix_name, resources keep their URI.
func (c capability) item(tb testing.TB) Item {
	tb.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(c.json), &obj); err != nil {
		tb.Fatalf("fake capability %s: %v", c.json, err)
	}
	str := func(k string) string { s, _ := obj[k].(string); return s }
	it := Item{Kind: c.kind, Template: c.template, Server: c.server, Title: str("title"), Description: str("description")}
	switch {
	case c.kind != KindResource:
		it.Original = str("name")
		it.Name = c.prefix + "_" + it.Original
		obj["name"] = it.Name
	case c.template:
		it.Original, it.Name = str("uriTemplate"), str("uriTemplate")
	default:
		it.Original, it.Name = str("uri"), str("uri")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		tb.Fatal(err)
	}
	it.JSON = b
	return it
}

// fakeCapabilities is what the fake's servers offer, in catalog order.
func fakeCapabilities() []capability {
	return []capability{
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"echo","description":"Echoes back the input","inputSchema":{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"],"$schema":"http://json-schema.org/draft-07/schema#"}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"add","title":"Add numbers","description":"Adds two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"sum":{"type":"number"}}},"annotations":{"readOnlyHint":true}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"longRunningOperation","description":"Demonstrates a long running operation with progress updates","inputSchema":{"type":"object","properties":{"duration":{"type":"number","default":10},"steps":{"type":"number","default":5}}}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"printEnv","description":"Prints all environment variables, helpful for debugging MCP server configuration; the values echo what the server was started with","inputSchema":{"type":"object","properties":{}}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"annotatedMessage","description":"Demonstrates how annotations can be used to provide metadata about content","inputSchema":{"type":"object","properties":{"messageType":{"type":"string","enum":["error","success","debug"]},"includeImage":{"type":"boolean","default":false}},"required":["messageType"]}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"getTinyImage","description":"Returns the MCP_TINY_IMAGE","inputSchema":{"type":"object","properties":{}},"_meta":{"io.example/ui":"image"}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"structuredContent","description":"Returns structured content along with an output schema","inputSchema":{"type":"object","properties":{"location":{"type":"string","minLength":1}},"required":["location"]},"outputSchema":{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"]}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"fail","description":"Always reports a tool error (isError)","inputSchema":{"type":"object"}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"broken","description":"Always fails with a JSON-RPC error","inputSchema":{"type":"object"}}`},
		{kind: KindTool, server: "everything", prefix: "everything", json: `{"name":"garbage","description":"Answers with something that is not a CallToolResult","inputSchema":{"type":"object"}}`},
		{kind: KindTool, server: "github", prefix: "gh", json: `{"name":"search_issues","title":"Search issues","description":"Search for issues and pull requests across GitHub repositories","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"GitHub search syntax"},"sort":{"type":"string","enum":["comments","reactions","created","updated"]},"perPage":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}}`},
		{kind: KindTool, server: "github", prefix: "gh", json: `{"name":"create_issue","title":"Create issue","description":"Create a new issue in a GitHub repository","inputSchema":{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}}},"required":["owner","repo","title"]},"annotations":{"destructiveHint":false,"openWorldHint":true}}`},
		{kind: KindTool, server: "github", prefix: "gh", json: `{"name":"search","description":"Search code on GitHub","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}`},
		{kind: KindTool, server: "files", prefix: "fs", json: `{"name":"read_file","title":"Read file","description":"Read the complete contents of a file; the text is returned as is, no echo of the path","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"number"}},"required":["path"]}}`},
		{kind: KindTool, server: "files", prefix: "fs", json: `{"name":"search","title":"Search files","description":"Recursively search for files and directories matching a pattern","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"pattern":{"type":"string"}},"required":["path","pattern"]}}`},
		{kind: KindTool, server: "files", prefix: "fs", json: `{"name":"list_directory","description":"Get a detailed listing of all files and directories in a specified path","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`},

		{kind: KindResource, server: "everything", json: `{"uri":"test://static/resource/1","name":"Resource 1","mimeType":"text/plain","description":"A static plaintext resource"}`},
		{kind: KindResource, server: "everything", json: `{"uri":"test://static/resource/2","name":"Resource 2","mimeType":"image/png","annotations":{"audience":["user"]}}`},
		{kind: KindResource, server: "files", json: `{"uri":"file:///data/config.txt","name":"config","title":"Service config","mimeType":"text/plain","description":"The service configuration, JSON in a .txt file"}`},
		{kind: KindResource, server: "files", json: `{"uri":"file:///data/report.json","name":"report","mimeType":"application/json"}`},
		{kind: KindResource, server: "files", json: `{"uri":"file:///docs/README.md","name":"README","mimeType":"text/markdown"}`},
		{kind: KindResource, server: "files", json: `{"uri":"file:///data/raw","name":"raw","description":"Bytes of unknown type"}`},
		{kind: KindResource, server: "notes", json: `{"uri":"notes://readme","name":"README","mimeType":"text/plain"}`},
		{kind: KindResource, server: "files", template: true, json: `{"uriTemplate":"file:///logs/{date}","name":"logs","title":"Daily log","description":"The service log of one day (YYYY-MM-DD)","mimeType":"text/plain"}`},
		{kind: KindResource, server: "everything", template: true, json: `{"uriTemplate":"test://template/{id}/data","name":"Template data","description":"Data by id"}`},

		{kind: KindPrompt, server: "everything", prefix: "everything", json: `{"name":"simple_prompt","description":"A prompt without arguments"}`},
		{kind: KindPrompt, server: "everything", prefix: "everything", json: `{"name":"complex_prompt","title":"Complex prompt","description":"A prompt with arguments","arguments":[{"name":"temperature","description":"Temperature setting","required":true},{"name":"style","description":"Output style","required":false}]}`},
		{kind: KindPrompt, server: "github", prefix: "gh", json: `{"name":"summarize_issue","description":"Summarize a GitHub issue","arguments":[{"name":"issue_number","required":true}]}`},
	}
}
