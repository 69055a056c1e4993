package proxytool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// runFake is the fake catalog with the run action: its "script" is a
// list of proxy arguments, one a line, each sent through verb; it
// answers the verb's answers joined.
type runFake struct{ *fakeCatalog }

func (r runFake) Run(ctx context.Context, code string, verb func(context.Context, json.RawMessage) json.RawMessage) json.RawMessage {
	var out []string
	for _, line := range strings.Split(code, "\n") {
		out = append(out, string(verb(ctx, json.RawMessage(line))))
	}
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": strings.Join(out, "\n")}}})
	return b
}

func TestRunArguments(t *testing.T) {
	f := runFake{newFake(t)}
	cases := []struct{ args, want string }{
		{`{"action":"run"}`, "Parameter 'code' is required for action 'run'"},
		{`{"action":"run","code":7}`, "Parameter 'code' must be a string"},
		{`{"action":"run","code":"x","path":"a","limit":3}`, "Parameters 'path', 'limit' are not allowed for action 'run'"},
		{`{"action":"call","type":"tool","path":"everything_echo","code":"x"}`, "Parameter 'code' is only allowed for action 'run'"},
		{`{"action":"jump","code":"x"}`, "'list', 'info', 'call', 'run'"},
	}
	for _, c := range cases {
		if got := errorText(t, call(t, f, c.args)); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want it to contain %q", c.args, got, c.want)
		}
	}
	// Without a Runner, run and code are unknown, as they always were.
	plain := newFake(t)
	if got := errorText(t, call(t, plain, `{"action":"run","code":"x"}`)); !strings.Contains(got, "Unknown parameter 'code'") {
		t.Errorf("run on a catalog without it: %q", got)
	}
}

// TestRunVerbsAreTheProxys: a script's calls are answered as the same
// calls made directly, and a script cannot nest a run.
func TestRunVerbsAreTheProxys(t *testing.T) {
	f := runFake{newFake(t)}
	direct := []string{
		`{"action":"list","type":"tool","query":"add numbers"}`,
		`{"action":"info","type":"tool","path":"everything_add"}`,
		`{"action":"call","type":"tool","path":"everything_echo","args":{"message":"hi"}}`,
		`{"action":"call","type":"tool","path":"no_such_tool","args":{}}`,
	}
	for _, args := range direct {
		code, _ := json.Marshal(args)
		got := call(t, f, `{"action":"run","code":`+string(code)+`}`)
		var res struct{ Content []struct{ Text string } }
		if err := json.Unmarshal(got, &res); err != nil || len(res.Content) != 1 {
			t.Fatalf("run %s: %s", args, got)
		}
		want := string(call(t, runFake{newFake(t)}, args))
		if res.Content[0].Text != want {
			t.Errorf("run %s:\n got %s\nwant %s", args, res.Content[0].Text, want)
		}
	}
	got := call(t, f, `{"action":"run","code":"{\"action\":\"run\",\"code\":\"x\"}"}`)
	if !strings.Contains(string(got), `Unknown parameter 'code'`) {
		t.Errorf("a nested run: %s", got)
	}
}

func TestWithRun(t *testing.T) {
	tool := WithRun(Tool())
	var v struct {
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(tool, &v); err != nil {
		t.Fatal(err)
	}
	if e := v.InputSchema.Properties["action"].Enum; strings.Join(e, ",") != "list,info,call,run" {
		t.Errorf("action enum %v", e)
	}
	if _, ok := v.InputSchema.Properties["code"]; !ok {
		t.Error("no code property")
	}
	if strings.Join(v.InputSchema.Required, ",") != "action" {
		t.Errorf("required %v", v.InputSchema.Required)
	}
	for _, want := range []string{"proxy.call(name, args", "proxy.callAll", "ask the user first", `"action":"run"`} {
		if !strings.Contains(v.Description, want) {
			t.Errorf("the description does not teach %q", want)
		}
	}
	if !strings.HasPrefix(string(tool), `{"name":"proxy","title"`) {
		t.Errorf("members out of order: %.60s", tool)
	}
}

// TestListReturns: with run, a tool's summary has the type of its
// structured result; without, the summary is as it was.
func TestListReturns(t *testing.T) {
	args := `{"action":"list","type":"tool","query":"add numbers","limit":1}`
	with := string(call(t, runFake{newFake(t)}, args))
	if !strings.Contains(with, `\"returns\":\"{sum?: number}\"`) {
		t.Errorf("with run: %s", with)
	}
	if without := string(call(t, newFake(t), args)); strings.Contains(without, "returns") {
		t.Errorf("without run: %s", without)
	}
}
