package upstream_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// TestHeartbeatNoticesDeadRemote: a remote server that goes away while
// idle is noticed by the heartbeat and shown as failed, its tools gone.
func TestHeartbeatNoticesDeadRemote(t *testing.T) {
	srv := server.NewMCPServer("remote", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("hello"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("hi"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(ts.Close)

	opts := fastOptions()
	opts.Reconnect = true
	opts.Heartbeat = 100 * time.Millisecond
	c := connect(t, config.Server{Name: "remote", Transport: config.TransportHTTP, URL: ts.URL + "/mcp",
		Enabled: true, Timeout: 2 * time.Second}, opts)
	if got := len(c.Catalog().Tools); got != 1 {
		t.Fatalf("catalog has %d tools, want 1", got)
	}

	ts.CloseClientConnections()
	ts.Listener.Close()
	testenv.Eventually(t, 5*time.Second, func() bool { return c.Status().State != upstream.StateConnected },
		"the client still says connected after the server went away")
	if st := c.Status(); st.Err == "" || len(c.Catalog().Tools) != 0 {
		t.Errorf("after the server went away: state %s, err %q, %d tools", st.State, st.Err, len(c.Catalog().Tools))
	}
}
