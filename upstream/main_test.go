package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/upstream"
)

// fixturePath is the fixture server built once by TestMain.
var fixturePath string

// Environment of the test binary re-run as a stand-in for mcpx (see
// runParent): the parent test sets them and SIGKILLs the process.
const (
	envParent  = "UPSTREAM_TEST_PARENT"
	envFixture = "UPSTREAM_TEST_FIXTURE"
	envPidDir  = "UPSTREAM_TEST_PID_DIR"
	envArgs    = "UPSTREAM_TEST_ARGS" // more fixture flags, space-separated
)

func TestMain(m *testing.M) {
	if os.Getenv(envParent) == "1" {
		os.Exit(runParent())
	}
	os.Exit(run(m))
}

// run builds the fixture, runs the tests and removes the build.
func run(m *testing.M) int {
	// Under -race every process of this binary sleeps 1s at exit so that
	// late races get reported; the supervisor is this binary, and that
	// second would be added to every Close.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	dir, err := os.MkdirTemp("", "upstream-fixture-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "upstream tests: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	fixturePath = filepath.Join(dir, "fixture")
	build := exec.Command("go", "build", "-o", fixturePath, "./testdata/fixture")
	build.Dir = ".." // the module root, from the package directory
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "upstream tests: building the fixture: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// runParent plays mcpx for TestParentKilledLeavesNoOrphans: it connects one
// Client to the fixture named by the environment, says "ready" on stdout
// and waits to be killed. It never closes the Client: the point is what
// happens to the children when this process dies without cleaning up.
func runParent() int {
	srv := config.Server{
		Name:      "orphan",
		Transport: config.TransportStdio,
		Command:   os.Getenv(envFixture),
		Args:      append([]string{"--grandchild", "--pid-dir", os.Getenv(envPidDir)}, strings.Fields(os.Getenv(envArgs))...),
		Enabled:   true,
		Timeout:   10 * time.Second,
	}
	c := upstream.New(srv, nil)
	c.Start(context.Background())
	<-c.Ready()
	if st := c.Status(); st.State != upstream.StateConnected {
		fmt.Printf("not connected: %s %s\n", st.State, st.Err)
		return 1
	}
	fmt.Println("ready")
	// A parent the test forgot to kill still goes away in the end; the
	// supervisor then cleans up as it would after SIGKILL.
	time.Sleep(time.Minute)
	return 1
}

// stdioServer is the config of a fixture server with the given flags.
func stdioServer(name string, args ...string) config.Server {
	return config.Server{
		Name:      name,
		Transport: config.TransportStdio,
		Command:   fixturePath,
		Args:      append([]string{"--name", name}, args...),
		Enabled:   true,
		Timeout:   10 * time.Second,
	}
}

// fastOptions are Options with short delays, for tests.
func fastOptions() *upstream.Options {
	return &upstream.Options{
		MinBackoff: 50 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond,
		StopGrace:  500 * time.Millisecond,
		TermGrace:  500 * time.Millisecond,
	}
}

// startClient starts a Client for srv, waits for its first attempt and
// closes it at cleanup. A nil opts means fastOptions.
func startClient(t testing.TB, srv config.Server, opts *upstream.Options) *upstream.Client {
	t.Helper()
	if opts == nil {
		opts = fastOptions()
	}
	c := upstream.New(srv, opts)
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	select {
	case <-c.Ready():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: first connect attempt did not finish within 30s", srv.Name)
	}
	return c
}

// connect is startClient that also requires the connection to succeed.
func connect(t testing.TB, srv config.Server, opts *upstream.Options) *upstream.Client {
	t.Helper()
	c := startClient(t, srv, opts)
	if st := c.Status(); st.State != upstream.StateConnected {
		t.Fatalf("%s: state %s (%s), want connected", srv.Name, st.State, st.Err)
	}
	return c
}

// callTool calls a tool with arguments (any JSON value) and returns the raw
// result.
func callTool(t testing.TB, c *upstream.Client, name string, arguments any) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.Request(ctx, "tools/call", toolParams(t, name, arguments))
}

func toolParams(t testing.TB, name string, arguments any) json.RawMessage {
	t.Helper()
	p := map[string]any{"name": name}
	if arguments != nil {
		p["arguments"] = arguments
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// toolResult is the part of a tools/call result the tests look at.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// mustCallText calls a tool that must succeed and returns the text of its
// first content item.
func mustCallText(t testing.TB, c *upstream.Client, name string, arguments any) string {
	t.Helper()
	raw, err := callTool(t, c, name, arguments)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	res := decodeResult(t, raw)
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("call %s: want a text result, got %s", name, truncate(raw))
	}
	return res.Content[0].Text
}

func decodeResult(t testing.TB, raw json.RawMessage) toolResult {
	t.Helper()
	var res toolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result is not a tool result: %v: %s", err, truncate(raw))
	}
	return res
}

// toolNames lists the names of the tools in a catalog.
func toolNames(t testing.TB, tools []json.RawMessage) []string {
	t.Helper()
	names := make([]string, 0, len(tools))
	for _, raw := range tools {
		var item struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &item); err != nil {
			t.Fatalf("tool is not an object: %v: %s", err, raw)
		}
		names = append(names, item.Name)
	}
	return names
}

func hasTool(t testing.TB, c *upstream.Client, name string) bool {
	t.Helper()
	return slices.Contains(toolNames(t, c.Catalog().Tools), name)
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
