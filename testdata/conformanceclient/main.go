// Command conformanceclient is the client the MCP conformance suite runs
// (`conformance client --command`) to test mcpx as a client of upstream
// servers. It does not speak MCP itself: it writes a temporary mcpx config
// naming the scenario's server as a remote upstream and drives the real
// mcpx binary through its own commands (`mcpx list`, `mcpx call`,
// `mcpx read`, `mcpx get`), or, where a scenario needs a client that
// answers the server's questions, through `mcpx serve --stdio` as a legacy
// MCP client that answers elicitation/create.
//
// Usage, as the suite runs it:
//
//	MCPX_CONFORMANCE_MCPX=/path/to/mcpx conformanceclient SERVER_URL
//
// with MCP_CONFORMANCE_SCENARIO naming the scenario and
// MCP_CONFORMANCE_CONTEXT holding its JSON context. MCPX_CONFORMANCE_ENV
// (a JSON array of KEY=VALUE strings, optional) adds to mcpx's
// environment. The exit status is 1 when a step the scenario cannot do
// without fails; the suite's checks judge the rest.
//
// For the OAuth scenarios it runs `mcpx auth login` with itself as
// $BROWSER (`conformanceclient --browse URL`), following the
// authorization URL to mcpx's loopback callback as a browser would.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Environment the suite and the test set.
const (
	mcpxEnv     = "MCPX_CONFORMANCE_MCPX"
	extraEnv    = "MCPX_CONFORMANCE_ENV"
	scenarioEnv = "MCP_CONFORMANCE_SCENARIO"
	contextEnv  = "MCP_CONFORMANCE_CONTEXT"
)

// serverName is the upstream's name in the config; its prefix is "" so
// that mcpx's exposed names are the scenario's own.
const serverName = "conformance"

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformanceclient: ")
	os.Exit(run())
}

func run() int {
	if len(os.Args) == 3 && os.Args[1] == browseFlag {
		return browse(os.Args[2])
	}
	if len(os.Args) != 2 {
		log.Printf("usage: %s SERVER_URL (with %s and %s set)", os.Args[0], mcpxEnv, scenarioEnv)
		return 2
	}
	h, err := newHarness(os.Args[1])
	if err != nil {
		log.Print(err)
		return 2
	}
	defer h.close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.scenario(ctx); err != nil {
		log.Printf("scenario %s: %v", h.name, err)
		return 1
	}
	return 0
}

// harness is one scenario's run: the mcpx binary, the config naming the
// scenario's server, and a cache directory of its own so that no run sees
// a catalog another remembered.
type harness struct {
	name    string         // the scenario
	url     string         // the scenario's server
	context map[string]any // MCP_CONFORMANCE_CONTEXT
	mcpx    string
	env     []string
	dir     string
	config  string
}

func newHarness(url string) (*harness, error) {
	h := &harness{name: os.Getenv(scenarioEnv), url: url, mcpx: os.Getenv(mcpxEnv)}
	if h.name == "" {
		return nil, fmt.Errorf("%s is not set", scenarioEnv)
	}
	if h.mcpx == "" {
		return nil, fmt.Errorf("%s is not set: it names the mcpx binary to drive", mcpxEnv)
	}
	if s := os.Getenv(contextEnv); s != "" {
		if err := json.Unmarshal([]byte(s), &h.context); err != nil {
			return nil, fmt.Errorf("%s: %w", contextEnv, err)
		}
	}
	var extra []string
	if s := os.Getenv(extraEnv); s != "" {
		if err := json.Unmarshal([]byte(s), &extra); err != nil {
			return nil, fmt.Errorf("%s: must be a JSON array of KEY=VALUE strings: %w", extraEnv, err)
		}
	}
	dir, err := os.MkdirTemp("", "mcpx-conformance-")
	if err != nil {
		return nil, err
	}
	h.dir = dir
	h.env = append(os.Environ(),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
	)
	h.env = append(h.env, extra...)
	entry := map[string]any{"url": url, "prefix": ""}
	if isAuth(h.name) {
		h.env = append(h.env, authEntry(entry, h.context)...)
	}
	cfg := map[string]any{"expose": "direct", "servers": map[string]any{serverName: entry}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	h.config = filepath.Join(dir, "mcpx.json")
	if err := os.WriteFile(h.config, b, 0o600); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *harness) close() { os.RemoveAll(h.dir) }

// scenario does what the scenario asks of a client, as the Go SDK's
// conformance everything-client does it.
func (h *harness) scenario(ctx context.Context) error {
	switch {
	case isAuth(h.name):
		return h.authScenario(ctx)
	case h.name == "tools_call":
		if _, err := h.listTools(ctx); err != nil {
			return err
		}
		return h.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	case h.name == "json-schema-2020-12-preservation":
		return h.schemaEcho(ctx)
	case h.name == "http-standard-headers":
		return h.everyVerb(ctx)
	case h.name == "http-custom-headers":
		if _, err := h.listTools(ctx); err != nil {
			return err
		}
		for _, c := range toolCalls(h.context) {
			if err := h.call(ctx, c.Name, c.Arguments); err != nil {
				log.Printf("call %s: %v", c.Name, err)
			}
		}
		return nil
	case h.name == "http-invalid-tool-headers":
		tools, err := h.listTools(ctx)
		if err != nil {
			return err
		}
		for _, t := range tools {
			if err := h.call(ctx, t.Name, map[string]any{"region": "us-west1"}); err != nil {
				log.Printf("call %s: %v", t.Name, err)
			}
		}
		return nil
	case h.name == "sep-2322-client-request-state":
		return h.answeringClient(ctx, []string{
			"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type",
		}, map[string]any{"confirmed": true})
	case h.name == "elicitation-sep1034-client-defaults":
		return h.answeringClient(ctx, []string{"test_client_elicitation_defaults"}, map[string]any{})
	case h.name == "sse-retry":
		if _, err := h.listTools(ctx); err != nil {
			return err
		}
		return h.call(ctx, "test_reconnection", map[string]any{})
	default:
		// initialize, request-metadata, json-schema-ref-no-deref and
		// whatever a newer suite adds: connect and list.
		_, err := h.listTools(ctx)
		return err
	}
}

// mcpxRun runs mcpx with the scenario's config and returns its stdout;
// its stderr goes to ours, where the suite keeps it. A failure is an
// [*mcpxError] holding what mcpx said.
func (h *harness) mcpxRun(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, h.mcpx, append([]string{"--config", h.config}, args...)...)
	cmd.Env = h.env
	said := &tail{max: 16 << 10}
	cmd.Stderr = io.MultiWriter(os.Stderr, said)
	out, err := cmd.Output()
	if err != nil {
		return out, &mcpxError{args: args, err: err, stderr: said.String()}
	}
	return out, nil
}

