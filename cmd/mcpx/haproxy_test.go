package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// haproxyConfig balances two frontends over the same replicas: rr with
// round robin and the documented routing (of bridged calls' retries and
// kept results' reads) and retries but no stickiness, sticky with all the
// lines of the backend that
// docs/serve-http.md ("Behind a load balancer") gives. Global settings
// need no root: no user, chroot or daemon, and only high loopback ports.
const haproxyConfig = `global
  maxconn 256

defaults
  mode http
  timeout connect 5s
  timeout client 5m
  timeout server 5m

frontend rr
  bind 127.0.0.1:{{rr}}
  default_backend rr

frontend sticky
  bind 127.0.0.1:{{sticky}}
  default_backend sticky

backend rr
{{routing}}{{servers}}
backend sticky
{{documented}}{{servers}}
listen stats
  bind 127.0.0.1:{{stats}}
  stats enable
  stats uri /stats
`

// documentedBackend returns the lines of the haproxy backend in
// docs/serve-http.md but its server lines, and the names of its servers,
// so that the test runs what the docs say.
func documentedBackend(t *testing.T) (lines string, servers []string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(), "docs", "serve-http.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(doc), "\nbackend mcpx\n")
	var b strings.Builder
	for _, line := range strings.SplitAfter(block, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		if name, ok := strings.CutPrefix(line, "  server "); ok {
			servers = append(servers, strings.Fields(name)[0])
		} else {
			b.WriteString(line)
		}
	}
	lines = b.String()
	if !found || len(servers) == 0 || !strings.Contains(lines, "stick match") || !strings.Contains(lines, "use-server") ||
		!strings.Contains(lines, "option redispatch") || !strings.Contains(lines, "retry-on") {
		t.Fatalf("docs/serve-http.md has no haproxy backend mcpx with stick, use-server, redispatch and retry-on rules and servers: %q", lines)
	}
	return lines, servers
}

// withoutStickiness drops the stick lines of a backend.
func withoutStickiness(lines string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(lines, "\n") {
		if !strings.HasPrefix(line, "  stick") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// loadBalancer is a running haproxy in front of mcpx replicas.
type loadBalancer struct {
	rr, sticky string // base URLs of the two frontends
	stats      string // the stats page, as CSV
}

// startHaproxy starts haproxy in front of the replicas (host:port each),
// its config in the test's temporary directory, and stops it at cleanup.
// It returns once haproxy serves its stats page with every replica up.
func startHaproxy(t *testing.T, bin string, documented string, names, replicas []string) *loadBalancer {
	t.Helper()
	var servers strings.Builder
	for i, r := range replicas {
		fmt.Fprintf(&servers, "  server %s %s check\n", names[i], r)
	}
	rr, sticky, stats := freePort(t), freePort(t), freePort(t)
	cfg := strings.NewReplacer("{{rr}}", strconv.Itoa(rr), "{{sticky}}", strconv.Itoa(sticky),
		"{{stats}}", strconv.Itoa(stats), "{{servers}}", servers.String(),
		"{{documented}}", documented, "{{routing}}", withoutStickiness(documented)).Replace(haproxyConfig)
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// -db: stay in the foreground, so the test owns the process.
	cmd := exec.Command(bin, "-db", "-f", path)
	var out testenv.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start haproxy: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("haproxy output:\n%s", out.String())
		}
	})
	lb := &loadBalancer{
		rr:     fmt.Sprintf("http://127.0.0.1:%d", rr),
		sticky: fmt.Sprintf("http://127.0.0.1:%d", sticky),
		stats:  fmt.Sprintf("http://127.0.0.1:%d/stats;csv", stats),
	}
	testenv.Eventually(t, 30*time.Second, func() bool {
		select {
		case <-exited:
			t.Fatalf("haproxy exited: %v\n%s", cmd.ProcessState, out.String())
		default:
		}
		up, err := lb.serversUp()
		return err == nil && up == 2*len(replicas)
	}, "haproxy does not report every replica up; its output:\n%s", &out)
	return lb
}

