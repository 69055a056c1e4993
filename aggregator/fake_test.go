package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/mcpx/mcpx/config"
)

// fakeSource is a Source with fixed raw JSON lists and a scripted Request.
// It records every request it gets. Safe for concurrent use.
type fakeSource struct {
	name string

	mu        sync.Mutex
	tools     []json.RawMessage
	resources []json.RawMessage
	templates []json.RawMessage
	prompts   []json.RawMessage
	calls     []fakeCall
	// request answers Request; nil answers every request with an error.
	request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// fakeCall is one request a fakeSource received.
type fakeCall struct {
	Method string
	Params json.RawMessage
}

func (f *fakeSource) Name() string { return f.name }

func (f *fakeSource) Tools() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tools
}

func (f *fakeSource) Resources() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resources
}

func (f *fakeSource) ResourceTemplates() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.templates
}

func (f *fakeSource) Prompts() []json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prompts
}

func (f *fakeSource) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{Method: method, Params: append(json.RawMessage(nil), params...)})
	req := f.request
	f.mu.Unlock()
	if req == nil {
		return nil, errors.New("fake " + f.name + ": no request handler")
	}
	return req(ctx, method, params)
}

// set replaces one of the lists under the lock: which is "tools",
// "resources", "templates" or "prompts".
func (f *fakeSource) set(which string, items []json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch which {
	case "tools":
		f.tools = items
	case "resources":
		f.resources = items
	case "templates":
		f.templates = items
	case "prompts":
		f.prompts = items
	default:
		panic("fakeSource.set: unknown list " + which)
	}
}

func (f *fakeSource) setRequest(fn func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.request = fn
}

// received returns a copy of the requests so far.
func (f *fakeSource) received() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// raws turns JSON texts into raw messages, failing on invalid JSON (a test
// that means to send broken bytes builds the json.RawMessage itself).
func raws(tb testing.TB, texts ...string) []json.RawMessage {
	tb.Helper()
	out := make([]json.RawMessage, len(texts))
	for i, s := range texts {
		if !json.Valid([]byte(s)) {
			tb.Fatalf("raws: invalid JSON %q", s)
		}
		out[i] = json.RawMessage(s)
	}
	return out
}

func mem(src Source, prefix string) *member { return &member{src: src, prefix: prefix} }

func memFiltered(src Source, prefix string, tools, prompts config.Filter) *member {
	return &member{src: src, prefix: prefix, tools: tools, prompts: prompts}
}

// decode parses JSON keeping numbers as their exact text, so a rounded
// big integer or a rewritten float shows up as a difference.
func decode(tb testing.TB, b []byte) any {
	tb.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("decode %s: %v", b, err)
	}
	if d.More() {
		tb.Fatalf("decode %s: trailing data", b)
	}
	return v
}

// assertJSONEqual compares two JSON texts as parsed values.
func assertJSONEqual(tb testing.TB, what string, got, want []byte) {
	tb.Helper()
	if !reflect.DeepEqual(decode(tb, got), decode(tb, want)) {
		tb.Errorf("%s:\n got: %s\nwant: %s", what, got, want)
	}
}

// object parses a JSON object into its members.
func object(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	m, ok := decode(tb, b).(map[string]any)
	if !ok {
		tb.Fatalf("not a JSON object: %s", b)
	}
	return m
}

// mustJSON marshals v or fails.
func mustJSON(tb testing.TB, v any) json.RawMessage {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal %#v: %v", v, err)
	}
	return b
}

func toolJSON(name string) string {
	return fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, name)
}
