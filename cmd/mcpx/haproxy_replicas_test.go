package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx/mcpx/aggregator/results"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHaproxyReplicas runs three `mcpx serve --http` replicas, each
// named as its haproxy server (MCPX_REPLICA), behind the distribution's
// haproxy with the backend docs/serve-http.md gives, where modern
// requests are balanced round robin:
//
//   - 30 results cut by maxResultBytes for a Go SDK client of revision
//     2026-07-28 (half of them called directly and read back with
//     resources/read, half through the proxy tool and read with it) are
//     each read back whole through haproxy, though each is kept in the
//     one replica that cut it, whose name its URI carries; a read sent to
//     another replica is refused naming the one that keeps it;
//   - in a 2025-11-25 session, a result cut reads back in the session's
//     replica, and a read of another's result stays in it too;
//   - one replica killed while modern requests stream through haproxy
//     (some of them in flight in it) fails none of them: haproxy retries
//     them on the others until its health check marks the replica down.
func TestHaproxyReplicas(t *testing.T) {
	haproxy := testenv.NeedHaproxy(t)
	cfg := writeConfig(t, map[string]any{"maxResultBytes": "20k", "expose": "both",
		"servers": map[string]any{"fx": fx()}})
	documented, names := documentedBackend(t)
	srvs := map[string]*httpServe{}
	var replicas []string
	for _, name := range names {
		s := startHTTP(t, cfg, []string{"MCPX_REPLICA=" + name})
		srvs[name] = s
		replicas = append(replicas, strings.TrimPrefix(s.url, "http://"))
	}
	lb := startHaproxy(t, haproxy, documented, names, replicas)
	endpoint := lb.sticky + "/mcp" // the documented backend

	var kept map[string][]string
	t.Run("kept results", func(t *testing.T) {
		kept = keptThroughBalancer(t, endpoint, names)
		// Sent past haproxy to another replica, a read is refused with
		// the name of the one that keeps the result.
		uri, there := kept[names[0]][0], srvs[names[1]].url+"/mcp"
		r, err := tryPost(http.DefaultClient, there, 1, "resources/read", uri, `{"uri":`+quoteJSON(uri)+`,"_meta":`+modernMeta(`{}`)+`}`, nil)
		if err != nil || r.Error == nil || !strings.Contains(r.Error.Message, fmt.Sprintf("kept in another replica: %q, not this one (%q)", names[0], names[1])) {
			t.Errorf("replica %s's result read at replica %s: %+v, %v; want an error naming both", names[0], names[1], r.Error, err)
		}
	})

	t.Run("a session's kept results", func(t *testing.T) {
		if len(kept) == 0 {
			t.Skip("no kept result of a modern client")
		}
		sessionKept(t, endpoint, kept)
	})

	t.Run("a replica dies under load", func(t *testing.T) {
		if len(kept[names[0]]) == 0 {
			t.Skip("no kept result to read during the load")
		}
		victim := names[1]
		load := startLoad(t, endpoint, kept[names[0]][0])
		load.waitAnswered(t, 60)
		// Killed with requests in flight in it: those are replayed on
		// another replica (retry-on empty-response), and the requests
		// round robin sends it before the health check marks it down
		// fail to connect and go to another (option redispatch).
		testenv.Eventually(t, 30*time.Second, func() bool { return lb.stat(t, "sticky", victim, "scur") > 0 },
			"haproxy shows no request in flight in replica %s", victim)
		if err := srvs[victim].cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 60*time.Second, func() bool { return lb.status(t, "sticky", victim) == "DOWN" },
			"haproxy does not mark the killed replica %s down", victim)
		load.waitAnswered(t, load.answered.Load()+60)
		failed, answered := load.stop()
		retried := lb.stat(t, "sticky", "BACKEND", "wretr") + lb.stat(t, "sticky", "BACKEND", "wredis")
		t.Logf("%d modern requests answered, %d failed; haproxy retried or redispatched %d", answered, len(failed), retried)
		for i, f := range failed {
			if i == 10 {
				t.Errorf("... and %d more", len(failed)-i)
				break
			}
			t.Errorf("failed while replica %s died: %s", victim, f)
		}
		if retried == 0 {
			t.Error("haproxy retried no request: the kill did not meet the load")
		}

		// The dead replica's results died with it: a read of one gets
		// an answer that says where it was, not a hang or a 503.
		uri := kept[victim][0]
		r, err := tryPost(http.DefaultClient, endpoint, 1, "resources/read", uri, `{"uri":`+quoteJSON(uri)+`,"_meta":`+modernMeta(`{}`)+`}`, nil)
		if err != nil || r.Error == nil || !strings.Contains(r.Error.Message, fmt.Sprintf("kept in another replica: %q", victim)) {
			t.Errorf("read of the dead replica's result: %+v, %v; want an error naming replica %s", r.Error, err, victim)
		}
	})
}

