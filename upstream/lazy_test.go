package upstream_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpx/mcpx/config"
	"github.com/mcpx/mcpx/internal/testenv"
	"github.com/mcpx/mcpx/upstream"
)

// pidFiles counts the processes a fixture with --pid-dir started.
func pidFiles(t testing.TB, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// cacheOptions are fastOptions remembering catalogs in dir.
func cacheOptions(dir string) *upstream.Options {
	o := fastOptions()
	o.CacheDir = dir
	return o
}

func waitState(t testing.TB, c *upstream.Client, want upstream.State) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, func() bool { return c.Status().State == want },
		"%s: state %s (%s), want %s", c.Name(), c.Status().State, c.Status().Err, want)
}

// A second start shows the remembered catalog while the server is still
// starting, and a call made meanwhile waits for it instead of failing.
func TestRememberedCatalogWhileStarting(t *testing.T) {
	cache, gate := t.TempDir(), filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := stdioServer("gated", "--init-gate", gate)
	first := connect(t, srv, cacheOptions(cache))
	want := toolNames(t, first.Catalog().Tools)
	first.Close()

	if err := os.Remove(gate); err != nil { // the next start hangs in initialize
		t.Fatal(err)
	}
	c := upstream.New(srv, cacheOptions(cache))
	c.Start(context.Background())
	t.Cleanup(func() { c.Close() })
	select {
	case <-c.Known():
	case <-time.After(10 * time.Second):
		t.Fatal("the remembered catalog was not shown")
	}
	if st := c.Status(); st.State != upstream.StateConnecting || st.Tools != len(want) {
		t.Fatalf("status %+v, want starting with %d remembered tools", st, len(want))
	}
	if got := toolNames(t, c.Catalog().Tools); !slices.Equal(got, want) {
		t.Fatalf("remembered tools %v, want %v", got, want)
	}
	select {
	case <-c.Ready():
		t.Fatal("ready although initialize cannot have been answered")
	default:
	}

	done := make(chan string, 1)
	go func() { done <- mustCallText(t, c, "echo", map[string]any{"message": "waited"}) }()
	testenv.Eventually(t, 5*time.Second, func() bool { return c.Status().State == upstream.StateConnecting }, "not starting")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case text := <-done:
		if text != "waited" {
			t.Errorf("echo = %q", text)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not complete after the server came up")
	}
}

// A corrupt or stale cache file is ignored: the server connects as if
// there were none, and the file is written anew.
func TestRememberedCorruptOrStale(t *testing.T) {
	srv := stdioServer("corrupt")
	for name, content := range map[string]string{
		"corrupt": "{not json",
		"stale":   `{"format":1,"key":"0000","tools":[{"name":"ghost"}]}`,
		"items":   `{"format":1,"key":"` + upstream.CacheKey(srv) + `","tools":[42]}`,
	} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			// The one file the cache dir would hold for this server.
			c0 := connect(t, srv, cacheOptions(cache))
			c0.Close()
			files, _ := filepath.Glob(filepath.Join(cache, "corrupt-*.json"))
			if len(files) != 1 {
				t.Fatalf("cache files %v, want one", files)
			}
			if err := os.WriteFile(files[0], []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if r, err := upstream.LoadRemembered(cache, srv); err == nil || r != nil {
				t.Fatalf("LoadRemembered = %v, %v; want an error", r, err)
			}
			c := upstream.New(srv, cacheOptions(cache))
			c.Start(context.Background())
			t.Cleanup(func() { c.Close() })
			<-c.Known()
			if hasTool(t, c, "ghost") || len(c.Catalog().Tools) > 0 && c.Status().State != upstream.StateConnected {
				t.Fatalf("a bad cache file was shown: %v", toolNames(t, c.Catalog().Tools))
			}
			waitState(t, c, upstream.StateConnected)
			tools := len(c.Catalog().Tools)
			c.Close() // the catalog is written after it is published
			r, err := upstream.LoadRemembered(cache, srv)
			if err != nil || r == nil {
				t.Fatalf("after connecting: nothing remembered (%v)", err)
			}
			if len(r.Tools) != tools {
				t.Fatalf("after connecting: %d tools remembered, want %d", len(r.Tools), tools)
			}
		})
	}
}