// statRows returns the stats page's rows, each by column name.
func (lb *loadBalancer) statRows() ([]map[string]string, error) {
	resp, err := http.Get(lb.stats)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := csv.NewReader(resp.Body)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("haproxy stats: %v (%d rows)", err, len(recs))
	}
	head := recs[0]
	head[0] = strings.TrimPrefix(head[0], "# ")
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, v := range rec {
			if i < len(head) {
				row[head[i]] = v
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// serversUp counts the servers haproxy's health checks find up.
func (lb *loadBalancer) serversUp() (int, error) {
	rows, err := lb.statRows()
	n := 0
	for _, row := range rows {
		if row["svname"] != "FRONTEND" && row["svname"] != "BACKEND" && row["status"] == "UP" {
			n++
		}
	}
	return n, err
}

// requests returns how many HTTP requests each server of backend has
// answered so far, by server name.
func (lb *loadBalancer) requests(t *testing.T, backend string) map[string]int {
	t.Helper()
	rows, err := lb.statRows()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, row := range rows {
		if row["pxname"] != backend || row["svname"] == "FRONTEND" || row["svname"] == "BACKEND" {
			continue
		}
		n, err := strconv.Atoi(row["req_tot"])
		if err != nil {
			t.Fatalf("haproxy stats: %s/%s req_tot %q: %v", backend, row["svname"], row["req_tot"], err)
		}
		got[row["svname"]] = n
	}
	return got
}

// spread runs f and fails the test unless every server of backend
// answered some of the requests f made: one replica doing all the work
// would pass the conformance comparisons without showing anything.
func (lb *loadBalancer) spread(t *testing.T, backend string, f func()) {
	t.Helper()
	before := lb.requests(t, backend)
	f()
	after := lb.requests(t, backend)
	if len(after) == 0 {
		t.Fatalf("haproxy stats show no server in backend %s", backend)
	}
	answered := map[string]int{}
	for name, n := range after {
		answered[name] = n - before[name]
		if answered[name] == 0 {
			t.Errorf("backend %s: replica %s answered none of the requests (before %v, after %v)", backend, name, before, after)
		}
	}
	t.Logf("backend %s: requests answered by each replica: %v", backend, answered)
}

// TestBehindHaproxy runs three `mcpx serve --http` replicas with the same
// config (the Go SDK's reference server over stdio, prefix "") behind the
// distribution's haproxy. Every conformance scenario of revision
// 2026-07-28 that passes against one replica passes through them with
// plain round robin; every 2025-11-25 scenario that passes against one
// passes with stickiness on Mcp-Session-Id, and not without it; legacy
// SSE sessions work with the same stickiness. haproxy's own counters show
// that each replica answered requests in each case.
func TestBehindHaproxy(t *testing.T) {
	haproxy := testenv.NeedHaproxy(t)
	reference := testenv.GoTool(t, goSDKServer)
	cfg := writeConfig(t, map[string]any{
		"expose": "direct",
		"servers": map[string]any{
			"everything": map[string]any{"command": reference, "prefix": ""},
		},
	})
	// Each replica is named as its haproxy server, which routes the
	// retry of a bridged call back to it by its requestState.
	documented, names := documentedBackend(t)
	var replicas []string
	for _, name := range names {
		replicas = append(replicas, strings.TrimPrefix(startHTTP(t, cfg, []string{"MCPX_REPLICA=" + name}).url, "http://"))
	}
	one := "http://" + replicas[0]
	lb := startHaproxy(t, haproxy, documented, names, replicas)

	t.Run("2026-07-28 round robin", func(t *testing.T) {
		alone := runConformance(t, one+"/mcp", "2026-07-28")
		var through map[string][]string
		lb.spread(t, "rr", func() { through = runConformance(t, lb.rr+"/mcp", "2026-07-28") })
		passed := passesThrough(t, alone, through, nil, "one mcpx", "three behind haproxy (round robin)")
		t.Logf("%d scenarios pass against one replica and through haproxy", passed)
		// The sticky backend is the one docs/serve-http.md gives for
		// both eras: modern requests carry no session, so it balances
		// them as round robin does.
		lb.spread(t, "sticky", func() { through = runConformance(t, lb.sticky+"/mcp", "2026-07-28") })
		passesThrough(t, alone, through, nil, "one mcpx", "three behind haproxy (sticky)")
	})

	t.Run("2025-11-25 sticky sessions", func(t *testing.T) {
		alone := runConformance(t, one+"/mcp", "2025-11-25")
		var through map[string][]string
		lb.spread(t, "sticky", func() { through = runConformance(t, lb.sticky+"/mcp", "2025-11-25") })
		passed := passesThrough(t, alone, through, nil, "one mcpx", "three behind haproxy (sticky)")
		if passed == 0 {
			t.Fatal("no 2025-11-25 scenario passes against one replica: the suite did not run")
		}
		t.Logf("%d scenarios pass against one replica and through haproxy", passed)

		// Without stickiness a session's requests land on replicas that
		// never saw it: what the docs say stickiness is for.
		if lost := sessionLost(runConformance(t, lb.rr+"/mcp", "2025-11-25")); lost == 0 {
			t.Error("2025-11-25 sessions work through round robin without stickiness; docs/serve-http.md says they need it")
		}
	})

	t.Run("legacy SSE sticky", func(t *testing.T) {
		lb.spread(t, "sticky", func() { legacySSESessions(t, lb.sticky+"/sse", len(replicas)) })
	})
}

// sessionLost counts the scenarios that failed because a request reached
// a replica that does not hold its session.
func sessionLost(res map[string][]string) int {
	n := 0
	for _, fails := range res {
		for _, f := range fails {
			if strings.Contains(f, "session not found") || strings.Contains(f, "404") {
				n++
				break
			}
		}
	}
	return n
}

// legacySSESessions opens n sessions one after another with the Go SDK's
// client of the legacy HTTP+SSE transport at endpoint (round robin gives
// each its own replica), and in each lists the tools and calls one: every
// POST to /messages must reach the replica that holds the session's
// stream, or its answer never arrives.
func legacySSESessions(t *testing.T, endpoint string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "haproxy-test", Version: "1"}, nil)
	for i := range n {
		cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: endpoint}, nil)
		if err != nil {
			t.Fatalf("session %d: connect %s: %v", i, endpoint, err)
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("session %d: tools/list: %v", i, err)
		}
		if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "test_simple_text" }) {
			t.Fatalf("session %d: tools/list lacks test_simple_text: %d tools", i, len(tools.Tools))
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
		if err != nil {
			t.Fatalf("session %d: tools/call: %v", i, err)
		}
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("session %d: tools/call test_simple_text: error %v, %d content blocks", i, res.IsError, len(res.Content))
		}
		if err := cs.Close(); err != nil {
			t.Errorf("session %d: close: %v", i, err)
		}
	}
}

// TestSSESessionHeader: the legacy SSE stream's response names its
// session in Mcp-Session-Id, the id its endpoint event carries, so that a
// load balancer can send that session's POSTs to the same replica
// without reading the stream (TestBehindHaproxy uses it).
func TestSSESessionHeader(t *testing.T) {
	srv := startHTTP(t, writeConfig(t, map[string]any{"servers": map[string]any{}}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var endpoint string
	for endpoint == "" && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = data
		}
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" || endpoint != "messages?sessionId="+id {
		t.Errorf("GET /sse: Mcp-Session-Id %q, endpoint %q; want the endpoint's sessionId in the header", id, endpoint)
	}
}