// keptThroughBalancer makes 30 cut results through endpoint with one Go
// SDK client of revision 2026-07-28 and reads each back whole from it in
// slices, as the notes say; it returns their URIs by the replica each
// names, and ends the test unless every replica of names cut some.
func keptThroughBalancer(t *testing.T, endpoint string, names []string) map[string][]string {
	t.Helper()
	const limit = 20 << 10
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "haproxy-kept", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	byReplica := map[string][]string{}
	whole := 0
	for i := range 30 {
		fill := fmt.Sprintf("result %02d: 0123\n", i) // 16 bytes, as resultFill
		want := bigText(100_000, fill)
		args := map[string]any{"bytes": len(want), "fill": fill}
		proxy := i%2 == 1
		params := &mcp.CallToolParams{Name: "fx_big", Arguments: args}
		if proxy {
			params = &mcp.CallToolParams{Name: "proxy", Arguments: map[string]any{"action": "call", "type": "tool", "path": "fx_big", "args": args}}
		}
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			t.Fatalf("result %d: %v, %s", i, err, textOf(res))
		}
		uri := resultURI.FindString(textOf(res))
		replica, _, named := strings.Cut(strings.TrimPrefix(uri, results.URIPrefix), "~")
		if !named || !slices.Contains(names, replica) {
			t.Fatalf("result %d: the note's URI %q names no replica of %v", i, uri, names)
		}
		got := readParts(t, uri, limit, func(u string) (string, string, int) {
			if !proxy {
				r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
				if err != nil || len(r.Contents) != 1 {
					t.Fatalf("result %d: resources/read %s: %v", i, u, err)
				}
				total, _ := r.Meta["mcpx/total"].(float64)
				return r.Contents[0].Text, "", int(total)
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proxy", Arguments: map[string]any{"action": "call", "type": "resource", "path": u}})
			if err != nil || r.IsError || len(r.Content) == 0 {
				t.Fatalf("result %d: proxy read of %s: %v, %s", i, u, err, textOf(r))
			}
			slice, ok := r.Content[0].(*mcp.EmbeddedResource)
			if !ok || slice.Resource == nil {
				t.Fatalf("result %d: proxy read of %s: first item %T, want the embedded slice", i, u, r.Content[0])
			}
			total, _ := r.Meta["mcpx/total"].(float64)
			return slice.Resource.Text, "", int(total)
		})
		if bytes.Equal(got, want) {
			whole++
		} else {
			t.Errorf("result %d (replica %s, through the proxy tool: %v): read back %d bytes, differ from the %d cut", i, replica, proxy, len(got), len(want))
		}
		byReplica[replica] = append(byReplica[replica], uri)
	}
	t.Logf("%d of 30 kept results read back whole through haproxy; made by each replica: %v", whole, counts(byReplica))
	for _, name := range names {
		if len(byReplica[name]) == 0 {
			t.Fatalf("replica %s cut none of the 30 results: round robin did not spread the calls", name)
		}
	}
	return byReplica
}

// sessionKept opens a 2025-11-25 session through endpoint with the Go
// SDK's client: a result cut in it names the session's replica and reads
// back whole there (the stick table routes the session's requests), and
// a read of another replica's result in the session is refused by the
// session's own replica, which the session's next request still reaches.
// kept holds modern clients' results by replica.
func sessionKept(t *testing.T, endpoint string, kept map[string][]string) {
	t.Helper()
	const limit = 20 << 10
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "haproxy-session", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" || cs.ID() == "" {
		t.Fatalf("negotiated %q, session %q; want a 2025-11-25 session", v, cs.ID())
	}
	want := bigText(100_000, resultFill)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_big", Arguments: map[string]any{"bytes": len(want), "fill": resultFill}})
	if err != nil || res.IsError {
		t.Fatalf("fx_big in a session: %v, %s", err, textOf(res))
	}
	uri := resultURI.FindString(textOf(res))
	replica, _, _ := strings.Cut(strings.TrimPrefix(uri, results.URIPrefix), "~")
	got := readParts(t, uri, limit, func(u string) (string, string, int) {
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: u})
		if err != nil || len(r.Contents) != 1 {
			t.Fatalf("resources/read %s in the session: %v", u, err)
		}
		total, _ := r.Meta["mcpx/total"].(float64)
		return r.Contents[0].Text, "", int(total)
	})
	if !bytes.Equal(got, want) {
		t.Errorf("the session's result, kept by replica %s: read back %d bytes, differ from the %d cut", replica, len(got), len(want))
	}
	for other, uris := range kept {
		if other == replica {
			continue
		}
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uris[0]})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("kept in another replica: %q, not this one (%q)", other, replica)) {
			t.Errorf("read in a session of replica %s of replica %s's result: %v; want the session's replica to refuse it", replica, other, err)
		}
		break
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("the session after reading another replica's result: %v", err)
	}
}

