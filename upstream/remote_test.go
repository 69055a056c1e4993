package upstream_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
)

// everythingJS is the entry point of the reference server
// @modelcontextprotocol/server-everything, pinned in testdata/node.
func everythingJS(t testing.TB) string {
	t.Helper()
	return filepath.Join(testenv.NeedNodePeers(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

// startEverything runs the reference server with an HTTP transport
// ("streamableHttp" or "sse") on a free port and returns the port. It is
// killed, with anything it spawned, at cleanup.
func startEverything(t testing.TB, mode string) int {
	t.Helper()
	// The port was free a moment ago; a test running beside this one may
	// have taken it since, and then the server exits without listening
	// (and a dial would reach the other test's server): another port.
	for attempt := 1; ; attempt++ {
		port, ok := tryStartEverything(t, mode, attempt == 3)
		if ok {
			return port
		}
	}
}

// tryStartEverything starts the reference server in mode on a free port
// and waits until it says it listens there. ok is false when it exited
// first, and last makes that fatal.
func tryStartEverything(t testing.TB, mode string, last bool) (port int, ok bool) {
	t.Helper()
	js := everythingJS(t)
	port = freePort(t)
	cmd := exec.Command("node", js, mode)
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	inNewGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		killGroupOf(cmd)
		<-exited
	})
	// Both modes print "... port N" once they listen.
	said := "port " + strconv.Itoa(port)
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), said) {
		select {
		case <-exited:
			if last {
				t.Fatalf("the reference server (%s) exited before listening on port %d:\n%s", mode, port, out.String())
			}
			return 0, false
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server (%s) did not say it listens on port %d within 15s:\n%s", mode, port, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return port, true
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestEverything connects to the reference server over each transport and
// calls its echo tool; its instructions (its docs/instructions.md, sent
// in initialize) arrive whole.
func TestEverything(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		transport config.Transport
		mode      string
		path      string
	}{
		{config.TransportHTTP, "streamableHttp", "/mcp"},
		{config.TransportSSE, "sse", "/sse"},
		{config.TransportStdio, "stdio", ""},
	} {
		t.Run(string(tc.transport), func(t *testing.T) {
			t.Parallel()
			srv := config.Server{
				Name:      "everything-" + string(tc.transport),
				Transport: tc.transport,
				Enabled:   true,
				Timeout:   20 * time.Second,
			}
			if tc.transport == config.TransportStdio {
				srv.Command = "node"
				srv.Args = []string{everythingJS(t), tc.mode}
			} else {
				port := startEverything(t, tc.mode)
				srv.URL = "http://localhost:" + strconv.Itoa(port) + tc.path
			}
			c := connect(t, srv, nil)
			want, err := os.ReadFile(filepath.Join(filepath.Dir(everythingJS(t)), "docs", "instructions.md"))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Instructions(); got != string(want) {
				t.Errorf("instructions (%d bytes) %.60q…, want its docs/instructions.md (%d bytes) %.60q…", len(got), got, len(want), want)
			}

			st := c.Status()
			t.Logf("%s: %s %s, %d tools, %d resources, %d prompts, in %s", tc.transport,
				st.ServerInfo.Name, st.ProtocolVersion, st.Tools, st.Resources, st.Prompts, st.ConnectTime)
			if st.ServerInfo.Name == "" {
				t.Error("no serverInfo.name")
			}
			if n := len(c.Tools()); n < 13 {
				t.Errorf("%d tools (%v), want 13 or more", n, toolNames(t, c.Tools()))
			}
			if !hasTool(t, c, "echo") {
				t.Fatalf("no echo tool among %v", toolNames(t, c.Tools()))
			}
			if got := mustCallText(t, c, "echo", map[string]any{"message": "hi"}); !strings.Contains(got, "hi") {
				t.Errorf("echo answered %q, want text containing hi", got)
			}
		})
	}
}
