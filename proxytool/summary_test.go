package proxytool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSignature(t *testing.T) {
	for _, tt := range []struct {
		schema, want string
	}{
		{`{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"number"}},"required":["path"]}`, "path: string, head?: number"},
		{`{"type":"object","properties":{"mode":{"type":"string","enum":["text","binary"]}}}`, `mode?: "text"|"binary"`},
		{`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"o":{"type":"object"}}}`, "tags?: string[], o?: object"},
		{`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"null"}]},"w":{"type":["integer","null"]},"x":{}}}`, "v?: string|number, w?: integer, x?: any"},
		{`{"type":"object"}`, ""},
		{`not json`, ""},
	} {
		if got := signature([]byte(tt.schema)); got != tt.want {
			t.Errorf("signature(%s) = %q, want %q", tt.schema, got, tt.want)
		}
	}
	// Many parameters: cut, and says so.
	var props []string
	for i := range 60 {
		props = append(props, `"parameter_`+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26))+`":{"type":"string"}`)
	}
	got := signature([]byte(`{"properties":{` + strings.Join(props, ",") + `}}`))
	if len(got) > maxSummaryArgs+40 || !strings.HasSuffix(got, ", …") {
		t.Errorf("60 parameters: %d bytes, %q", len(got), got)
	}
}

func TestOneLine(t *testing.T) {
	long := strings.Repeat("word ", 100)
	for _, tt := range []struct {
		in, want string
	}{
		{"Reads a file.\nSecond line.", "Reads a file."},
		{"  spaced   out  ", "spaced out"},
		{"First sentence is long enough to keep, as it says what the tool does. " + long, "First sentence is long enough to keep, as it says what the tool does."},
	} {
		if got := oneLine(tt.in, 160); got != tt.want {
			t.Errorf("oneLine(%.30q…) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Past the width, cut after a word.
	if got := oneLine("Short. "+long, 160); len(got) > 160+len("…") || !strings.HasSuffix(got, " word…") {
		t.Errorf("long: %q", got)
	}
	// Characters outside ASCII count twice.
	if got := []rune(oneLine(strings.Repeat("搜索", 200), 160)); len(got) > 81 {
		t.Errorf("Chinese: %d runes, want at most 80 and the ellipsis", len(got))
	}
}

// startingCatalog is a catalog with servers still starting.
type startingCatalog struct {
	*sliceCatalog
	waited bool
}

func (c *startingCatalog) AwaitStarting(context.Context) []string {
	c.waited = true
	return []string{"github", "slack"}
}

func TestListNamesServersStarting(t *testing.T) {
	c := &startingCatalog{sliceCatalog: manyTools(3)}
	res := call(t, c, `{"action":"list","type":"tool"}`)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent listPaging `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if !c.waited || len(r.Content) != 2 || !strings.Contains(r.Content[1].Text, "Still starting, so not listed yet: github, slack.") {
		t.Errorf("waited %v, content %+v", c.waited, r.Content)
	}
	if r.StructuredContent.TotalCount != 3 || len(r.StructuredContent.Notes) != 1 {
		t.Errorf("structuredContent %+v", r.StructuredContent)
	}
}

// TestListHugeQuery: a query past the limit is cut, and the answer says
// so; its text stays small.
func TestListHugeQuery(t *testing.T) {
	q, _ := json.Marshal(strings.Repeat("forecast issue ", 10000))
	res := call(t, manyTools(100), `{"action":"list","type":"tool","query":`+string(q)+`}`)
	if len(res) > 8000 || !strings.Contains(string(res), "cut to its first") {
		t.Errorf("%d bytes: %.300s", len(res), res)
	}
}