func counts(m map[string][]string) map[string]int {
	n := map[string]int{}
	for k, v := range m {
		n[k] = len(v)
	}
	return n
}

// load is a stream of modern requests through a load balancer: workers
// that each send, one after another, a tools/call of echo and of a short
// sleep, a tools/list and a read of a kept result, checking each answer.
type load struct {
	answered atomic.Int64
	stopped  atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	failed   []string
}

// startLoad starts the workers against endpoint, reading the kept result
// uri among the rest, until stop (or the test's cleanup).
func startLoad(t *testing.T, endpoint, uri string) *load {
	t.Helper()
	const workers = 6
	l := &load{}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: time.Minute}
	meta := modernMeta(`{}`)
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; !l.stopped.Load(); i++ {
				id := w*1_000_000 + i
				msg := fmt.Sprintf("worker %d request %d", w, i)
				var method, name, params, want string
				switch i % 4 {
				case 0:
					method, name, want = "tools/call", "fx_echo", msg
					params = `{"name":"fx_echo","arguments":{"message":` + quoteJSON(msg) + `},"_meta":` + meta + `}`
				case 1:
					method, name, want = "tools/call", "fx_sleep", "slept 200ms"
					params = `{"name":"fx_sleep","arguments":{"ms":200},"_meta":` + meta + `}`
				case 2:
					method, want = "tools/list", `"fx_echo"`
					params = `{"_meta":` + meta + `}`
				case 3:
					method, name, want = "resources/read", uri+"?offset=0&length=64", `"mcpx/total"`
					params = `{"uri":` + quoteJSON(name) + `,"_meta":` + meta + `}`
				}
				r, err := tryPost(client, endpoint, id, method, name, params, nil)
				switch {
				case err != nil:
					l.fail(fmt.Sprintf("%s %s: %v", method, name, err))
				case r.status != http.StatusOK || r.Error != nil:
					l.fail(fmt.Sprintf("%s %s: HTTP %d, error %+v", method, name, r.status, r.Error))
				case string(r.ID) != strconv.Itoa(id) || !strings.Contains(resultText(r), want):
					l.fail(fmt.Sprintf("%s %s: answer %s to id %s lacks %s", method, name, truncateForLog([]byte(resultText(r))), r.ID, want))
				default:
					l.answered.Add(1)
				}
			}
		}()
	}
	t.Cleanup(func() { l.stop() })
	return l
}

func (l *load) fail(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed = append(l.failed, s)
}

// waitAnswered waits until n requests in all have been answered.
func (l *load) waitAnswered(t *testing.T, n int64) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func() bool { return l.answered.Load() >= n },
		"fewer than %d requests answered", n)
}

// stop stops the workers, waits for them and returns what failed and how
// many were answered.
func (l *load) stop() ([]string, int64) {
	l.stopped.Store(true)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed, l.answered.Load()
}

// resultText is a reply's result as JSON text, for a check of what it
// holds.
func resultText(r rpcReply) string {
	b, _ := json.Marshal(r.Result)
	return string(b)
}

// stat returns the number in column of haproxy's stats row for server
// (or "BACKEND") of backend; 0 when there is none.
func (lb *loadBalancer) stat(t *testing.T, backend, server, column string) int64 {
	t.Helper()
	rows, err := lb.statRows()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row["pxname"] == backend && row["svname"] == server {
			n, _ := strconv.ParseInt(row[column], 10, 64)
			return n
		}
	}
	return 0
}

// status returns what haproxy's health checks say of server in backend.
func (lb *loadBalancer) status(t *testing.T, backend, server string) string {
	t.Helper()
	rows, err := lb.statRows()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row["pxname"] == backend && row["svname"] == server {
			return row["status"]
		}
	}
	return ""
}