// mcpxError is a failed mcpx command and the end of its stderr.
type mcpxError struct {
	args   []string
	err    error
	stderr string
}

// Error ends with mcpx's last line, which says why.
func (e *mcpxError) Error() string {
	lines := strings.Split(strings.TrimSpace(e.stderr), "\n")
	return fmt.Sprintf("mcpx %s: %v: %s", strings.Join(e.args, " "), e.err, lines[len(lines)-1])
}

func (e *mcpxError) Unwrap() error { return e.err }

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// item is an entry of `mcpx list ... --json`.
type item struct {
	Name        string          `json:"name"`
	URI         string          `json:"uri"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

func (h *harness) list(ctx context.Context, kind string) ([]item, error) {
	out, err := h.mcpxRun(ctx, "list", kind, "--json")
	if err != nil {
		return nil, err
	}
	var items []item
	if err := json.Unmarshal(out, &items); err != nil {
		return nil, fmt.Errorf("mcpx list %s --json: %w", kind, err)
	}
	return items, nil
}

func (h *harness) listTools(ctx context.Context) ([]item, error) { return h.list(ctx, "tools") }

func (h *harness) call(ctx context.Context, tool string, args any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	_, err = h.mcpxRun(ctx, "call", tool, string(b), "--json")
	return err
}

// schemaEcho sends the focal tool's inputSchema, as mcpx lists it, back
// through the echo tool, so that the suite sees what survived.
func (h *harness) schemaEcho(ctx context.Context) error {
	tools, err := h.listTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == "json_schema_2020_12_tool" {
			return h.call(ctx, "json_schema_echo", map[string]any{"schema": t.InputSchema})
		}
	}
	return fmt.Errorf("tool json_schema_2020_12_tool not listed")
}

// everyVerb calls one tool, reads one resource and gets one prompt, so
// that the suite sees the headers of every kind of request.
func (h *harness) everyVerb(ctx context.Context) error {
	if tools, err := h.listTools(ctx); err == nil && len(tools) > 0 {
		if err := h.call(ctx, tools[0].Name, map[string]any{}); err != nil {
			log.Print(err)
		}
	}
	if res, err := h.list(ctx, "resources"); err == nil && len(res) > 0 {
		if _, err := h.mcpxRun(ctx, "read", res[0].URI, "--json"); err != nil {
			log.Print(err)
		}
	}
	if prompts, err := h.list(ctx, "prompts"); err == nil && len(prompts) > 0 {
		if _, err := h.mcpxRun(ctx, "get", prompts[0].Name, "--json"); err != nil {
			log.Print(err)
		}
	}
	return nil
}

type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// toolCalls reads the context's {"toolCalls": [{"name", "arguments"}]}.
func toolCalls(ctx map[string]any) []toolCall {
	raw, _ := json.Marshal(ctx["toolCalls"])
	var calls []toolCall
	_ = json.Unmarshal(raw, &calls)
	for i := range calls {
		if calls[i].Arguments == nil {
			calls[i].Arguments = map[string]any{}
		}
	}
	return calls
}
