package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
)

// TestServeProxyListsPromptsAndResources: under the default expose proxy a
// client's prompt and resource pickers show every upstream's prompts and
// resources, prefixed as under direct, and getting and reading them works
// (the official TypeScript SDK client); only tools sit behind the proxy.
func TestServeProxyListsPromptsAndResources(t *testing.T) {
	everything := requireEverything(t)
	cfg := writeConfig(t, map[string]any{
		"readyTimeout": "60s", // node may start slowly on a busy machine
		"servers": map[string]any{
			"everything": map[string]any{"command": "node", "args": []string{everything, "stdio"}},
			"fx":         fx("--name", "fx"),
		},
	})
	exe, _ := os.Executable()
	cmd := exec.Command("node", "../../testdata/node/e2e-client.mjs", exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1",
		"E2E_READ=fixture://items/7",
		`E2E_PROMPT={"name":"everything_args-prompt","arguments":{"city":"Paris"}}`,
	)
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var got struct {
		Capabilities struct {
			Prompts   *struct{ ListChanged bool }
			Resources *struct{ ListChanged, Subscribe bool }
		}
		Tools             []struct{ Name string }
		Prompts           []struct{ Name string }
		Resources         []struct{ URI string }
		ResourceTemplates []struct{ URITemplate string }
		Read              struct {
			Contents []struct{ URI, Text string }
		}
		Prompt struct {
			Messages []struct {
				Content struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client output: %v\n%s", err, out)
	}
	if p, r := got.Capabilities.Prompts, got.Capabilities.Resources; p == nil || !p.ListChanged || r == nil || !r.ListChanged || !r.Subscribe {
		t.Errorf("capabilities = %+v, want prompts and resources with listChanged (and subscribe)", got.Capabilities)
	}
	var tools []string
	for _, tl := range got.Tools {
		tools = append(tools, tl.Name)
	}
	if !slices.Equal(tools, []string{"proxy"}) {
		t.Errorf("tools/list = %v, want only the proxy tool", tools)
	}
	if !hasPrompt(got.Prompts, "everything_args-prompt") || !hasPrompt(got.Prompts, "fx_greet") {
		t.Errorf("prompts = %v, want everything_args-prompt and fx_greet", got.Prompts)
	}
	var uris, templates []string
	for _, r := range got.Resources {
		uris = append(uris, r.URI)
	}
	for _, r := range got.ResourceTemplates {
		templates = append(templates, r.URITemplate)
	}
	if !slices.Contains(uris, "fixture://readme") || !slices.Contains(uris, "demo://resource/static/document/architecture.md") {
		t.Errorf("resources = %v, want fixture://readme and everything's documents", uris)
	}
	if !slices.Contains(templates, "fixture://items/{id}") {
		t.Errorf("resource templates = %v, want fixture://items/{id}", templates)
	}
	if len(got.Read.Contents) != 1 || got.Read.Contents[0].Text != `{"id":"7"}` {
		t.Errorf("resources/read fixture://items/7 = %+v", got.Read)
	}
	if len(got.Prompt.Messages) == 0 || !strings.Contains(got.Prompt.Messages[0].Content.Text, "Paris") {
		t.Errorf("prompts/get = %+v, want a message about Paris", got.Prompt)
	}
}

// TestServeProxyPromptsAndResourcesDirectly: under expose proxy a client
// is told when the prompt and resource lists change (here: a server added
// to the config), and completion and resource subscriptions work on the
// listed prompts and resources directly.
func TestServeProxyPromptsAndResourcesDirectly(t *testing.T) {
	everything := requireEverything(t)
	servers := map[string]any{"fx": fx("--name", "fx")}
	doc := map[string]any{"servers": servers}
	cfg := writeConfig(t, doc)
	c := startServe(t, cfg)
	c.initialize()
	lists := func() (prompts, uris []string) {
		t.Helper()
		res, e := c.request("prompts/list", map[string]any{})
		if e != nil {
			t.Fatalf("prompts/list: %s", e.Message)
		}
		var p struct{ Prompts []struct{ Name string } }
		json.Unmarshal(res, &p)
		for _, x := range p.Prompts {
			prompts = append(prompts, x.Name)
		}
		res, e = c.request("resources/list", map[string]any{})
		if e != nil {
			t.Fatalf("resources/list: %s", e.Message)
		}
		var r struct{ Resources []struct{ URI string } }
		json.Unmarshal(res, &r)
		for _, x := range r.Resources {
			uris = append(uris, x.URI)
		}
		return prompts, uris
	}
	prompts, uris := lists()
	if !slices.Equal(prompts, []string{"fx_greet"}) || !slices.Contains(uris, "fixture://readme") {
		t.Fatalf("before the change: prompts %v, resources %v", prompts, uris)
	}

	servers["everything"] = map[string]any{"command": "node", "args": []string{everything, "stdio"}}
	saveByRename(t, cfg, doc)
	for _, note := range []string{"notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		if !c.waitNotification(note, 30*time.Second) {
			t.Fatalf("no %s after a server with prompts and resources was added", note)
		}
	}
	prompts, uris = lists()
	const doc1 = "demo://resource/static/document/architecture.md"
	if !slices.Contains(prompts, "everything_completable-prompt") || !slices.Contains(uris, doc1) {
		t.Fatalf("after the change: prompts %v, resources %v", prompts, uris)
	}

	res, e := c.request("completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": "everything_completable-prompt"},
		"argument": map[string]any{"name": "department", "value": "Eng"},
	})
	if e != nil {
		t.Fatalf("completion/complete: %s", e.Message)
	}
	var comp struct{ Completion struct{ Values []string } }
	json.Unmarshal(res, &comp)
	if !slices.Equal(comp.Completion.Values, []string{"Engineering"}) {
		t.Errorf("completion/complete = %s, want Engineering", res)
	}
	if res, e := c.request("resources/subscribe", map[string]any{"uri": doc1}); e != nil || string(res) != "{}" {
		t.Errorf("resources/subscribe %s = %s %+v, want {}", doc1, res, e)
	}
	if res, e := c.request("prompts/get", map[string]any{"name": "fx_greet", "arguments": map[string]string{"name": "Ada"}}); e != nil || !strings.Contains(string(res), "Please greet Ada") {
		t.Errorf("prompts/get fx_greet = %s %+v", res, e)
	}
}