// A catalog is written to the cache when it is new or has changed, not
// again at every start that finds it unchanged.
func TestRememberedWrittenWhenChanged(t *testing.T) {
	srv, cache := stdioServer("unchanged"), t.TempDir()
	file := func() (os.FileInfo, *upstream.Remembered) {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(cache, "unchanged-*.json"))
		if len(files) != 1 {
			t.Fatalf("cache files %v, want one", files)
		}
		fi, err := os.Stat(files[0])
		if err != nil {
			t.Fatal(err)
		}
		r, err := upstream.LoadRemembered(cache, srv)
		if err != nil || r == nil {
			t.Fatalf("LoadRemembered = %v, %v", r, err)
		}
		return fi, r
	}
	connect(t, srv, cacheOptions(cache)).Close()
	first, r1 := file()

	connect(t, srv, cacheOptions(cache)).Close()
	second, r2 := file()
	// Each write is a new file renamed into place.
	if !os.SameFile(first, second) || !r2.Saved.Equal(r1.Saved) {
		t.Fatalf("an unchanged catalog was written again (saved %v, then %v)", r1.Saved, r2.Saved)
	}

	c := connect(t, srv, cacheOptions(cache))
	mustCallText(t, c, "add-tool", map[string]any{"name": "added"})
	testenv.Eventually(t, 10*time.Second, func() bool { return hasTool(t, c, "added") }, "the added tool is not listed")
	c.Close()
	third, r3 := file()
	if os.SameFile(second, third) || !slices.Contains(toolNames(t, r3.Tools), "added") {
		t.Fatalf("a changed catalog was not written: tools %v", toolNames(t, r3.Tools))
	}
}

// mcpx's own settings do not change the key: turning them keeps the
// remembered catalog; what decides the server does change it.
func TestCacheKey(t *testing.T) {
	base := stdioServer("k")
	same := base
	same.Prefix, same.Lazy, same.IdleTimeout, same.Timeout = "x", true, time.Minute, time.Hour
	same.Tools = config.Filter{Deny: []string{"echo"}}
	if upstream.CacheKey(base) != upstream.CacheKey(same) {
		t.Error("prefix, lazy, idleTimeout, timeout or filters changed the key")
	}
	other := base
	other.Args = append(slices.Clone(base.Args), "--tools", "3")
	env := base
	env.Env = map[string]string{"TOKEN": "a"}
	for _, s := range []config.Server{other, env} {
		if upstream.CacheKey(s) == upstream.CacheKey(base) {
			t.Errorf("%+v has the same key", s)
		}
	}
}

// A lazy server with nothing remembered starts once to learn its catalog
// and stops; the next time it is not started until its first call.
func TestLazyStartsOnFirstCall(t *testing.T) {
	cache, pids := t.TempDir(), t.TempDir()
	srv := stdioServer("lazy", "--pid-dir", pids)
	srv.Lazy = true

	learn := startClient(t, srv, cacheOptions(cache))
	waitState(t, learn, upstream.StateSleeping)
	if n := pidFiles(t, pids); n != 1 {
		t.Fatalf("%d processes started to learn the catalog, want 1", n)
	}
	if !hasTool(t, learn, "echo") {
		t.Fatal("a sleeping server lost its catalog")
	}
	learn.Close()

	c := startClient(t, srv, cacheOptions(cache))
	if st := c.Status(); st.State != upstream.StateSleeping || !hasTool(t, c, "echo") {
		t.Fatalf("status %+v, want sleeping with its remembered tools", st)
	}
	if n := pidFiles(t, pids); n != 1 {
		t.Fatalf("a lazy server with a remembered catalog was started (%d processes)", n)
	}
	if got := mustCallText(t, c, "echo", map[string]any{"message": "wake"}); got != "wake" {
		t.Errorf("echo = %q", got)
	}
	if n := pidFiles(t, pids); n != 2 {
		t.Errorf("%d processes, want 2 (one to learn, one on the call)", n)
	}
	if st := c.Status(); st.State != upstream.StateConnected {
		t.Errorf("after the call: %s, want ready (no idleTimeout)", st.State)
	}
}

// idleTimeout stops a server with nothing in flight, a call in flight or a
// subscription keeps it up, and the next call starts it again.
func TestIdleStopAndWake(t *testing.T) {
	pids := t.TempDir()
	srv := stdioServer("idle", "--pid-dir", pids)
	srv.IdleTimeout = 300 * time.Millisecond
	c := connect(t, srv, cacheOptions(t.TempDir()))

	// A call that lasts longer than idleTimeout is not cut off.
	if got := mustCallText(t, c, "sleep", map[string]any{"ms": 900}); got == "" {
		t.Error("sleep returned no text")
	}
	if n := pidFiles(t, pids); n != 1 {
		t.Fatalf("%d processes during a long call, want 1", n)
	}
	waitState(t, c, upstream.StateSleeping)
	if !hasTool(t, c, "echo") {
		t.Fatal("a sleeping server lost its catalog")
	}
	if got := mustCallText(t, c, "echo", map[string]any{"message": "again"}); got != "again" {
		t.Errorf("echo = %q", got)
	}
	if n := pidFiles(t, pids); n != 2 {
		t.Errorf("%d processes, want 2", n)
	}

	// A subscription keeps it awake past idleTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sub := json.RawMessage(`{"uri":"fixture://json"}`)
	if _, err := c.Request(ctx, "resources/subscribe", sub); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * srv.IdleTimeout) // a negative: nothing to wait for
	if st := c.Status(); st.State != upstream.StateConnected || pidFiles(t, pids) != 2 {
		t.Fatalf("with a subscription: %s, %d processes; want ready, 2", st.State, pidFiles(t, pids))
	}
	if _, err := c.Request(ctx, "resources/unsubscribe", sub); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, upstream.StateSleeping)
}
