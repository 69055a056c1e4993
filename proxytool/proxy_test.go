package proxytool

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// call runs one proxy call with the given arguments on a fresh fake.
func call(tb testing.TB, c Catalog, args string) json.RawMessage {
	tb.Helper()
	got := New(c).Call(context.Background(), json.RawMessage(`{"name":"proxy","arguments":`+args+`}`))
	checkResult(tb, got)
	return got
}

// errorText returns the text of an error result, or fails.
func errorText(tb testing.TB, raw json.RawMessage) string {
	tb.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || !res.IsError || len(res.Content) != 1 {
		tb.Fatalf("not an error result: %s", raw)
	}
	return res.Content[0].Text
}

func TestCallCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := New(newFake(t)).Call(ctx, json.RawMessage(`{"arguments":{"action":"call","type":"tool","path":"everything_echo","args":{"message":"x"}}}`))
	if text := errorText(t, got); text != context.Canceled.Error() {
		t.Errorf("text %q", text)
	}
}

func TestNilCatalog(t *testing.T) {
	if got := call(t, nil, `{"action":"list","type":"resource"}`); !strings.Contains(string(got), `"totalCount":0`) {
		t.Errorf("list on nil catalog: %s", got)
	}
	if text := errorText(t, call(t, nil, `{"action":"call","type":"tool","path":"x"}`)); text != "Unknown tool: 'x'" {
		t.Errorf("call on nil catalog: %q", text)
	}
}

// panicCatalog panics in every method.
type panicCatalog struct{}

func (panicCatalog) Items(Kind) []Item                { panic("items exploded") }
func (panicCatalog) Lookup(Kind, string) (Item, bool) { panic("lookup exploded") }
func (panicCatalog) Call(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	panic("call exploded")
}

func TestCatalogPanicIsAnErrorResult(t *testing.T) {
	text := errorText(t, call(t, panicCatalog{}, `{"action":"list","type":"tool"}`))
	if !strings.Contains(text, "items exploded") {
		t.Errorf("text %q", text)
	}
}

// TestListCopiesJSONVerbatim: list with detail full never re-encodes an
// item's JSON, so odd spacing, escapes and unknown fields arrive exactly
// as the catalog holds them.
func TestListCopiesJSONVerbatim(t *testing.T) {
	odd := `{ "name" : "x_odd",  "description":"\u00e9 <b>&amp;</b> \"q\" line\nbreak", "x-extra": [1, 2.50, null]
}`
	c := &sliceCatalog{items: map[Kind][]Item{KindTool: {
		{Kind: KindTool, Name: "x_odd", JSON: json.RawMessage(odd)},
		{Kind: KindTool, Name: "x_empty"}, // no JSON: listed as null
	}}}
	var res struct {
		Content []struct {
			Resource struct{ Text string } `json:"resource"`
		} `json:"content"`
	}
	if err := json.Unmarshal(call(t, c, `{"action":"list","type":"tool","detail":"full"}`), &res); err != nil {
		t.Fatal(err)
	}
	if want := "[" + odd + ",null]"; res.Content[0].Resource.Text != want {
		t.Errorf("text\n%s\nwant\n%s", res.Content[0].Resource.Text, want)
	}
}

// TestConcurrentCalls runs every golden case at once on one Proxy (run
// with -race).
func TestConcurrentCalls(t *testing.T) {
	goldens := readGoldens(t)
	p := New(newFake(t))
	var wg sync.WaitGroup
	for range 4 {
		for _, g := range goldens {
			params := g.params(t)
			wg.Go(func() {
				got := p.Call(context.Background(), params)
				if !json.Valid(got) {
					t.Errorf("%s: invalid result %s", g.path, got)
				}
			})
		}
	}
	wg.Wait()
}

func TestMetaOnlyWhenObject(t *testing.T) {
	for _, meta := range []string{`null`, `"tok"`, `[1]`} {
		fake := newFake(t)
		New(fake).Call(context.Background(), json.RawMessage(`{"arguments":{"action":"call","type":"tool","path":"everything_echo"},"_meta":`+meta+`}`))
		if strings.Contains(string(fake.recorded()), "_meta") {
			t.Errorf("_meta %s was passed on: %s", meta, fake.recorded())
		}
	}
	fake := newFake(t)
	New(fake).Call(context.Background(), json.RawMessage(`{"arguments":{"action":"call","type":"resource","path":"file:///data/raw"},"_meta":{"progressToken":3}}`))
	if !strings.Contains(string(fake.recorded()), `"_meta":{"progressToken":3}`) {
		t.Errorf("_meta not passed on to resources/read: %s", fake.recorded())
	}
}
